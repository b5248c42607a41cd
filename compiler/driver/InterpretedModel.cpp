// The interpreter for models whose control flow is decided while they run.
#include "compiler/driver/InterpretedModel.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <numeric>
#include <unordered_map>

#include "compiler/driver/InterpretedArrays.h"
#include "compiler/frontend/onnx/OnnxImporter.h"
#include "compiler/lower/Build.h"
#include "compiler/opdefs/OpRegistry.h"
#include "core/support/Stopwatch.h"
#include "runtime/GraphExecutor.h"

namespace tessel::driver {

using frontend::ProgramControlNode;
using frontend::ProgramGraph;
using frontend::ProgramSegment;
using runtime::NDArray;

namespace {

/// A Loop with neither a trip count nor a condition that turns false would run forever: it is
/// stopped with a message after this many iterations.
constexpr int64_t kMaxLoopIterations = 10'000'000;

/// A value while interpreting: a tensor, a sequence of tensors, or an optional that is absent.
struct RuntimeValue {
  NDArray tensor;
  std::optional<std::vector<NDArray>> sequence;
  bool absent = false;
  std::optional<frontend::StringTensor> strings;

  static RuntimeValue ofTensor(NDArray array) { return RuntimeValue{std::move(array), std::nullopt, false, std::nullopt}; }
  static RuntimeValue ofSequence(std::vector<NDArray> elements) {
    return RuntimeValue{{}, std::move(elements), false, std::nullopt};
  }
  static RuntimeValue ofStrings(frontend::StringTensor strings) {
    return RuntimeValue{{}, std::nullopt, false, std::move(strings)};
  }
  static RuntimeValue none() { return RuntimeValue{{}, std::nullopt, true, std::nullopt}; }
  bool isSequence() const { return sequence.has_value(); }
};

/// The values visible in one graph while it runs: its own, then its enclosing graphs'.
class Scope {
public:
  explicit Scope(const Scope* parent = nullptr) : parent_(parent) {}
  const RuntimeValue* find(const std::string& name) const {
    for (const Scope* scope = this; scope; scope = scope->parent_) {
      auto it = scope->values_.find(name);
      if (it != scope->values_.end()) return &it->second;
    }
    return nullptr;
  }
  void bind(const std::string& name, RuntimeValue value) { values_[name] = std::move(value); }

private:
  const Scope* parent_;
  std::unordered_map<std::string, RuntimeValue> values_;
};

std::string typesKey(const std::vector<frontend::SegmentInputType>& types) {
  std::string key;
  for (const auto& type : types) key += type.dtype.toString() + shapeText(type.shape) + ";";
  return key;
}

bool sameContents(const NDArray& a, const NDArray& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.data(), b.data(), size_t(a.byteSize())) == 0;
}

}  // namespace

/// Compiled segments by segment and input types; within those, by the values of the inputs the
/// compile bound as constants.
struct InterpretedModel::SegmentCache {
  struct Entry {
    std::map<std::string, NDArray> boundValues;
    std::shared_ptr<const CompiledModel> compiled;
    std::unique_ptr<runtime::GraphExecutor> executor;
  };
  std::map<std::pair<const ProgramSegment*, std::string>, std::vector<Entry>> entries;
};

class InterpretedModel::Interpreter {
public:
  Interpreter(InterpretedModel& model) : model_(model), source_(model.program_.sourceName) {}

  Status runGraph(const ProgramGraph& graph, Scope& scope) {
    for (const auto& [name, value] : graph.initializers) scope.bind(name, RuntimeValue::ofTensor(value));
    for (const frontend::ProgramStep& step : graph.steps) {
      Status status = step.isSegment ? runSegment(step.segment, scope) : runControl(step.control, scope);
      if (!status) return status;
    }
    return Status::success();
  }

  // The values of `graph`'s outputs after runGraph.
  Expected<std::vector<RuntimeValue>> outputsOf(const ProgramGraph& graph, const Scope& scope, const std::string& who) {
    std::vector<RuntimeValue> outputs;
    for (const std::string& name : graph.outputs) {
      const RuntimeValue* value = scope.find(name);
      if (!value) return error(who + " gives output '" + name + "', which nothing produced");
      outputs.push_back(*value);
    }
    return outputs;
  }

private:
  Diagnostic error(const std::string& message, const std::string& hint = "") const {
    return Diagnostic{message, source_, 0, 0, hint};
  }
  Diagnostic nodeError(const ProgramControlNode& node, const std::string& problem, const std::string& hint = "") const {
    return error("node '" + node.name + "' (" + node.opType + ") " + problem, hint);
  }

