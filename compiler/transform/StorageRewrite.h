// Storage rewriting: drop, hoist and share the temporary allocations of a lowered function.
#pragma once

#include "core/ir/Stmt.h"

namespace tessel {

/// Reduces the memory a flattened function allocates, in three steps:
///
/// 1. An Allocate whose buffer is never read is removed, with every store to it (loops
///    left empty disappear).
/// 2. An Allocate of constant size that is the whole body of a serial loop is hoisted out
///    of the loop (repeatedly, through nested serial loops), so it is allocated once rather
///    than per iteration. Parallel loops keep theirs: each thread needs its own.
/// 3. Within one block (a sequence of statements and the allocations nested in it), flat
///    constant-size allocations of the same dtype and scope share memory when their
///    lifetimes, from the first to the last statement of the block that touches them, do
///    not overlap. The shared allocation keeps the first buffer's name and the larger size,
///    and is placed at the top of the block.
///
/// Returns `f` itself when there is nothing to do.
PrimFunc storageRewrite(const PrimFunc& f);

}  // namespace tessel
