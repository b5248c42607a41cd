// The table of one task's measured schedule variants: number, time, latency, GFLOP/s, share
// of peak and what changed, the fastest variant marked.
#pragma once

#include <QAbstractTableModel>
#include <QPointer>

#include "views/schedule/MeasureHistory.h"

namespace tessel::views {

/// A read-only table over MeasureHistory::variants(task), following the history as variants
/// are added or the history is reset. One row per variant, oldest first.
class MeasureHistoryModel : public QAbstractTableModel {
  Q_OBJECT

public:
  enum Column { NumberColumn, TimeColumn, LatencyColumn, MinLatencyColumn, GflopsColumn, PeakColumn, ChangeColumn,
                ColumnCount };
  /// The raw value of a cell (a number for numeric columns), for sorting and tests.
  static constexpr int SortRole = Qt::UserRole + 1;
  /// True on the row of the lowest median latency.
  static constexpr int IsBestRole = Qt::UserRole + 2;

  explicit MeasureHistoryModel(QObject* parent = nullptr);

  /// The history to show (not owned; may be shared by several models) and the task in it.
  void setHistory(MeasureHistory* history);
  void setTask(const QString& task);
  QString task() const { return task_; }
  MeasureHistory* history() const { return history_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
  const std::vector<MeasuredVariant>& variants() const;
  QVariant display(const MeasuredVariant& variant, int column) const;
  QVariant sortValue(const MeasuredVariant& variant, int column) const;

  QPointer<MeasureHistory> history_;
  QString task_;
  int best_ = -1;  // row of the fastest variant, cached so a new best can repaint the old one
};

}  // namespace tessel::views
