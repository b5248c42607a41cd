// Type inference over the graph through the operator registry.
#include "compiler/graph/InferTypes.h"

#include "compiler/graph/GraphRewriter.h"
#include "compiler/opdefs/OpRegistry.h"

namespace tessel::graph {

Expected<Graph> inferTypes(const Graph& graph) {
  for (auto& input : graph.inputs)
    if (!input.type().known())
      return Diagnostic{"graph input '" + input.name() + "' has no known type", input.name(), 0, 0,
                        "give its shape with --input-shape " + input.name() + ":D0,D1,..."};
  std::optional<Diagnostic> failure;
  Graph typed = rewriteGraph(graph, [&](const OperationNode& op, const std::vector<Value>& inputs)
                                        -> std::optional<std::vector<Value>> {
    if (failure) return std::nullopt;
    if (op.isFused()) {
      // A fused body was typed before fusion; its outputs stand.
      return makeFusedOperation(op.name, op.op, inputs, *op.body, op.provenance);
    }
    OpCall call = makeOpCall(op, inputs);
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
