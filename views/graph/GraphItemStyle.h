// What every graph item draws with: the palette, the fonts and the text metrics the layout
// was sized with. One instance per GraphScene, shared by its items.
#pragma once

#include <QFont>

#include "views/graph/GraphPalette.h"

namespace tessel::views {

struct GraphItemStyle {
  GraphPalette palette = GraphPalette::light();
  QFont titleFont;   ///< A node's header (its op).
  QFont nameFont;    ///< A node's name line.
  QFont detailFont;  ///< Folded weights, input/output types.
  QFont edgeFont;    ///< Shape labels on edges.
  QFont clusterFont; ///< A fused group's frame title.
  double lineHeight = 15.0;  ///< Matches GraphLayoutOptions::lineHeight.
  double edgeCharacterWidth = 6.0;  ///< Of edgeFont on shape labels (digits, 'x', dtype).
  double headerHeight() const { return lineHeight * 1.5; }
};

}  // namespace tessel::views
