// Type inference over the graph through the operator registry.
#include "compiler/graph/InferTypes.h"

#include <functional>
#include <unordered_map>

#include "compiler/graph/FoldConstant.h"
#include "compiler/graph/GraphRewriter.h"
#include "compiler/opdefs/OpRegistry.h"
#include "core/graph/UnsupportedOperations.h"

namespace tessel::graph {

Expected<Graph> inferTypes(const Graph& graph, const Target& target) {
  // A graph imported only to be viewed holds placeholders; every one of them is named at once,
  // as the import that refuses such a model does.
  if (auto placeholders = unsupportedOperations(graph); !placeholders.empty()) {
    Diagnostic refusal = unsupportedOperationsError(placeholders);
    refusal.message = "cannot be compiled: the graph " + refusal.message;
    return refusal;
  }
  for (auto& input : graph.inputs)
    if (!input.type().known())
      return Diagnostic{"graph input '" + input.name() + "' has no known type", input.name(), 0, 0,
                        "give its shape with --input-shape " + input.name() + ":D0,D1,..."};
  std::optional<Diagnostic> failure;
  // Values an operator needs by value (a Reshape's shape) are often computed from shapes
  // (Shape -> Gather -> Concat): such a chain is folded here, as soon as it is typed, so the
  // reader can be typed. Results by node, so each producer is tried once: an empty entry says
  // it does not fold. Without the memory of failures, every reader of a shared subgraph walked
  // it again, once per path: ShuffleNetV2's channel shuffles made that minutes of type inference.
  std::unordered_map<const GraphNode*, std::vector<Value>> foldedOutputs;
  std::function<Expected<Value>(const Value&)> foldValue = [&](const Value& value) -> Expected<Value> {
    auto* producer = asOperation(value.node());
    if (!producer || producer->isFused()) return value;
    auto known = foldedOutputs.find(producer);
    if (known != foldedOutputs.end())
      return known->second.empty() ? value : known->second.at(size_t(value.index()));
    std::vector<Value> inputs;
    for (auto& input : producer->inputs) {
      if (!input.defined()) {
        inputs.push_back(input);
        continue;
      }
      auto folded = foldValue(input);
      if (!folded) return folded;
      inputs.push_back(*folded);
    }
    auto constants = foldOperation(*producer, inputs);
    if (!constants) return constants.error();
    if (!*constants) {
      foldedOutputs[producer] = {};
      return value;
    }
    foldedOutputs[producer] = **constants;
    return (**constants).at(size_t(value.index()));
  };
  Graph typed = rewriteGraph(graph, [&](const OperationNode& op, const std::vector<Value>& originalInputs)
                                        -> std::optional<std::vector<Value>> {
    if (failure) return std::nullopt;
    std::vector<Value> inputs = originalInputs;
    if (const OpDef* def = OpRegistry::global().find(op.op)) {
      for (int slot : def->valueInputs) {
        if (size_t(slot) >= inputs.size() || !inputs[size_t(slot)].defined()) continue;
        auto folded = foldValue(inputs[size_t(slot)]);
        if (!folded) {
          failure = folded.error();
          return std::nullopt;
        }
        inputs[size_t(slot)] = *folded;
      }
    }
    if (op.isFused()) {
      // A fused body was typed before fusion; its outputs stand.
      return makeFusedOperation(op.name, op.op, inputs, *op.body, op.provenance);
    }
    OpCall call = makeOpCall(op, inputs, target);
    for (auto& input : inputs)
      if (input.defined() && !input.type().known()) {
        failure = call.error("input '" + input.name() + "' has no known type");
        return std::nullopt;
      }
    auto types = inferOpTypes(call);
    if (!types) {
      failure = types.error();
      return std::nullopt;
    }
    return makeOperation(op.name, op.op, inputs, op.attributes, *types, op.provenance);
  });
  if (failure) return *failure;
  return typed;
}

}  // namespace tessel::graph
