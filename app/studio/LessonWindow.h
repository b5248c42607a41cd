// The Lessons window (Help > Lessons): a lesson's steps beside the schedule workbench. Each
// step opens its operator in the editor with its starting schedule, the iteration-order
// animation and Measure beside it; Check grades the editor's schedule against the step's goal
// (app/lessons) and says what is missing; passed steps and the learner's schedules are kept
// per user (QSettings). Presenter mode (F5) is for projectors: large fonts, one pane at a time
// (Tab switches between the step and the editor), Page Up / Page Down step through the lesson.
#pragma once

#include <QMainWindow>

#include <optional>
#include <vector>

#include "app/lessons/Lesson.h"
#include "app/lessons/LessonCheck.h"
#include "core/support/Error.h"

class QListWidget;
class QListWidgetItem;
class QPushButton;
class QSplitter;
class QTextBrowser;
class QTreeWidget;
class QTreeWidgetItem;

namespace tessel::views {
class ScheduleWorkbench;
class TuningRunner;
}

namespace tessel::studio {

class LessonWindow : public QMainWindow {
  Q_OBJECT

public:
  explicit LessonWindow(QWidget* parent = nullptr);
  ~LessonWindow() override;

  /// Reads the lessons from `directory`, or the installed ones (lessons::loadInstalledLessons)
  /// when empty; opens the first step not yet passed. False, with the problem shown in the
  /// window, when they cannot be read.
  bool loadLessons(const QString& directory = {});
  const std::vector<lessons::Lesson>& lessons() const { return lessons_; }

  /// Opens `step` (id or number) of `lesson` (id or number) in the editor; false when there is
  /// no such step. The learner's last schedule for the step comes back (else its start).
  bool openStep(const QString& lesson, const QString& step);
  QString currentLessonId() const;
  QString currentStepId() const;
  /// The schedule in the editor.
  QString scheduleText() const;
  /// Replaces the editor's schedule (undoable), as typing would.
  void setScheduleText(const QString& text);

  /// Grades the editor's schedule on a worker; checked() follows with the outcome.
  void check();
  /// Reveals the step's next hint in the step's text; false when all are shown.
  bool showNextHint();
  void nextStep();
  void previousStep();
  /// Runs the auto-tuner on the step's operator (steps whose lesson gives "tune") in a child
  /// `tessel tune`, the session's lines shown under Check; when it ends, the fastest schedule
  /// it measured replaces the editor's (undoable) and tuned() follows. While it runs, the Tune
  /// button stops it (every trial so far is kept). False with `error` set when it cannot start.
  bool tune(QString* error = nullptr);
  views::TuningRunner* tuningRunner() const { return tuner_; }
  /// Where a step's tuning records go (per user; a new session starts the file afresh).
  static QString tuneRecordsPath(const QString& lesson, const QString& step);

  /// Whether the learner has reached the step's goal (kept per user).
  static bool isStepPassed(const QString& lesson, const QString& step);

  void setPresenterMode(bool on);
  bool presenterMode() const { return presenter_; }
  /// In presenter mode: show the step's text (true) or the editor (false).
  void showStepPane(bool stepPane);
  bool stepPaneShown() const;

  /// The iteration-order animation of the editor's schedule as an animated PNG for slides.
  Status exportAnimation(const QString& path) const;

  views::ScheduleWorkbench* workbench() const { return workbench_; }
  QTreeWidget* lessonTree() const { return tree_; }
  QTextBrowser* stepText() const { return text_; }
  QListWidget* checkResults() const { return results_; }

signals:
  /// A check finished: whether the goal is reached, and one line per check ("PASS: ...").
  void checked(bool passed, const QStringList& results);
  /// A check could not grade: the schedule has an error (with its line) or did not build.
  void checkFailed(const QString& message);
  void stepOpened(const QString& lesson, const QString& step);
  /// A tuning session of a step ended: whether a schedule came of it, and what to say about it
  /// (the best time, the speed-up over the start, the cost model's ranking accuracy).
  void tuned(bool succeeded, const QString& summary);

private:
  void buildUi();
  void createActions();
  void fillTree();
  void showStepText();
  void saveScheduleText();
  void markTreeItem(QTreeWidgetItem* item, bool passed);
  /// The tree's item for a step, or null.
  QTreeWidgetItem* stepItem(const QString& lesson, const QString& step) const;
  const lessons::Lesson* currentLesson() const;
  const lessons::LessonStep* currentStep() const;
  QString taskName() const;
  void tuningFinished(bool succeeded, const QString& message, int waitsLeft = 100);
  /// The summary of a session whose best schedule is known, and that schedule into the editor.
  void summarizeTuning(int trials, double medianMs, std::optional<double> gflops, std::optional<double> speedup,
                       const QString& trace);
  void updateTuneButton();

  std::vector<lessons::Lesson> lessons_;
  int lessonIndex_ = -1;
  int stepIndex_ = -1;
  int hintsShown_ = 0;
  bool presenter_ = false;
  QFont normalFont_;

  QTreeWidget* tree_ = nullptr;
  QTextBrowser* text_ = nullptr;
  QListWidget* results_ = nullptr;
  QPushButton* check_ = nullptr;
  QPushButton* hint_ = nullptr;
  QPushButton* tune_ = nullptr;
  views::TuningRunner* tuner_ = nullptr;
  QString tuneLesson_, tuneStep_;  // the step the running (or last) session tunes
  QListWidgetItem* tuneProgress_ = nullptr;
  QWidget* stepPane_ = nullptr;
  QSplitter* splitter_ = nullptr;
  views::ScheduleWorkbench* workbench_ = nullptr;
};

}  // namespace tessel::studio
