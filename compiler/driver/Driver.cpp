// The graph compiler driver: import, passes, one kernel per operation, memory plan, executor.
#include "compiler/driver/Driver.h"

#include <algorithm>
#include <optional>
#include <thread>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "compiler/driver/FusedKernel.h"
#include "compiler/driver/ModelPlan.h"
#include "compiler/driver/ModelProfile.h"
#include "compiler/export/ExportModule.h"
#include "compiler/frontend/onnx/OnnxImporter.h"
#include "compiler/graph/AlterLayout.h"
#include "compiler/graph/DeadCodeElimination.h"
#include "compiler/graph/DecomposeConvTranspose.h"
#include "compiler/graph/DecomposeEinsum.h"
#include "compiler/graph/FakeQuantizationToInteger.h"
#include "compiler/graph/EliminateCommonSubexpr.h"
#include "compiler/graph/FoldConstant.h"
#include "compiler/graph/FuseOps.h"
#include "compiler/graph/InferTypes.h"
#include "compiler/graph/SimplifyInference.h"
#include "compiler/lower/Build.h"
#include "compiler/lower/Lower.h"
#include "compiler/opdefs/OpRegistry.h"
#include "core/support/Stopwatch.h"

namespace tessel::driver {

const char* const kProfileCancelled = "the profile was cancelled";

using graph::Graph;
using graph::Value;

namespace {

/// Graph inputs whose values some operation needs when compiling: read at a by-value slot
/// (Reshape's shape) directly or through operations computing that value (a window's size
/// cast and fed to Range).
std::set<std::string> inputsNeededByValue(const Graph& graph) {
  std::vector<Value> needed;
  for (const graph::OperationNode* op : graph.operations()) {
    const graph::OpDef* def = graph::OpRegistry::global().find(op->op);
    if (!def) continue;
    for (int slot : def->valueInputs)
      if (op->hasInput(size_t(slot))) needed.push_back(op->inputs[size_t(slot)]);
  }
  std::set<std::string> names;
  for (const graph::InputNode* input : graph::inputsFeeding(needed)) names.insert(input->name);
  return names;
}

/// The share of a compile's progress bar the passes take; lowering the kernels takes the rest
/// (on the example models the two take about as long).
constexpr int kPassShare = 50;

const char* const kLoadCancelled = "the import was cancelled";
const char* const kCompileCancelled = "the compile was cancelled";
const char* const kExportCancelled = "the export was cancelled";

/// Progress reports that never go backwards, whatever the steps compute.
class ProgressReporter {
public:
  explicit ProgressReporter(const std::function<void(int, const std::string&)>& report) : report_(report) {}
  void operator()(int percent, const std::string& what) {
    percent_ = std::clamp(percent, percent_, 100);
    if (report_) report_(percent_, what);
  }

private:
  const std::function<void(int, const std::string&)>& report_;
  int percent_ = 0;
};

/// A pass without options from a function returning either Graph or Expected<Graph>.
template <class F>
graph::Pass makePass(std::string name, int minOptLevel, F function) {
  return graph::Pass(std::move(name), minOptLevel, [function](const Graph& g) -> Expected<Graph> { return function(g); });
}

}  // namespace

namespace {

/// The common half of loadModel and loadModelBytes: imports with `import`, binds the inputs the
/// compiler needs by value (then imports again) and infers every type.
Expected<Graph> importAndInferTypes(const std::function<Expected<Graph>(const frontend::OnnxImportOptions&)>& import,
                                    frontend::OnnxImportOptions importOptions, const LoadOptions& options,
                                    const std::string& sourceName, Stopwatch& stopwatch, ProgressReporter& progress) {
  // Importing the nodes takes most of a load; inferring the types the last tenth.
  importOptions.progress = [&](int percent, const std::string& what) { progress(percent * 9 / 10, what); };
  auto imported = import(importOptions);
  if (!imported) return imported.error();
  if (!options.inputValues.empty()) {
    // Bind the inputs the compiler needs by value, then import again with them as constants.
    std::set<std::string> needed = inputsNeededByValue(*imported);
    for (auto& [name, value] : options.inputValues)
      if (needed.count(name)) importOptions.inputValues[name] = value;
    if (!importOptions.inputValues.empty()) {
      imported = import(importOptions);
      if (!imported) return imported.error();
    }
  }
  if (options.cancelled && options.cancelled()) return Diagnostic{kLoadCancelled, sourceName, 0, 0, ""};
  progress(90, "Inferring types");
  if (options.times) options.times->importSeconds = stopwatch.lap();
  auto typed = graph::inferTypes(*imported);
  if (options.times) options.times->inferTypesSeconds = stopwatch.lap();
  if (!typed) {
    // The message names the node and op already; the location becomes the file.
    Diagnostic d = typed.error();
    d.location = sourceName;
    return d;
  }
  progress(100, "Imported " + std::to_string(typed->operationCount()) + " operations");
  return typed;
}

frontend::OnnxImportOptions importOptionsFor(const LoadOptions& options) {
  frontend::OnnxImportOptions importOptions;
  importOptions.inputShapes = options.inputShapes;
  // Control flow is compiled for known deciding values only where they are integers or
  // booleans (trip counts, conditions, positions). Control flow decided by floating-point data
  // (an If on the sign of a sum) would fold the whole model into constants for that one input,
  // so the model runs with its control flow interpreted instead (InterpretedModel.h).
  for (const auto& [name, value] : options.inputValues)
    if (value.dtype().code != runtime::DataType::Code::Float && value.dtype().code != runtime::DataType::Code::BFloat)
      importOptions.knownInputValues.emplace(name, value);
  importOptions.sequenceLengths = options.sequenceLengths;
  importOptions.cancelled = options.cancelled;
  return importOptions;
}

}  // namespace

Expected<Graph> loadModel(const std::string& path, const LoadOptions& options) {
  Stopwatch stopwatch;
  frontend::OnnxImportOptions importOptions = importOptionsFor(options);
  ProgressReporter progress(options.progress);
  if (!options.inputValues.empty()) {
    // A value's shape stands in for dimensions the model leaves open; a static declared
    // shape stays the model's (a mismatching value is reported when it is set).
    auto declared = frontend::readOnnxInputs(path);
    if (!declared) return declared.error();
    for (auto& input : *declared) {
      auto value = options.inputValues.find(input.name);
      if (value == options.inputValues.end() || importOptions.inputShapes.count(input.name)) continue;
      bool open = !input.rankKnown;
      for (int64_t d : input.shape) open = open || d < 0;
      if (open) importOptions.inputShapes[input.name] = value->second.shape();
    }
  }
  auto import = [&](const frontend::OnnxImportOptions& o) { return frontend::importOnnxFile(path, o); };
  return importAndInferTypes(import, std::move(importOptions), options, path, stopwatch, progress);
}

Expected<Graph> loadModelBytes(const std::string& bytes, const std::string& sourceName, const LoadOptions& options) {
  Stopwatch stopwatch;
  ProgressReporter progress(options.progress);
  auto import = [&](const frontend::OnnxImportOptions& o) { return frontend::importOnnxBytes(bytes, sourceName, o); };
  return importAndInferTypes(import, importOptionsFor(options), options, sourceName, stopwatch, progress);
}

graph::PassManager standardPasses(const Target& target) {
  // Opt levels as TVM's: 0 keeps only what compiling needs (FoldConstant makes the shapes
  // that Reshape and friends read constant), 1 fuses, 2 removes common subexpressions, 3
  // changes layouts.
  std::vector<graph::Pass> passes;
  passes.push_back(makePass("InferTypes", 0, [target](const Graph& g) { return graph::inferTypes(g, target); }));
  passes.push_back(makePass("SimplifyInference", 0, graph::simplifyInference));
  // Before FoldConstant, which would turn dequantized constant weights into float ones.
  passes.push_back(makePass("FakeQuantizationToInteger", 1, graph::fakeQuantizationToInteger));
  passes.push_back(makePass("FoldConstant", 0, graph::foldConstant));
  passes.push_back(makePass("DecomposeConvTranspose", 1, graph::decomposeConvTranspose));
  passes.push_back(makePass("DecomposeEinsum", 1, graph::decomposeEinsum));
  passes.push_back(makePass("EliminateCommonSubexpr", 2, graph::eliminateCommonSubexpr));
  passes.push_back(makePass("DeadCodeElimination", 0, [](const Graph& g) { return graph::deadCodeElimination(g); }));
  passes.push_back(graph::Pass("AlterLayout", 3, graph::AlterLayoutOptions::declared(),
                               [target](const Graph& g, const graph::PassConfig& config) {
                                 return graph::alterLayout(g, target, graph::AlterLayoutOptions::fromConfig(config));
                               }));
  passes.push_back(makePass("FuseOps", 1, [](const Graph& g) { return graph::fuseOps(g); }));
  return graph::PassManager(std::move(passes));
}

Expected<CompiledModel> compileGraph(const Graph& input, const CompileOptions& options) {
  auto cancelled = [&] { return options.cancelled && options.cancelled(); };
  auto cancellation = [] { return Diagnostic{kCompileCancelled, "compileGraph", 0, 0, ""}; };
  ProgressReporter progress(options.progress);

  CompiledModel model;
  Stopwatch stopwatch;
  graph::PassManager passes = standardPasses(options.target);
  graph::PassObserver observer;
  observer.cancelled = cancelled;
  observer.starting = [&](size_t index, size_t count, const std::string& name) {
    progress(int(index * kPassShare / count), name);
  };
  auto snapshots = passes.run(input, options.passes, observer);
  if (!snapshots) return cancelled() ? cancellation() : snapshots.error();
  model.snapshots = std::move(*snapshots);
  model.optimized = model.snapshots.empty() ? input : model.snapshots.back().graph;
  model.passSeconds = stopwatch.lap();
  if (cancelled()) return cancellation();

  progress(kPassShare, "Lowering " + std::to_string(model.optimized.operationCount()) + " kernels");
  auto planned = planModel(model.optimized, options.target, [&](size_t index, size_t count, const std::string& name) {
    if (cancelled()) return false;
    progress(kPassShare + int(index * (100 - kPassShare) / count),
             "Lowering kernel " + std::to_string(index + 1) + " of " + std::to_string(count) + ": " + name);
    return true;
  }, options.tunedSchedules.get());
  if (!planned) return cancelled() ? cancellation() : planned.error();
  if (cancelled()) return cancellation();
  model.kernels = std::move(planned->kernels);
  model.plan = std::move(planned->plan);
  model.params = std::move(planned->params);
  model.memory = planned->memory;
  model.tuningNotes = std::move(planned->tuningNotes);
  model.lowerSeconds = stopwatch.lap();
  progress(100, "Compiled " + std::to_string(model.kernels.size()) + " kernels");
  return model;
}

bool isCancellation(const Diagnostic& diagnostic) {
  return diagnostic.message == kCompileCancelled || diagnostic.message == kExportCancelled ||
         diagnostic.message == kProfileCancelled ||
         diagnostic.message == kLoadCancelled || frontend::importCancelled(diagnostic);
}

namespace {

/// LLVM's optimization and code generation dominate compile time (about 90% for ResNet-18),
/// and one LLVM module compiles on one core. The kernels are independent, so they are
/// split round-robin into one module per core, each compiled on its own thread with its
/// own LLVM context and JIT.
Expected<std::vector<std::shared_ptr<JITModule>>> buildJITInParallel(const std::vector<PrimFunc>& functions,
                                                                     const Target& target) {
  // Identical kernels stay in one module, where code generation compiles them once.
  std::vector<std::vector<size_t>> groups = groupIdenticalFunctions(functions);
  size_t jobs = std::max(1u, std::thread::hardware_concurrency());
  jobs = std::min(jobs, std::max<size_t>(1, groups.size() / 2));
  std::vector<std::vector<PrimFunc>> parts(jobs);
  for (size_t g = 0; g < groups.size(); ++g)
    for (size_t index : groups[g]) parts[g % jobs].push_back(functions[index]);
  std::vector<std::optional<Expected<std::shared_ptr<JITModule>>>> results(jobs);
  std::vector<std::thread> threads;
  for (size_t j = 1; j < jobs; ++j)
    threads.emplace_back([&, j] { results[j].emplace(buildJIT(parts[j], target)); });
  results[0].emplace(buildJIT(parts[0], target));
  for (auto& thread : threads) thread.join();
  std::vector<std::shared_ptr<JITModule>> modules;
  for (auto& result : results) {
    if (!*result) return result->error();
    modules.push_back(**result);
  }
  return modules;
}

}  // namespace

Expected<std::unique_ptr<runtime::GraphExecutor>> createExecutor(const CompiledModel& model, const Target& target) {
  std::vector<PrimFunc> functions;
  for (auto& kernel : model.kernels) functions.push_back(kernel.function);
  auto built = buildJITInParallel(functions, target);
  if (!built) return built.error();
  auto modules = std::make_shared<std::vector<std::shared_ptr<JITModule>>>(std::move(*built));
  auto resolve = [modules](const std::string& symbol) -> TesselKernel {
    for (auto& module : *modules)
      if (TesselKernel kernel = module->getKernel(symbol)) return kernel;
    return nullptr;
  };
  try {
    return runtime::GraphExecutor::create(model.plan, resolve, model.params,
                                          std::static_pointer_cast<const void>(modules), "<compiled model>");
  } catch (const std::exception& error) {
    return Diagnostic{std::string("cannot load the compiled model: ") + error.what(), "", 0, 0, ""};
  }
}

Status exportModel(const CompiledModel& model, const std::string& directory, const Target& target) {
  ExportOptions options;
  options.target = target;
  return exportModel(model, directory, options);
}

Status exportModel(const CompiledModel& model, const std::string& directory, const ExportOptions& options) {
  std::vector<PrimFunc> functions;
  for (auto& kernel : model.kernels) functions.push_back(kernel.function);
  Status exported = exportModule(directory, functions, model.plan, model.params, options);
  // exportModule's own cancellation message is not the driver's business to know; the token is.
  if (!exported && options.cancelled && options.cancelled()) return Diagnostic{kExportCancelled, directory, 0, 0, ""};
  return exported;
}

}  // namespace tessel::driver
