// ONNX control flow and sequence operators expanded into graph operations (OnnxControlFlow.h).
#include "compiler/frontend/onnx/OnnxControlFlow.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <set>

#include "compiler/opdefs/OpRegistry.h"

namespace tessel::frontend {
namespace {

using graph::Value;

// Unrolling is how a Loop compiles; past this many iterations the graph (and the compile)
// would grow without bound, and the loop is most likely one whose end depends on data.
constexpr int64_t kMaxUnrolledIterations = 4096;

int64_t intAttribute(const onnx::NodeProto& node, const std::string& name, int64_t fallback) {
  for (const auto& attribute : node.attribute())
    if (attribute.name() == name) return attribute.i();
  return fallback;
}

std::vector<int64_t> intsAttribute(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& attribute : node.attribute())
    if (attribute.name() == name) return {attribute.ints().begin(), attribute.ints().end()};
  return {};
}

const onnx::GraphProto* graphAttribute(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& attribute : node.attribute())
    if (attribute.name() == name && attribute.has_g()) return &attribute.g();
  return nullptr;
}

// Builds the operations one node expands into, each named "<node>/<what>", each with the
// node as provenance.
class Builder {
public:
  Builder(const ExpansionNode& node, ExpansionContext& context) : node_(node), context_(context) {}

  Value int64Constant(const std::vector<int64_t>& values, std::vector<int64_t> shape) {
    auto array = runtime::NDArray::empty(std::move(shape), runtime::DataType::int64());
    array.copyFrom(values);
    return graph::makeConstant(freshName("constant"), array);
  }
  Value int64Scalar(int64_t value) { return int64Constant({value}, {}); }
  Value boolScalar(bool value) {
    auto array = runtime::NDArray::empty({}, runtime::DataType::boolean());
    unsigned char byte = value ? 1 : 0;
    array.copyFrom(&byte, 1);
    return graph::makeConstant(freshName("constant"), array);
  }

  std::vector<Value> operation(const std::string& op, std::vector<Value> inputs, graph::Attributes attributes = {},
                               size_t outputs = 1) {
    return graph::makeOperation(freshName(op), op, std::move(inputs), std::move(attributes),
                                std::vector<graph::TensorType>(outputs),
                                {graph::Provenance{node_.name, node_.proto.op_type(), context_.opset()}});
  }
  Value one(const std::string& op, std::vector<Value> inputs, graph::Attributes attributes = {}) {
    return operation(op, std::move(inputs), std::move(attributes))[0];
  }

  // `x` without its `axis`, at `index` along it.
  Value take(const Value& x, int64_t index, int64_t axis) {
    return one("Gather", {x, int64Scalar(index)}, {{"axis", axis}});
  }
  // The tensors stacked along a new `axis` (all of one shape).
  Value stack(const std::vector<Value>& elements, int64_t axis) {
    std::vector<Value> expanded;
    for (const Value& element : elements) expanded.push_back(one("Unsqueeze", {element, int64Constant({axis}, {1})}));
    return expanded.size() == 1 ? expanded[0] : one("Concat", expanded, {{"axis", axis}});
  }

  std::string freshName(const std::string& what) { return node_.name + "/" + what + "_" + std::to_string(count_++); }

private:
  const ExpansionNode& node_;
  ExpansionContext& context_;
  int count_ = 0;
};

Diagnostic problem(const std::string& message, const std::string& hint = "") {
  Diagnostic d;
  d.message = message;
  d.hint = hint;
  return d;
}

class Expander {
public:
  Expander(const ExpansionNode& node, const ImportScope& scope, ExpansionContext& context)
      : node_(node), scope_(scope), context_(context), build_(node, context) {}