  Status runSegment(const ProgramSegment& segment, Scope& scope) {
    if (segment.outputs.empty()) return Status::success();  // nothing reads what it computes
    std::vector<frontend::SegmentInputType> types;
    std::map<std::string, NDArray> values;
    for (const std::string& name : segment.inputs) {
      const RuntimeValue* value = scope.find(name);
      if (!value || value->absent)
        return error("the operations from node '" + segment.firstNode + "' on read '" + name + "', which has no value");
      if (value->isSequence() || value->strings)
        return error("the operations from node '" + segment.firstNode + "' on read '" + name + "', " +
                     (value->strings ? "a tensor of strings" : "a sequence") + ", where a tensor of numbers is needed",
                     value->strings ? "compiled operators take numbers; StringNormalizer is the operator Tessel runs on "
                                      "strings"
                                    : "");
      types.push_back({value->tensor.dtype(), value->tensor.shape()});
      values.emplace(name, value->tensor);
    }
    auto entry = compiledFor(segment, types, values);
    if (!entry) return entry.error();
    runtime::GraphExecutor& executor = *(*entry)->executor;
    try {
      // Values are never written once made, so the executor reads them in place and hands
      // its outputs over, where its plan gives them storage of their own: a loop body
      // otherwise copied its whole state in and out on every iteration (78% of an
      // interpreted model's time).
      for (const std::string& name : executor.inputNames())
        if (!executor.bindInput(name, values.at(name))) executor.setInput(name, values.at(name));
      executor.run();
      std::map<std::string, NDArray> taken;  // an output listed twice is handed over once
      for (const std::string& name : segment.outputs) {
        NDArray& value = taken[name];
        if (!value.defined()) value = executor.takeOutput(name);
        scope.bind(name, RuntimeValue::ofTensor(value.defined() ? value : executor.getOutput(name)));
      }
    } catch (const runtime::Error& failure) {
      return error("the operations from node '" + segment.firstNode + "' on failed: " + failure.what());
    }
    ++model_.statistics_.segmentRuns;
    return Status::success();
  }

  Expected<SegmentCache::Entry*> compiledFor(const ProgramSegment& segment,
                                             const std::vector<frontend::SegmentInputType>& types,
                                             const std::map<std::string, NDArray>& values) {
    auto& entries = model_.cache_->entries[{&segment, typesKey(types)}];
    for (SegmentCache::Entry& entry : entries) {
      bool same = true;
      for (const auto& [name, bound] : entry.boundValues) same = same && sameContents(bound, values.at(name));
      if (same) return &entry;
    }
    Stopwatch stopwatch;
    const std::string where = source_ + " (the operations from node '" + segment.firstNode + "' on)";
    std::string bytes = frontend::segmentModelBytes(model_.program_, segment, types);
    LoadOptions load;
    load.inputValues = values;
    auto graph = loadModelBytes(bytes, where, load);
    if (!graph) return graph.error();
    auto compiled = compileGraph(*graph, model_.compile_);
    if (!compiled) return compiled.error();
    SegmentCache::Entry entry;
    entry.compiled = std::make_shared<const CompiledModel>(std::move(*compiled));
    auto executor = createExecutor(*entry.compiled, model_.compile_.target);
    if (!executor) return executor.error();
    entry.executor = std::move(*executor);
    // The inputs the compile bound by value (a shape it needed) are no inputs of the executor:
    // the compile holds for their values only.
    const auto& kept = entry.executor->inputNames();
    for (const auto& [name, value] : values)
      if (std::find(kept.begin(), kept.end(), name) == kept.end()) entry.boundValues.emplace(name, copyOf(value));
    ++model_.statistics_.segmentCompiles;
    model_.statistics_.compileSeconds += stopwatch.seconds();
    entries.push_back(std::move(entry));
    return &entries.back();
  }

