// EliminateCommonSubexpr: one operation where several compute the same thing.
#pragma once

#include "core/graph/Graph.h"

namespace tessel::graph {

/// Merges operations with the same operator, attributes, output types and inputs, and
/// constants with the same type and bytes, keeping the first in topological order (the
/// merged node keeps the provenance of both).
Graph eliminateCommonSubexpr(const Graph& graph);

}  // namespace tessel::graph
