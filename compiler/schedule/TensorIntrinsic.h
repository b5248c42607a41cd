// Tensor intrinsics: small fixed-size computations that one hardware instruction does, which
// the `tensorize` primitive puts in place of a matching loop nest.
//
// An intrinsic is declared in the tensor expression language (what it computes, so it can be
// read, tested and lowered like any operator) plus the loop nest it replaces: a data-parallel
// loop of `lanes` iterations around a reduction loop of `reduction` iterations whose body is
//   out[i] += cast(acc, data[k]) * cast(acc, weight[i, k])
// with out contiguous in i, data contiguous in k, and weight contiguous in (i, k). The
// `reduction` elements of one output fill one 32-bit word (4 bytes, or 2 bfloat16). The
// lowering step TensorizeLoops (compiler/transform) checks the loop nest and writes the
// instruction; codegen picks the fastest form the target has, so a tensorized kernel runs on
// every CPU (codegen/llvm/TensorDot.h):
//   dot_Nx4_u8i8  vpdpbusd with VNNI, vpmaddubsw + vpmaddwd with AVX-512BW or
//                 AVX2, else widened arithmetic; bit-identical results on each;
//   dot_Nx2_bf16  vdpbf16ps with AVX-512 BF16, else the two products widened
//                 to float32 and added in the same order (equal to the instruction but for
//                 denormals, which it flushes to zero).
#pragma once

#include <string>
#include <vector>

#include "core/ir/DataType.h"
#include "core/ir/Expr.h"
#include "core/te/Tensor.h"

namespace tessel {

struct TensorIntrinsic {
  std::string name;     ///< What `tensorize(STAGE, LOOP, name)` names: "dot_16x4_u8i8".
  std::string summary;  ///< One line for error messages and the Studio.
  int64_t lanes = 16;   ///< Iterations of the data-parallel loop it replaces (int32 results).
  int64_t reduction = 4;  ///< Iterations of the reduction loop inside it.
  DataType dataType = DataType::uint8();    ///< The operand read along the reduction only.
  DataType weightType = DataType::int8();   ///< The operand read along both loops.
  DataType accumulatorType = DataType::int32();
  /// The IR call tensorize writes: dot_u8i8 or dot_bf16 (core/ir/Expr.h).
  Intrinsic instruction = Intrinsic::DotU8I8;
  /// The instruction set that runs it in one instruction; codegen emulates it without.
  std::string instructionSet = "avx512vnni";

  /// The declaration: {data [reduction], weight [lanes, reduction], out [lanes]} with
  /// out[i] = sum over k of acc(data[k]) * acc(weight[i, k]).
  std::vector<te::Tensor> declaration() const;
};

/// Every intrinsic tensorize knows, in the order the Studio lists them.
const std::vector<TensorIntrinsic>& tensorIntrinsics();
/// The intrinsic named `name`, or null.
const TensorIntrinsic* findTensorIntrinsic(const std::string& name);
/// "dot_16x4_u8i8, dot_8x4_u8i8, ...": for messages that list what exists.
std::string tensorIntrinsicNames();

/// The AttrStmt key that marks a loop tensorized by `intrinsic` in the loop nest.
std::string tensorizeAttrKey(const TensorIntrinsic& intrinsic);
/// The intrinsic a loop-nest AttrStmt key names, or null when the key is not a tensorize mark.
const TensorIntrinsic* tensorIntrinsicOfAttr(const std::string& key);

}  // namespace tessel