  // Input i of `node`: its value, or null when the input is omitted.
  Expected<const RuntimeValue*> input(const ProgramControlNode& node, const Scope& scope, size_t i) {
    if (i >= node.inputs.size() || node.inputs[i].empty()) return static_cast<const RuntimeValue*>(nullptr);
    const RuntimeValue* value = scope.find(node.inputs[i]);
    if (!value) return nodeError(node, "reads '" + node.inputs[i] + "', which has no value");
    return value;
  }
  Expected<NDArray> tensorInput(const ProgramControlNode& node, const Scope& scope, size_t i, const std::string& role) {
    auto value = input(node, scope, i);
    if (!value) return value.error();
    if (!*value || (*value)->absent) return nodeError(node, "needs " + role + " (input " + std::to_string(i) + ")");
    if ((*value)->isSequence()) return nodeError(node, "needs a tensor for " + role + ", not a sequence");
    if ((*value)->strings) return nodeError(node, "needs a tensor of numbers for " + role + ", not of strings");
    return (*value)->tensor;
  }
  Expected<std::vector<NDArray>> sequenceInput(const ProgramControlNode& node, const Scope& scope, size_t i) {
    auto value = input(node, scope, i);
    if (!value) return value.error();
    if (!*value || (*value)->absent || !(*value)->isSequence())
      return nodeError(node, "needs a sequence as input " + std::to_string(i));
    return *(*value)->sequence;
  }
  Expected<int64_t> scalarInput(const ProgramControlNode& node, const Scope& scope, size_t i, const std::string& role) {
    auto tensor = tensorInput(node, scope, i, role);
    if (!tensor) return tensor.error();
    auto elements = graph::integerElements(*tensor);
    if (!elements || elements->size() != 1)
      return nodeError(node, "needs " + role + " as one integer or boolean, but it is " + tensor->dtype().toString() +
                                 " of shape " + shapeText(tensor->shape()));
    return elements->front();
  }
  int64_t attribute(const ProgramControlNode& node, const std::string& name, int64_t otherwise) const {
    auto it = node.ints.find(name);
    return it == node.ints.end() ? otherwise : it->second;
  }
  Expected<const ProgramGraph*> body(const ProgramControlNode& node, const std::string& name) {
    auto it = node.bodies.find(name);
    if (it == node.bodies.end()) return nodeError(node, "has no subgraph '" + name + "'");
    return it->second.get();
  }

  // Runs `graph` with its inputs bound to `arguments` inside `scope`; its outputs in order.
  Expected<std::vector<RuntimeValue>> call(const ProgramControlNode& node, const ProgramGraph& graph,
                                           const std::vector<RuntimeValue>& arguments, const Scope& scope) {
    if (graph.inputs.size() != arguments.size())
      return nodeError(node, "has a subgraph with " + std::to_string(graph.inputs.size()) + " inputs where " +
                                 std::to_string(arguments.size()) + " are given");
    Scope inner(&scope);
    for (size_t i = 0; i < arguments.size(); ++i) inner.bind(graph.inputs[i], arguments[i]);
    if (Status status = runGraph(graph, inner); !status) return status.error();
    return outputsOf(graph, inner, "node '" + node.name + "' (" + node.opType + ")'s subgraph");
  }

  Status bindOutputs(const ProgramControlNode& node, Scope& scope, std::vector<RuntimeValue> values) {
    if (values.size() < node.outputs.size())
      return nodeError(node, "gives " + std::to_string(values.size()) + " values for its " +
                                 std::to_string(node.outputs.size()) + " outputs");
    for (size_t i = 0; i < node.outputs.size(); ++i)
      if (!node.outputs[i].empty()) scope.bind(node.outputs[i], std::move(values[i]));
    return Status::success();
  }

  Status runControl(const ProgramControlNode& node, Scope& scope) {
    ++model_.statistics_.controlSteps;
    auto results = carryOut(node, scope);
    if (!results) return results.error();
    return bindOutputs(node, scope, std::move(*results));
  }

  Expected<std::vector<RuntimeValue>> carryOut(const ProgramControlNode& node, Scope& scope) {
    const std::string& op = node.opType;
    if (op == "If") return runIf(node, scope);
    if (op == "Loop") return runLoop(node, scope);
    if (op == "Scan") return runScan(node, scope);
    if (op == "SequenceMap") return runSequenceMap(node, scope);
    auto one = [](Expected<RuntimeValue> value) -> Expected<std::vector<RuntimeValue>> {
      if (!value) return value.error();
      return std::vector<RuntimeValue>{std::move(*value)};
    };
    if (op == "SequenceEmpty") return one(RuntimeValue::ofSequence({}));
    if (op == "SequenceConstruct") return one(sequenceConstruct(node, scope));
    if (op == "SequenceInsert") return one(sequenceInsert(node, scope));
    if (op == "SequenceErase") return one(sequenceErase(node, scope));
    if (op == "SequenceAt") return one(sequenceAt(node, scope));
    if (op == "SequenceLength") {
      auto sequence = sequenceInput(node, scope, 0);
      if (!sequence) return sequence.error();
      return one(RuntimeValue::ofTensor(int64Scalar(int64_t(sequence->size()))));
    }
    if (op == "ConcatFromSequence") return one(concatFromSequence(node, scope));
    if (op == "StringNormalizer") return one(stringNormalizer(node, scope));
    if (op == "Cast" || op == "CastLike") return one(castStrings(node, scope));
    if (op == "SplitToSequence") return one(splitToSequence(node, scope));
    if (op == "Optional") {
      auto value = input(node, scope, 0);
      if (!value) return value.error();
      return one(*value ? **value : RuntimeValue::none());
    }
    if (op == "OptionalHasElement") {
      auto value = input(node, scope, 0);
      if (!value) return value.error();
      return one(RuntimeValue::ofTensor(boolScalar(*value && !(*value)->absent)));
    }
    if (op == "OptionalGetElement") {
      auto value = input(node, scope, 0);
      if (!value) return value.error();
      if (!*value || (*value)->absent) return nodeError(node, "reads an optional value that is absent");
      return one(**value);
    }
    return nodeError(node, "is not an operator Tessel's interpreter runs");
  }

