// A whole model compiled for a GPU target (CUDA or OpenCL) into one GPU module: one function
// per operation after fusion, every tensor a device buffer (inputs, weights as constants, intermediates
// as workspaces, outputs), launched in the graph's order.
#pragma once

#include <string>

#include "compiler/driver/RunModel.h"
#include "compiler/export/GpuModuleExport.h"
#include "core/graph/Graph.h"

namespace tessel::driver {

struct GpuModelResult {
  std::string moduleJson;  ///< The .tgpu file's text.
  size_t operations = 0;   ///< Operations compiled after fusion (one function each).
  size_t kernels = 0;      ///< Kernels launched per run.
  /// Operations compiled with the generic GPU schedule (no schedule of their own for GPUs).
  size_t genericSchedules = 0;
  /// The module's outputs, in the model's output order.
  std::vector<std::string> outputNames;
};

/// Compiles `model` (as imported) for `target`: the passes up to opt level 2 (types, inference
/// simplification, constant folding, fusion, common subexpressions; not the CPU's layouts),
/// then each operation's kernel, a fused group as the CPU composes it, with its anchor's own
/// schedule where that lowers for the GPU (matmul, dense, conv2d) and the generic GPU
/// schedule otherwise. A Diagnostic names the
/// operation that cannot be compiled.
Expected<GpuModelResult> compileModelForGpu(const graph::Graph& model, const Target& target,
                                            const GpuModuleOptions& options = {});

/// `tessel run MODEL --target opencl|cuda`: compiles the model for `target`, runs it once on
/// the device the runtime finds (OpenCL through PoCL on a CPU), and compares with the
/// expected outputs as runModel does. Module directories and sequence or string inputs are
/// not supported on GPUs (a Diagnostic says so).
Expected<RunResult> runModelOnGpu(const RunRequest& request, const Target& target);

}  // namespace tessel::driver
