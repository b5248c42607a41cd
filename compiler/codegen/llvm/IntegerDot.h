// The four-byte integer dot product of tensorized int8 kernels (Intrinsic::DotU8I8), emitted as
// LLVM IR for the instructions the target has.
//
// Private to the LLVM backend. Three forms, fastest first; all compute the same wrapping
// int32 result, so a kernel gives bit-identical outputs on every CPU:
//   VNNI      one vpdpbusd per 16 lanes (avx512vnni; 8 and 4 lanes also need avx512vl);
//   AVX-512BW vpmaddubsw + vpmaddwd. vpmaddubsw saturates its int16 pair sums
//             (255 * 127 * 2 > 32767), so the unsigned bytes are split into their low seven
//             bits and their top bit, each product pair then fits, and the top half is
//             weighted by 128 in the vpmaddwd;
//   generic   widened multiplies and adds that LLVM lowers for whatever the CPU has.
#pragma once

namespace llvm {
class IRBuilderBase;
class Module;
class Value;
}  // namespace llvm

namespace tessel {

struct Target;

// integerDotForm (CodeGenLLVM.h) names the form emitIntegerDot uses.

/// acc + dot_u8i8(a, b): every operand and the result are <lanes x i32> values; each lane of
/// `a` holds four unsigned bytes and each lane of `b` four signed ones.
llvm::Value* emitIntegerDot(llvm::IRBuilderBase& builder, llvm::Module& module, const Target& target,
                            llvm::Value* acc, llvm::Value* a, llvm::Value* b);

}  // namespace tessel
