// Barriers between the threads of a GPU block where shared memory passes data between them.
#pragma once

#include "core/ir/Stmt.h"

namespace tessel {

/// In every kernel, adds sync_threads() where one statement reads shared memory that an
/// earlier statement of the same sequence wrote (other threads wrote part of it: read after
/// write), and at the end of a loop body that writes and reads a shared buffer (the next
/// iteration overwrites what slower threads may still be reading: write after read).
/// verifyGpuCode then refuses a barrier that not every thread of the block reaches.
PrimFunc insertBarriers(const PrimFunc& f);

}  // namespace tessel
