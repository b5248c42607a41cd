// Kernels and the execution plan for an optimized graph.
#include "compiler/driver/ModelPlan.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "compiler/driver/FusedKernel.h"
#include "compiler/driver/WorkloadKey.h"
#include "compiler/schedule/TraceText.h"
#include "compiler/graph/PlanMemory.h"
#include "compiler/lower/Build.h"
#include "compiler/lower/Lower.h"
#include "core/support/Stopwatch.h"

namespace tessel::driver {

using graph::Graph;
using graph::GraphNode;
using graph::Value;

namespace {

/// Symbol names must be C identifiers; node names are whatever the model says.
std::string symbolFor(const std::string& name) {
  std::string out;
  for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "k_" + out;
  return out;
}

struct ValueKey {
  const GraphNode* node;
  int index;
  bool operator==(const ValueKey& other) const = default;
};
struct ValueKeyHash {
  size_t operator()(const ValueKey& key) const {
    return std::hash<const void*>()(key.node) * 31 + size_t(key.index);
  }
};

enum class TensorRole { Input, Output, Param, Intermediate };

class Planner {
public:
  using BeforeKernel = std::function<bool(size_t, size_t, const std::string&)>;
  Planner(const Target& target, const BeforeKernel& beforeKernel, const TunedSchedules* tuned)
      : target_(target), beforeKernel_(beforeKernel), tuned_(tuned) {}

  Expected<PlannedModel> run(const Graph& graph) {
    for (auto& input : graph.inputs) {
      std::string name = addTensor(input.node()->name, input.type(), TensorRole::Input);
      tensorOf_[key(input)] = name;
      model_.plan.inputs.push_back(name);
    }
    // The first graph output an operation computes is written under the output's name;
    // outputs that are inputs, constants or repeats are copied at the end.
    std::vector<bool> needsCopy(graph.outputs.size(), false);
    std::unordered_set<ValueKey, ValueKeyHash> claimed;
    for (size_t i = 0; i < graph.outputs.size(); ++i) {
      const Value& output = graph.outputs[i];
      bool computed = graph::asOperation(output.node()) != nullptr;
      if (computed && claimed.insert(key(output)).second) outputNameOf_[key(output)] = outputName(graph, i);
      else needsCopy[i] = true;
    }
    const std::vector<const graph::OperationNode*> operations = graph.operations();
    for (size_t index = 0; index < operations.size(); ++index) {
      const graph::OperationNode* op = operations[index];
      if (beforeKernel_ && !beforeKernel_(index, operations.size(), op->name))
        return Diagnostic{"planning stopped before lowering '" + op->name + "'", "planModel", 0, 0, ""};
      Status status = compileOperation(*op);
      if (!status) return status.error();
    }
    for (size_t i = 0; i < graph.outputs.size(); ++i) {
      if (needsCopy[i]) {
        Status status = addCopy(graph.outputs[i], outputName(graph, i));
        if (!status) return status.error();
      }
    }
    for (size_t i = 0; i < graph.outputs.size(); ++i)
      model_.plan.outputs.push_back(outputTensorOf_.at(outputName(graph, i)));
    planStorages();
    return std::move(model_);
  }

private:
  static ValueKey key(const Value& v) { return {v.node(), v.index()}; }

  std::string outputName(const Graph& graph, size_t i) const {
    if (i < graph.outputNames.size() && !graph.outputNames[i].empty()) return graph.outputNames[i];
    return "output_" + std::to_string(i);
  }

  std::string uniqueName(const std::string& base) {
    std::string name = base.empty() ? "t" : base;
    for (int n = 1; names_.count(name); ++n) name = base + "." + std::to_string(n);
    names_.insert(name);
    return name;
  }

  std::string addTensor(const std::string& base, const graph::TensorType& type, TensorRole role) {
    runtime::GraphTensor tensor;
    tensor.name = uniqueName(base);
    tensor.dtype = toRuntimeType(type.dtype);
    tensor.shape = type.shape;
    model_.plan.tensors.push_back(tensor);
    roles_.push_back(role);
    producedAt_.push_back(-1);
    lastUsedAt_.push_back(-1);
    index_[tensor.name] = model_.plan.tensors.size() - 1;
    return tensor.name;
  }

