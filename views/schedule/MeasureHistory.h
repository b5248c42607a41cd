// The measured variants of every task's schedule while the window lives: the data behind the
// measure panel's table and plot, and what a project can store and restore.
#pragma once

#include <QDateTime>
#include <QJsonObject>
#include <QMetaType>
#include <QObject>
#include <QString>
#include <QStringList>

#include <map>
#include <vector>

#include "compiler/driver/MeasureKernel.h"

namespace tessel::views {

/// One measurement of one schedule of a task.
struct MeasuredVariant {
  int number = 0;          ///< 1, 2, 3, ... per task, in the order measured.
  QDateTime measuredAt;
  QString traceText;       ///< The schedule measured (canonical trace text; empty = no primitives).
  QString change;          ///< What changed against the previous variant ("+ vectorize(C, ji)").
  driver::Measurement measurement;
};

/// Variants per task name (ScheduleTask::name). No UI: the panel, the table model and the
/// project read it; several panels may share one.
class MeasureHistory : public QObject {
  Q_OBJECT

public:
  explicit MeasureHistory(QObject* parent = nullptr);

  /// Appends a measurement of `traceText` to `task`'s history, numbering it and describing
  /// its change against the task's previous variant. Returns the stored variant.
  const MeasuredVariant& add(const QString& task, const QString& traceText, const driver::Measurement& measurement,
                             const QDateTime& measuredAt = QDateTime::currentDateTime());
  /// Replaces `task`'s history (a project being opened); emits historyReset(task).
  void restore(const QString& task, std::vector<MeasuredVariant> variants);
  /// Forgets `task`'s history; emits historyReset(task).
  void clear(const QString& task);

  /// The variants of `task`, oldest first (empty when never measured).
  const std::vector<MeasuredVariant>& variants(const QString& task) const;
  /// Tasks with at least one variant, sorted.
  QStringList tasks() const;
  /// Index into variants(task) of the lowest median latency, or -1 when there is none.
  int bestIndex(const QString& task) const;

  /// Every task's variants as JSON, for a project file:
  ///   {"conv0": [{"number": 1, "measuredAt": "2026-11-22T02:22:41", "trace": "...",
  ///               "change": "...", "medianMs": 0.13, "minMs": 0.12, "samples": 30,
  ///               "flops": 2.2e5, "gflops": 1.7, "peakGflops": 216, "threads": 2}, ...], ...}
  QJsonObject toJson() const;
  /// Replaces the histories of the tasks in `json` (what toJson wrote); entries that are not
  /// objects with a positive "medianMs" are skipped. Returns how many variants were read.
  int restoreFromJson(const QJsonObject& json);

signals:
  /// Emitted before and after every change, so item models can follow (begin/end insert or
  /// reset). A variant is about to be appended to `task`.
  void variantAboutToBeAdded(const QString& task);
  /// A variant was appended to `task` (at index variants(task).size() - 1).
  void variantAdded(const QString& task);
  /// `task`'s history is about to be replaced or cleared.
  void historyAboutToBeReset(const QString& task);
  /// `task`'s history was replaced or cleared.
  void historyReset(const QString& task);

private:
  std::map<QString, std::vector<MeasuredVariant>> variants_;
};

/// A short description of how schedule text `current` differs from `previous`, primitive by
/// primitive (lines compared after trimming; comments and blank lines ignored):
/// "+ vectorize(C, ji)", "- unroll(C, ii); + parallel(C, io)", a primitive edited in place as
/// "io, ii = split(C, i, factor=8 → 16)", and when too long to spell "+3 -1 primitives";
/// "unchanged" when they are the same, and for the first variant (`previous` null) "default
/// schedule" when `current` is empty, else "first measurement".
QString describeScheduleChange(const QString* previous, const QString& current);

}  // namespace tessel::views

Q_DECLARE_METATYPE(tessel::views::MeasuredVariant)
