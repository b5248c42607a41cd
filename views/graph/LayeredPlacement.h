// A fast layered (Sugiyama-style) placement for graphs too large to wait for `dot`.
#pragma once

#include "views/common/JobRunner.h"
#include "views/graph/GraphLayout.h"

namespace tessel::views {

/// Places boxes in ranks by longest path from the inputs, orders each rank by the barycenter
/// of its neighbours, and draws edges as straight splines with labels at their middle;
/// cluster frames enclose their members. Linear-ish in the graph size (tens of thousands of
/// nodes in well under a second). False when `job` was cancelled.
bool placeLayered(GraphLayout& layout, JobContext& job);

}  // namespace tessel::views
