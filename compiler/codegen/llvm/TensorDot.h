// The dot products of tensorized kernels (Intrinsic::DotU8I8 and Intrinsic::DotBF16), emitted
// as LLVM IR for the instructions the target has.
//
// Private to the LLVM backend. dot_u8i8 has three forms, fastest first; all compute the same
// wrapping int32 result, so a kernel gives bit-identical outputs on every CPU:
//   VNNI      one vpdpbusd per 16 lanes (avx512vnni; 8 and 4 lanes also need avx512vl);
//   AVX-512BW vpmaddubsw + vpmaddwd. vpmaddubsw saturates its int16 pair sums
//             (255 * 127 * 2 > 32767), so the unsigned bytes are split into their low seven
//             bits and their top bit, each product pair then fits, and the top half is
//             weighted by 128 in the vpmaddwd;
//   generic   widened multiplies and adds that LLVM lowers for whatever the CPU has.
// dot_bf16 has two:
//   BF16      one vdpbf16ps per 16 lanes (avx512bf16; 8 lanes also need avx512vl);
//   generic   each bfloat16 widened to float32 (its bits shifted up by 16), the upper pair's
//             product added first, then the lower's. A product of two bfloat16 is exact in
//             float32, so this rounds as the instruction does; only denormals differ (the
//             instruction flushes them to zero).
#pragma once

namespace llvm {
class IRBuilderBase;
class Module;
class Value;
}  // namespace llvm

namespace tessel {

struct Target;

// integerDotForm and bfloat16DotForm (CodeGenLLVM.h) name the form each uses.

/// acc + dot_u8i8(a, b): every operand and the result are <lanes x i32> values; each lane of
/// `a` holds four unsigned bytes and each lane of `b` four signed ones.
llvm::Value* emitIntegerDot(llvm::IRBuilderBase& builder, llvm::Module& module, const Target& target,
                            llvm::Value* acc, llvm::Value* a, llvm::Value* b);

/// acc + dot_bf16(a, b): `acc` and the result are <lanes x float>, `a` and `b` <lanes x i32>
/// whose lanes each hold two bfloat16 (element 0 in the low half).
llvm::Value* emitBFloat16Dot(llvm::IRBuilderBase& builder, llvm::Module& module, const Target& target,
                             llvm::Value* acc, llvm::Value* a, llvm::Value* b);

}  // namespace tessel
