// The graph compiler's front door: a model file to an optimized graph, fused kernels and an
// execution plan, run in process (JIT) or exported as a deployable module.
//
// Every command that handles models (`tessel compile/run/bench/inspect`, the Studio, the
// conformance suite) goes through these functions, so they all see the same pipeline.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compiler/codegen/llvm/CodeGenLLVM.h"
#include "compiler/export/ExportModule.h"
#include "compiler/graph/PassManager.h"
#include "compiler/ops/Workload.h"
#include "core/graph/Graph.h"
#include "core/ir/Stmt.h"
#include "core/support/Error.h"
#include "runtime/GraphExecutor.h"
#include "runtime/GraphPlan.h"
#include "runtime/NDArray.h"

namespace tessel::driver {

/// Where a load's time went (`tessel compile --time-report`).
struct LoadTimes {
  double importSeconds = 0;      ///< Reading the file, converting its opset, building the graph (twice when inputs are bound by value).
  double inferTypesSeconds = 0;  ///< Inferring every value's type.
};

struct LoadOptions {
  /// --input-shape: shapes for inputs with dynamic or missing dimensions.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// Values known for some inputs (`tessel run` reads them before compiling). An input the
  /// compiler needs by value (a shape given to Reshape), or an integer or boolean one that
  /// decides control flow (a trip count), is bound as a constant; the others stay inputs.
  std::map<std::string, runtime::NDArray> inputValues;
  /// How many tensors each sequence input holds (frontend::OnnxImportOptions::sequenceLengths).
  std::map<std::string, size_t> sequenceLengths;
  /// Asked between the imported nodes and before inferring types; once it returns true the
  /// load stops with a Diagnostic that isCancellation() recognizes. Empty: never cancelled.
  std::function<bool()> cancelled;
  /// Told how far the load is (0-100, never decreasing): nodes imported, then types inferred.
  std::function<void(int percent, const std::string& what)> progress;
  /// When given, receives where the load's time went.
  LoadTimes* times = nullptr;
};

/// Imports a model (ONNX) and infers every type. Diagnostics name the file, node and op.
Expected<graph::Graph> loadModel(const std::string& path, const LoadOptions& options = {});
/// The same from a model's bytes in memory (a segment of an interpreted model); `sourceName`
/// names them in messages. Every input must have a static shape (inputShapes are applied).
Expected<graph::Graph> loadModelBytes(const std::string& bytes, const std::string& sourceName,
                                      const LoadOptions& options = {});

/// The standard pass pipeline, in order (InferTypes, SimplifyInference,
/// FakeQuantizationToInteger, FoldConstant,
/// DecomposeConvTranspose, DecomposeEinsum, EliminateCommonSubexpr, DeadCodeElimination,
/// AlterLayout, FuseOps).
/// Their options
/// (CompileOptions::passes.config, `--pass-config`) are listed by configKeys(): AlterLayout's
/// "AlterLayout.blocked_activations" and "AlterLayout.pack_weights".
graph::PassManager standardPasses(const Target& target = hostTarget());

/// Schedules found by tuning, as trace text by workload key (WorkloadKey::text), all for the
/// target being compiled for: what a tuning-records database gives for that target
/// (tuner/records). A kernel whose key is here replays that trace instead of its default
/// schedule.
struct TunedSchedules {
  std::map<std::string, std::string> traces;
};

struct CompileOptions {
  graph::PassOptions passes;
  /// The machine to compile for: default schedules, passes that depend on the vector width,
  /// code generation and workload keys all take it.
  Target target = hostTarget();
  /// Tuned schedules to apply (`--tuning-records`); null: every kernel takes its default. A
  /// tuned trace that no longer replays or lowers (a record from an older compiler) is
  /// skipped with a note in CompiledModel::tuningNotes, and the kernel keeps its default.
  std::shared_ptr<const TunedSchedules> tunedSchedules;
  /// Asked on the compiling thread before every pass and before lowering each kernel; once
  /// it returns true the compile stops there and returns the isCancellation() Diagnostic, so
  /// a cancel takes effect within one pass or one kernel. Empty: never cancelled.
  std::function<bool()> cancelled;
  /// Told on the compiling thread what the compile is doing: `percent` never decreases.
  /// Each pass is named as it starts ("FuseOps") within the first half, then lowering starts
  /// ("Lowering 48 kernels") and names each kernel in the second half ("Lowering kernel 3 of
  /// 48: conv1"); the last report, on success only, is 100 ("Compiled 48 kernels"). Empty:
  /// no reports.
  std::function<void(int percent, const std::string& what)> progress;
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
  std::string workloadKey;               ///< WorkloadKey::text; empty for copy kernels.
  std::string workloadHash;              ///< WorkloadKey::hash.
  bool tuned = false;                    ///< Scheduled by a tuned record, not the default.
  std::string tunedTrace;                ///< That record's schedule (trace text), when tuned.
  /// Building its tensor expression and schedule (the default's, or replaying the tuned one).
  double scheduleMilliseconds = 0;
  /// Each lowering step's time, in the order of loweringStepNames().
  std::vector<double> loweringMilliseconds;
};

struct CompiledModel {
  graph::Graph optimized;                       ///< After every pass.
  std::vector<graph::PassSnapshot> snapshots;   ///< One per pass.
  std::vector<CompiledKernel> kernels;
  runtime::GraphPlan plan;                      ///< Tensors, storages (planned), nodes.
  std::map<std::string, runtime::NDArray> params;  ///< Constant data by param tensor name.
  MemoryReport memory;
  double passSeconds = 0, lowerSeconds = 0;
  /// Tuned schedules that could not be used, one line each naming the kernel and why.
  std::vector<std::string> tuningNotes;
};

/// Runs the passes, builds one kernel per operation left (fused or not), plans memory and
/// makes the plan. A Diagnostic names the node and op that could not be compiled; a compile
/// stopped by options.cancelled returns the isCancellation() one.
Expected<CompiledModel> compileGraph(const graph::Graph& graph, const CompileOptions& options = {});

/// JIT-compiles the kernels and loads the plan into an executor (in this process).
Expected<std::unique_ptr<runtime::GraphExecutor>> createExecutor(const CompiledModel& model,
                                                                 const Target& target = hostTarget());

/// Writes a deployable module directory (kernels.so, graph.json, params.bin).
Status exportModel(const CompiledModel& model, const std::string& directory,
                   const Target& target = hostTarget());
/// The same with every export option: the target, the linker, and the progress and cancel
/// callbacks (see exportModule: a cancelled or failed export leaves the directory's previous
/// module as it was). A cancelled export returns the isCancellation() Diagnostic.
Status exportModel(const CompiledModel& model, const std::string& directory, const ExportOptions& options);

/// Whether `diagnostic` only says that loadModel, compileGraph or exportModel stopped because their
/// `cancelled` callback asked them to: whoever cancelled on purpose shows nothing for it.
bool isCancellation(const Diagnostic& diagnostic);

}  // namespace tessel::driver
