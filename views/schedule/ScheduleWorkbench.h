// The schedule workbench the Studio window embeds: the task list, the schedule editor, the
// lowered code beside it (re-lowered as the user types), and task tools (measure, iteration
// order) below the code.
#pragma once

#include <QWidget>

#include <map>
#include <memory>
#include <optional>

#include "compiler/driver/ScheduleTask.h"
#include "views/common/JobRunner.h"

class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QSplitter;
class QTabWidget;
class QTableView;
class QTextDocument;
class QTimer;
class QToolButton;

namespace tessel::views {

class IterationOrderView;
class LoweringPanel;
class MeasurePanel;
class ScheduleDiffView;
class ScheduleEditor;
class TaskListModel;

/// Usage from the window:
///   auto* workbench = new ScheduleWorkbench(parent);
///   workbench->setModelSource(session->modelPath(), session->loadOptions(), session->compileOptions());
///   workbench->setModel(session->compiledModel());            // tasks extracted in the background
///   connect(workbench, &ScheduleWorkbench::scheduleEdited, project, &Project::saveScheduleEdit);
///   workbench->setScheduleText(task, savedText);               // edits loaded from a project
///   workbench->openTaskForNode(nodeName);                      // double-click on a graph node
/// Each task keeps its own text document, so undo/redo history survives switching tasks. Edits
/// are lowered 300 ms after the last keystroke on the channel "lower:<task>" of jobs(), so
/// only the latest text's result is shown; while the text has an error the last good code
/// stays visible, greyed out, and the error is marked in the editor and shown below it.
/// The LLVM IR and assembly are emitted only while their tab is shown. Keys: Ctrl+Space
/// completes, Ctrl+Z / Ctrl+Shift+Z undo and redo in the editor, Ctrl+Shift+R resets the open
/// task to its default schedule (undoable). The Measure and Iteration order tools below the
/// code run on jobs() too, so one job list shows everything the workbench does.
class ScheduleWorkbench : public QWidget {
  Q_OBJECT

public:
  explicit ScheduleWorkbench(QWidget* parent = nullptr);
  ~ScheduleWorkbench() override;

  /// Shows the tasks of `model` (null: none). Tasks are rebuilt on a worker; tasksReady()
  /// follows. Text of tasks whose workload is unchanged (same name and workload) is kept.
  void setModel(std::shared_ptr<const driver::CompiledModel> model,
                const Target& target = hostTarget());
  /// Where the model of setModel came from: its file and the options it was imported and
  /// compiled with. Measuring needs it: the Measure tool times a task in a child process that
  /// compiles the same file with the same options (see MeasurePanel::setModelSource).
  void setModelSource(const QString& modelPath, const driver::LoadOptions& load, const driver::CompileOptions& compile);
  /// Shows `tasks` at once (what setModel does when its worker is done).
  void setTasks(std::vector<driver::ScheduleTask> tasks);

  /// Opens task `name` (the kernel symbol) in the editor; false if there is no such task.
  bool openTask(const QString& name);
  /// Opens the task computing graph operation `nodeName` (a fused node's name).
  bool openTaskForNode(const QString& nodeName);
  QString currentTaskName() const;
  /// The open task, or null.
  const driver::ScheduleTask* currentTask() const;
  /// Task `name` (the kernel symbol), or null.
  const driver::ScheduleTask* findTask(const QString& name) const;
  /// Every task shown, in plan order (copies: the tasks hold handles, not data).
  std::vector<driver::ScheduleTask> scheduleTasks() const;
  QStringList taskNames() const;

  /// Replaces task `name`'s schedule text (e.g. from a project file) as an undoable edit,
  /// without emitting scheduleEdited. False if there is no such task.
  bool setScheduleText(const QString& name, const QString& text);
  /// Task `name`'s current text (until edited, the schedule the model was compiled with: a
  /// tuning record's for a tuned kernel, else the default).
  QString scheduleText(const QString& name) const;
  /// The text of every task whose schedule differs from what the model was compiled with, by
  /// task name.
  std::map<QString, QString> editedSchedules() const;
  /// The last schedule text of the open task that lowered without error (what measuring and
  /// the iteration-order view should use), and its lowering; null before the first result.
  std::shared_ptr<const driver::TaskLowering> currentLowering() const;

