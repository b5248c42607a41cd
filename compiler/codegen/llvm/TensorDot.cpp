// The dot products of tensorized kernels, in the forms TensorDot.h describes.
#include "compiler/codegen/llvm/TensorDot.h"

#include <string>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/Module.h>

#include "compiler/codegen/llvm/CodeGenLLVM.h"
#include "core/support/Error.h"
#include "core/target/Target.h"

namespace tessel {

namespace {

struct DotInstructions {
  llvm::Intrinsic::ID vnni = llvm::Intrinsic::not_intrinsic;
  llvm::Intrinsic::ID multiplyBytes = llvm::Intrinsic::not_intrinsic;  // vpmaddubsw
  llvm::Intrinsic::ID multiplyWords = llvm::Intrinsic::not_intrinsic;  // vpmaddwd
};

// The instructions `target` has for `lanes` int32 lanes; a form left not_intrinsic is absent.
DotInstructions instructionsFor(const Target& target, int lanes) {
  DotInstructions found;
  bool vl = target.hasFeature("avx512vl");
  if (target.hasFeature("avx512vnni")) {
    if (lanes == 16) found.vnni = llvm::Intrinsic::x86_avx512_vpdpbusd_512;
    if (lanes == 8 && vl) found.vnni = llvm::Intrinsic::x86_avx512_vpdpbusd_256;
    if (lanes == 4 && vl) found.vnni = llvm::Intrinsic::x86_avx512_vpdpbusd_128;
  }
  if (lanes == 16 && target.hasFeature("avx512bw")) {
    found.multiplyBytes = llvm::Intrinsic::x86_avx512_pmaddubs_w_512;
    found.multiplyWords = llvm::Intrinsic::x86_avx512_pmaddw_d_512;
  } else if (lanes == 8 && target.hasFeature("avx2")) {
    found.multiplyBytes = llvm::Intrinsic::x86_avx2_pmadd_ub_sw;
    found.multiplyWords = llvm::Intrinsic::x86_avx2_pmadd_wd;
  }
  return found;
}

llvm::Value* callIntrinsic(llvm::IRBuilderBase& builder, llvm::Module& module, llvm::Intrinsic::ID id,
                           llvm::ArrayRef<llvm::Value*> args) {
  return builder.CreateCall(llvm::Intrinsic::getDeclaration(&module, id), args);
}

// vpmaddubsw on the low seven bits and on the top bit of each unsigned byte separately, so no
// int16 pair sum saturates (127 * 128 * 2 and 1 * 128 * 2 both fit), then vpmaddwd adds the
// pairs into int32 lanes, weighting the top-bit half by 128.
llvm::Value* byteMultiplyDot(llvm::IRBuilderBase& builder, llvm::Module& module, const DotInstructions& use,
                             int lanes, llvm::Value* acc, llvm::Value* a, llvm::Value* b) {
  auto* bytes = llvm::FixedVectorType::get(builder.getInt8Ty(), unsigned(lanes * 4));
  auto* words = llvm::FixedVectorType::get(builder.getInt16Ty(), unsigned(lanes * 2));
  llvm::Value* aBytes = builder.CreateBitCast(a, bytes);
  llvm::Value* bBytes = builder.CreateBitCast(b, bytes);
  llvm::Value* low = builder.CreateAnd(aBytes, llvm::ConstantInt::get(bytes, 0x7f));
  llvm::Value* top = builder.CreateLShr(aBytes, llvm::ConstantInt::get(bytes, 7));
  llvm::Value* lowPairs = callIntrinsic(builder, module, use.multiplyBytes, {low, bBytes});
  llvm::Value* topPairs = callIntrinsic(builder, module, use.multiplyBytes, {top, bBytes});
  llvm::Value* lowSums = callIntrinsic(builder, module, use.multiplyWords, {lowPairs, llvm::ConstantInt::get(words, 1)});
  llvm::Value* topSums =
      callIntrinsic(builder, module, use.multiplyWords, {topPairs, llvm::ConstantInt::get(words, 128)});
  return builder.CreateAdd(acc, builder.CreateAdd(lowSums, topSums));
}

// Every byte widened to int32, multiplied, and each lane's four products added.
llvm::Value* widenedDot(llvm::IRBuilderBase& builder, int lanes, llvm::Value* acc, llvm::Value* a, llvm::Value* b) {
  auto* bytes = llvm::FixedVectorType::get(builder.getInt8Ty(), unsigned(lanes * 4));
  auto* wide = llvm::FixedVectorType::get(builder.getInt32Ty(), unsigned(lanes * 4));
  llvm::Value* products = builder.CreateMul(builder.CreateZExt(builder.CreateBitCast(a, bytes), wide),
                                            builder.CreateSExt(builder.CreateBitCast(b, bytes), wide));
  llvm::Value* sum = acc;
  for (int byte = 0; byte < 4; ++byte) {
    std::vector<int> lane(static_cast<size_t>(lanes));
    for (int i = 0; i < lanes; ++i) lane[size_t(i)] = 4 * i + byte;
    sum = builder.CreateAdd(sum, builder.CreateShuffleVector(products, lane));
  }
  return sum;
}

int lanesOf(llvm::Value* v) {
  auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(v->getType());
  return vector ? int(vector->getNumElements()) : 1;
}

// vdpbf16ps for `lanes` float32 lanes, or not_intrinsic.
llvm::Intrinsic::ID bfloat16DotInstruction(const Target& target, int lanes) {
  if (!target.hasFeature("avx512bf16")) return llvm::Intrinsic::not_intrinsic;
  if (lanes == 16) return llvm::Intrinsic::x86_avx512bf16_dpbf16ps_512;
  if (lanes == 8 && target.hasFeature("avx512vl")) return llvm::Intrinsic::x86_avx512bf16_dpbf16ps_256;
  if (lanes == 4 && target.hasFeature("avx512vl")) return llvm::Intrinsic::x86_avx512bf16_dpbf16ps_128;
  return llvm::Intrinsic::not_intrinsic;
}

}  // namespace

std::string integerDotForm(const Target& target, int lanes) {
  DotInstructions use = instructionsFor(target, lanes);
  if (use.vnni != llvm::Intrinsic::not_intrinsic) return "vnni";
  if (use.multiplyBytes != llvm::Intrinsic::not_intrinsic) return lanes == 16 ? "avx512bw" : "avx2";
  return "generic";
}

std::string bfloat16DotForm(const Target& target, int lanes) {
  return bfloat16DotInstruction(target, lanes) != llvm::Intrinsic::not_intrinsic ? "avx512bf16" : "generic";
}

llvm::Value* emitIntegerDot(llvm::IRBuilderBase& builder, llvm::Module& module, const Target& target,
                            llvm::Value* acc, llvm::Value* a, llvm::Value* b) {
  int lanes = lanesOf(acc);
  TESSEL_ICHECK(lanesOf(a) == lanes && lanesOf(b) == lanes) << "dot_u8i8 operands differ in lanes";
  if (lanes == 1) {
    // A scalar lane: the same arithmetic on one-lane vectors.
    auto* one = llvm::FixedVectorType::get(builder.getInt32Ty(), 1);
    auto wrap = [&](llvm::Value* v) { return builder.CreateInsertElement(llvm::PoisonValue::get(one), v, uint64_t(0)); };
    return builder.CreateExtractElement(widenedDot(builder, 1, wrap(acc), wrap(a), wrap(b)), uint64_t(0));
  }
  DotInstructions use = instructionsFor(target, lanes);
  if (use.vnni != llvm::Intrinsic::not_intrinsic) return callIntrinsic(builder, module, use.vnni, {acc, a, b});
  if (use.multiplyBytes != llvm::Intrinsic::not_intrinsic)
    return byteMultiplyDot(builder, module, use, lanes, acc, a, b);
  return widenedDot(builder, lanes, acc, a, b);
}

llvm::Value* emitBFloat16Dot(llvm::IRBuilderBase& builder, llvm::Module& module, const Target& target,
                             llvm::Value* acc, llvm::Value* a, llvm::Value* b) {
  int lanes = lanesOf(acc);
  TESSEL_ICHECK(lanesOf(a) == lanes && lanesOf(b) == lanes) << "dot_bf16 operands differ in lanes";
  llvm::Intrinsic::ID instruction = bfloat16DotInstruction(target, lanes);
  if (instruction != llvm::Intrinsic::not_intrinsic) return callIntrinsic(builder, module, instruction, {acc, a, b});
  llvm::Type* words = a->getType();
  llvm::Type* floats = acc->getType();
  // A bfloat16 is the upper half of the float32 with the same value.
  auto lowerHalf = [&](llvm::Value* v) { return builder.CreateBitCast(builder.CreateShl(v, 16), floats); };
  auto upperHalf = [&](llvm::Value* v) {
    return builder.CreateBitCast(builder.CreateAnd(v, llvm::ConstantInt::get(words, 0xFFFF0000u)), floats);
  };
  llvm::Value* sum = builder.CreateFAdd(acc, builder.CreateFMul(upperHalf(a), upperHalf(b)));
  return builder.CreateFAdd(sum, builder.CreateFMul(lowerHalf(a), lowerHalf(b)));
}

}  // namespace tessel
