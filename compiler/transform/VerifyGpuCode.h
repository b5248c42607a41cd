// Checks that a lowered GPU function can be launched: what the schedule asked of a block
// fits the device, every loop that must be bound is, and every barrier is reached.
#pragma once

#include <optional>
#include <string>

#include "core/ir/Stmt.h"
#include "core/target/Target.h"

namespace tessel {

struct GpuCodeProblem {
  std::string loop;  ///< The loop (or thread tag) at fault, to find the schedule line; may be empty.
  std::string message;
  std::string hint;
};

/// The first problem of the kernels of `f` (after host_device_split) on `target`, if any:
/// a block of more threads or more shared memory than the device allows, a bound loop whose
/// extent is not a constant, a parallel loop inside a kernel, or a barrier inside a loop
/// bound to fewer threads than the block has (the threads it leaves out would never arrive).
std::optional<GpuCodeProblem> verifyGpuCode(const PrimFunc& f, const Target& target);

}  // namespace tessel
