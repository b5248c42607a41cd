// The Studio's Tuning view: set up a tuning session of the open model, start, pause, resume
// and stop it, and watch it live: the tasks in a table and six plots (model latency, each
// task's progress, the scheduler's choices, every trial, the cost model's quality, the
// roofline). The session runs in a child `tessel tune` (TuningRunner); a finished session's
// history comes back from the events file kept beside its records.
#pragma once

#include <QWidget>

#include <functional>
#include <set>
#include <vector>

#include "tuner/session/TuningTask.h"
#include "views/tuning/TuningRunner.h"

class QCheckBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSortFilterProxyModel;
class QSpinBox;
class QTableView;

namespace tessel::views {

class AllocationPlot;
class RooflinePlot;
class CostModelPlot;
class LatencyPlot;
class TaskProgressPlot;
class TrialScatterPlot;
class TuningPlot;
class TuningTaskModel;

class TuningDashboard : public QWidget {
  Q_OBJECT

public:
  explicit TuningDashboard(QWidget* parent = nullptr);
  ~TuningDashboard() override;

  /// The model a session would tune and how to load it (flags such as --input-shape).
  void setModel(const QString& modelPath, const QStringList& loadArguments);
  /// The records file sessions append to (the project's); its kept events are shown.
  void setRecordsPath(const QString& path);
  QString recordsPath() const;
  /// The model's tasks as a session would find them (Studio: from the schedule editor's tasks).
  /// Until a session runs or a kept history is shown, the table lists them, not started, with
  /// their occurrences, FLOPs and profiled share, so the user sees what Start would tune.
  void setPreviewTasks(const std::vector<tuner::TuningTask>& tasks);
  /// Whether the table shows that preview (no session and no history of one).
  bool showsPreview() const { return showingPreview_; }
  /// Shows a saved event stream (a finished session); false with `error` when unreadable.
  bool loadEvents(const QString& path, QString* error);

  TuningRunner* runner() { return &runner_; }
  TuningEventFeed* feed() { return runner_.feed(); }
  TuningTaskModel* taskModel() const { return tasks_; }
  QTableView* taskTable() const { return table_; }
  LatencyPlot* latencyPlot() const { return latency_; }
  TaskProgressPlot* progressPlot() const { return progress_; }
  TrialScatterPlot* trialPlot() const { return trialsPlot_; }
  CostModelPlot* costModelPlot() const { return costModel_; }
  AllocationPlot* allocationPlot() const { return allocation_; }
  RooflinePlot* rooflinePlot() const { return roofline_; }
  /// The session set-up a Start would use.
  TuningRunRequest request() const;
  void setBudgetMinutes(double minutes);
  void setTrialBudget(int trials);

  /// What Start does when the records file already holds trials and Resume is not ticked.
  enum class ExistingRecords { Resume, StartOver, Cancel };
  /// Asked then, with the records path; a question box by default (tests answer directly).
  void setExistingRecordsPrompt(std::function<ExistingRecords(const QString& records)> prompt) {
    existingRecordsPrompt_ = std::move(prompt);
  }

  /// Selects a task (by its index in the session) everywhere in the view.
  void selectTask(int task);
  /// Selects the task one of whose kernels is `kernel` (a node picked in the graph); false,
  /// with the selection as it was, when no task has it.
  bool selectKernel(const QString& kernel);
  std::set<int> selectedTasks() const { return selected_; }

public slots:
  void startSession();
  void pauseOrResume();
  void stopSession();

signals:
  /// A trial was clicked: open its schedule (trace text from the records) in the editor.
  void trialActivated(const QString& kernel, const QString& point, int trial);
  /// A task was selected: its kernels (the graph highlights them).
  void taskSelected(const QStringList& kernels);
  /// For the status bar.
  void message(const QString& text);

private:
  void buildLayout();
  void refresh();
  void updateControls();
  void selectionChanged();
  void showPlotMenu(TuningPlot* plot, const QPoint& position);
  /// Puts the preview in the feed when nothing else is there to show.
  void showPreviewIfIdle();

  TuningRunner runner_;
  QString modelPath_;
  QStringList loadArguments_;
  std::set<int> selected_;
  int fittedRows_ = -1;
  std::vector<tuner::TuningTask> previewTasks_;
  bool showingPreview_ = false;
  bool historyShown_ = false;  // a kept stream or rebuilt history is (being) shown
  std::function<ExistingRecords(const QString&)> existingRecordsPrompt_;

  QLineEdit* records_ = nullptr;
  QDoubleSpinBox* budget_ = nullptr;
  QSpinBox* trials_ = nullptr;
  QSpinBox* threads_ = nullptr;
  QCheckBox* resume_ = nullptr;
  QPushButton* start_ = nullptr;
  QPushButton* pause_ = nullptr;
  QPushButton* stop_ = nullptr;
  QLabel* status_ = nullptr;
  QTableView* table_ = nullptr;
  TuningTaskModel* tasks_ = nullptr;
  QSortFilterProxyModel* sorted_ = nullptr;
  LatencyPlot* latency_ = nullptr;
  TaskProgressPlot* progress_ = nullptr;
  TrialScatterPlot* trialsPlot_ = nullptr;
  CostModelPlot* costModel_ = nullptr;
  AllocationPlot* allocation_ = nullptr;
  RooflinePlot* roofline_ = nullptr;
  QPlainTextEdit* output_ = nullptr;
};

}  // namespace tessel::views