  Expected<std::vector<ImportedValue>> run() {
    const std::string& op = node_.proto.op_type();
    if (op == "If") return expandIf();
    if (op == "Loop") return expandLoop();
    if (op == "Scan") return expandScan();
    if (op == "SequenceMap") return expandSequenceMap();
    auto single = [](Expected<ImportedValue> value) -> Expected<std::vector<ImportedValue>> {
      if (!value) return value.error();
      return std::vector<ImportedValue>{std::move(*value)};
    };
    if (op == "SequenceEmpty") return single(ImportedValue::ofSequence({}));
    if (op == "SequenceConstruct") return single(sequenceConstruct());
    if (op == "SequenceInsert") return single(sequenceInsert());
    if (op == "SequenceErase") return single(sequenceErase());
    if (op == "SequenceAt") return single(sequenceAt());
    if (op == "SequenceLength") return single(sequenceLength());
    if (op == "SplitToSequence") return single(splitToSequence());
    if (op == "ConcatFromSequence") return single(concatFromSequence());
    // An optional value is present or absent when compiling: present, it is the value itself.
    if (op == "Optional") {
      if (!has(0)) return problem("makes an empty optional value; Tessel compiles optional values that are present");
      return single(node_.inputs[0]);
    }
    if (op == "OptionalHasElement") return single(ImportedValue::ofTensor(build_.boolScalar(has(0))));
    if (op == "OptionalGetElement") {
      if (!has(0)) return problem("reads the element of an empty optional value");
      return single(node_.inputs[0]);
    }
    return problem("is not a control-flow or sequence operator");
  }

private:
  bool has(size_t i) const {
    return i < node_.inputs.size() && (node_.inputs[i].isSequence() || node_.inputs[i].tensor.defined());
  }
  std::string inputName(size_t i) const { return "'" + node_.proto.input(int(i)) + "'"; }

  Expected<Value> tensorInput(size_t i, const std::string& role) const {
    if (!has(i)) return problem("needs its input " + std::to_string(i) + " (" + role + ")");
    if (node_.inputs[i].isSequence())
      return problem("reads the sequence " + inputName(i) + " as " + role + ", which must be a tensor");
    return node_.inputs[i].tensor;
  }
  Expected<std::vector<Value>> sequenceInput(size_t i) const {
    if (!has(i)) return problem("needs its input " + std::to_string(i) + " (the sequence)");
    if (!node_.inputs[i].isSequence())
      return problem("reads the tensor " + inputName(i) + " where a sequence is expected");
    return *node_.inputs[i].sequence;
  }

  // The known integer scalar (or one-element tensor) at input `i`.
  Expected<int64_t> knownInteger(size_t i, const std::string& role) {
    auto tensor = tensorInput(i, role);
    if (!tensor) return tensor.error();
    auto value = context_.knownValue(*tensor, role + " " + inputName(i));
    if (!value) return value.error();
    auto elements = graph::integerElements(*value);
    if (!elements || elements->size() != 1)
      return problem("needs " + role + " " + inputName(i) + " to be one integer; it is " + value->dtype().toString() +
                     " with " + std::to_string(value->numElements()) + " elements");
    return (*elements)[0];
  }

  // A position into a sequence of `length` elements (negative counts from the back).
  Expected<size_t> position(size_t input, size_t length, bool mayBeLength) {
    auto at = knownInteger(input, "its position");
    if (!at) return at.error();
    const int64_t n = int64_t(length), limit = mayBeLength ? n : n - 1;
    if (*at < -n || *at > limit)
      return problem("has position " + std::to_string(*at) + " outside the sequence of " + std::to_string(n) +
                     " tensors (valid: " + std::to_string(-n) + " to " + std::to_string(limit) + ")");
    return size_t(*at < 0 ? *at + n : *at);
  }

  Expected<const onnx::GraphProto*> body(const std::string& name) const {
    const onnx::GraphProto* graph = graphAttribute(node_.proto, name);
    if (!graph) return problem("has no subgraph attribute '" + name + "'");
    return graph;
  }

