// Host/device split: the lowered function becomes a sequence of GPU kernels.
#pragma once

#include <optional>
#include <string>

#include "core/ir/Stmt.h"
#include "core/support/Error.h"

namespace tessel {

/// A statement that cannot run on the GPU, with the loop that shows it.
struct HostCodeProblem {
  std::string loop;     ///< The outermost loop of the nest (empty if none).
  std::string message;  ///< What is wrong.
  std::string hint;
};

/// Wraps each top-level loop nest of `f` in AttrStmt(kDeviceKernelAttr, index): one kernel
/// per nest, launched in order. Global allocations around the nests (stages computed at root
/// between kernels) stay around them: device memory the host allocates for the kernels (see
/// deviceWorkspaces). A nest with bound loops must start with one (what runs outside them
/// would run once per thread); one that does not gives `problem` and returns `f`. A nest
/// with no bound loop at all (a reduction to a single value) is a kernel of one thread.
PrimFunc splitHostDevice(const PrimFunc& f, std::optional<HostCodeProblem>* problem);

}  // namespace tessel
