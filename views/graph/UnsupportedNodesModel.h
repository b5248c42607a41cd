// The nodes of a laid-out graph whose operators Tessel does not implement, as a table model
// for the graph view's list of them.
#pragma once

#include <QAbstractTableModel>

#include <memory>
#include <vector>

#include "views/graph/GraphLayout.h"

namespace tessel::views {

/// One row per placeholder box of the layout (category Unsupported), in the layout's order
/// (producers first). Columns: the ONNX operator (with its domain when not the default) and
/// the node's name.
class UnsupportedNodesModel : public QAbstractTableModel {
  Q_OBJECT

public:
  enum Column { OperatorColumn, NodeColumn, ColumnCount };
  /// Qt::UserRole on any column: the box's id in the layout (GraphView::selectNode takes it).
  static constexpr int NodeIdRole = Qt::UserRole + 1;

  explicit UnsupportedNodesModel(QObject* parent = nullptr);

  /// Lists the unsupported nodes of `layout` (none for null).
  void setGraphLayout(const std::shared_ptr<const GraphLayout>& layout);
  /// How many different operators the rows use.
  int operatorCount() const { return operatorCount_; }
  /// The row of the box with this id, or -1.
  int rowOf(const QString& id) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
  struct Row {
    QString id, op, node;
  };
  std::vector<Row> rows_;
  int operatorCount_ = 0;
};

}  // namespace tessel::views