  /// The tensor holding `value` for a kernel about to read it; constants become params.
  std::string tensorForInput(const Value& value) {
    auto it = tensorOf_.find(key(value));
    if (it != tensorOf_.end()) return it->second;
    auto* constant = graph::asConstant(value.node());
    TESSEL_ICHECK(constant) << "value " << value.name() << " read before it was computed";
    std::string name = addTensor(constant->name, constant->outputTypes[0], TensorRole::Param);
    model_.params[name] = constant->data;
    // Offsets as exportModule lays params.bin out; it rewrites them when exporting.
    int64_t offset = 0;
    if (!model_.plan.params.empty())
      offset = runtime::alignGraphOffset(model_.plan.params.back().offset + model_.plan.params.back().bytes);
    model_.plan.params.push_back({name, offset, constant->data.byteSize()});
    tensorOf_[key(value)] = name;
    return name;
  }

  Status checkArgument(const graph::OperationNode& op, const te::Tensor& placeholder, const std::string& tensorName) {
    const runtime::GraphTensor& tensor = model_.plan.tensors[index_.at(tensorName)];
    int64_t elements = 1;
    for (auto& extent : placeholder.shape()) {
      auto* imm = extent.as<IntImmNode>();
      if (!imm) return Diagnostic{op.op + " '" + op.name + "': the kernel has a symbolic shape", op.name, 0, 0, ""};
      elements *= imm->value;
    }
    if (elements != elementCount(tensor.shape) ||
        toRuntimeType(placeholder.dtype()) != tensor.dtype)
      return Diagnostic{op.op + " '" + op.name + "': kernel argument '" + placeholder.name() + "' (" +
                            placeholder.dtype().toString() + ", " + std::to_string(elements) +
                            " elements) does not match tensor '" + tensorName + "' (" + tensor.dtype.toString() +
                            ")",
                        op.name, 0, 0, "this is a compiler bug; please report it with the model"};
    return Status::success();
  }

