// The unsupported nodes of a layout, read once per layout.
#include "views/graph/UnsupportedNodesModel.h"

#include <QSet>

#include "core/graph/UnsupportedOperations.h"

namespace tessel::views {

UnsupportedNodesModel::UnsupportedNodesModel(QObject* parent) : QAbstractTableModel(parent) {}

void UnsupportedNodesModel::setGraphLayout(const std::shared_ptr<const GraphLayout>& layout) {
  std::shared_ptr<const graph::Graph> graph = layout ? layout->graph : nullptr;
  if (graph && graph == graph_) return;
  graph_ = std::move(graph);
  beginResetModel();
  rows_.clear();
  operatorLabels_.clear();
  QSet<QString> operators, labels;
  // From the graph, not the boxes: an operation inside a closed module group has no box of
  // its own but is just as unsupported (GraphWorkbench opens its groups when it is chosen).
  if (graph_) {
    for (const graph::GraphNode* node : graph_->topologicalOrder()) {
      const auto* op = graph::asOperation(node);
      if (!op || !graph::isUnsupported(*op)) continue;
      graph::OnnxOperatorName onnx = graph::unsupportedOperator(*op);
      QString name = QString::fromStdString(onnx.opType);
      if (!onnx.domain.empty()) name += QStringLiteral(" (%1)").arg(QString::fromStdString(onnx.domain));
      operators.insert(QString::fromStdString(onnx.qualified()));
      if (!labels.contains(name)) {
        labels.insert(name);
        operatorLabels_ << name;
      }
      QString nodeName = QString::fromStdString(op->name);
      rows_.push_back({nodeName, name, nodeName});
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
