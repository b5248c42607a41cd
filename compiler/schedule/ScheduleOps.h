// From a schedule to a loop nest: the first step of lowering.
#pragma once

#include <string>
#include <vector>

#include "compiler/schedule/InferBound.h"

namespace tessel {

/// Builds the loop nest of `schedule` as a PrimFunc over `args` (its inputs and outputs,
/// in parameter order), with stage regions from `mode`. Intermediate stages are
/// BufferRealize'd at their attach points; accesses are still multi-dimensional.
/// Returns a Diagnostic for schedules that cannot be lowered (a vectorized loop without a
/// constant extent, an argument that is not an input or output, ...).
Expected<PrimFunc> scheduleOps(const Schedule& schedule, const std::vector<te::Tensor>& args, const std::string& name,
                               BoundMode mode);

}  // namespace tessel
