// A graph::Graph laid out for drawing: node boxes, edge splines with shape labels and clusters
// for expanded fused operations. A value computed on a worker thread; nothing here draws.
#pragma once

#include <QPointF>
#include <QRectF>
#include <QString>
#include <QHash>
#include <QStringList>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/graph/Graph.h"
#include "core/support/Error.h"
#include "views/common/JobRunner.h"
#include "views/graph/ModuleGroups.h"
#include "views/graph/NodeCategory.h"

namespace tessel::views {

/// Above this many boxes `dot` keeps a person waiting (seconds, growing fast: about 17 s at
/// 5,000): views that people flip through (the pass timeline's steps) take the layered layout
/// there, and the graph view shows the layered layout first while dot refines it.
constexpr int kInteractiveDotNodeLimit = 1500;

/// What to lay out and how. Sizes are in scene units (pixels at zoom 1).
struct GraphLayoutOptions {
  /// Fused operations drawn as a cluster holding their body's operations (by node name);
  /// the others are drawn as one box.
  std::set<QString> expandedFusedNodes;
  /// Expands every fused operation (expandedFusedNodes is then ignored).
  bool expandAllFused = false;
  /// Graphs with more operations than this are drawn by module (ModuleGroups): each group of
  /// operations whose names share a module path is one box until it is expanded; 0: never.
  int moduleGroupsAbove = 250;
  /// Densely connected graphs are drawn by module from fewer operations: more than
  /// moduleGroupsAbove × denseGraphShare of them, reading on average more than
  /// denseInputsPerOperation tensors that other operations compute (DenseNet-121 compiled:
  /// 190 operations, 3.8 each, a tangle of 19,000 crossings when drawn operation by operation).
  double denseGraphShare = 0.4;
  double denseInputsPerOperation = 2.0;
  /// Module groups drawn open, as a frame around their members (ids: kModuleGroupIdPrefix
  /// and the path).
  std::set<QString> expandedModules;
  /// Groups that open by default (ModuleGroups::opensByDefault: one holding nearly all of
  /// what encloses it) drawn closed: the user closed them.
  std::set<QString> collapsedModules;
  /// A group holding more than this share of what encloses it opens by default (above 1: none).
  double openModulesHolding = 0.8;
  /// Above this many boxes `dot` is too slow to wait for (tens of seconds and more), so a
  /// simpler layered layout places the nodes; GraphLayout::engine says which one ran.
  int dotNodeLimit = 8000;
  /// The same for many long edges side by side: dot routes an edge through every rank it
  /// spans and orders everything crossing each gap between ranks, so a few boxes with many
  /// long edges between them (the layers of a DenseNet block, each reading every earlier one)
  /// keep it busy for minutes. Above this many edges across one gap (in longest-path ranks)
  /// the layered layout places the graph.
  int dotRankGapLimit = 64;
  /// And for a densely connected drawing: above this many edges per box (and at least
  /// denseDrawingBoxes boxes), dot draws every long edge as a curve of its own across the
  /// others (an open DenseNet block: each layer reads every earlier one), while the layered
  /// layout's lanes gather the edges into one target as a trunk with branches.
  double dotEdgesPerBoxLimit = 2.0;
  int denseDrawingBoxes = 20;
  /// Above this many boxes the shape labels are not given to `dot`: it makes every edge label
  /// a virtual node, which on a 5,000-operation network took it 88 s instead of 17 s (2,000
  /// operations: 11 s instead of 2 s). The labels then sit at the middle of their edge, on
  /// the plate that keeps them legible where they cross a line. Counted for edges too.
  int dotEdgeLabelLimit = 600;
  /// dot runs in a child process that is stopped after this long (0: never), and the layered
  /// layout places the graph instead (GraphLayout::dotTimedOut): whatever a graph's shape,
  /// its layout cannot run away. Cancelling a layout stops dot at once as well.
  double dotTimeLimitSeconds = 30;
  /// What the operations cost (FLOPs; time once profiled): a closed module's box and an open
  /// one's frame say what their operations cost together. Null: only operation counts.
  std::shared_ptr<const NodeCosts> costs;
  /// The module groups of an earlier layout: used again when built for the same graph, costs
  /// and openModulesHolding (ModuleGroups::builtFor), instead of reading every name again.
  std::shared_ptr<const ModuleGroups> reuseModules;
  /// Width of one character of node text and height of one text line, measured by the
  /// caller on the GUI thread from the fonts it draws with.
  double characterWidth = 6.6;
  double lineHeight = 15.0;
};

/// One box. `id` is unique in the layout: the graph node's name (an operation, a graph input),
/// "output:NAME" for a graph output, or for an operation inside an expanded fused group its
/// name, prefixed with "FUSED/" only where it would clash with another id.
struct LayoutNode {
  QString id;
  QString name;      ///< The graph node's name (the output's name for an output box).
  /// Operator ("Conv", a fused kernel's op), "Input" or "Output"; for a placeholder of an
  /// unsupported node (category Unsupported), the ONNX operator it stands for ("Det").
  QString op;
  QString title;     ///< What the box's header says: the op, fused ops as "Conv + Relu".
  /// Lines under the name: the constants/weights folded into this node ("W 64x3x7x7"), or
  /// a graph input's/output's type.
  QStringList details;
  NodeCategory category = NodeCategory::Other;
  QString clusterId;            ///< The expanded fused operation holding it; empty at top level.
  bool collapsedFused = false;  ///< A fused operation drawn as one box (it can be expanded).
  /// A module group drawn as one box (it can be expanded); its operations are not drawn.
  bool collapsedModule = false;
  /// Its mark when it computes on 8-bit integers or crosses between float and int8 ("→ int8",
  /// "int8", "int8 →"; see QuantizationInfo.h), else empty.
  QString quantizationTag;
  /// The node it stands for: an OperationNode, InputNode or, for an output box, the producer.
  const graph::GraphNode* source = nullptr;
  QStringList tensorNames;  ///< Names of the tensors it reads and writes (for find).
  QRectF box;               ///< In scene coordinates (y grows downward).
};

/// A data dependency between two boxes, drawn as a cubic spline ending in an arrowhead.
struct LayoutEdge {
  int from = -1, to = -1;  ///< Indices into GraphLayout::nodes.
  QString tensor;          ///< The value's name.
  QString shapeText;       ///< "1x64x56x56" ("scalar" for rank 0, empty when unknown: no label).
  QString dtypeText;       ///< "float32", with "@NCHW16c" for a blocked layout.
  bool quantized = false;  ///< An 8-bit integer tensor (uint8 or int8).
  /// Cubic Bezier control points: p0, then three per segment (1 + 3k points).
  std::vector<QPointF> spline;
  QPointF arrowTip;  ///< Where the arrowhead points; the spline ends at its base.
  QPointF labelCenter;
  /// More than 1: a bundle of this many tensors between two boxes, one of them a closed
  /// module group (`tensor` is the first; shapeText says "25 tensors", dtypeText is empty).
  int tensorCount = 1;
  /// Routed around boxes in a lane shared with other edges (the layered layout's long edges):
  /// its label would sit on the neighbouring lanes, so only its tooltip says the shape.
  bool inLane = false;
  QString label() const { return dtypeText.isEmpty() ? shapeText : shapeText + QStringLiteral("  ") + dtypeText; }
};

/// An expanded fused operation or module group: a frame around its members' boxes.
struct LayoutCluster {
  QString id;     ///< The fused operation's name or the module group's id (as its collapsed box's).
  QString title;  ///< A fused operation's ops ("Conv + Relu"); a module's name.
  QString parentClusterId;
  const graph::OperationNode* source = nullptr;
  QRectF box;
};

struct GraphLayout {
  /// Keeps every node that `source` pointers point into alive.
  std::shared_ptr<const graph::Graph> graph;
  std::vector<LayoutNode> nodes;
  std::vector<LayoutEdge> edges;
  std::vector<LayoutCluster> clusters;
  QRectF bounds;
  QString engine;  ///< "dot" or "layered" (the fallback for graphs above dotNodeLimit).
  /// Set when dot was tried and stopped at GraphLayoutOptions::dotTimeLimitSeconds: the
  /// layered layout placed the graph instead.
  bool dotTimedOut = false;
  /// The module groups the graph was drawn by (it has more operations than moduleGroupsAbove, or is dense
  /// and names that form groups); null when it was drawn operation by operation.
  std::shared_ptr<const ModuleGroups> modules;
  bool groupedByModule() const { return modules != nullptr; }
  /// The operations of the graph standing for operators Tessel does not implement
  /// (graph::isUnsupported), producers first, whether drawn as boxes or inside closed groups.
  std::vector<const graph::OperationNode*> unsupported;
  /// The most edges across one gap between ranks (GraphLayoutOptions::dotRankGapLimit).
  int widestRankGap = 0;
  /// More edges per box than GraphLayoutOptions::dotEdgesPerBoxLimit: placed by the layered
  /// layout whatever its size (dot would not do better).
  bool denselyConnected = false;

  /// The box with this id, or null.
  const LayoutNode* findNode(const QString& id) const;
  int indexOf(const QString& id) const;
  const LayoutCluster* findCluster(const QString& id) const;
  /// The frames (open module groups, expanded fused operations) around box or frame `id`,
  /// outermost first; empty at the top level and for an unknown id.
  QStringList enclosingClusters(const QString& id) const;

  QHash<QString, int> nodeIndexById;  ///< Filled by layoutGraph.
};

/// Lays `graph` out top to bottom with Graphviz `dot` (graphs up to options.dotNodeLimit
/// boxes; above it, a layered layout that stays fast on tens of thousands of nodes). Graph
/// inputs and outputs get boxes; constants and weights do not: like Netron, they are listed
/// in their consumer's box. Reports progress to `job` and returns early with a Diagnostic
/// when it is cancelled (dot, in its child process, is killed). Thread-safe: Graphviz calls hold
/// graphvizMutex().
Expected<GraphLayout> layoutGraph(std::shared_ptr<const graph::Graph> graph, const GraphLayoutOptions& options,
                                  JobContext& job);

/// "1x64x56x56" for a shape, "scalar" for rank 0.
QString shapeText(const std::vector<int64_t>& shape);

}  // namespace tessel::views
