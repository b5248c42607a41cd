// Dead code elimination on the graph IR: unread outputs of multi-output operations.
#include "compiler/graph/DeadCodeElimination.h"

#include <algorithm>
#include <set>

#include "compiler/graph/GraphRewriter.h"
#include "compiler/opdefs/OpRegistry.h"

namespace tessel::graph {

namespace {

using ValueKey = std::pair<const GraphNode*, int>;

runtime::NDArray int64Vector(int64_t value) {
  auto array = runtime::NDArray::empty({1}, runtime::DataType::int64());
  array.values<int64_t>()[0] = value;
  return array;
}

class DeadCodeEliminator {
public:
  explicit DeadCodeEliminator(const Graph& graph) : graph_(graph) {
    for (const OperationNode* op : graph.operations())
      for (auto& input : op->inputs)
        if (input.defined()) read_.insert({input.node(), input.index()});
    for (auto& output : graph.outputs) read_.insert({output.node(), output.index()});
  }

  Graph run(DeadCodeReport& report) {
    return rewriteGraph(graph_, [&](const OperationNode& op, const std::vector<Value>& inputs)
                                    -> std::optional<std::vector<Value>> {
      if (op.outputTypes.size() < 2 || op.isFused()) return std::nullopt;
      std::vector<bool> used;
      for (size_t i = 0; i < op.outputTypes.size(); ++i) used.push_back(read_.count({&op, int(i)}) != 0);
      if (std::all_of(used.begin(), used.end(), [](bool u) { return u; })) return std::nullopt;
      if (op.op == "Split") {
        auto slices = splitAsSlices(op, inputs, used);
        if (slices) {
          report.removedOperations += 1;
          report.removedOutputs += int(std::count(used.begin(), used.end(), false));
        }
        return slices;
      }
      return withoutTrailingOutputs(op, inputs, used, report);
    });
  }

private:
  // Keeps the outputs up to the last one read, but at least the operator's minimum.
  std::optional<std::vector<Value>> withoutTrailingOutputs(const OperationNode& op, const std::vector<Value>& inputs,
                                                           const std::vector<bool>& used, DeadCodeReport& report) {
    const OpDef* def = OpRegistry::global().find(op.op);
    if (!def || def->maxOutputs < 0) return std::nullopt;  // a variadic output count carries meaning
    // Before opset 14, a BatchNormalization with its statistics outputs runs in training mode.
    int opset = op.provenance.empty() ? 0 : op.provenance.front().opset;
    if (op.op == "BatchNormalization" && opset != 0 && opset < 14) return std::nullopt;
    size_t keep = used.size();
    while (keep > size_t(std::max(def->minOutputs, 1)) && !used[keep - 1]) --keep;
    if (keep == used.size()) return std::nullopt;
    std::vector<TensorType> types(op.outputTypes.begin(), op.outputTypes.begin() + std::ptrdiff_t(keep));
    std::vector<Value> outputs = makeOperation(op.name, op.op, inputs, op.attributes, types, op.provenance);
    report.removedOutputs += int(used.size() - keep);
    // The dropped outputs have no readers; an undefined value stands in for them.
    outputs.resize(used.size());
    return outputs;
  }

  // One Slice per read part of the Split, its bounds read off the output types.
  std::optional<std::vector<Value>> splitAsSlices(const OperationNode& split, const std::vector<Value>& inputs,
                                                  const std::vector<bool>& used) {
    if (inputs.empty() || !inputs[0].defined()) return std::nullopt;
    const TensorType& inputType = inputs[0].type();
    int64_t rank = int64_t(inputType.shape.size());
    int64_t axis = split.attribute<int64_t>("axis", 0);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return std::nullopt;
    // Slice with starts/ends/axes inputs is the opset 10+ form.
    std::vector<Provenance> provenance = split.provenance;
    for (auto& p : provenance)
      if (p.opset != 0) p.opset = std::max(p.opset, 13);
    std::vector<Value> outputs(used.size());
    int64_t offset = 0;
    for (size_t i = 0; i < used.size(); ++i) {
      const TensorType& part = split.outputTypes[i];
      if (int64_t(part.shape.size()) != rank) return std::nullopt;
      int64_t length = part.shape[size_t(axis)];
      if (used[i]) {
        std::string name = split.name + ".part" + std::to_string(i);
        std::vector<Value> sliceInputs{inputs[0], makeConstant(name + ".starts", int64Vector(offset)),
                                       makeConstant(name + ".ends", int64Vector(offset + length)),
                                       makeConstant(name + ".axes", int64Vector(axis))};
        // Typed through the registry: a build without Slice keeps the Split.
        Value untyped = makeOperation(name, "Slice", sliceInputs, {}, {part}, provenance)[0];
        auto types = inferOpTypes(makeOpCall(*asOperation(untyped.node())));
        if (!types || types->size() != 1 || !((*types)[0] == part)) return std::nullopt;
        outputs[i] = untyped;
      }
      offset += length;
    }
    return outputs;
  }

  const Graph& graph_;
  std::set<ValueKey> read_;
};

}  // namespace

Expected<Graph> deadCodeElimination(const Graph& graph, DeadCodeReport* report) {
  DeadCodeReport local;
  Graph result = DeadCodeEliminator(graph).run(local);
  if (report) *report = local;
  return result;
}

}  // namespace tessel::graph
