// Loop vectorization: loops the schedule marked vectorized become vector instructions.
#pragma once

#include "core/ir/Stmt.h"

namespace tessel {

/// The widest vector a vectorized loop becomes; longer loops stay serial.
inline constexpr int kMaxVectorLanes = 1024;

/// Replaces every ForKind::Vectorized loop of constant extent n (2 <= n <= kMaxVectorLanes)
/// by its body widened to n lanes: the loop variable becomes ramp(min, 1, n), arithmetic
/// mixing scalars and vectors broadcasts the scalars (integer + - * fold into ramps, so
/// A[i*32 + j] becomes a contiguous A[ramp(i*32, 1, 8)]), loads with a vector index load
/// vectors, Select/Cast/intrinsic calls and let values are widened, and a store with a
/// vector index stores a vector (a lane-invariant value is broadcast).
///
/// A loop whose body cannot be widened stays as a serial loop: a nested loop, an Allocate
/// or BufferRealize inside, an IfThenElse or attribute whose condition/value depends on
/// the lane, a store of a lane-dependent value to a lane-invariant index, or a body that
/// already holds vectors. So does a loop whose extent is not a constant (the schedule
/// reports that mistake to the user before lowering). A vectorized loop of extent 1 is
/// replaced by its body with the variable set to min.
/// Returns `f` itself when there is no vectorized loop.
PrimFunc vectorizeLoops(const PrimFunc& f);

}  // namespace tessel