  Expected<std::vector<ImportedValue>> importBody(const onnx::GraphProto& graph, const std::vector<ImportedValue>& arguments,
                                                  const std::string& prefix) {
    if (size_t(graph.input_size()) != arguments.size())
      return problem("has a body '" + graph.name() + "' with " + std::to_string(graph.input_size()) +
                     " inputs; it must take " + std::to_string(arguments.size()));
    return context_.importBody(graph, arguments, scope_, node_.name + "/" + prefix);
  }

  Expected<std::vector<ImportedValue>> expandIf() {
    auto cond = knownInteger(0, "its condition");
    if (!cond) return cond.error();
    const std::string branch = *cond ? "then_branch" : "else_branch";
    auto graph = body(branch);
    if (!graph) return graph.error();
    auto outputs = importBody(**graph, {}, branch + "/");
    if (!outputs) return outputs.error();
    if (outputs->size() != size_t(node_.proto.output_size()))
      return problem("has " + std::to_string(node_.proto.output_size()) + " outputs but its " + branch + " has " +
                     std::to_string(outputs->size()));
    return outputs;
  }

  Expected<std::vector<ImportedValue>> expandLoop() {
    auto graph = body("body");
    if (!graph) return graph.error();
    const onnx::GraphProto& loopBody = **graph;
    std::optional<int64_t> tripCount;
    if (has(0)) {
      auto count = knownInteger(0, "its trip count");
      if (!count) return count.error();
      tripCount = *count;
    }
    bool condition = true;
    if (has(1)) {
      auto initial = knownInteger(1, "its condition");
      if (!initial) return initial.error();
      condition = *initial != 0;
    }
    if (!tripCount && !has(1))
      return problem("has neither a trip count nor a condition, so it never ends",
                     "give the Loop a trip count (input 0) or a condition (input 1)");
    std::vector<ImportedValue> carried(node_.inputs.begin() + std::min<ptrdiff_t>(2, ptrdiff_t(node_.inputs.size())),
                                       node_.inputs.end());
    const size_t carriedCount = carried.size();
    if (size_t(loopBody.output_size()) < 1 + carriedCount)
      return problem("has a body with " + std::to_string(loopBody.output_size()) + " outputs; it must give the condition and " +
                     std::to_string(carriedCount) + " loop-carried values first");
    const size_t scanCount = size_t(loopBody.output_size()) - 1 - carriedCount;
    std::vector<std::vector<Value>> scans(scanCount);
    int64_t iteration = 0;
    for (; condition && (!tripCount || iteration < *tripCount); ++iteration) {
      if (iteration == kMaxUnrolledIterations)
        return problem("runs more than " + std::to_string(kMaxUnrolledIterations) +
                           " iterations; Tessel compiles a Loop by unrolling it, up to that many",
                       "bound the loop with a smaller trip count");
      std::vector<ImportedValue> arguments = {ImportedValue::ofTensor(build_.int64Scalar(iteration)),
                                              ImportedValue::ofTensor(build_.boolScalar(condition))};
      arguments.insert(arguments.end(), carried.begin(), carried.end());
      auto outputs = importBody(loopBody, arguments, "iteration" + std::to_string(iteration) + "/");
      if (!outputs) return outputs.error();
      if (has(1)) {
        if ((*outputs)[0].isSequence()) return problem("has a body whose condition output is a sequence");
        auto next = context_.knownValue((*outputs)[0].tensor, "the condition its body computes in iteration " +
                                                                  std::to_string(iteration));
        if (!next) return next.error();
        auto elements = graph::integerElements(*next);
        if (!elements || elements->size() != 1) return problem("has a body whose condition is not one boolean");
        condition = (*elements)[0] != 0;
      }
      for (size_t i = 0; i < carriedCount; ++i) carried[i] = (*outputs)[1 + i];
      for (size_t i = 0; i < scanCount; ++i) {
        const ImportedValue& element = (*outputs)[1 + carriedCount + i];
        if (element.isSequence()) return problem("has a scan output that is a sequence; scan outputs are tensors");
        scans[i].push_back(element.tensor);
      }
    }
    std::vector<ImportedValue> results = carried;
    for (size_t i = 0; i < scanCount; ++i) {
      if (scans[i].empty())
        return problem("ran no iteration, so its scan output '" + loopBody.output(int(1 + carriedCount + i)).name() +
                       "' has no shape Tessel can know");
      results.push_back(ImportedValue::ofTensor(build_.stack(scans[i], 0)));
    }
    return results;
  }