  /// Puts back the schedule the open task was compiled with (undoable with undo()).
  void resetToDefault();
  void undo();
  void redo();
  /// Lowers the open task's text now instead of after the typing pause.
  void lowerNow();

  /// A tab beside the code for a tool working on the open task (Measure, Iteration order).
  /// Replaces the placeholder tab of the same title, if any.
  void addToolTab(QWidget* tool, const QString& title);

  ScheduleEditor* editor() const { return editor_; }
  LoweringPanel* loweringPanel() const { return panel_; }
  TaskListModel* taskModel() const { return taskModel_; }
  QTableView* taskView() const { return taskView_; }
  QTabWidget* toolTabs() const { return toolTabs_; }
  /// The "Measure" tool tab: follows the open task and its text; runs on jobs().
  MeasurePanel* measurePanel() const { return measure_; }
  /// The open task's schedule beside its default, line against line (a tool tab).
  ScheduleDiffView* diffView() const { return diff_; }
  /// Brings the diff tab forward.
  void showDiffAgainstDefault();
  /// The "Iteration order" tool tab: animates the open task's last good lowering while visible.
  IterationOrderView* iterationOrderView() const { return iterationOrder_; }
  /// The line under the editor showing the current diagnostic (or "Lowered in N ms").
  QLabel* messageLine() const { return message_; }
  JobRunner& jobs() { return jobs_; }

protected:
  void showEvent(QShowEvent* event) override;
  void changeEvent(QEvent* event) override;

signals:
  /// The tasks of a new model are shown.
  void tasksReady();
  /// Extracting tasks from a model failed; `message` is the compiler's diagnostic.
  void failed(const QString& message);
  void taskOpened(const QString& name);
  /// The user changed task `name`'s schedule text (after the typing pause); for the project.
  void scheduleEdited(const QString& name, const QString& text);
  /// A lowering of task `name` arrived: `ok` false when the text has an error.
  void loweringFinished(const QString& name, bool ok);
  /// The open task's schedule lowered successfully with `text` (tools re-measure/re-animate).
  /// `task` is valid during the call only (connect directly).
  void currentScheduleChanged(const driver::ScheduleTask& task, const QString& text);

private:
  struct TaskState;
  TaskState* state(const QString& name);
  const TaskState* state(const QString& name) const;
  void onTextChanged(const QString& name);
  void updateDiff();
  void startLowering(const QString& name);
  void showState(const TaskState& state);
  bool codeMatchesText() const;
  void updateTaskTitle();
  void linkScheduleLine(int line);
  void linkLoop(const QString& loop);
  void buildLayout();

  JobRunner jobs_;
  std::vector<std::unique_ptr<TaskState>> tasks_;
  QString current_;
  bool loadingText_ = false;
  int modelGeneration_ = 0;

  TaskListModel* taskModel_;
  QSortFilterProxyModel* taskFilter_;
  QTableView* taskView_;
  QLineEdit* taskSearch_;
  QLabel* taskTitle_;
  QToolButton* undoButton_;
  QToolButton* redoButton_;
  QToolButton* resetButton_;
  ScheduleEditor* editor_;
  QLabel* message_;
  LoweringPanel* panel_;
  QTabWidget* toolTabs_;
  MeasurePanel* measure_;
  ScheduleDiffView* diff_;
  IterationOrderView* iterationOrder_;
  std::weak_ptr<const driver::TaskLowering> iterationOrderShown_;  // what the animation shows
  void updateIterationOrder();
  QSplitter* splitter_ = nullptr;
  QSplitter* codeAndTools_ = nullptr;
  bool sized_ = false;
  QTimer* debounce_;
  QTextDocument* emptyDocument_;
};

}  // namespace tessel::views
