// The unsupported nodes of a layout, read once per layout.
#include "views/graph/UnsupportedNodesModel.h"

#include <QSet>

#include "core/graph/UnsupportedOperations.h"

namespace tessel::views {

UnsupportedNodesModel::UnsupportedNodesModel(QObject* parent) : QAbstractTableModel(parent) {}

void UnsupportedNodesModel::setGraphLayout(const std::shared_ptr<const GraphLayout>& layout) {
  beginResetModel();
  rows_.clear();
  QSet<QString> operators;
  if (layout) {
    for (const LayoutNode& box : layout->nodes) {
      const auto* op = graph::asOperation(box.source);
      if (box.category != NodeCategory::Unsupported || !op) continue;
      graph::OnnxOperatorName onnx = graph::unsupportedOperator(*op);
      QString name = QString::fromStdString(onnx.opType);
      if (!onnx.domain.empty()) name += QStringLiteral(" (%1)").arg(QString::fromStdString(onnx.domain));
      operators.insert(QString::fromStdString(onnx.qualified()));
      rows_.push_back({box.id, name, box.name});
    }
  }
  operatorCount_ = int(operators.size());
  endResetModel();
}

int UnsupportedNodesModel::rowOf(const QString& id) const {
  for (size_t i = 0; i < rows_.size(); ++i)
    if (rows_[i].id == id) return int(i);
  return -1;
}

int UnsupportedNodesModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(rows_.size()); }

int UnsupportedNodesModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant UnsupportedNodesModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const Row& row = rows_[size_t(index.row())];
  switch (role) {
    case Qt::DisplayRole: return index.column() == OperatorColumn ? row.op : row.node;
    case Qt::ToolTipRole: return tr("%1 '%2': Tessel does not implement this operator").arg(row.op, row.node);
    case NodeIdRole: return row.id;
    default: return {};
  }
}

QVariant UnsupportedNodesModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  return section == OperatorColumn ? tr("Operator") : tr("Node");
}

}  // namespace tessel::views
