// The module hierarchy of a graph's operations, read from their names as exporters write them
// ("/features/denseblock3/denselayer12/conv1/Conv": PyTorch, TensorFlow and Keras all name
// operations by the path of the module that made them), for drawing a large graph as boxes per
// module that open on a click.
#pragma once

#include <QString>
#include <QStringList>

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/graph/Graph.h"

namespace tessel::views {

/// What the operations of a graph cost, by operation name, for the module boxes' summaries:
/// FLOPs per call from the compiled kernels and, once the model was profiled, each one's median
/// milliseconds per run (`totalMilliseconds` is the whole run's, for shares).
struct NodeCosts {
  std::unordered_map<std::string, double> flops;
  std::unordered_map<std::string, double> milliseconds;
  double totalMilliseconds = 0;
  bool operator==(const NodeCosts&) const = default;
};

/// "2.31 GFLOPs", "640 MFLOPs", "12 kFLOPs".
QString flopsText(double flops);

/// The id of a module group's box (collapsed) or frame (expanded): this prefix and the path.
inline const QString kModuleGroupIdPrefix = QStringLiteral("module:");
inline bool isModuleGroupId(const QString& id) { return id.startsWith(kModuleGroupIdPrefix); }

/// The module groups of a graph's top-level operations. A group is the set of operations whose
/// names share a directory ("/features/denseblock3"). Only groups worth a box count: one that
/// holds a single operation (most leaf modules: "/features/conv0" holds only its Conv) or
/// everything its parent holds (a model wrapped in one "/model" module) is looked through.
class ModuleGroups {
public:
  /// With `costs`, each group also sums its operations' FLOPs and profiled time (costLine).
  /// A group holding more than `openShare` of what encloses it (the graph, or a group that
  /// opens by default) opens by default: "/features" of a torchvision DenseNet holds all but
  /// its classifier, and one box for nearly everything says nothing.
  explicit ModuleGroups(const graph::Graph& graph, const NodeCosts* costs = nullptr, double openShare = 0.8);

  /// The groups `op` belongs to, outermost first, as ids (kModuleGroupIdPrefix + path); empty
  /// for an operation outside every group (or not in the graph). A fused operation is in the
  /// groups all of its body's operations share.
  const QStringList& groupsOf(const graph::OperationNode* op) const;
  /// How many of the graph's top-level operations group `id` holds, and a line saying which
  /// ("58 operations: 24 Conv, 12 Concat, ..."); 0 and empty for an unknown id.
  int operationCount(const QString& id) const;
  QString summary(const QString& id) const;
  /// What the group's operations cost together: "2.31 GFLOPs · 1.84 ms (9.6%)", the FLOPs of
  /// those compiled and the time of those profiled; empty when nothing is known.
  QString costLine(const QString& id) const;
  /// Whether the group is drawn open until the user closes it (see the constructor).
  bool opensByDefault(const QString& id) const;
  /// The group's own name: the last part of its path ("denseblock3").
  static QString titleOf(const QString& id);
  /// Every group worth a box, outermost first within each branch.
  QStringList groups() const;
  bool empty() const { return counts_.empty(); }
  /// Whether these are the groups of `graph` with `costs` and `openShare` (a later layout of
  /// the same graph reuses them: on 20,000 operations they take longer than the rest of a
  /// layout together).
  bool builtFor(const graph::Graph& graph, const NodeCosts* costs, double openShare) const {
    return &graph == graph_ && costs == costs_ && openShare == openShare_;
  }

private:
  struct Group {
    int operations = 0;
    std::map<std::string, int> opCounts;  ///< By operator ("Conv"; a fused kernel by its first op).
    double flops = 0;
    double milliseconds = 0;
    bool profiled = false;  ///< At least one of its operations has a profiled time.
    bool opensByDefault = false;
  };
  std::map<QString, Group> counts_;  ///< Only the groups worth a box, by id.
  std::unordered_map<const graph::OperationNode*, QStringList> groupsOfOp_;
  double totalMilliseconds_ = 0;
  const graph::Graph* graph_ = nullptr;
  const NodeCosts* costs_ = nullptr;
  double openShare_ = 0;
};

}  // namespace tessel::views
