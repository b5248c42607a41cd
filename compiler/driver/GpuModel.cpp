// Whole models for GPU targets (see GpuModel.h).
#include "compiler/driver/GpuModel.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "compiler/driver/Driver.h"
#include "compiler/driver/FusedKernel.h"
#include "compiler/frontend/onnx/OnnxImporter.h"
#include "compiler/lower/Lower.h"
#include "compiler/ops/GpuSchedules.h"
#include "compiler/ops/Workload.h"
#include "core/te/Tensor.h"
#include "compiler/transform/GpuKernel.h"
#include "runtime/Error.h"
#include "runtime/GpuModule.h"

namespace tessel::driver {

namespace {
struct ValueKey {
  const graph::GraphNode* node;
  int index;
  bool operator<(const ValueKey& other) const {
    return node != other.node ? node < other.node : index < other.index;
  }
};

std::string bytesOf(const runtime::NDArray& array) {
  return std::string(static_cast<const char*>(array.data()), size_t(array.byteSize()));
}

// A constant's bytes go into the module; an empty constant has none, so it is a workspace
// (the module would take a param without data for an input).
void setConstant(GpuModuleBuffer& buffer, const runtime::NDArray& data) {
  buffer.constantBytes = bytesOf(data);
  if (buffer.constantBytes.empty()) buffer.workspace = true;
}

bool isEmpty(const graph::TensorType& type) {
  return std::find(type.shape.begin(), type.shape.end(), int64_t(0)) != type.shape.end();
}

// `base` made unique among `used` (a suffix on repeats); with `identifier`, also usable as a C
// identifier (function names become kernel names).
std::string uniqueName(const std::string& base, std::map<std::string, int>& used, bool identifier = false) {
  std::string name = base;
  if (identifier) {
    name.clear();
    for (char c : base) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) name = "op_" + name;
  }
  int count = used[name]++;
  return count == 0 ? name : name + "_" + std::to_string(count);
}

// The operation's kernel lowered for the GPU: its own schedule when that lowers there, else
// the generic one.
Expected<LoweredFunction> lowerForGpu(const graph::OpKernel& kernel, const std::string& name, const Target& target,
                                      bool* generic) {
  const Workload& workload = kernel.workload;
  if (kernel.schedule) {
    auto own = kernel.schedule(workload, target);
    if (own) {
      auto lowered = lower(*own, workload.args(), name, target);
      // A CPU schedule without bound loops lowers too, as kernels of one thread: not that.
      bool spread = lowered.ok();
      if (spread)
        for (const AttrStmtNode* k : deviceKernels(lowered->func))
          spread = spread && kernelLaunch(lowered->func, k).threadsPerBlock() > 1;
      if (spread) {
        *generic = false;
        return lowered;
      }
    }
  }
  *generic = true;
  auto schedule = defaultGpuSchedule(workload, target);
  if (!schedule) return schedule.error();
  return lower(*schedule, workload.args(), name, target);
}
}  // namespace

