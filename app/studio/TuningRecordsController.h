// The tuning records applied to the Studio's open model: a records file read on a worker for the
// model's target, its problems put before the user (a message box naming the file and the lines
// skipped), and what each compile made of the records, for the status bar and the log.
#pragma once

#include <QObject>
#include <QString>

#include <functional>
#include <memory>

#include "tuner/records/AppliedRecords.h"
#include "views/common/DiagnosticsModel.h"
#include "views/common/JobRunner.h"

class QWidget;

namespace tessel::studio {

/// Owns the records of the open model; the window decides when to compile with them (a compile
/// takes CompileOptions::tunedSchedules) and tells this what each compile used.
class TuningRecordsController : public QObject {
  Q_OBJECT

public:
  /// Tells the user about a records file that cannot be read or whose lines were skipped: a
  /// warning message box by default; tests and screenshot mode answer without a dialog.
  using ProblemNotice = std::function<void(const QString& title, const QString& text)>;
  /// Receives the schedules to compile with, or null when the file could not be read.
  using Loaded = std::function<void(std::shared_ptr<const driver::TunedSchedules> schedules)>;

  /// `dialogParent` parents the default notice's message box.
  explicit TuningRecordsController(QWidget* dialogParent, QObject* parent = nullptr);

  void setProblemNotice(ProblemNotice notice) { notice_ = std::move(notice); }
  views::JobRunner& jobs() { return jobs_; }

  /// Reads `path` for `target` on a worker (a newer load replaces one in flight), then on this
  /// thread accept()s the result and calls `then`.
  void load(const QString& path, const Target& target, Loaded then);
  /// Takes records read on a worker (the window reads a project's with its model's inputs). A
  /// file that cannot be read, or has lines skipped, is put before the user and in the log.
  /// Returns the schedules to compile with; null when the file could not be read.
  std::shared_ptr<const driver::TunedSchedules> accept(Expected<tuner::AppliedRecords> records);
  /// Follows every compile of the open model; `schedules` are those it was compiled with. When
  /// they are the records accepted last, notes what `model` made of them (reporting it to the
  /// log the first time); without schedules the records are forgotten.
  void compiled(const driver::CompiledModel& model, const std::shared_ptr<const driver::TunedSchedules>& schedules);

  /// The records the shown model was compiled with (outcome noted); null when none.
  const tuner::AppliedRecords* applied() const { return applied_.get(); }
  /// "2 of 8 kernels tuned" for the status bar; empty without records.
  QString summary() const;

signals:
  void diagnostic(tessel::views::Severity severity, const QString& source, const QString& message);

private:
  QWidget* dialogParent_;
  views::JobRunner jobs_;
  ProblemNotice notice_;
  std::shared_ptr<tuner::AppliedRecords> accepted_;  // the records read last
  std::shared_ptr<tuner::AppliedRecords> applied_;   // those the shown model was compiled with
  bool reported_ = false;                            // applied_'s report is in the log
};

}  // namespace tessel::studio
