// Places a GraphLayout's boxes, edges and clusters with Graphviz `dot` (top to bottom).
#pragma once

#include "core/support/Error.h"
#include "views/common/JobRunner.h"
#include "views/graph/GraphLayout.h"

namespace tessel::views {

/// Fills in every box's position, every edge's spline, arrow tip and label position and every
/// cluster's frame from `dot`, keeping the box sizes already set. Holds graphvizMutex() for
/// all Graphviz calls. Cancellation is checked while the Graphviz graph is built and after
/// `dot` returns (dot itself cannot be interrupted). Without `edgeLabels`, dot places no
/// label boxes (much faster on big graphs) and each label goes to the middle of its edge. A
/// Diagnostic when Graphviz fails.
Status placeWithDot(GraphLayout& layout, JobContext& job, bool edgeLabels = true);

}  // namespace tessel::views
