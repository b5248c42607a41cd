// The colours the graph view draws with, in a light and a dark variant that both keep
// categories distinguishable and text readable.
#pragma once

#include <QColor>

#include <array>

#include "views/graph/NodeCategory.h"

namespace tessel::views {

/// Colours for one theme. Category colours fill a node's header; the body stays neutral so
/// text reads the same on every category.
struct GraphPalette {
  QColor background;
  QColor nodeBody;
  QColor nodeBorder;
  QColor text;
  QColor mutedText;
  QColor headerText;  ///< Text on a category-coloured header.
  QColor edge;
  QColor edgeLabel;
  QColor clusterFill;
  QColor clusterBorder;
  QColor clusterTitle;
  QColor selection;   ///< Outline of the selected node.
  QColor findMatch;   ///< Outline of nodes matching the find bar.
  QColor findCurrent; ///< Outline of the current find match.
  QColor minimapFrame;
  /// 8-bit integer (quantized) tensors' edges and the int8 marks on boxes: where a model
  /// runs in int8, and where it crosses between float and int8, read at a glance.
  QColor quantized;
  std::array<QColor, kNodeCategoryCount> categories;

  QColor category(NodeCategory c) const { return categories[size_t(c)]; }

  static GraphPalette light();
  static GraphPalette dark();
};

}  // namespace tessel::views
