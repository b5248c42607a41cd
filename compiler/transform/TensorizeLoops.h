// Tensorization: loop nests the schedule marked with `tensorize` become one tensor-intrinsic
// instruction (see compiler/schedule/TensorIntrinsic.h).
#pragma once

#include <optional>
#include <string>

#include "core/ir/Stmt.h"

namespace tessel {

/// Why a marked nest does not match its intrinsic, for a diagnostic at the tensorize line.
struct TensorizeMismatch {
  std::string loop;     ///< The tensorized loop's name, as the schedule wrote it.
  std::string message;  ///< What differs: an extent, a stride, an operand type, extra code.
  std::string hint;     ///< What to change in the schedule.
};

/// Runs on flattened, simplified IR. Each marked nest
///   for i in [0, lanes): for k in [0, 4): [if (c)] C[ci] = C[ci] + int32(A[ai]) * int32(B[bi])
/// (or with k outside i), where ci = c0 + i, ai = a0 + k and bi = b0 + 4i + k, A is uint8 and
/// B int8, and c does not depend on i or k, becomes
///   [if (c)] C[ramp(c0, 1, lanes)] = dot_u8i8(C[ramp(c0, 1, lanes)],
///       broadcast(reinterpret<int32>(A[ramp(a0, 1, 4)]), lanes),
///       reinterpret<int32xlanes>(B[ramp(b0, 1, 4 * lanes)]))
/// A nest marked with tile_u8i8 is checked with matchTileDotNest (TileDotNest.h) and kept,
/// under an AttrStmt kTileDotAttr, for codegen.
/// The first nest that does not match sets `mismatch` and the function is returned unchanged.
PrimFunc tensorizeLoops(const PrimFunc& f, std::optional<TensorizeMismatch>* mismatch);

}  // namespace tessel