  Status compileOperation(const graph::OperationNode& op) {
    Stopwatch stopwatch;
    Expected<graph::OpKernel> kernel = buildKernelForNode(op, target_);
    if (!kernel) return kernel.error();
    const Workload& workload = kernel->workload;
    if (workload.outputs.size() != op.outputTypes.size())
      return Diagnostic{op.op + " '" + op.name + "': the kernel computes " + std::to_string(workload.outputs.size()) +
                            " outputs, the node has " + std::to_string(op.outputTypes.size()),
                        op.name, 0, 0, "this is a compiler bug; please report it with the model"};
    TESSEL_ICHECK(kernel->inputIndices.size() == workload.inputs.size())
        << op.op << " '" << op.name << "': " << kernel->inputIndices.size() << " input indices for "
        << workload.inputs.size() << " placeholders";
    int step = int(model_.kernels.size());
    runtime::GraphNode planNode;
    planNode.name = op.name;
    planNode.kernel = uniqueSymbol(op);
    for (size_t i = 0; i < workload.inputs.size(); ++i) {
      int index = kernel->inputIndices[i];
      TESSEL_ICHECK(op.hasInput(size_t(index))) << op.name << " reads omitted input " << index;
      std::string name = tensorForInput(op.inputs[size_t(index)]);
      Status ok = checkArgument(op, workload.inputs[i], name);
      if (!ok) return ok;
      lastUsedAt_[index_.at(name)] = step;
      planNode.args.push_back(name);
    }
    Ref<GraphNode> self(&op);
    for (size_t j = 0; j < workload.outputs.size(); ++j) {
      Value value(self, int(j));
      auto named = outputNameOf_.find(key(value));
      bool isOutput = named != outputNameOf_.end();
      std::string name = addTensor(isOutput ? named->second : op.name + (j ? ":" + std::to_string(j) : ""),
                                   op.outputTypes[j], isOutput ? TensorRole::Output : TensorRole::Intermediate);
      if (isOutput) outputTensorOf_[named->second] = name;
      Status ok = checkArgument(op, workload.outputs[j], name);
      if (!ok) return ok;
      tensorOf_[key(value)] = name;
      producedAt_[index_.at(name)] = step;
      planNode.args.push_back(name);
    }
    WorkloadKey workloadKey = workloadKeyOf(op, *kernel, target_);
    std::optional<LoweredFunction> tuned = loweredTunedSchedule(op, workload, workloadKey, planNode.kernel);
    std::optional<LoweredFunction> lowered = tuned;
    if (!lowered) {
      Expected<Schedule> schedule =
          kernel->schedule ? kernel->schedule(workload, target_) : Expected<Schedule>(Schedule(workload.outputs));
      if (!schedule) {
        Diagnostic d = schedule.error();
        d.message = op.op + " '" + op.name + "': default schedule: " + d.message;
        return d;
      }
      auto defaultLowered = lower(*schedule, workload.args(), planNode.kernel);
      if (!defaultLowered) {
        Diagnostic d = defaultLowered.error();
        d.message = op.op + " '" + op.name + "': lowering: " + d.message;
        return d;
      }
      lowered = std::move(*defaultLowered);
    }
    CompiledKernel compiled;
    compiled.name = planNode.kernel;
    compiled.node = &op;
    compiled.function = lowered->func;
    compiled.flops = workload.flops;
    compiled.workloadKey = workloadKey.text;
    compiled.workloadHash = workloadKey.hash;
    compiled.tuned = tuned.has_value();
    if (tuned) compiled.tunedTrace = tuned_->traces.at(workloadKey.text);
    recordLoweringTimes(*lowered, &compiled);
    // What lowering did not take went to building the kernel and its schedule.
    double loweringMilliseconds = 0;
    for (double step : compiled.loweringMilliseconds) loweringMilliseconds += step;
    compiled.scheduleMilliseconds = std::max(0.0, stopwatch.milliseconds() - loweringMilliseconds);
    model_.kernels.push_back(std::move(compiled));
    model_.plan.nodes.push_back(std::move(planNode));
    return Status::success();
  }

  /// The kernel lowered under its tuned schedule, when there is one that still replays and
  /// lowers; otherwise nothing (and a note saying why, when there was one).
  std::optional<LoweredFunction> loweredTunedSchedule(const graph::OperationNode& op, const Workload& workload,
                                                      const WorkloadKey& key, const std::string& symbol) {
    if (!tuned_) return std::nullopt;
    auto found = tuned_->traces.find(key.text);
    if (found == tuned_->traces.end()) return std::nullopt;
    auto note = [&](const Diagnostic& problem) {
      model_.tuningNotes.push_back("kernel " + symbol + " (" + op.name + "): its tuned schedule was not used, the default was: " +
                       problem.toString());
      return std::nullopt;
    };
    auto trace = parseTraceText(found->second);
    if (!trace) return note(trace.error());
    auto schedule = Schedule::replay(workload.outputs, *trace);
    if (!schedule) return note(schedule.error());
    auto lowered = lower(*schedule, workload.args(), symbol);
    if (!lowered) return note(lowered.error());
    return std::move(*lowered);
  }

  static void recordLoweringTimes(const LoweredFunction& lowered, CompiledKernel* compiled) {
    for (const LoweringStep& step : lowered.steps) compiled->loweringMilliseconds.push_back(step.milliseconds);
  }

  std::string uniqueSymbol(const graph::OperationNode& op) {
    std::string base = symbolFor(op.isFused() ? op.op : op.op + "_" + op.name);
    std::string name = base;
    for (int n = 1; symbols_.count(name); ++n) name = base + "_" + std::to_string(n);
    symbols_.insert(name);
    return name;
  }