  Expected<std::vector<ImportedValue>> expandScan() {
    auto graph = body("body");
    if (!graph) return graph.error();
    const onnx::GraphProto& scanBody = **graph;
    const int64_t scanInputs = intAttribute(node_.proto, "num_scan_inputs", -1);
    // Opset 8's Scan has a batch axis (0) before the scanned one and takes sequence_lens first.
    const bool batched = context_.opset() < 9;
    const size_t first = batched ? 1 : 0;
    const size_t inputCount = node_.inputs.size();
    if (scanInputs < 1 || size_t(scanInputs) > inputCount - first)
      return problem("has num_scan_inputs " + std::to_string(scanInputs) + " for " + std::to_string(inputCount - first) +
                     " inputs");
    const size_t stateCount = inputCount - first - size_t(scanInputs);
    const size_t outputCount = size_t(node_.proto.output_size());
    if (outputCount < stateCount) return problem("has fewer outputs than states");
    const size_t scanOutputs = outputCount - stateCount;
    std::vector<Value> states, scanned;
    for (size_t i = first; i < inputCount; ++i) {
      auto tensor = tensorInput(i, i - first < stateCount ? "a state" : "a scanned input");
      if (!tensor) return tensor.error();
      (i - first < stateCount ? states : scanned).push_back(*tensor);
    }
    std::vector<int64_t> inputAxes = intsAttribute(node_.proto, "scan_input_axes"),
                         inputDirections = intsAttribute(node_.proto, batched ? "directions" : "scan_input_directions"),
                         outputAxes = intsAttribute(node_.proto, "scan_output_axes"),
                         outputDirections = intsAttribute(node_.proto, "scan_output_directions");
    auto entry = [](const std::vector<int64_t>& list, size_t i) { return i < list.size() ? list[i] : 0; };
    // The scanned axis of each input (normalized) and the common length.
    std::vector<int64_t> axes;
    int64_t length = -1;
    for (size_t i = 0; i < scanned.size(); ++i) {
      auto type = context_.typeOf(scanned[i]);
      if (!type) return type.error();
      const int64_t rank = int64_t(type->shape.size());
      int64_t axis = batched ? 1 : entry(inputAxes, i);
      if (axis < 0) axis += rank;
      if (axis < 0 || axis >= rank)
        return problem("scans its input " + std::to_string(i) + " along axis " + std::to_string(entry(inputAxes, i)) +
                       ", which a rank-" + std::to_string(rank) + " tensor lacks");
      if (length >= 0 && type->shape[size_t(axis)] != length)
        return problem("scans inputs of different lengths (" + std::to_string(length) + " and " +
                       std::to_string(type->shape[size_t(axis)]) + ")");
      length = type->shape[size_t(axis)];
      axes.push_back(batched ? 0 : axis);  // opset 8: the batch element is taken first
    }
    int64_t batch = 1;
    if (batched) {
      auto type = context_.typeOf(scanned[0]);
      if (!type) return type.error();
      batch = type->shape[0];
      if (has(0)) {
        auto lengths = tensorInput(0, "its sequence_lens");
        if (!lengths) return lengths.error();
        auto known = context_.knownValue(*lengths, "its sequence_lens " + inputName(0));
        if (!known) return known.error();
        auto elements = graph::integerElements(*known);
        if (!elements || std::any_of(elements->begin(), elements->end(), [&](int64_t n) { return n != length; }))
          return problem("has sequence_lens shorter than its inputs; Tessel scans whole sequences only");
      }
    }
    // Opset 8 scans each batch element on its own; its results are stacked over the batch.
    std::vector<std::vector<Value>> finalStates(stateCount), batchScans(scanOutputs);
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<Value> state = states, inputs = scanned;
      if (batched) {
        for (auto& s : state) s = build_.take(s, b, 0);
        for (auto& x : inputs) x = build_.take(x, b, 0);
      }
      std::vector<std::vector<Value>> steps(scanOutputs);
      for (int64_t t = 0; t < length; ++t) {
        std::vector<ImportedValue> arguments;
        for (auto& s : state) arguments.push_back(ImportedValue::ofTensor(s));
        for (size_t i = 0; i < inputs.size(); ++i) {
          const int64_t at = entry(inputDirections, i) ? length - 1 - t : t;
          arguments.push_back(ImportedValue::ofTensor(build_.take(inputs[i], at, axes[i])));
        }
        auto outputs = importBody(scanBody, arguments,
                                  (batched ? "batch" + std::to_string(b) + "/" : "") + "step" + std::to_string(t) + "/");
        if (!outputs) return outputs.error();
        if (outputs->size() != outputCount)
          return problem("has a body with " + std::to_string(outputs->size()) + " outputs for its " +
                         std::to_string(outputCount) + " outputs");
        for (auto& value : *outputs)
          if (value.isSequence()) return problem("has a body giving a sequence; Scan's values are tensors");
        for (size_t i = 0; i < stateCount; ++i) state[i] = (*outputs)[i].tensor;
        for (size_t i = 0; i < scanOutputs; ++i) steps[i].push_back((*outputs)[stateCount + i].tensor);
      }
      for (size_t i = 0; i < stateCount; ++i) finalStates[i].push_back(state[i]);
      for (size_t i = 0; i < scanOutputs; ++i) {
        if (steps[i].empty()) return problem("scans sequences of length 0; its scan outputs would have no known shape");
        if (entry(outputDirections, i)) std::reverse(steps[i].begin(), steps[i].end());
        batchScans[i].push_back(build_.stack(steps[i], batched ? 0 : outputAxis(outputAxes, i, steps[i][0])));
      }
    }
    std::vector<ImportedValue> results;
    for (auto& perBatch : finalStates)
      results.push_back(ImportedValue::ofTensor(batched ? build_.stack(perBatch, 0) : perBatch[0]));
    for (auto& perBatch : batchScans)
      results.push_back(ImportedValue::ofTensor(batched ? build_.stack(perBatch, 0) : perBatch[0]));
    return results;
  }

  // Scan's output axis i; a negative one counts from the back of the stacked output's rank.
  int64_t outputAxis(const std::vector<int64_t>& axes, size_t i, const Value& element) {
    int64_t axis = i < axes.size() ? axes[i] : 0;
    if (axis >= 0) return axis;
    auto type = context_.typeOf(element);
    return type ? axis + int64_t(type->shape.size()) + 1 : 0;
  }

  Expected<std::vector<ImportedValue>> expandSequenceMap() {
    auto graph = body("body");
    if (!graph) return graph.error();
    auto first = sequenceInput(0);
    if (!first) return first.error();
    const size_t length = first->size();
    for (size_t i = 1; i < node_.inputs.size(); ++i)
      if (node_.inputs[i].isSequence() && node_.inputs[i].sequence->size() != length)
        return problem("maps sequences of different lengths (" + std::to_string(length) + " and " +
                       std::to_string(node_.inputs[i].sequence->size()) + ")");
    std::vector<std::vector<Value>> outputs(size_t(node_.proto.output_size()));
    for (size_t k = 0; k < length; ++k) {
      std::vector<ImportedValue> arguments;
      for (const ImportedValue& input : node_.inputs)
        arguments.push_back(input.isSequence() ? ImportedValue::ofTensor((*input.sequence)[k]) : input);
      auto results = importBody(**graph, arguments, "element" + std::to_string(k) + "/");
      if (!results) return results.error();
      if (results->size() != outputs.size())
        return problem("has a body with " + std::to_string(results->size()) + " outputs for its " +
                       std::to_string(outputs.size()) + " outputs");
      for (size_t i = 0; i < outputs.size(); ++i) {
        if ((*results)[i].isSequence()) return problem("has a body giving a sequence; each element must be a tensor");
        outputs[i].push_back((*results)[i].tensor);
      }
    }
    std::vector<ImportedValue> sequences;
    for (auto& elements : outputs) sequences.push_back(ImportedValue::ofSequence(std::move(elements)));
    return sequences;
  }

  Expected<ImportedValue> sequenceConstruct() {
    std::vector<Value> elements;
    for (size_t i = 0; i < node_.inputs.size(); ++i) {
      auto tensor = tensorInput(i, "an element");
      if (!tensor) return tensor.error();
      elements.push_back(*tensor);
    }
    return ImportedValue::ofSequence(std::move(elements));
  }

  Expected<ImportedValue> sequenceInsert() {
    auto sequence = sequenceInput(0);
    if (!sequence) return sequence.error();
    auto tensor = tensorInput(1, "the tensor to insert");
    if (!tensor) return tensor.error();
    size_t at = sequence->size();
    if (has(2)) {
      auto known = position(2, sequence->size(), true);
      if (!known) return known.error();
      at = *known;
    }
    sequence->insert(sequence->begin() + ptrdiff_t(at), *tensor);
    return ImportedValue::ofSequence(std::move(*sequence));
  }

  Expected<ImportedValue> sequenceErase() {
    auto sequence = sequenceInput(0);
    if (!sequence) return sequence.error();
    if (sequence->empty()) return problem("erases from an empty sequence");
    size_t at = sequence->size() - 1;
    if (has(1)) {
      auto known = position(1, sequence->size(), false);
      if (!known) return known.error();
      at = *known;
    }
    sequence->erase(sequence->begin() + ptrdiff_t(at));
    return ImportedValue::ofSequence(std::move(*sequence));
  }

  Expected<ImportedValue> sequenceAt() {
    auto sequence = sequenceInput(0);
    if (!sequence) return sequence.error();
    if (sequence->empty()) return problem("reads from an empty sequence");
    auto at = position(1, sequence->size(), false);
    if (!at) return at.error();
    return ImportedValue::ofTensor((*sequence)[*at]);
  }

  Expected<ImportedValue> sequenceLength() {
    auto sequence = sequenceInput(0);
    if (!sequence) return sequence.error();
    return ImportedValue::ofTensor(build_.int64Scalar(int64_t(sequence->size())));
  }

  Expected<ImportedValue> splitToSequence() {
    auto input = tensorInput(0, "the tensor to split");
    if (!input) return input.error();
    auto type = context_.typeOf(*input);
    if (!type) return type.error();
    const int64_t rank = int64_t(type->shape.size());
    int64_t axis = intAttribute(node_.proto, "axis", 0);
    if (axis < -rank || axis >= rank)
      return problem("has axis " + std::to_string(axis) + " outside its rank-" + std::to_string(rank) + " input");
    if (axis < 0) axis += rank;
    const int64_t extent = type->shape[size_t(axis)];
    std::vector<Value> pieces;
    if (!has(1)) {
      // Pieces of one along the axis; keepdims 0 drops the axis from each.
      const bool keep = intAttribute(node_.proto, "keepdims", 1) != 0;
      for (int64_t i = 0; i < extent; ++i) pieces.push_back(keep ? slice(*input, axis, i, i + 1) : build_.take(*input, i, axis));
      return ImportedValue::ofSequence(std::move(pieces));
    }
    auto splitTensor = tensorInput(1, "its split");
    if (!splitTensor) return splitTensor.error();
    auto known = context_.knownValue(*splitTensor, "its split " + inputName(1));
    if (!known) return known.error();
    auto sizes = graph::integerElements(*known);
    if (!sizes) return problem("has a split that is not integers");
    std::vector<int64_t> lengths;
    if (known->ndim() == 0) {
      // One size: pieces of that size, the last one shorter when the axis does not divide.
      const int64_t size = (*sizes)[0];
      if (size <= 0) return problem("splits into pieces of size " + std::to_string(size));
      for (int64_t start = 0; start < extent; start += size) lengths.push_back(std::min(size, extent - start));
    } else {
      lengths = *sizes;
      int64_t total = 0;
      for (int64_t n : lengths) total += n < 0 ? extent + 1 : n;
      if (total != extent)
        return problem("splits an axis of " + std::to_string(extent) + " into pieces summing to " + std::to_string(total));
    }
    int64_t start = 0;
    for (int64_t n : lengths) {
      pieces.push_back(slice(*input, axis, start, start + n));
      start += n;
    }
    return ImportedValue::ofSequence(std::move(pieces));
  }

  Value slice(const Value& x, int64_t axis, int64_t begin, int64_t end) {
    return build_.one("Slice", {x, build_.int64Constant({begin}, {1}), build_.int64Constant({end}, {1}),
                                build_.int64Constant({axis}, {1})});
  }

  Expected<ImportedValue> concatFromSequence() {
    auto sequence = sequenceInput(0);
    if (!sequence) return sequence.error();
    if (sequence->empty()) return problem("concatenates an empty sequence, whose result has no known shape");
    const int64_t axis = intAttribute(node_.proto, "axis", 0);
    if (intAttribute(node_.proto, "new_axis", 0)) return ImportedValue::ofTensor(build_.stack(*sequence, axis));
    if (sequence->size() == 1) return ImportedValue::ofTensor((*sequence)[0]);
    return ImportedValue::ofTensor(build_.one("Concat", *sequence, {{"axis", axis}}));
  }

  const ExpansionNode& node_;
  const ImportScope& scope_;
  ExpansionContext& context_;
  Builder build_;
};

