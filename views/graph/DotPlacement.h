// Places a GraphLayout's boxes, edges and clusters with Graphviz `dot` (top to bottom).
#pragma once

#include "core/support/Error.h"
#include "views/common/JobRunner.h"
#include "views/graph/GraphLayout.h"

namespace tessel::views {

/// Fills in every box's position, every edge's spline, arrow tip and label position and every
/// cluster's frame from `dot`, keeping the box sizes already set. dot runs in a child process
/// (this program's executable started afresh, fed the graph as DOT text; no Graphviz call is
/// made in this process), which is killed when the
/// job is cancelled or after `timeLimitSeconds` (0: no limit); `timedOut`, when given, then
/// says it was the limit. Without `edgeLabels`, dot places no label boxes (much faster on big
/// graphs) and each label goes to the middle of its edge. A Diagnostic when Graphviz fails,
/// is stopped, or the layout is cancelled; the layout is then left as it was.
Status placeWithDot(GraphLayout& layout, JobContext& job, bool edgeLabels = true, double timeLimitSeconds = 0,
                    bool* timedOut = nullptr);

}  // namespace tessel::views
