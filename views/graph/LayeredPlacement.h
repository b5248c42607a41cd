// A fast layered (Sugiyama-style) placement for graphs too large to wait for `dot`.
#pragma once

#include <vector>

#include "views/common/JobRunner.h"
#include "views/graph/GraphLayout.h"

namespace tessel::views {

/// Places boxes in ranks by longest path from the inputs, orders each rank by the barycenter
/// of its neighbours, and draws edges as straight splines with labels at their middle;
/// cluster frames enclose their members. Linear-ish in the graph size (tens of thousands of
/// nodes in well under a second). False when `job` was cancelled.
bool placeLayered(GraphLayout& layout, JobContext& job);

/// Each box's rank: its longest path from the sources, over a topological order (Kahn's);
/// boxes on a cycle (which a dataflow graph does not have) stay at rank 0 rather than looping.
std::vector<int> longestPathRanks(const GraphLayout& layout);

}  // namespace tessel::views
