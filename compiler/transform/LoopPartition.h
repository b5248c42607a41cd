// Loop partitioning: split loops so the hot part runs without its tail conditions.
#pragma once

#include "core/ir/Stmt.h"

namespace tessel {

/// Splits loops whose body tests likely(cond) on the loop variable, so the main part runs
/// without the test. A non-divisible split such as
///
///   for (io, 0, 4) { for (ii, 0, 32) { if (likely(io*32 + ii < 100)) {...} } }
///
/// becomes a main loop io in [0, 3) whose body has no condition, followed by the tail
/// io in [3, 4) that keeps it.
///
/// For each loop (outermost first) whose min and extent are constant under the enclosing
/// loops, the conditions inside likely() in IfThenElse and Select conditions that use
/// its variable are tried in order. For a condition, the largest sub-range of the loop on
/// which it is provable for every value of the loops and lets between the loop and the
/// test is found with the arithmetic Analyzer (a conjunction is split; each conjunct is
/// provable on a prefix or a suffix of the range). If that sub-range is a non-empty proper
/// part of the loop, the loop becomes up to three consecutive loops over the same variable
/// and body: before, main (condition provable, so the test disappears) and after (which
/// keep it; inner loops of those parts are not partitioned on it again). Anywhere a
/// likely(cond) is provably true or false under the enclosing loop ranges, the test is
/// resolved, and loops left empty are removed. Loops with symbolic extents, bound GPU
/// threads, and loops where nothing can be proven are left alone.
/// Returns `f` itself when nothing was partitioned or resolved.
PrimFunc loopPartition(const PrimFunc& f);

}  // namespace tessel
