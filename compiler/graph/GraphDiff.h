// GraphDiff: what one or more passes changed in a graph, node by node (the Studio's pass
// timeline and its side-by-side comparison colour nodes by it).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/graph/Graph.h"

namespace tessel::graph {

/// How a node fared between two graphs.
enum class NodeChange : uint8_t {
  Unchanged,  ///< The same node (or an equal one under the same name).
  Added,      ///< Only in the after graph.
  Removed,    ///< Only in the before graph (and not absorbed by a fused node).
  Fused,      ///< An after node whose body absorbed before nodes (NodeDiff::absorbed).
  Relaid,     ///< The same node in another memory layout (an output, input or weight layout,
              ///< or a layout attribute changed, e.g. Conv -> ConvPrepacked over NCHW16c), or
              ///< an inserted LayoutTransform.
  Modified,   ///< The same node with other attributes, inputs, operator or type (a BatchNorm
              ///< folded into a Conv's weights).
};
inline constexpr int kNodeChangeCount = 6;

/// "unchanged", "added", "removed", "fused", "relaid", "modified".
const char* nodeChangeName(NodeChange change);

/// One node of the after graph with its counterpart in the before graph, or a node only one of
/// them has. Pointers point into GraphDiff::before / GraphDiff::after, which keep them alive.
struct NodeDiff {
  NodeChange change = NodeChange::Unchanged;
  const GraphNode* before = nullptr;  ///< Null for Added and Fused.
  const GraphNode* after = nullptr;   ///< Null for Removed.
  /// For Fused: the before graph's nodes the fused operation stands for, in the before graph's
  /// topological order.
  std::vector<const GraphNode*> absorbed;
  /// What changed, for tooltips and the printed diff: "op Conv -> ConvPrepacked; input 1
  /// layout OIHW16o". Empty for Unchanged.
  std::string detail;
};

/// The difference between two graphs: one entry per node of the after graph (in topological
/// order) and then one per removed node of the before graph. Every node of either graph is
/// accounted for by exactly one entry (a node absorbed by a fused node by the fused node's).
struct GraphDiff {
  Graph before;
  Graph after;
  std::vector<NodeDiff> entries;

  /// The entry accounting for a node of `before` (for an absorbed node: its fused node's
  /// entry); null for a node of neither graph.
  const NodeDiff* forBefore(const GraphNode* node) const;
  /// The entry accounting for a node of `after`; null for a node of neither graph.
  const NodeDiff* forAfter(const GraphNode* node) const;

  /// Entries of kind `change`; with `operationsOnly` only those about operations (not
  /// graph inputs or constants).
  int count(NodeChange change, bool operationsOnly = false) const;
  /// Before-graph operations absorbed by fused operations.
  int absorbedCount() const;
  /// A short summary over operations for a timeline: "-4 nodes, 3 fused", "+1 node, 4 relaid,
  /// 1 added"; "no change" when every node is unchanged.
  std::string summary() const;

  /// Index of entries, filled by diffGraphs.
  std::unordered_map<const GraphNode*, size_t> beforeIndex, afterIndex;
};

/// Compares two graphs, typically a graph before and after some passes. Nodes are matched by
/// name first (passes keep the names of the nodes they rewrite), then operations by
/// provenance (the ONNX nodes they stand for), and a fused operation absorbs the before
/// graph's operations its body holds (by name, else by provenance). Constants nobody matched
/// by name are paired through the input slot of matched operations that read them (a weight
/// packed by AlterLayout or folded by FoldConstant). Compare an earlier graph (before) with a
/// later one (after): fusion is only recognized in that direction.
GraphDiff diffGraphs(const Graph& before, const Graph& after);

/// Readable text, one entry per line, then the counts:
///   fused     %fused_Conv_Relu <- %conv, %relu
///   relaid    %conv2  (op Conv -> ConvPrepacked; input 1 layout OIHW16o)
///   removed   @conv.w
///   counts: 3 unchanged, 0 added, 1 removed, 1 fused, 1 relaid, 0 modified
std::string printGraphDiff(const GraphDiff& diff);

}  // namespace tessel::graph