  /// A kernel copying `value` into a new output tensor `outputName`.
  Status addCopy(const Value& value, const std::string& outputName) {
    std::string source = tensorForInput(value);
    const graph::TensorType& type = value.type();
    int step = int(model_.kernels.size());
    std::string target = addTensor(outputName, type, TensorRole::Output);
    outputTensorOf_[outputName] = target;
    te::Tensor in = te::placeholder(toExprs(type.shape), type.dtype, "in");
    te::Tensor out = te::compute(
        toExprs(type.shape), [&](const std::vector<Var>& axes) { return in(asExprs(axes)); }, "out",
        axisNames(type.shape.size()), "copy");
    std::string symbol = symbolFor("copy_" + outputName);
    for (int n = 1; symbols_.count(symbol); ++n) symbol = symbolFor("copy_" + outputName) + "_" + std::to_string(n);
    symbols_.insert(symbol);
    auto lowered = lower(Schedule({out}), {in, out}, symbol);
    if (!lowered) return lowered.error();
    CompiledKernel compiled;
    compiled.name = symbol;
    compiled.function = lowered->func;
    recordLoweringTimes(*lowered, &compiled);
    model_.kernels.push_back(std::move(compiled));
    model_.plan.nodes.push_back({"copy_" + outputName, symbol, {source, target}});
    lastUsedAt_[index_.at(source)] = step;
    producedAt_[index_.at(target)] = step;
    return Status::success();
  }

  void planStorages() {
    auto& plan = model_.plan;
    std::vector<graph::TensorLifetime> lifetimes;
    for (size_t i = 0; i < plan.tensors.size(); ++i) {
      graph::TensorLifetime lifetime;
      lifetime.bytes = std::max<int64_t>(plan.tensors[i].byteSize(), 1);
      lifetime.producedAt = producedAt_[i];
      lifetime.lastUsedAt = std::max(lastUsedAt_[i], producedAt_[i]);
      lifetime.external = roles_[i] != TensorRole::Intermediate;
      lifetimes.push_back(lifetime);
    }
    graph::MemoryAssignment assignment = graph::planMemory(lifetimes);
    // Planned storages first (ids 0..n-1), then one storage per external tensor.
    for (size_t s = 0; s < assignment.storageBytes.size(); ++s)
      plan.storages.push_back({int64_t(s), runtime::alignGraphOffset(assignment.storageBytes[s])});
    for (size_t i = 0; i < plan.tensors.size(); ++i) {
      int storage = assignment.storageOf[i];
      if (storage < 0) {
        storage = int(plan.storages.size());
        plan.storages.push_back({int64_t(storage), runtime::alignGraphOffset(lifetimes[i].bytes)});
      }
      plan.tensors[i].storage = storage;
      plan.tensors[i].offset = 0;
    }
    model_.memory.plannedBytes = assignment.plannedBytes;
    model_.memory.naiveBytes = assignment.naiveBytes;
    model_.memory.storageCount = int(assignment.storageBytes.size());
  }

  Target target_;
  const BeforeKernel& beforeKernel_;
  const TunedSchedules* tuned_ = nullptr;
  PlannedModel model_;
  std::unordered_map<ValueKey, std::string, ValueKeyHash> tensorOf_;
  std::unordered_map<ValueKey, std::string, ValueKeyHash> outputNameOf_;
  std::unordered_map<std::string, std::string> outputTensorOf_;
  std::unordered_map<std::string, size_t> index_;
  std::unordered_set<std::string> names_;
  std::unordered_set<std::string> symbols_;
  std::vector<TensorRole> roles_;
  std::vector<int> producedAt_;
  std::vector<int> lastUsedAt_;
};

}  // namespace

Expected<PlannedModel> planModel(const Graph& graph, const Target& target,
                                 const std::function<bool(size_t, size_t, const std::string&)>& beforeKernel,
                                 const TunedSchedules* tunedSchedules) {
  Planner planner(target, beforeKernel, tunedSchedules);
  return planner.run(graph);
}

}  // namespace tessel::driver
