// The unsupported nodes of a layout, read once per layout.
#include "views/graph/UnsupportedNodesModel.h"

#include <set>
#include <string>

#include "core/graph/UnsupportedOperations.h"

namespace tessel::views {

UnsupportedNodesModel::UnsupportedNodesModel(QObject* parent) : QAbstractTableModel(parent) {}

QString UnsupportedNodesModel::operatorLabel(const graph::OperationNode& op) {
  graph::OnnxOperatorName onnx = graph::unsupportedOperator(op);
  QString label = QString::fromStdString(onnx.opType);
  if (!onnx.domain.empty()) label += QStringLiteral(" (%1)").arg(QString::fromStdString(onnx.domain));
  return label;
}

void UnsupportedNodesModel::setGraphLayout(const std::shared_ptr<const GraphLayout>& layout) {
  std::shared_ptr<const graph::Graph> graph = layout ? layout->graph : nullptr;
  if (graph && graph == graph_) return;
  graph_ = std::move(graph);
  beginResetModel();
  // From the layout's list of the graph's placeholders, not its boxes: an operation inside a
  // closed module group has no box of its own but is just as unsupported (GraphWorkbench
  // opens its groups when it is chosen). Found on the layout's worker thread.
  rows_ = layout ? layout->unsupported : std::vector<const graph::OperationNode*>{};
  operatorLabels_.clear();
  std::set<std::string> operators;
  for (const graph::OperationNode* op : rows_) {
    graph::OnnxOperatorName onnx = graph::unsupportedOperator(*op);
    if (operators.insert(onnx.qualified()).second) operatorLabels_ << operatorLabel(*op);
  }
  operatorCount_ = int(operators.size());
  endResetModel();
}

int UnsupportedNodesModel::rowOf(const QString& id) const {
  std::string name = id.toStdString();
  for (size_t i = 0; i < rows_.size(); ++i)
    if (rows_[i]->name == name) return int(i);
  return -1;
}

int UnsupportedNodesModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(rows_.size()); }

int UnsupportedNodesModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant UnsupportedNodesModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const graph::OperationNode& op = *rows_[size_t(index.row())];
  QString name = QString::fromStdString(op.name);
  switch (role) {
    case Qt::DisplayRole: return index.column() == OperatorColumn ? operatorLabel(op) : name;
    case Qt::ToolTipRole: return tr("%1 '%2': Tessel does not implement this operator").arg(operatorLabel(op), name);
    case NodeIdRole: return name;
    default: return {};
  }
}

QVariant UnsupportedNodesModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  return section == OperatorColumn ? tr("Operator") : tr("Node");
}

}  // namespace tessel::views
