// DeadCodeElimination: stop computing results nobody reads.
#pragma once

#include "core/graph/Graph.h"
#include "core/support/Error.h"

namespace tessel::graph {

/// What deadCodeElimination removed, for pass reports and tests.
struct DeadCodeReport {
  /// Operations of the input graph that are gone from the result (a Split whose unread parts
  /// are dropped becomes one Slice per part still read).
  int removedOperations = 0;
  /// Outputs nobody reads that are no longer computed: trailing optional outputs (Dropout's
  /// mask, MaxPool's indices, BatchNormalization's running statistics) and Split parts.
  int removedOutputs = 0;
};

/// A graph only holds what its outputs reach, so whole unread operations are already gone;
/// what is left dead are the unread outputs of multi-output operations. This pass drops an
/// operation's unread trailing optional outputs (the operator's minimum output count stays),
/// and replaces a Split with unread parts by a Slice per part still read, so the unread parts
/// are never computed. A Split is kept as it is when the registry cannot type the Slices.
/// Fills `report` when given.
Expected<Graph> deadCodeElimination(const Graph& graph, DeadCodeReport* report = nullptr);

}  // namespace tessel::graph
