// The module hierarchy of a graph's operations, read from their names as exporters write them
// ("/features/denseblock3/denselayer12/conv1/Conv": PyTorch, TensorFlow and Keras all name
// operations by the path of the module that made them), for drawing a large graph as boxes per
// module that open on a click.
#pragma once

#include <QString>
#include <QStringList>

#include <map>
#include <unordered_map>
#include <vector>

#include "core/graph/Graph.h"

namespace tessel::views {

/// The id of a module group's box (collapsed) or frame (expanded): this prefix and the path.
inline const QString kModuleGroupIdPrefix = QStringLiteral("module:");
inline bool isModuleGroupId(const QString& id) { return id.startsWith(kModuleGroupIdPrefix); }

/// The module groups of a graph's top-level operations. A group is the set of operations whose
/// names share a directory ("/features/denseblock3"). Only groups worth a box count: one that
/// holds a single operation (most leaf modules: "/features/conv0" holds only its Conv) or
/// everything its parent holds (a model wrapped in one "/model" module) is looked through.
class ModuleGroups {
public:
  explicit ModuleGroups(const graph::Graph& graph);

  /// The groups `op` belongs to, outermost first, as ids (kModuleGroupIdPrefix + path); empty
  /// for an operation outside every group (or not in the graph). A fused operation is in the
  /// groups all of its body's operations share.
  const QStringList& groupsOf(const graph::OperationNode* op) const;
  /// How many of the graph's top-level operations group `id` holds, and a line saying which
  /// ("58 operations: 24 Conv, 12 Concat, ..."); 0 and empty for an unknown id.
  int operationCount(const QString& id) const;
  QString summary(const QString& id) const;
  /// The group's own name: the last part of its path ("denseblock3").
  static QString titleOf(const QString& id);
  /// Every group worth a box, outermost first within each branch.
  QStringList groups() const;
  bool empty() const { return counts_.empty(); }

private:
  struct Group {
    int operations = 0;
    std::map<std::string, int> opCounts;  ///< By operator ("Conv"; a fused kernel by its first op).
  };
  std::map<QString, Group> counts_;  ///< Only the groups worth a box, by id.
  std::unordered_map<const graph::OperationNode*, QStringList> groupsOfOp_;
};

}  // namespace tessel::views
