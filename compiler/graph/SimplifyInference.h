// SimplifyInference: drop what only matters for training (Identity, Dropout).
#pragma once

#include "core/graph/Graph.h"

namespace tessel::graph {

/// Replaces Identity and inference-time Dropout (without a used mask output) by their input.
/// Folding BatchNormalization into the preceding convolution comes with FoldConstant.
Graph simplifyInference(const Graph& graph);

}  // namespace tessel::graph
