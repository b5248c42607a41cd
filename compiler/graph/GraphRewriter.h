// Rebuilding a graph node by node: the one traversal every graph pass is written on.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "core/graph/Graph.h"

namespace tessel::graph {

/// Called for each operation in topological order with its inputs already rewritten.
/// Returns the values that replace the operation's outputs, or nullopt to keep the
/// operation (rebuilt only if an input changed).
using RewriteRule = std::function<std::optional<std::vector<Value>>(const OperationNode& op,
                                                                    const std::vector<Value>& inputs)>;

/// Applies `rule` to every operation of `graph` once, producers first. Unchanged parts of
/// the graph are shared with the input graph, so an untouched graph comes back identical.
Graph rewriteGraph(const Graph& graph, const RewriteRule& rule);

}  // namespace tessel::graph