void collectOuterNames(const onnx::GraphProto& body, std::set<std::string> defined, std::set<std::string>& read) {
  for (const auto& input : body.input()) defined.insert(input.name());
  for (const auto& initializer : body.initializer()) defined.insert(initializer.name());
  for (const auto& node : body.node()) {
    for (const auto& input : node.input())
      if (!input.empty() && !defined.count(input)) read.insert(input);
    for (const auto& attribute : node.attribute()) {
      if (attribute.has_g()) collectOuterNames(attribute.g(), defined, read);
      for (const auto& graph : attribute.graphs()) collectOuterNames(graph, defined, read);
    }
    for (const auto& output : node.output()) defined.insert(output);
  }
  for (const auto& output : body.output())
    if (!defined.count(output.name())) read.insert(output.name());
}

}  // namespace

const ImportedValue* ImportScope::find(const std::string& name) const {
  for (const ImportScope* scope = this; scope; scope = scope->parent_) {
    auto it = scope->values_.find(name);
    if (it != scope->values_.end()) return &it->second;
  }
  return nullptr;
}

bool isControlFlowOperator(const std::string& opType) {
  static const std::set<std::string> operators = {
      "If",         "Loop",           "Scan",       "SequenceMap",    "SequenceEmpty",   "SequenceConstruct",
      "SequenceInsert", "SequenceErase", "SequenceAt", "SequenceLength", "SplitToSequence", "ConcatFromSequence",
      "Optional",   "OptionalHasElement", "OptionalGetElement"};
  return operators.count(opType) != 0;
}

Expected<std::vector<ImportedValue>> expandControlFlow(const ExpansionNode& node, const ImportScope& scope,
                                                       ExpansionContext& context) {
  return Expander(node, scope, context).run();
}

std::vector<std::string> outerNamesRead(const onnx::GraphProto& body) {
  std::set<std::string> read;
  collectOuterNames(body, {}, read);
  return {read.begin(), read.end()};
}

}  // namespace tessel::frontend
