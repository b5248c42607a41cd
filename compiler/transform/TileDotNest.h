// The accumulation nest that the tile_u8i8 tensor intrinsic replaces (compiler/schedule/
// TensorIntrinsic.h): found once by TensorizeLoops, which checks the schedule with it, and
// again by codegen, which writes AMX tiles for it. Knowing the shape in one place keeps the
// two from disagreeing about what an AMX kernel may assume.
#pragma once

#include <string>
#include <vector>

#include "core/ir/Stmt.h"
#include "core/support/Error.h"

namespace tessel {

/// [for b in [0, rowBlocks):] for i in [0, rows): for j in [0, columns):
///   [C[c0 + b * accRowBlockStride + i * accRowStride + j] = 0;]
///   for r1 in [0, e1): ... for g in [0, groups): for k in [0, 4):
///     C[...] = C[...] + int32(A[a0 + b * dataRowBlockStride + i * dataRowStride + sum r * dataStride + 4 g + k])
///                     * int32(B[b0 + 4 j + sum r * weightStride + g * weightGroupStride + k])
/// C int32, A uint8, B int8, every extent a constant.
struct TileDotNest {
  struct ReductionLoop {
    Var var;
    int64_t extent = 1;
    int64_t dataStride = 0, weightStride = 0;  ///< Elements per iteration.
  };
  Buffer acc, data, weight;
  Expr accBase, dataBase, weightBase;  ///< Flat indices with every loop of the nest at 0.
  Var rowVar, columnVar;
  int64_t rows = 0, columns = 0;       ///< columns is a multiple of 16.
  int64_t accRowStride = 0, dataRowStride = 0;
  /// Blocks of rows (output rows of an image, when its pixel rows are short): each block's
  /// rows are evenly spaced, the blocks need not be.
  int64_t rowBlocks = 1, accRowBlockStride = 0, dataRowBlockStride = 0;
  std::vector<ReductionLoop> outerReductions;  ///< r1 ... rm, outermost first.
  int64_t groups = 1;                  ///< Iterations of g: 4 * groups bytes per tile row (<= 64).
  int64_t weightGroupStride = 0;       ///< Elements between B's rows (groups of 4 reduction elements).
  bool initializes = false;            ///< The nest zeroes C before accumulating.
};

/// The tile accumulation rooted at `rows` (the outermost loop of the nest), or why not: a
/// Diagnostic whose message says what differs and whose hint the schedule change.
Expected<TileDotNest> matchTileDotNest(const ForNode* rows);

}  // namespace tessel
