// The lowering pipeline: schedule -> loop nest -> ... -> the loop IR code generation takes.
#pragma once

#include <string>
#include <vector>

#include "compiler/schedule/Schedule.h"
#include "core/ir/Stmt.h"
#include "core/target/Target.h"

namespace tessel {

/// The IR after one lowering step, for the Studio's step view and `tessel lower --all-steps`.
struct LoweringStep {
  std::string name;
  PrimFunc func;
  double milliseconds = 0;
};

struct LoweredFunction {
  PrimFunc func;                    ///< The final IR.
  std::vector<LoweringStep> steps;  ///< The IR after every step, in order.
};

/// Lowers `schedule` into a function named `name` over `args` (inputs and outputs in
/// parameter order). User mistakes in the schedule come back as a Diagnostic.
Expected<LoweredFunction> lower(const Schedule& schedule, const std::vector<te::Tensor>& args,
                                const std::string& name);

/// The same for `target`: a GPU target adds the GPU steps (gpuLoweringStepNames) after the
/// others, and its lowered function holds one AttrStmt per kernel (see GpuKernel.h).
Expected<LoweredFunction> lower(const Schedule& schedule, const std::vector<te::Tensor>& args,
                                const std::string& name, const Target& target);

/// The names of the lowering steps, in order.
const std::vector<std::string>& loweringStepNames();
/// The steps a GPU target adds after them.
const std::vector<std::string>& gpuLoweringStepNames();

}  // namespace tessel
