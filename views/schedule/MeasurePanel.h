// The schedule editor's Measure panel: runs the task's operator under the current schedule in
// a child process (`tessel measure`, so a crashing kernel cannot take the Studio down) and
// shows latency, GFLOP/s and share of peak, with a history plot and table.
#pragma once

#include <QPointer>
#include <QWidget>

#include <optional>

#include "compiler/driver/IsolatedMeasure.h"
#include "compiler/driver/MeasureKernel.h"
#include "compiler/ops/Workload.h"
#include "compiler/schedule/Primitive.h"
#include "views/common/JobRunner.h"
#include "views/schedule/MeasureHistory.h"

class QLabel;
class QProgressBar;
class QPushButton;
class QTableView;

namespace tessel::views {

class MeasureHistoryModel;
class MeasurePlot;

/// Measures one task at a time. Typical use by the schedule editor:
///
///   panel->setModelSource(session.modelPath(), session.loadOptions(), session.compileOptions());
///   panel->setTask(task.name, task.workload, task.flops);   // when a task is opened
///   panel->setTraceText(editor->toPlainText());             // on every (debounced) edit
///   // the user presses Measure (or F5 through the window's action calling measure())
///
/// The measurement runs in a child process, `tessel measure` (found by
/// driver::findTesselExecutable: TESSEL_CLI, else beside the running executable, else PATH),
/// which compiles the model source the same way and times the task by name; a bare operator
/// (teaching, tests) is named with setOperatorSource instead. A kernel that crashes shows up
/// as a failed measurement naming the signal; the panel keeps working. Measuring runs on the
/// job channel "measure:<task>" of the panel's JobRunner (setJobRunner to share the window's,
/// so the status bar shows its progress and Cancel, which kills the child at once); a new
/// Measure of the same task replaces one in flight. Results land in the MeasureHistory
/// (setHistory to share one across panels and store it with the project), keyed by task name,
/// so switching tasks and back shows each task's own variants.
class MeasurePanel : public QWidget {
  Q_OBJECT

public:
  explicit MeasurePanel(QWidget* parent = nullptr);
  ~MeasurePanel() override;

  /// Runs measurements on `jobs` (not owned) instead of the panel's own runner.
  void setJobRunner(JobRunner* jobs);
  JobRunner* jobRunner() const { return jobs_; }
  /// Keeps results in `history` (not owned) instead of the panel's own.
  void setHistory(MeasureHistory* history);
  MeasureHistory* history() const { return history_; }
  /// How long and how carefully to time (shorter in tests); the callbacks are the panel's.
  void setMeasureOptions(const driver::MeasureOptions& options) { options_ = options; }

  /// Where the tasks come from: the model file and the options it was imported and compiled
  /// with (the child compiles it again and finds the task by its kernel name). An empty path
  /// forgets the source.
  void setModelSource(const QString& modelPath, const driver::LoadOptions& load, const driver::CompileOptions& compile);
  /// The task is a bare operator `tessel bench` knows ({"matmul", {{"m", "64"}, ...}}), not a
  /// model's kernel; replaces any model source until setModelSource.
  void setOperatorSource(const driver::OperatorSource& source);
  /// Whether a measurement knows what to build (a model source or an operator).
  bool hasSource() const { return modelSource_ || operatorSource_; }

  /// The task to measure: its name (ScheduleTask::name; the history key), its tensors, and
  /// its floating-point operations per call (negative: workload.flops).
  void setTask(const QString& name, const Workload& workload, double flops = -1);
  /// The schedule to measure next, as a trace or as editor text (parsed when measuring; a
  /// parse error is reported with its line and column).
  void setTrace(const Trace& trace);
  void setTraceText(const QString& text);

  QString task() const { return task_; }
  QString traceText() const { return traceText_; }
  bool isMeasuring() const;
  /// The job channel of the current task: "measure:<task>".
  QString channel() const;

  MeasureHistoryModel* historyModel() const { return model_; }
  MeasurePlot* plot() const { return plot_; }
  QTableView* historyTable() const { return table_; }

public slots:
  /// Measures the current task under the current schedule in the background. Does nothing
  /// without a task.
  void measure();
  /// Stops the current task's measurement; nothing is added to the history.
  void cancel();

signals:
  /// A measurement of `task` finished and was added to the history as `variant`.
  void measured(const QString& task, const tessel::views::MeasuredVariant& variant);
  /// Measuring `task` failed; `message` is the compiler's diagnostic (line and column of a
  /// schedule error, or the kernel that failed).
  void measureFailed(const QString& task, const QString& message);
  /// The current task started or stopped measuring.
  void measuringChanged(bool measuring);
  /// The user double-clicked a variant: the editor can restore its schedule text.
  void variantActivated(const QString& task, const QString& traceText);

private:
  void buildUi();
  void refreshForTask();
  void showLatest();
  void showError(const QString& message);
  void updateRunningState();
  void onProgress(const QString& channel, int percent, const QString& message);

  QPointer<JobRunner> jobs_;  // a shared runner may go away first
  JobRunner* ownJobs_ = nullptr;
  bool wasMeasuring_ = false;  // to emit measuringChanged on changes only
  QPointer<MeasureHistory> history_;
  MeasureHistory* ownHistory_ = nullptr;
  driver::MeasureOptions options_;
  std::optional<driver::ModelTaskSource> modelSource_;  // taskName is filled in when measuring
  std::optional<driver::OperatorSource> operatorSource_;

  QString task_;
  Workload workload_;
  QString traceText_;

  QLabel* title_ = nullptr;
  QLabel* subtitle_ = nullptr;
  QPushButton* measureButton_ = nullptr;
  QPushButton* cancelButton_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* status_ = nullptr;
  QLabel* latency_ = nullptr;
  QLabel* latencyDetail_ = nullptr;
  QLabel* gflops_ = nullptr;
  QLabel* gflopsDetail_ = nullptr;
  QLabel* peak_ = nullptr;
  QProgressBar* peakBar_ = nullptr;
  QLabel* peakDetail_ = nullptr;
  QLabel* error_ = nullptr;
  MeasurePlot* plot_ = nullptr;
  MeasureHistoryModel* model_ = nullptr;
  QTableView* table_ = nullptr;
};

}  // namespace tessel::views
