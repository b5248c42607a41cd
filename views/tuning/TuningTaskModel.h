// The tasks of a tuning session as a table: what each kernel computes, how often it runs, its
// share of the model's time, its default and best throughput and where its search stands.
#pragma once

#include <QAbstractTableModel>
#include <QPointer>

#include <memory>
#include <string>
#include <unordered_map>

#include "compiler/driver/ModelProfile.h"

#include "views/tuning/TuningEventFeed.h"

namespace tessel::views {

/// A read-only table over a TuningEventFeed's log, one row per task in session_start order,
/// refreshed when the feed says it changed.
class TuningTaskModel : public QAbstractTableModel {
  Q_OBJECT

public:
  enum Column {
    KernelColumn,
    OpColumn,
    OccurrencesColumn,
    MflopColumn,
    ShareColumn,
    DefaultGflopsColumn,
    DefaultPeakColumn,
    TrialsColumn,
    BestGflopsColumn,
    BestPeakColumn,
    SpeedupColumn,
    StateColumn,
    ColumnCount
  };
  /// The raw value of a cell (a number for numeric columns, NaN when unknown), for sorting.
  static constexpr int SortRole = Qt::UserRole + 1;
  /// The task's index in the session (an int), whatever the column.
  static constexpr int TaskRole = Qt::UserRole + 2;

  explicit TuningTaskModel(QObject* parent = nullptr);

  void setFeed(TuningEventFeed* feed);
  TuningEventFeed* feed() const { return feed_; }
  /// The model's last profile (Build > Profile Model): the Share column then says what share of
  /// the measured model time each task's kernels took. Without one, the share is estimated from
  /// the default schedules' isolated times and the task's occurrences. Null clears it.
  void setProfile(std::shared_ptr<const driver::ModelProfile> profile);
  const driver::ModelProfile* profile() const { return profile_.get(); }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

  /// "searching", "stopped", "exhausted", "tuned" or "default kept" (after the session's
  /// confirmation), "not started".
  static QString stateText(const tuner::LoggedTaskState& state, bool sessionEnded);

private:
  void refresh();
  QVariant value(int task, int column) const;

  QPointer<TuningEventFeed> feed_;
  std::shared_ptr<const driver::ModelProfile> profile_;
  // From profile_, once: the Share column asks for every row at every refresh and sort.
  std::unordered_map<std::string, double> profiledKernelMs_;
  double profiledTotalMs_ = 0;
  int rows_ = 0;
};

}  // namespace tessel::views
