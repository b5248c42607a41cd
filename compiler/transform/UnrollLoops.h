// Loop unrolling: loops the schedule marked unrolled become straight-line copies.
#pragma once

#include "core/ir/Stmt.h"

namespace tessel {

/// Replaces every ForKind::Unrolled loop of constant extent n by a SeqStmt of n copies of
/// its body, copy k with the loop variable replaced by min + k (inner loops are unrolled
/// first, so nested unrolled loops multiply out). Variables defined inside the body (inner
/// loops, lets) are shared by the copies; each copy still defines them itself, which
/// codegen treats as separate values. An unrolled loop of extent 0 becomes an Evaluate(0)
/// no-op; one whose extent is not constant is left as a serial loop.
/// Returns `f` itself when there is no unrolled loop.
PrimFunc unrollLoops(const PrimFunc& f);

}  // namespace tessel