  Expected<std::vector<RuntimeValue>> runIf(const ProgramControlNode& node, Scope& scope) {
    auto condition = scalarInput(node, scope, 0, "its condition");
    if (!condition) return condition.error();
    auto branch = body(node, *condition ? "then_branch" : "else_branch");
    if (!branch) return branch.error();
    return call(node, **branch, {}, scope);
  }

  Expected<std::vector<RuntimeValue>> runLoop(const ProgramControlNode& node, Scope& scope) {
    auto loopBody = body(node, "body");
    if (!loopBody) return loopBody.error();
    std::optional<int64_t> tripCount;
    if (auto value = input(node, scope, 0); !value) return value.error();
    else if (*value) {
      auto count = scalarInput(node, scope, 0, "its trip count 'M'");
      if (!count) return count.error();
      tripCount = *count;
    }
    bool condition = true;
    if (auto value = input(node, scope, 1); !value) return value.error();
    else if (*value) {
      auto given = scalarInput(node, scope, 1, "its condition 'cond'");
      if (!given) return given.error();
      condition = *given != 0;
    }
    std::vector<RuntimeValue> carried;
    for (size_t i = 2; i < node.inputs.size(); ++i) {
      auto value = input(node, scope, i);
      if (!value) return value.error();
      carried.push_back(*value ? **value : RuntimeValue::none());
    }
    const size_t carriedCount = carried.size();
    if ((*loopBody)->outputs.size() < 1 + carriedCount)
      return nodeError(node, "has a body with " + std::to_string((*loopBody)->outputs.size()) +
                                 " outputs; it must give the condition and " + std::to_string(carriedCount) +
                                 " loop-carried values first");
    const size_t scanCount = (*loopBody)->outputs.size() - 1 - carriedCount;
    std::vector<std::vector<NDArray>> scans(scanCount);
    for (int64_t iteration = 0; condition && (!tripCount || iteration < *tripCount); ++iteration) {
      if (iteration == kMaxLoopIterations)
        return nodeError(node, "ran " + std::to_string(kMaxLoopIterations) + " iterations without its condition "
                               "turning false",
                         "give the loop a trip count, or check the condition its body computes");
      std::vector<RuntimeValue> arguments = {RuntimeValue::ofTensor(int64Scalar(iteration)),
                                             RuntimeValue::ofTensor(boolScalar(condition))};
      arguments.insert(arguments.end(), carried.begin(), carried.end());
      auto outputs = call(node, **loopBody, arguments, scope);
      if (!outputs) return outputs.error();
      const RuntimeValue& next = (*outputs)[0];
      if (next.isSequence() || next.absent) return nodeError(node, "has a body whose condition output is not a tensor");
      auto decided = graph::integerElements(next.tensor);
      if (!decided || decided->size() != 1)
        return nodeError(node, "has a body whose condition output is " + next.tensor.dtype().toString() + " of shape " +
                                   shapeText(next.tensor.shape()) + ", not one boolean");
      condition = decided->front() != 0;
      // Values are never written once made (a segment's outputs are copies of its executor's
      // buffers), so what outlives the iteration is kept by handle.
      for (size_t i = 0; i < carriedCount; ++i) carried[i] = (*outputs)[1 + i];
      for (size_t i = 0; i < scanCount; ++i) {
        const RuntimeValue& element = (*outputs)[1 + carriedCount + i];
        if (element.isSequence() || element.absent) return nodeError(node, "has a scan output that is not a tensor");
        scans[i].push_back(element.tensor);
      }
    }
    std::vector<RuntimeValue> results = std::move(carried);
    for (size_t i = 0; i < scanCount; ++i) {
      if (scans[i].empty()) {
        // No iteration ran: ONNX gives an empty scan output, whose element shape is unknown here.
        results.push_back(RuntimeValue::ofTensor(NDArray::empty({0}, runtime::DataType::float32())));
        continue;
      }
      auto stacked = joined(node, scans[i], 0, /*newAxis=*/true);
      if (!stacked) return stacked.error();
      results.push_back(std::move(*stacked));
    }
    return results;
  }

