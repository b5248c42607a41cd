// The light and dark graph palettes. Category hues follow Netron's conventions (blue compute,
// dark red activations, green pooling, ...) so people coming from it read the graph at once.
#include "views/graph/GraphPalette.h"

namespace tessel::views {

namespace {

void setCategory(GraphPalette& palette, NodeCategory category, QColor colour) {
  palette.categories[size_t(category)] = colour;
}

}  // namespace

GraphPalette GraphPalette::light() {
  GraphPalette p;
  p.background = QColor(0xfa, 0xfa, 0xfb);
  p.nodeBody = QColor(0xff, 0xff, 0xff);
  p.nodeBorder = QColor(0xb8, 0xbd, 0xc6);
  p.text = QColor(0x1f, 0x23, 0x28);
  p.mutedText = QColor(0x5f, 0x66, 0x70);
  p.headerText = QColor(0xff, 0xff, 0xff);
  p.edge = QColor(0x6e, 0x76, 0x81);
  p.edgeLabel = QColor(0x4a, 0x51, 0x5b);
  p.clusterFill = QColor(0x6f, 0x42, 0xc1, 18);
  p.clusterBorder = QColor(0x8a, 0x63, 0xd2);
  p.clusterTitle = QColor(0x5a, 0x32, 0xa3);
  p.selection = QColor(0x09, 0x69, 0xda);
  p.findMatch = QColor(0xe3, 0xa0, 0x08);
  p.findCurrent = QColor(0xd9, 0x4a, 0x00);
  p.minimapFrame = QColor(0x09, 0x69, 0xda);
  p.quantized = QColor(0x0e, 0x8a, 0x7d);
  setCategory(p, NodeCategory::Compute, QColor(0x33, 0x66, 0xb3));
  setCategory(p, NodeCategory::Elementwise, QColor(0x8c, 0x2f, 0x39));
  setCategory(p, NodeCategory::Reduction, QColor(0x2e, 0x7d, 0x4f));
  setCategory(p, NodeCategory::DataMovement, QColor(0x6b, 0x5b, 0x3e));
  setCategory(p, NodeCategory::Normalization, QColor(0x1f, 0x7a, 0x8c));
  setCategory(p, NodeCategory::LayoutTransform, QColor(0xb3, 0x6b, 0x00));
  setCategory(p, NodeCategory::Constant, QColor(0x7a, 0x80, 0x88));
  setCategory(p, NodeCategory::InputOutput, QColor(0x3d, 0x44, 0x4d));
  setCategory(p, NodeCategory::Fused, QColor(0x6f, 0x42, 0xc1));
  // The themes' error red (ThemeColors::error), brighter than the activations' wine red.
  setCategory(p, NodeCategory::Unsupported, QColor(0xd1, 0x24, 0x2f));
  setCategory(p, NodeCategory::Module, QColor(0x2f, 0x5d, 0x7a));
  setCategory(p, NodeCategory::Other, QColor(0x55, 0x5d, 0x68));
  return p;
}

GraphPalette GraphPalette::dark() {
  GraphPalette p;
  p.background = QColor(0x1e, 0x1f, 0x22);
  p.nodeBody = QColor(0x2b, 0x2d, 0x31);
  p.nodeBorder = QColor(0x4a, 0x4e, 0x55);
  p.text = QColor(0xdf, 0xe1, 0xe5);
  p.mutedText = QColor(0x9a, 0xa0, 0xa8);
  p.headerText = QColor(0xff, 0xff, 0xff);
  p.edge = QColor(0x8b, 0x92, 0x9c);
  p.edgeLabel = QColor(0xa9, 0xaf, 0xb7);
  p.clusterFill = QColor(0xa3, 0x7c, 0xf0, 24);
  p.clusterBorder = QColor(0x9d, 0x7c, 0xe0);
  p.clusterTitle = QColor(0xc4, 0xa8, 0xff);
  p.selection = QColor(0x4c, 0x9a, 0xff);
  p.findMatch = QColor(0xf0, 0xb4, 0x29);
  p.findCurrent = QColor(0xff, 0x7a, 0x1a);
  p.minimapFrame = QColor(0x4c, 0x9a, 0xff);
  p.quantized = QColor(0x2f, 0xbf, 0xae);
  // Slightly lighter and less saturated than the light theme, so headers do not glare on a
  // dark background while white header text keeps its contrast.
  setCategory(p, NodeCategory::Compute, QColor(0x3b, 0x6e, 0xb8));
  setCategory(p, NodeCategory::Elementwise, QColor(0x9c, 0x3f, 0x49));
  setCategory(p, NodeCategory::Reduction, QColor(0x35, 0x85, 0x58));
  setCategory(p, NodeCategory::DataMovement, QColor(0x7d, 0x6c, 0x4c));
  setCategory(p, NodeCategory::Normalization, QColor(0x2a, 0x86, 0x98));
  setCategory(p, NodeCategory::LayoutTransform, QColor(0xb8, 0x74, 0x12));
  setCategory(p, NodeCategory::Constant, QColor(0x6c, 0x72, 0x7a));
  setCategory(p, NodeCategory::InputOutput, QColor(0x56, 0x5e, 0x69));
  setCategory(p, NodeCategory::Fused, QColor(0x7d, 0x55, 0xc7));
  setCategory(p, NodeCategory::Unsupported, QColor(0xf8, 0x51, 0x49));
  setCategory(p, NodeCategory::Module, QColor(0x3f, 0x73, 0x95));
  setCategory(p, NodeCategory::Other, QColor(0x60, 0x68, 0x73));
  return p;
}

}  // namespace tessel::views