Expected<GpuModelResult> compileModelForGpu(const graph::Graph& model, const Target& target,
                                            const GpuModuleOptions& options) {
  if (target.kind == TargetKind::Cpu)
    return Diagnostic{"compileModelForGpu needs a cuda or opencl target", "model", 0, 0, ""};
  graph::PassOptions passOptions;
  // Fusion (level 1) and common subexpressions (2), not the CPU's layouts (3): a fused group
  // keeps its anchor's GPU schedule (a conv with its bias and ReLU is one kernel), and an
  // injective group without one gets the generic schedule, one thread per element.
  passOptions.optLevel = 2;
  auto snapshots = standardPasses(target).run(model, passOptions);
  if (!snapshots) return snapshots.error();
  graph::Graph optimized = snapshots->empty() ? model : snapshots->back().graph;

  std::vector<GpuModuleBuffer> buffers;
  std::map<ValueKey, size_t> bufferOf;
  std::map<std::string, int> usedNames;
  auto addBuffer = [&](const graph::GraphNode* node, int index, const graph::TensorType& type, const std::string& name) {
    GpuModuleBuffer buffer{uniqueName(name, usedNames), type.dtype, type.shape, false, false, ""};
    bufferOf[{node, index}] = buffers.size();
    buffers.push_back(std::move(buffer));
    return buffers.size() - 1;
  };
  for (const graph::Value& input : optimized.inputs) addBuffer(input.node(), input.index(), input.type(), input.name());
  // Every operation's outputs are scratch until a model output claims them.
  std::vector<GpuModuleFunction> functions;
  GpuModelResult result;
  std::map<std::string, int> functionNames;
  for (const graph::OperationNode* op : optimized.operations()) {
    auto kernel = buildKernelForNode(*op, target);
    if (!kernel) return kernel.error();
    std::string name = uniqueName(op->op + "_" + op->name, functionNames, /*identifier=*/true);
    bool generic = false;
    auto lowered = lowerForGpu(*kernel, name, target, &generic);
    if (!lowered)
      return Diagnostic{op->op + " '" + op->name + "' cannot be compiled for " + target.toString() + ": " +
                            lowered.error().message,
                        op->name, 0, 0, lowered.error().hint};
    GpuModuleFunction function{lowered->func, {}};
    for (size_t i = 0; i < kernel->workload.inputs.size(); ++i) {
      const graph::Value& value = op->inputs.at(size_t(kernel->inputIndices.at(i)));
      auto found = bufferOf.find({value.node(), value.index()});
      if (found == bufferOf.end()) {
        const graph::ConstantNode* constant = graph::asConstant(value.node());
        if (!constant)
          return Diagnostic{"input " + std::to_string(i) + " of " + op->name + " comes from nowhere", op->name, 0, 0, ""};
        size_t index = addBuffer(value.node(), value.index(), value.type(), constant->name);
        setConstant(buffers[index], constant->data);
        found = bufferOf.find({value.node(), value.index()});
      }
      function.buffers.push_back(found->second);
    }
    for (size_t o = 0; o < kernel->workload.outputs.size(); ++o) {
      size_t index = addBuffer(op, int(o), op->outputTypes.at(o), op->name + (o ? "_" + std::to_string(o) : ""));
      buffers[index].workspace = true;
      function.buffers.push_back(index);
    }
    // An operation whose outputs are all empty (a slice past the end, a split of size 0)
    // lowers to no kernel: its buffers exist, nothing runs.
    if (std::all_of(op->outputTypes.begin(), op->outputTypes.end(), isEmpty) && deviceKernels(lowered->func).empty())
      continue;
    functions.push_back(std::move(function));
    ++result.operations;
    result.genericSchedules += generic;
  }
  for (size_t i = 0; i < optimized.outputs.size(); ++i) {
    const graph::Value& value = optimized.outputs[i];
    auto found = bufferOf.find({value.node(), value.index()});
    // An output that no operation computes (a model folded to a constant, an input passed
    // through), or one that is already another output: a kernel copies it into a buffer of its own.
    bool computed = found != bufferOf.end() && graph::asOperation(value.node()) && !buffers[found->second].output;
    if (!computed) {
      size_t source;
      if (found != bufferOf.end()) {
        source = found->second;
      } else if (const graph::ConstantNode* constant = graph::asConstant(value.node())) {
        source = addBuffer(value.node(), value.index(), value.type(), constant->name);
        setConstant(buffers[source], constant->data);
      } else {
        return Diagnostic{"model output " + std::to_string(i) + " comes from nowhere", "model", 0, 0, ""};
      }
      const graph::TensorType& type = value.type();
      std::vector<Expr> shape;
      for (int64_t extent : type.shape) shape.push_back(Expr(extent));
      te::Tensor from = te::placeholder(shape, type.dtype, "from");
      te::Tensor to = te::compute(
          shape, [&](const std::vector<Var>& index) { return from(asExprs(index)); }, "copy");
      Workload copy;
      copy.name = uniqueName("copy_output_" + std::to_string(i), functionNames, /*identifier=*/true);
      copy.inputs = {from};
      copy.outputs = {to};
      auto schedule = defaultGpuSchedule(copy, target);
      if (!schedule) return schedule.error();
      auto lowered = lower(*schedule, copy.args(), copy.name, target);
      if (!lowered) return lowered.error();
      GpuModuleBuffer output{"", type.dtype, type.shape, false, true, ""};
      buffers.push_back(output);
      // An empty output needs no copy (and lowers to no kernel).
      if (!isEmpty(type)) functions.push_back({lowered->func, {source, buffers.size() - 1}});
      found = bufferOf.end();
      GpuModuleBuffer& buffer = buffers.back();
      buffer.workspace = false;
      buffer.output = true;
      buffer.name = uniqueName(i < optimized.outputNames.size() ? optimized.outputNames[i] : "output", usedNames);
      result.outputNames.push_back(buffer.name);
      continue;
    }
    GpuModuleBuffer& buffer = buffers[found->second];
    buffer.workspace = false;
    buffer.output = true;
    if (i < optimized.outputNames.size()) buffer.name = uniqueName(optimized.outputNames[i], usedNames);
    result.outputNames.push_back(buffer.name);
  }
  if (functions.empty() && optimized.outputs.empty())
    return Diagnostic{"the model has no operations to compile", "model", 0, 0, ""};
  auto json = exportGpuModule(std::move(buffers), functions, target, "model", options);
  if (!json) return json.error();
  result.moduleJson = std::move(*json);
  size_t kernels = 0;
  for (const GpuModuleFunction& function : functions) kernels += deviceKernels(function.func).size();
  result.kernels = kernels;
  return result;
}