  Expected<std::vector<RuntimeValue>> runScan(const ProgramControlNode& node, Scope& scope) {
    auto scanBody = body(node, "body");
    if (!scanBody) return scanBody.error();
    if (model_.program_.opset < 9)
      return nodeError(node, "is the opset-8 Scan, with a batch axis; the interpreter runs Scan of opset 9 and later",
                       "convert the model to a newer opset (onnx.version_converter)");
    const int64_t scanInputs = attribute(node, "num_scan_inputs", 0);
    const int64_t stateCount = int64_t(node.inputs.size()) - scanInputs;
    if (scanInputs < 1 || stateCount < 0)
      return nodeError(node, "has num_scan_inputs " + std::to_string(scanInputs) + " for " +
                                 std::to_string(node.inputs.size()) + " inputs");
    auto listAt = [&](const char* name, size_t i) -> int64_t {
      auto it = node.intLists.find(name);
      return it != node.intLists.end() && i < it->second.size() ? it->second[i] : 0;
    };
    std::vector<RuntimeValue> states;
    for (int64_t i = 0; i < stateCount; ++i) {
      auto value = tensorInput(node, scope, size_t(i), "an initial state");
      if (!value) return value.error();
      states.push_back(RuntimeValue::ofTensor(*value));
    }
    std::vector<NDArray> sequences;
    std::vector<int64_t> axes;
    int64_t length = -1;
    for (int64_t i = 0; i < scanInputs; ++i) {
      auto value = tensorInput(node, scope, size_t(stateCount + i), "a scanned input");
      if (!value) return value.error();
      int64_t axis = listAt("scan_input_axes", size_t(i));
      if (axis < 0) axis += value->ndim();
      if (axis < 0 || axis >= value->ndim()) return nodeError(node, "scans a tensor along an axis outside its rank");
      if (length >= 0 && value->shape()[size_t(axis)] != length)
        return nodeError(node, "scans inputs of different lengths");
      length = value->shape()[size_t(axis)];
      sequences.push_back(*value);
      axes.push_back(axis);
    }
    const size_t outputCount = (*scanBody)->outputs.size();
    if (outputCount < size_t(stateCount)) return nodeError(node, "has a body giving fewer outputs than its states");
    std::vector<std::vector<NDArray>> scanned(outputCount - size_t(stateCount));
    for (int64_t step = 0; step < length; ++step) {
      std::vector<RuntimeValue> arguments = states;
      for (size_t i = 0; i < sequences.size(); ++i) {
        int64_t at = listAt("scan_input_directions", i) ? length - 1 - step : step;
        arguments.push_back(RuntimeValue::ofTensor(sliceAlong(sequences[i], axes[i], at, 1, /*dropAxis=*/true)));
      }
      auto outputs = call(node, **scanBody, arguments, scope);
      if (!outputs) return outputs.error();
      for (int64_t i = 0; i < stateCount; ++i) states[size_t(i)] = (*outputs)[size_t(i)];
      for (size_t i = 0; i < scanned.size(); ++i) {
        const RuntimeValue& element = (*outputs)[size_t(stateCount) + i];
        if (element.isSequence() || element.absent || element.strings)
          return nodeError(node, "has a scan output that is not a tensor");
        scanned[i].push_back(element.tensor);
      }
    }
    std::vector<RuntimeValue> results = std::move(states);
    for (size_t i = 0; i < scanned.size(); ++i) {
      if (listAt("scan_output_directions", i)) std::reverse(scanned[i].begin(), scanned[i].end());
      if (scanned[i].empty()) return nodeError(node, "scans inputs of length 0");
      auto stacked = joined(node, scanned[i], listAt("scan_output_axes", i), /*newAxis=*/true);
      if (!stacked) return stacked.error();
      results.push_back(std::move(*stacked));
    }
    return results;
  }

