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
//
// One intrinsic replaces more than an instruction's worth: tile_u8i8 takes a whole int32
// accumulation, its two data-parallel loops (rows and columns of the output tile) and every
// reduction loop inside them, so that the accumulators stay in AMX tile registers from the
// first product to the last:
//   for i in [0, rows): for j in [0, 16 n): [C[ci] = 0;]
//     for r1 ... for rm: for g in [0, G <= 16): for k in [0, 4):
//       C[ci] = C[ci] + int32(A[ai]) * int32(B[bi])
// with C contiguous in j, A contiguous in (g, k), B's 4 bytes of a lane contiguous and its
// lanes 4 bytes apart, every index linear in the loop variables. With AMX codegen writes
// tdpbusd on tiles of up to 16 rows x 16 columns x 4G bytes (codegen/llvm/TileDot.h); without
// it, the loops as written (correct, and slow: choose the schedule for the target).
#pragma once

#include <string>
#include <vector>

#include "core/ir/DataType.h"
#include "core/ir/Expr.h"
#include "core/target/Target.h"
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
  /// A tile intrinsic (tile_u8i8): it replaces a whole accumulation nest, see above, and
  /// `lanes` x `reduction` is the size of one instruction's tile (16 columns x 64 bytes).
  bool wholeReduction = false;

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

/// The AttrStmt key TensorizeLoops puts on a nest that matched tile_u8i8; its body is the
/// nest unchanged, which codegen replaces with AMX tiles when the target has them.
inline constexpr const char* kTileDotAttr = "tile_dot_u8i8";

/// Whether `target` runs tile_u8i8 on AMX tiles (amx-tile and amx-int8; the host target only
/// lists them when the kernel lets this process use the tile registers).
/// (Inline: codegen asks too, and does not link the schedule library.)
inline bool hasIntegerTiles(const Target& target) {
  return target.hasFeature("amx-tile") && target.hasFeature("amx-int8");
}

}  // namespace tessel
