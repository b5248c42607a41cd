// The nodes of a laid-out graph whose operators Tessel does not implement, as a table model
// for the graph view's list of them.
#pragma once

#include <QAbstractTableModel>
#include <QStringList>

#include <memory>
#include <vector>

#include "views/graph/GraphLayout.h"

namespace tessel::views {

/// One row per operation of the layout's graph that Tessel does not implement, in
/// topological order (producers first), whether it has a box of its own or sits inside a closed
/// module group. Columns: the ONNX operator (with its domain when not the default) and the
/// node's name.
class UnsupportedNodesModel : public QAbstractTableModel {
  Q_OBJECT

public:
  enum Column { OperatorColumn, NodeColumn, ColumnCount };
  /// Qt::UserRole on any column: the operation's name, its box's id where it has a box.
  static constexpr int NodeIdRole = Qt::UserRole + 1;

  explicit UnsupportedNodesModel(QObject* parent = nullptr);

  /// Lists the unsupported nodes of `layout`'s graph (none for null); another layout of the
  /// same graph (a group opened) keeps the list as it is.
  void setGraphLayout(const std::shared_ptr<const GraphLayout>& layout);
  /// How many different operators the rows use.
  int operatorCount() const { return operatorCount_; }
  /// What the operator column says, each once ("Det", "Stem (com.example)").
  const QStringList& operatorLabels() const { return operatorLabels_; }
  /// The row of the box with this id, or -1.
  int rowOf(const QString& id) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
  /// "Det (com.example)" for a placeholder.
  static QString operatorLabel(const graph::OperationNode& op);
  /// Formatted when asked (only the rows on screen are): a model of custom operators lists
  /// tens of thousands.
  std::vector<const graph::OperationNode*> rows_;
  std::shared_ptr<const graph::Graph> graph_;
  int operatorCount_ = 0;
  QStringList operatorLabels_;
};

}  // namespace tessel::views