Expected<RunResult> runModelOnGpu(const RunRequest& request, const Target& target) {
  using Clock = std::chrono::steady_clock;
  auto seconds = [](Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); };
  if (isModuleDirectory(request.model))
    return Diagnostic{request.model + " is a module directory compiled for the CPU", request.model, 0, 0,
                      "run the .onnx model with --target, or a .tgpu module with tessel-deploy-run --gpu-module"};
  RunResult result;
  auto start = Clock::now();
  // As for the CPU: the values given are known while compiling, so an input the compiler needs
  // by value (a shape, a condition) is bound as a constant. Positional values take the
  // model's declared input names.
  auto declared = frontend::readOnnxInputs(request.model);
  if (!declared) return declared.error();
  std::map<std::string, runtime::NDArray> values = request.namedInputs;
  if (request.positionalInputs.size() > declared->size())
    return Diagnostic{"the model has " + std::to_string(declared->size()) + " inputs but " +
                          std::to_string(request.positionalInputs.size()) + " were given",
                      request.model, 0, 0, ""};
  for (size_t i = 0; i < request.positionalInputs.size(); ++i)
    if (request.positionalInputs[i].tensor.defined()) values[(*declared)[i].name] = request.positionalInputs[i].tensor;
  LoadOptions load;
  load.inputShapes = request.inputShapes;
  load.inputValues = values;
  // An input declared with dynamic dimensions takes the shape of its value.
  for (const auto& input : *declared) {
    bool dynamic = !input.rankKnown || std::any_of(input.shape.begin(), input.shape.end(), [](int64_t d) { return d < 0; });
    auto value = values.find(input.name);
    if (dynamic && value != values.end() && !load.inputShapes.count(input.name)) load.inputShapes[input.name] = value->second.shape();
  }
  auto graph = loadModel(request.model, load);
  if (!graph) return graph.error();
  result.loadSeconds = seconds(start);
  start = Clock::now();
  auto compiled = compileModelForGpu(*graph, target);
  if (!compiled) return compiled.error();
  result.compileSeconds = seconds(start);
  try {
    runtime::GpuModuleRunner runner(runtime::GpuModule::parse(compiled->moduleJson, request.model));
    for (const InputValue& value : request.positionalInputs)
      if (!value.tensor.defined())
        return Diagnostic{"an input is a sequence or strings, which GPU targets do not take", request.model, 0, 0, ""};
    // Inputs bound as constants are no longer the module's inputs.
    for (const std::string& name : runner.module().inputNames()) {
      auto value = values.find(name);
      if (value == values.end())
        return Diagnostic{"no value was given for input '" + name + "'", request.model, 0, 0,
                          "give it with --input " + name + "=FILE or --inputs-dir"};
      const runtime::GpuModuleParam& param = runner.module().params[runner.module().paramIndex(name)];
      runner.setInput(name, asDeclaredBFloat16(value->second, param.dtype == runtime::DataType::bfloat16()));
    }
    start = Clock::now();
    runner.run();
    result.runSeconds = seconds(start);
    for (const std::string& name : compiled->outputNames) {
      result.outputNames.push_back(name);
      result.outputs.push_back(runner.getOutput(name));
    }
  } catch (const runtime::Error& error) {
    return Diagnostic{error.what(), request.model, 0, 0, ""};
  }
  if (!request.expectedOutputs.empty()) {
    if (request.expectedOutputs.size() != result.outputs.size())
      return Diagnostic{"the model has " + std::to_string(result.outputs.size()) + " outputs but " +
                            std::to_string(request.expectedOutputs.size()) + " expected outputs were given",
                        request.model, 0, 0, ""};
    for (size_t i = 0; i < result.outputs.size(); ++i)
      result.comparisons.push_back(
          compareOutput(result.outputNames[i], result.outputs[i], request.expectedOutputs[i], request.tolerance));
  }
  return result;
}

}  // namespace tessel::driver
