// Removal of inference no-ops from the graph IR.
#include "compiler/graph/SimplifyInference.h"

#include "compiler/graph/GraphRewriter.h"

namespace tessel::graph {

Graph simplifyInference(const Graph& graph) {
  return rewriteGraph(graph, [](const OperationNode& op, const std::vector<Value>& inputs)
                                 -> std::optional<std::vector<Value>> {
    if (op.op == "Identity" && inputs.size() == 1) return std::vector<Value>{inputs[0]};
    // Dropout at inference passes its input through; its optional mask output would need
    // a tensor of ones, so a Dropout whose mask is declared stays (ONNX models rarely do).
    if (op.op == "Dropout" && !inputs.empty() && op.outputTypes.size() == 1) return std::vector<Value>{inputs[0]};
    return std::nullopt;
  });
}

}  // namespace tessel::graph