  Expected<std::vector<RuntimeValue>> runSequenceMap(const ProgramControlNode& node, Scope& scope) {
    auto mapBody = body(node, "body");
    if (!mapBody) return mapBody.error();
    std::vector<RuntimeValue> inputs;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      auto value = input(node, scope, i);
      if (!value) return value.error();
      if (!*value) return nodeError(node, "has an omitted input");
      inputs.push_back(**value);
    }
    if (inputs.empty() || !inputs[0].isSequence()) return nodeError(node, "needs a sequence as its first input");
    const size_t length = inputs[0].sequence->size();
    std::vector<std::vector<NDArray>> outputs((*mapBody)->outputs.size());
    for (size_t k = 0; k < length; ++k) {
      std::vector<RuntimeValue> arguments;
      for (const RuntimeValue& value : inputs) {
        if (value.isSequence() && value.sequence->size() != length)
          return nodeError(node, "maps sequences of different lengths");
        arguments.push_back(value.isSequence() ? RuntimeValue::ofTensor((*value.sequence)[k]) : value);
      }
      auto results = call(node, **mapBody, arguments, scope);
      if (!results) return results.error();
      for (size_t i = 0; i < outputs.size(); ++i) outputs[i].push_back((*results)[i].tensor);
    }
    std::vector<RuntimeValue> sequences;
    for (auto& elements : outputs) sequences.push_back(RuntimeValue::ofSequence(std::move(elements)));
    return sequences;
  }

  Expected<RuntimeValue> sequenceConstruct(const ProgramControlNode& node, const Scope& scope) {
    std::vector<NDArray> elements;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      auto tensor = tensorInput(node, scope, i, "an element");
      if (!tensor) return tensor.error();
      elements.push_back(*tensor);
    }
    return RuntimeValue::ofSequence(std::move(elements));
  }

  // A position into a sequence of `size` tensors (negative from the back); `end` allows size.
  Expected<size_t> position(const ProgramControlNode& node, const Scope& scope, size_t i, size_t size, bool end) {
    auto at = scalarInput(node, scope, i, "a position");
    if (!at) return at.error();
    int64_t p = *at < 0 ? *at + int64_t(size) : *at;
    if (p < 0 || p > int64_t(size) || (!end && p == int64_t(size)))
      return nodeError(node, "reads position " + std::to_string(*at) + " of a sequence of " + std::to_string(size) +
                                 " tensors");
    return size_t(p);
  }

  Expected<RuntimeValue> sequenceInsert(const ProgramControlNode& node, const Scope& scope) {
    auto sequence = sequenceInput(node, scope, 0);
    if (!sequence) return sequence.error();
    auto tensor = tensorInput(node, scope, 1, "the tensor to insert");
    if (!tensor) return tensor.error();
    size_t at = sequence->size();
    if (node.inputs.size() > 2 && !node.inputs[2].empty()) {
      auto p = position(node, scope, 2, sequence->size(), /*end=*/true);
      if (!p) return p.error();
      at = *p;
    }
    sequence->insert(sequence->begin() + std::ptrdiff_t(at), *tensor);
    return RuntimeValue::ofSequence(std::move(*sequence));
  }

  Expected<RuntimeValue> sequenceErase(const ProgramControlNode& node, const Scope& scope) {
    auto sequence = sequenceInput(node, scope, 0);
    if (!sequence) return sequence.error();
    if (sequence->empty()) return nodeError(node, "erases from an empty sequence");
    size_t at = sequence->size() - 1;
    if (node.inputs.size() > 1 && !node.inputs[1].empty()) {
      auto p = position(node, scope, 1, sequence->size(), /*end=*/false);
      if (!p) return p.error();
      at = *p;
    }
    sequence->erase(sequence->begin() + std::ptrdiff_t(at));
    return RuntimeValue::ofSequence(std::move(*sequence));
  }

  Expected<RuntimeValue> sequenceAt(const ProgramControlNode& node, const Scope& scope) {
    auto sequence = sequenceInput(node, scope, 0);
    if (!sequence) return sequence.error();
    auto p = position(node, scope, 1, sequence->size(), /*end=*/false);
    if (!p) return p.error();
    return RuntimeValue::ofTensor((*sequence)[*p]);
  }

  Expected<RuntimeValue> concatFromSequence(const ProgramControlNode& node, const Scope& scope) {
    auto sequence = sequenceInput(node, scope, 0);
    if (!sequence) return sequence.error();
    return joined(node, *sequence, attribute(node, "axis", 0), attribute(node, "new_axis", 0) != 0);
  }

  // `parts` joined (or stacked along a new axis) into one of `node`'s outputs; a failure names
  // the node.
  Expected<RuntimeValue> joined(const ProgramControlNode& node, const std::vector<NDArray>& parts, int64_t axis,
                                bool newAxis) {
    auto result = joinAlong(parts, axis, newAxis);
    if (!result) return nodeError(node, "cannot join its tensors: " + result.error().message);
    return RuntimeValue::ofTensor(std::move(*result));
  }

  Expected<RuntimeValue> splitToSequence(const ProgramControlNode& node, const Scope& scope) {
    auto tensor = tensorInput(node, scope, 0, "the tensor to split");
    if (!tensor) return tensor.error();
    int64_t axis = attribute(node, "axis", 0);
    if (axis < 0) axis += tensor->ndim();
    if (axis < 0 || axis >= tensor->ndim()) return nodeError(node, "splits along an axis outside the tensor's rank");
    const int64_t extent = tensor->shape()[size_t(axis)];
    std::vector<int64_t> lengths;
    bool keepDims = true;
    if (node.inputs.size() > 1 && !node.inputs[1].empty()) {
      auto split = tensorInput(node, scope, 1, "the split");
      if (!split) return split.error();
      auto sizes = graph::integerElements(*split);
      if (!sizes) return nodeError(node, "needs integer split sizes");
      if (split->ndim() == 0) {
        for (int64_t done = 0; done < extent; done += (*sizes)[0]) lengths.push_back(std::min((*sizes)[0], extent - done));
      } else {
        lengths = *sizes;
      }
      if (std::accumulate(lengths.begin(), lengths.end(), int64_t(0)) != extent ||
          std::any_of(lengths.begin(), lengths.end(), [](int64_t n) { return n <= 0; }))
        return nodeError(node, "splits an axis of " + std::to_string(extent) + " into parts that do not add up to it");
    } else {
      lengths.assign(size_t(extent), 1);
      keepDims = attribute(node, "keepdims", 1) != 0;
    }
    std::vector<NDArray> parts;
    int64_t begin = 0;
    for (int64_t length : lengths) {
      parts.push_back(sliceAlong(*tensor, axis, begin, length, /*dropAxis=*/!keepDims));
      begin += length;
    }
    return RuntimeValue::ofSequence(std::move(parts));
  }

  // ONNX StringNormalizer: removes the stopwords (compared with or without case) from a [C] or
  // [1, C] tensor of strings and changes the case of the rest; when nothing is left, one empty
  // string. Case changes are ASCII's (the locale attribute is not applied).
  Expected<RuntimeValue> stringNormalizer(const ProgramControlNode& node, const Scope& scope) {
    auto value = input(node, scope, 0);
    if (!value) return value.error();
    if (!*value || !(*value)->strings) return nodeError(node, "needs a tensor of strings as its input");
    const frontend::StringTensor& in = *(*value)->strings;
    const bool rowOfOne = in.shape.size() == 2 && in.shape[0] == 1;
    if (in.shape.size() != 1 && !rowOfOne)
      return nodeError(node, "takes strings of shape [C] or [1, C], not " + shapeText(in.shape));
    auto caseOf = [](std::string text, bool upper) {
      for (char& c : text) c = char(upper ? std::toupper((unsigned char)c) : std::tolower((unsigned char)c));
      return text;
    };
    const bool caseSensitive = attribute(node, "is_case_sensitive", 0) != 0;
    std::vector<std::string> stopwords;
    if (auto it = node.stringLists.find("stopwords"); it != node.stringLists.end()) stopwords = it->second;
    if (!caseSensitive)
      for (std::string& word : stopwords) word = caseOf(word, false);
    std::string action = "NONE";
    if (auto it = node.strings.find("case_change_action"); it != node.strings.end()) action = it->second;
    if (action != "NONE" && action != "LOWER" && action != "UPPER")
      return nodeError(node, "has case_change_action '" + action + "'", "it is NONE, LOWER or UPPER");
    frontend::StringTensor out;
    for (const std::string& text : in.elements) {
      std::string key = caseSensitive ? text : caseOf(text, false);
      if (std::find(stopwords.begin(), stopwords.end(), key) != stopwords.end()) continue;
      out.elements.push_back(action == "NONE" ? text : caseOf(text, action == "UPPER"));
    }
    if (out.elements.empty()) out.elements.push_back("");
    out.shape = rowOfOne ? std::vector<int64_t>{1, int64_t(out.elements.size())}
                         : std::vector<int64_t>{int64_t(out.elements.size())};
    return RuntimeValue::ofStrings(std::move(out));
  }

  // Cast and CastLike to or from strings: numbers are written as the shortest text that reads
  // back to the same value (as NumPy prints them), and text is read as C's strtod does (so
  // "NaN", "INF" and "-INF" in any case, and exponents).
  Expected<RuntimeValue> castStrings(const ProgramControlNode& node, const Scope& scope) {
    auto value = input(node, scope, 0);
    if (!value) return value.error();
    if (!*value || (*value)->absent || (*value)->isSequence()) return nodeError(node, "needs a tensor to cast");
    const RuntimeValue& from = **value;
    std::string to;
    if (node.opType == "CastLike") {
      auto like = input(node, scope, 1);
      if (!like) return like.error();
      if (!*like || (*like)->absent || (*like)->isSequence()) return nodeError(node, "needs a tensor to cast like");
      to = (*like)->strings ? "string" : (*like)->tensor.dtype().toString();
    } else if (auto it = node.strings.find("to"); it != node.strings.end()) {
      to = it->second;
    }
    if (to == "string") {
      if (from.strings) return from;
      auto text = numbersAsText(from.tensor);
      if (!text) return nodeError(node, "writes " + from.tensor.dtype().toString() + " as strings",
                                  "the interpreter writes float32, float64, int32 and int64 as strings");
      return RuntimeValue::ofStrings(std::move(*text));
    }
    if (!from.strings) return nodeError(node, "casts numbers to " + to + " in the interpreter, which casts only strings");
    auto parsed = DataType::parse(to);
    if (!parsed) return nodeError(node, "casts strings to " + to);
    auto numbers = textAsNumbers(*from.strings, toRuntimeType(*parsed));
    if (!numbers) return nodeError(node, numbers.error().message);
    return RuntimeValue::ofTensor(std::move(*numbers));
  }

  InterpretedModel& model_;
  std::string source_;
};

