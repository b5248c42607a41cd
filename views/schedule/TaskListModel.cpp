// Rows of schedule tasks for the workbench's task list.
#include "views/schedule/TaskListModel.h"

#include <QFont>

namespace tessel::views {

TaskListModel::TaskListModel(QObject* parent) : QAbstractTableModel(parent) {}

void TaskListModel::setTasks(const std::vector<driver::ScheduleTask>& tasks) {
  beginResetModel();
  rows_.clear();
  for (const auto& task : tasks)
    rows_.push_back({QString::fromStdString(task.name), QString::fromStdString(task.nodeName),
                     QString::fromStdString(task.op), QString::fromStdString(task.workloadName), task.flops / 1e9,
                     false, task.tuned});
  endResetModel();
}

void TaskListModel::setEdited(const QString& name, bool edited) {
  int row = rowOf(name);
  if (row < 0 || rows_[size_t(row)].edited == edited) return;
  rows_[size_t(row)].edited = edited;
  // The name is drawn in bold when edited, so the whole row changes.
  emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
}

bool TaskListModel::isEdited(const QString& name) const {
  int row = rowOf(name);
  return row >= 0 && rows_[size_t(row)].edited;
}

int TaskListModel::rowOf(const QString& name) const {
  for (size_t i = 0; i < rows_.size(); ++i)
    if (rows_[i].name == name) return int(i);
  return -1;
}

QString TaskListModel::nameAt(int row) const {
  return row >= 0 && row < int(rows_.size()) ? rows_[size_t(row)].name : QString();
}

int TaskListModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(rows_.size()); }
int TaskListModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant TaskListModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const Row& row = rows_[size_t(index.row())];
  switch (role) {
    case Qt::DisplayRole:
      switch (index.column()) {
        case Name: return row.name;
        case Operation: return row.op;
        case Workload: return row.workload;
        case Gflop: return QString::number(row.gflop, 'f', row.gflop < 0.01 ? 4 : 3);
        case Edited: return row.edited ? tr("edited") : QString();
        case Tuned: return row.tuned ? tr("tuned") : QString();
      }
      return {};
    case SortRole:
      switch (index.column()) {
        case Gflop: return row.gflop;
        case Edited: return row.edited;
        case Tuned: return row.tuned;
        default: return data(index, Qt::DisplayRole);
      }
    case TaskNameRole: return row.name;
    case Qt::ToolTipRole:
      return tr("%1\nnode: %2\nop: %3\nworkload: %4").arg(row.name, row.nodeName, row.op, row.workload) +
             (row.tuned ? tr("\ncompiled with the schedule of a tuning record (the editor shows it)")
                        : QString());
    case Qt::TextAlignmentRole:
      return index.column() == Gflop ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
    case Qt::FontRole:
      if (row.edited && index.column() == Name) {
        QFont font;
        font.setBold(true);
        return font;
      }
      return {};
    default: return {};
  }
}

QVariant TaskListModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return QAbstractTableModel::headerData(section, orientation, role);
  switch (section) {
    case Name: return tr("Task");
    case Operation: return tr("Operation");
    case Workload: return tr("Workload");
    case Gflop: return tr("GFLOP");
    case Edited: return tr("Edited");
    case Tuned: return tr("Tuned");
  }
  return {};
}

}  // namespace tessel::views
