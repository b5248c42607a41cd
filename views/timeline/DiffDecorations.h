// The pass-diff overlay as data: which node of each side of a comparison gets which colour,
// badge and tooltip (added green, removed red, fused purple, relaid blue, modified orange).
#pragma once

#include <QColor>
#include <QString>

#include <vector>

#include "compiler/graph/GraphDiff.h"
#include "views/graph/ModuleGroups.h"

namespace tessel::views {

/// Which graph of a comparison: the earlier step (A, left) or the later one (B, right).
enum class DiffSide { Before, After };

/// One decorated node of one side, for GraphScene::setNodeDecoration.
struct NodeDecoration {
  QString nodeId;  ///< The node's name (the graph view's box id).
  graph::NodeChange change = graph::NodeChange::Unchanged;
  QColor colour;
  QString badge;    ///< "added", "removed", "fused 3", "layout", "modified", "→ fused".
  QString tooltip;  ///< Rich text: what changed; for a fused node, what it absorbed.
};

/// The overlay colour of a change; `dark` picks the variant readable on a dark canvas.
QColor diffColour(graph::NodeChange change, bool dark = false);
/// "Added", "Removed", "Fused", "Re-laid-out", "Modified", "Unchanged" (legend text).
QString diffLabel(graph::NodeChange change);

/// The decorations of one side, in the diff's entry order. The before side shows removed
/// nodes, the nodes a fused node absorbed (in its colour, naming it) and relaid/modified
/// ones; the after side added, fused (listing what they absorbed), relaid and modified ones.
/// Unchanged nodes and constants (drawn inside their consumers' boxes) get none.
std::vector<NodeDecoration> diffDecorations(const graph::GraphDiff& diff, DiffSide side, bool dark = false);

/// The decorations of module groups (the boxes of a graph drawn by module) from their
/// operations' in `decorations`: a closed module's box says how many of its operations
/// changed ("12 fused"), in the colour of the most frequent change, so a step's changes show
/// without opening every module. One per group of `modules` holding a changed operation of
/// `graph`.
std::vector<NodeDecoration> moduleDiffDecorations(const std::vector<NodeDecoration>& decorations,
                                                  const ModuleGroups& modules, const graph::Graph& graph,
                                                  bool dark = false);

}  // namespace tessel::views