InterpretedModel::InterpretedModel(frontend::ControlFlowProgram program, CompileOptions compile)
    : program_(std::move(program)), compile_(std::move(compile)), cache_(std::make_unique<SegmentCache>()) {}
InterpretedModel::~InterpretedModel() = default;

Expected<std::unique_ptr<InterpretedModel>> InterpretedModel::create(const std::string& path,
                                                                     const CompileOptions& compile) {
  auto program = frontend::readControlFlowProgram(path);
  if (!program) return program.error();
  return std::unique_ptr<InterpretedModel>(new InterpretedModel(std::move(*program), compile));
}

Status InterpretedModel::run(const InterpretedInputs& given) {
  Interpreter interpreter(*this);
  Scope scope;
  const std::map<std::string, NDArray>& inputs = given.tensors;
  for (const std::string& name : program_.main.inputs) {
    if (given.absent.count(name)) {
      scope.bind(name, RuntimeValue::none());
      continue;
    }
    if (auto strings = given.strings.find(name); strings != given.strings.end()) {
      scope.bind(name, RuntimeValue::ofStrings(strings->second));
      continue;
    }
    auto length = given.sequenceLengths.find(name);
    if (length != given.sequenceLengths.end()) {
      std::vector<NDArray> elements;
      for (size_t i = 0; i < length->second; ++i) {
        auto element = inputs.find(frontend::sequenceElementName(name, i));
        if (element == inputs.end())
          return Diagnostic{"sequence input '" + name + "' has no tensor " + std::to_string(i), program_.sourceName, 0, 0, ""};
        elements.push_back(element->second);
      }
      scope.bind(name, RuntimeValue::ofSequence(std::move(elements)));
      continue;
    }
    auto value = inputs.find(name);
    if (value == inputs.end())
      return Diagnostic{"input '" + name + "' has no value", program_.sourceName, 0, 0,
                        "give it with --input " + name + "=FILE (.npy or .pb)"};
    scope.bind(name, RuntimeValue::ofTensor(value->second));
  }
  if (Status status = interpreter.runGraph(program_.main, scope); !status) return status;
  auto outputs = interpreter.outputsOf(program_.main, scope, "the model");
  if (!outputs) return outputs.error();
  outputNames_.clear();
  outputs_.clear();
  stringOutputs_.clear();
  for (size_t i = 0; i < outputs->size(); ++i) {
    const RuntimeValue& value = (*outputs)[i];
    const std::string& name = program_.main.outputs[i];
    if (value.absent)
      return Diagnostic{"output '" + name + "' is an optional value that is absent; Tessel's outputs are tensors",
                        program_.sourceName, 0, 0, ""};
    if (value.strings) {
      outputNames_.push_back(name);
      outputs_.emplace_back();
      stringOutputs_.push_back(value.strings);
      continue;
    }
    if (!value.isSequence()) {
      outputNames_.push_back(name);
      outputs_.push_back(copyOf(value.tensor));
      stringOutputs_.emplace_back();
      continue;
    }
    for (size_t k = 0; k < value.sequence->size(); ++k) {
      outputNames_.push_back(frontend::sequenceElementName(name, k));
      outputs_.push_back(copyOf((*value.sequence)[k]));
      stringOutputs_.emplace_back();
    }
  }
  return Status::success();
}

}  // namespace tessel::driver
