// How readable a finished layout is, counted: the figures bench/graph_view.sh reports beside
// its timings (issue 13), so a change to the layout can be judged by more than a screenshot.
#pragma once

#include <cstdint>

#include "views/graph/GraphLayout.h"

namespace tessel::views {

struct LayoutQuality {
  int boxes = 0;
  int edges = 0;
  /// Pairs of edges whose drawn curves cross, not counting edges that share a box (those meet
  /// at the box by design) and counting each pair once however often its curves cross.
  int64_t edgeCrossings = 0;
  /// Pairs of an edge and a box it is drawn through (neither of its own two ends): an edge
  /// hidden under a box reads as entering it.
  int64_t boxesCrossed = 0;
};

/// Counts both on the splines as drawn (each cubic segment followed by 8 straight pieces),
/// with a grid of cells so that graphs of 20,000 boxes take a second or two, not hours.
LayoutQuality measureLayoutQuality(const GraphLayout& layout);

}  // namespace tessel::views
