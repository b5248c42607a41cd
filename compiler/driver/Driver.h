// The graph compiler's front door: a model file to an optimized graph, fused kernels and an
// execution plan, run in process (JIT) or exported as a deployable module.
//
// Every command that handles models (`tessel compile/run/bench/inspect`, the Studio, the
// conformance suite) goes through these functions, so they all see the same pipeline.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compiler/codegen/llvm/CodeGenLLVM.h"
#include "compiler/graph/PassManager.h"
#include "compiler/ops/Workload.h"
#include "core/graph/Graph.h"
#include "core/ir/Stmt.h"
#include "core/support/Error.h"
#include "runtime/GraphExecutor.h"
#include "runtime/GraphPlan.h"
#include "runtime/NDArray.h"

namespace tessel::driver {

struct LoadOptions {
  /// --input-shape: shapes for inputs with dynamic or missing dimensions.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// Values known for some inputs (`tessel run` reads them before compiling). An input the
  /// compiler needs by value (a shape given to Reshape) is bound as a constant; the others
  /// stay inputs.
  std::map<std::string, runtime::NDArray> inputValues;
};

/// Imports a model (ONNX) and infers every type. Diagnostics name the file, node and op.
Expected<graph::Graph> loadModel(const std::string& path, const LoadOptions& options = {});

/// The standard pass pipeline, in order (InferTypes, SimplifyInference, FoldConstant,
/// EliminateCommonSubexpr, DeadCodeElimination, AlterLayout, FuseOps). Their options
/// (CompileOptions::passes.config, `--pass-config`) are listed by configKeys(): AlterLayout's
/// "AlterLayout.blocked_activations" and "AlterLayout.pack_weights".
graph::PassManager standardPasses(const ScheduleTarget& target = ScheduleTarget::host());

struct CompileOptions {
  graph::PassOptions passes;
  ScheduleTarget schedule = ScheduleTarget::host();
  TargetInfo target = TargetInfo::host();
};

/// Memory planning's result for reports: bytes of intermediate tensors with and without reuse.
struct MemoryReport {
  int64_t plannedBytes = 0;  ///< Peak bytes of the planned storages.
  int64_t naiveBytes = 0;    ///< Sum of every intermediate tensor's bytes.
  int storageCount = 0;
};

/// One compiled kernel of the plan: a fused group of primitive operations.
struct CompiledKernel {
  std::string name;                      ///< Symbol name, unique in the module.
  const graph::OperationNode* node = nullptr;  ///< The (fused) operation in `optimized`.
  PrimFunc function;                     ///< Lowered.
  double flops = 0;
};

struct CompiledModel {
  graph::Graph optimized;                       ///< After every pass.
  std::vector<graph::PassSnapshot> snapshots;   ///< One per pass.
  std::vector<CompiledKernel> kernels;
  runtime::GraphPlan plan;                      ///< Tensors, storages (planned), nodes.
  std::map<std::string, runtime::NDArray> params;  ///< Constant data by param tensor name.
  MemoryReport memory;
  double passSeconds = 0, lowerSeconds = 0;
};

/// Runs the passes, builds one kernel per operation left (fused or not), plans memory and
/// makes the plan. A Diagnostic names the node and op that could not be compiled.
Expected<CompiledModel> compileGraph(const graph::Graph& graph, const CompileOptions& options = {});

/// JIT-compiles the kernels and loads the plan into an executor (in this process).
Expected<std::unique_ptr<runtime::GraphExecutor>> createExecutor(const CompiledModel& model,
                                                                 const TargetInfo& target = TargetInfo::host());

/// Writes a deployable module directory (kernels.so, graph.json, params.bin).
Status exportModel(const CompiledModel& model, const std::string& directory,
                   const TargetInfo& target = TargetInfo::host());

}  // namespace tessel::driver
