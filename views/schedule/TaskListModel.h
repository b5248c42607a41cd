// The tasks of a compiled model as a table: task name, operation, workload, GFLOP, edited, tuned.
#pragma once

#include <QAbstractTableModel>

#include <vector>

#include "compiler/driver/ScheduleTask.h"

namespace tessel::views {

class TaskListModel : public QAbstractTableModel {
  Q_OBJECT

public:
  /// Tuned: the compiled kernel replays a tuning record (ScheduleTask::tuned).
  enum Column { Name, Operation, Workload, Gflop, Edited, Tuned, ColumnCount };
  /// The task's name (the kernel symbol) in every column, for views that sort or filter.
  static constexpr int TaskNameRole = Qt::UserRole;
  /// The column's value to sort by (numbers as numbers).
  static constexpr int SortRole = Qt::UserRole + 1;

  explicit TaskListModel(QObject* parent = nullptr);

  /// Replaces the rows (nothing is marked edited).
  void setTasks(const std::vector<driver::ScheduleTask>& tasks);
  /// Marks the task `name` as differing from its default schedule (or not).
  void setEdited(const QString& name, bool edited);
  bool isEdited(const QString& name) const;
  /// The row of task `name`, or -1.
  int rowOf(const QString& name) const;
  QString nameAt(int row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
  struct Row {
    QString name, nodeName, op, workload;
    double gflop = 0;
    bool edited = false;
    bool tuned = false;
  };
  std::vector<Row> rows_;
};

}  // namespace tessel::views
