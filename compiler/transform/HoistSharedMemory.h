// Storage scopes on GPUs: shared memory is declared once per block, at the kernel's top.
#pragma once

#include "core/ir/Stmt.h"

namespace tessel {

/// Moves every allocation of scope "shared" from where its stage was attached (inside the
/// loops of the threads that fill it) to the top of its kernel, so all of the block's
/// threads address the same memory; its size is constant (bound inference makes it so).
/// Local allocations stay where they are: each thread has its own, in registers.
PrimFunc hoistSharedMemory(const PrimFunc& f);

}  // namespace tessel
