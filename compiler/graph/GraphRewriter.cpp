// The producer-first rebuilding traversal behind graph passes.
#include "compiler/graph/GraphRewriter.h"

#include <unordered_map>

#include "core/support/Error.h"

namespace tessel::graph {

Graph rewriteGraph(const Graph& graph, const RewriteRule& rule) {
  // What each original node's outputs became.
  std::unordered_map<const GraphNode*, std::vector<Value>> replaced;
  auto current = [&](const Value& v) {
    auto it = replaced.find(v.node());
    return it == replaced.end() ? v : it->second.at(size_t(v.index()));
  };
  for (const GraphNode* node : graph.topologicalOrder()) {
    const OperationNode* op = asOperation(node);
    if (!op) continue;
    std::vector<Value> inputs;
    bool changed = false;
    for (auto& input : op->inputs) {
      inputs.push_back(current(input));
      changed = changed || !(inputs.back() == input);
    }
    if (auto replacement = rule(*op, inputs)) {
      TESSEL_ICHECK(replacement->size() == op->outputTypes.size())
          << "a rewrite of " << op->name << " gave " << replacement->size() << " values for "
          << op->outputTypes.size() << " outputs";
      replaced[node] = std::move(*replacement);
    } else if (changed) {
      replaced[node] = op->isFused()
                           ? makeFusedOperation(op->name, op->op, inputs, *op->body, op->provenance)
                           : makeOperation(op->name, op->op, inputs, op->attributes, op->outputTypes, op->provenance);
    }
  }
  Graph out = graph;
  for (auto& output : out.outputs) output = current(output);
  return out;
}

}  // namespace tessel::graph
