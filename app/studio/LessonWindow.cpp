#include "app/studio/LessonWindow.h"

#include <QApplication>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSettings>
#include <QStandardPaths>
#include <QShortcut>
#include <QSplitter>
#include <QTableView>
#include <QStatusBar>
#include <QTabWidget>
#include <QTextBrowser>
#include <QTimer>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "app/lessons/LessonOperators.h"
#include "compiler/schedule/TraceText.h"
#include "views/schedule/IterationOrderView.h"
#include "views/schedule/MeasurePanel.h"
#include "views/schedule/ScheduleWorkbench.h"
#include "views/tuning/TuningRunner.h"
#include "tuner/records/RecordFile.h"
#include "tuner/records/TuningDatabase.h"

namespace tessel::studio {

namespace {

const QString kCheckChannel = QStringLiteral("lesson-check");
const QString kTuneChannel = QStringLiteral("lesson-tune");
// How much larger everything is in presenter mode, for the back row of a lecture hall.
constexpr double kPresenterScale = 1.7;

QString passedKey(const QString& lesson, const QString& step) { return "lessons/passed/" + lesson + "/" + step; }
QString scheduleKey(const QString& lesson, const QString& step) { return "lessons/schedule/" + lesson + "/" + step; }

}  // namespace

LessonWindow::LessonWindow(QWidget* parent) : QMainWindow(parent) {
  setObjectName("LessonWindow");
  setWindowTitle(tr("Tessel Lessons"));
  normalFont_ = font();
  buildUi();
  createActions();
  resize(1400, 900);
}

LessonWindow::~LessonWindow() {
  saveScheduleText();
  workbench_->jobs().cancelAll();
  workbench_->jobs().waitForAll();
}

void LessonWindow::buildUi() {
  tree_ = new QTreeWidget;
  tree_->setObjectName("LessonTree");
  tree_->setHeaderHidden(true);
  text_ = new QTextBrowser;
  text_->setObjectName("LessonStepText");
  text_->setOpenExternalLinks(false);
  check_ = new QPushButton(tr("Check"));
  check_->setObjectName("LessonCheckButton");
  check_->setToolTip(tr("Grade the schedule in the editor against the step's goal (Ctrl+Return)"));
  hint_ = new QPushButton(tr("Hint"));
  hint_->setToolTip(tr("Show the step's next hint"));
  tune_ = new QPushButton(tr("Tune"));
  tune_->setObjectName("LessonTuneButton");
  tune_->setToolTip(tr("Let the auto-tuner search schedules for this step's operator; its best replaces the editor's"));
  tuner_ = new views::TuningRunner(this);
  auto* previous = new QPushButton(tr("Previous"));
  auto* next = new QPushButton(tr("Next Step"));
  results_ = new QListWidget;
  results_->setObjectName("LessonCheckResults");
  results_->setWordWrap(true);

  auto* buttons = new QHBoxLayout;
  buttons->addWidget(check_);
  buttons->addWidget(hint_);
  buttons->addWidget(tune_);
  buttons->addStretch(1);
  buttons->addWidget(previous);
  buttons->addWidget(next);

  stepPane_ = new QWidget;
  auto* stepLayout = new QVBoxLayout(stepPane_);
  stepLayout->setContentsMargins(6, 6, 6, 6);
  auto* stepSplitter = new QSplitter(Qt::Vertical);
  stepSplitter->addWidget(tree_);
  stepSplitter->addWidget(text_);
  stepSplitter->setStretchFactor(0, 1);
  stepSplitter->setStretchFactor(1, 3);
  stepLayout->addWidget(stepSplitter, 1);
  stepLayout->addLayout(buttons);
  stepLayout->addWidget(new QLabel(tr("<b>Check</b>")));
  stepLayout->addWidget(results_);

  workbench_ = new views::ScheduleWorkbench;
  // A step is one task: the workbench's task list would only take room from the editor.
  workbench_->taskView()->parentWidget()->hide();
  splitter_ = new QSplitter(Qt::Horizontal);
  splitter_->addWidget(stepPane_);
  splitter_->addWidget(workbench_);
  splitter_->setStretchFactor(0, 2);
  splitter_->setStretchFactor(1, 5);
  setCentralWidget(splitter_);
  statusBar();

  connect(check_, &QPushButton::clicked, this, &LessonWindow::check);
  connect(hint_, &QPushButton::clicked, this, [this] { showNextHint(); });
  connect(tune_, &QPushButton::clicked, this, [this] {
    if (tuner_->isActive()) {
      tuner_->stop();
      return;
    }
    QString error;
    if (!tune(&error)) statusBar()->showMessage(error, 8000);
  });
  connect(tuner_, &views::TuningRunner::stateChanged, this, [this] { updateTuneButton(); });
  connect(tuner_, &views::TuningRunner::outputLine, this, [this](const QString& line) {
    // The tool's round table: one line per round (its header and notes are skipped); the
    // newest stands for the session's progress.
    QString row = line.simplified();
    if (tuneProgress_ && !row.isEmpty() && row[0].isDigit())
      tuneProgress_->setText(tr("Tuning, round %1").arg(row));
  });
  connect(tuner_, &views::TuningRunner::finished, this,
          [this](bool succeeded, const QString& message) { tuningFinished(succeeded, message); });
  connect(previous, &QPushButton::clicked, this, &LessonWindow::previousStep);
  connect(next, &QPushButton::clicked, this, &LessonWindow::nextStep);
  connect(tree_, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem* item) {
    QString step = item->data(0, Qt::UserRole + 1).toString();
    if (!step.isEmpty()) openStep(item->data(0, Qt::UserRole).toString(), step);
  });
  connect(tree_, &QTreeWidget::itemClicked, this, [this](QTreeWidgetItem* item) { emit tree_->itemActivated(item, 0); });
}

void LessonWindow::createActions() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* exportAnimation = file->addAction(tr("Export &Animation..."));
  exportAnimation->setObjectName("actionExportAnimation");
  connect(exportAnimation, &QAction::triggered, this, [this] {
    QString path = QFileDialog::getSaveFileName(this, tr("Export the iteration order as an animation"),
                                                currentStepId() + ".png", tr("Animated PNG (*.png *.apng)"));
    if (path.isEmpty()) return;
    Status written = this->exportAnimation(path);
    if (!written) QMessageBox::warning(this, tr("Export Animation"), QString::fromStdString(written.error().toString()));
    else statusBar()->showMessage(tr("Wrote %1").arg(path), 5000);
  });
  file->addSeparator();
  file->addAction(tr("&Close"), QKeySequence::Close, this, &QWidget::close);

  QMenu* lesson = menuBar()->addMenu(tr("&Lesson"));
  QAction* checkAction = lesson->addAction(tr("&Check"), QKeySequence(tr("Ctrl+Return")), this, &LessonWindow::check);
  checkAction->setObjectName("actionCheck");
  lesson->addAction(tr("Show &Hint"), QKeySequence(tr("Ctrl+H")), this, [this] { showNextHint(); });
  lesson->addSeparator();
  lesson->addAction(tr("&Next Step"), QKeySequence(tr("Alt+Right")), this, &LessonWindow::nextStep);
  lesson->addAction(tr("&Previous Step"), QKeySequence(tr("Alt+Left")), this, &LessonWindow::previousStep);
  lesson->addAction(tr("&Restart Step"), this, [this] {
    if (const lessons::LessonStep* step = currentStep()) setScheduleText(QString::fromStdString(step->start));
  });

  QMenu* view = menuBar()->addMenu(tr("&View"));
  QAction* presenter = view->addAction(tr("&Presenter Mode"));
  presenter->setObjectName("actionPresenterMode");
  presenter->setCheckable(true);
  presenter->setShortcut(QKeySequence(tr("F5")));
  connect(presenter, &QAction::toggled, this, &LessonWindow::setPresenterMode);
  // A presentation clicker sends Page Up / Page Down; Tab flips between step and editor.
  auto* forward = new QShortcut(QKeySequence(Qt::Key_PageDown), this);
  connect(forward, &QShortcut::activated, this, [this] {
    if (presenter_) nextStep();
  });
  auto* back = new QShortcut(QKeySequence(Qt::Key_PageUp), this);
  connect(back, &QShortcut::activated, this, [this] {
    if (presenter_) previousStep();
  });
  auto* flip = new QShortcut(QKeySequence(tr("F6")), this);
  connect(flip, &QShortcut::activated, this, [this] {
    if (presenter_) showStepPane(!stepPaneShown());
  });
}

bool LessonWindow::loadLessons(const QString& directory) {
  auto loaded = directory.isEmpty() ? lessons::loadInstalledLessons() : lessons::loadLessons(directory.toStdString());
  if (!loaded) {
    text_->setHtml("<h2>" + tr("The lessons could not be read") + "</h2><p>" +
                   QString::fromStdString(loaded.error().toString()).toHtmlEscaped() + "</p>");
    return false;
  }
  lessons_ = std::move(*loaded);
  fillTree();
  // Where the learner left off: the first step not passed yet.
  for (const lessons::Lesson& lesson : lessons_)
    for (const lessons::LessonStep& step : lesson.steps)
      if (!isStepPassed(QString::fromStdString(lesson.id), QString::fromStdString(step.id)))
        return openStep(QString::fromStdString(lesson.id), QString::fromStdString(step.id));
  return lessons_.empty() ? false : openStep(QString::fromStdString(lessons_[0].id), "1");
}

void LessonWindow::fillTree() {
  tree_->clear();
  for (const lessons::Lesson& lesson : lessons_) {
    auto* lessonItem = new QTreeWidgetItem(tree_, {QString("%1. %2").arg(lesson.number).arg(QString::fromStdString(lesson.title))});
    lessonItem->setData(0, Qt::UserRole, QString::fromStdString(lesson.id));
    lessonItem->setToolTip(0, QString::fromStdString(lesson.summary));
    for (const lessons::LessonStep& step : lesson.steps) {
      auto* stepItem = new QTreeWidgetItem(lessonItem, {QString::fromStdString(step.title)});
      stepItem->setData(0, Qt::UserRole, QString::fromStdString(lesson.id));
      stepItem->setData(0, Qt::UserRole + 1, QString::fromStdString(step.id));
      markTreeItem(stepItem, isStepPassed(QString::fromStdString(lesson.id), QString::fromStdString(step.id)));
    }
  }
  tree_->expandAll();
}

QTreeWidgetItem* LessonWindow::stepItem(const QString& lesson, const QString& step) const {
  for (int i = 0; i < tree_->topLevelItemCount(); ++i)
    for (int j = 0; j < tree_->topLevelItem(i)->childCount(); ++j) {
      QTreeWidgetItem* item = tree_->topLevelItem(i)->child(j);
      if (item->data(0, Qt::UserRole).toString() == lesson && item->data(0, Qt::UserRole + 1).toString() == step) return item;
    }
  return nullptr;
}

void LessonWindow::markTreeItem(QTreeWidgetItem* item, bool passed) {
  QString title = item->text(0);
  if (title.startsWith(QStringLiteral("✓ "))) title = title.mid(2);
  item->setText(0, passed ? QStringLiteral("✓ ") + title : title);
}

const lessons::Lesson* LessonWindow::currentLesson() const {
  return lessonIndex_ >= 0 && lessonIndex_ < int(lessons_.size()) ? &lessons_[lessonIndex_] : nullptr;
}

const lessons::LessonStep* LessonWindow::currentStep() const {
  const lessons::Lesson* lesson = currentLesson();
  return lesson && stepIndex_ >= 0 && stepIndex_ < int(lesson->steps.size()) ? &lesson->steps[stepIndex_] : nullptr;
}

QString LessonWindow::currentLessonId() const {
  return currentLesson() ? QString::fromStdString(currentLesson()->id) : QString();
}
QString LessonWindow::currentStepId() const { return currentStep() ? QString::fromStdString(currentStep()->id) : QString(); }

QString LessonWindow::taskName() const {
  const lessons::LessonStep* step = currentStep();
  return step ? QStringLiteral("lesson_") + QString::fromStdString(step->op.name) : QString();
}

QString LessonWindow::scheduleText() const { return workbench_->scheduleText(taskName()); }

void LessonWindow::setScheduleText(const QString& text) { workbench_->setScheduleText(taskName(), text); }

bool LessonWindow::isStepPassed(const QString& lesson, const QString& step) {
  return QSettings().value(passedKey(lesson, step), false).toBool();
}

void LessonWindow::saveScheduleText() {
  if (!currentStep()) return;
  QSettings().setValue(scheduleKey(currentLessonId(), currentStepId()), scheduleText());
}

bool LessonWindow::openStep(const QString& lessonId, const QString& stepId) {
  const lessons::Lesson* lesson = lessons::findLesson(lessons_, lessonId.toStdString());
  if (!lesson) return false;
  const lessons::LessonStep* step = lesson->findStep(stepId.toStdString());
  if (!step) return false;
  auto made = lessons::makeLessonOperator(step->op);
  if (!made) {
    text_->setHtml(QString::fromStdString(made.error().toString()).toHtmlEscaped());
    return false;
  }
  auto start = parseTraceText(step->start);
  if (!start) {
    text_->setHtml(QString::fromStdString(start.error().toString()).toHtmlEscaped());
    return false;
  }
  saveScheduleText();
  workbench_->jobs().cancel(kCheckChannel);
  lessonIndex_ = int(lesson - lessons_.data());
  stepIndex_ = int(step - lesson->steps.data());
  hintsShown_ = 0;

  driver::ScheduleTask task;
  task.name = taskName().toStdString();
  task.nodeName = lesson->title;
  task.op = step->op.describe();
  task.workloadName = made->workload.name;
  task.flops = made->workload.flops;
  task.workload = made->workload;
  task.defaultTrace = *start;  // Reset to Default goes back to the step's start
  workbench_->setTasks({task});
  driver::OperatorSource source{"lesson_" + step->op.name, {}};
  for (const auto& [size, value] : step->op.sizes) source.parameters[size] = std::to_string(value);
  workbench_->measurePanel()->setOperatorSource(source);
  workbench_->openTask(taskName());
  QString saved = QSettings().value(scheduleKey(lessonId, QString::fromStdString(step->id))).toString();
  if (!saved.isEmpty() && saved != QString::fromStdString(step->start)) setScheduleText(saved);

  results_->clear();
  showStepText();
  if (QTreeWidgetItem* item = stepItem(currentLessonId(), currentStepId())) tree_->setCurrentItem(item);
  setWindowTitle(tr("Tessel Lessons - %1").arg(QString::fromStdString(lesson->title)));
  emit stepOpened(currentLessonId(), currentStepId());
  return true;
}

void LessonWindow::showStepText() {
  const lessons::Lesson* lesson = currentLesson();
  const lessons::LessonStep* step = currentStep();
  if (!step) return;
  // The text's markup is the lessons' own small subset (b, i, code): passed through as HTML.
  QString html = QString("<h2>%1. %2</h2><h3>Step %3 of %4: %5</h3>")
                     .arg(lesson->number)
                     .arg(QString::fromStdString(lesson->title).toHtmlEscaped())
                     .arg(stepIndex_ + 1)
                     .arg(lesson->steps.size())
                     .arg(QString::fromStdString(step->title).toHtmlEscaped());
  for (const std::string& paragraph : step->text) html += "<p>" + QString::fromStdString(paragraph) + "</p>";
  html += "<p><b>" + tr("Operator:") + "</b> <code>" + QString::fromStdString(step->op.describe()).toHtmlEscaped() + "</code></p>";
  html += "<p><b>" + tr("Goal:") + "</b> " + QString::fromStdString(step->goalSummary).toHtmlEscaped() + "</p>";
  for (int i = 0; i < hintsShown_ && i < int(step->hints.size()); ++i)
    html += "<p><i>" + tr("Hint %1:").arg(i + 1) + "</i> <code>" + QString::fromStdString(step->hints[i]) + "</code></p>";
  text_->setHtml(html);
  hint_->setEnabled(hintsShown_ < int(step->hints.size()));
  updateTuneButton();
}

void LessonWindow::updateTuneButton() {
  const lessons::LessonStep* step = currentStep();
  bool running = tuner_->isActive();
  // Only steps about the tuner offer it: elsewhere it would hand out the answer.
  tune_->setVisible(running || (step && step->tuneTrials > 0));
  tune_->setText(running ? tr("Stop Tuning") : tr("Tune"));
  tune_->setEnabled(tuner_->state() != views::TuningRunner::State::Stopping);
}

QString LessonWindow::tuneRecordsPath(const QString& lesson, const QString& step) {
  return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + "/lessons/tuning/" + lesson + "-" + step +
         ".jsonl";
}

bool LessonWindow::tune(QString* error) {
  auto fail = [&](const QString& why) {
    if (error) *error = why;
    return false;
  };
  const lessons::LessonStep* step = currentStep();
  if (!step) return fail(tr("open a lesson step first"));
  if (step->tuneTrials <= 0) return fail(tr("this step is about writing the schedule yourself: it offers no tuner"));
  if (tuner_->isActive()) return fail(tr("the tuner is running already"));
  QString records = tuneRecordsPath(currentLessonId(), currentStepId());
  QDir().mkpath(QFileInfo(records).absolutePath());
  // Each press is a session of its own: the step's earlier trials would only shorten it.
  QFile::remove(records);
  QFile::remove(views::TuningRunner::eventsPathFor(records));
  views::TuningRunRequest request;
  request.modelPath = QString::fromStdString("lesson_" + step->op.name);
  for (const std::string& size : lessons::operatorSizeNames(step->op.name))
    request.extraArguments << QString::fromStdString("--" + size) << QString::number(step->op.sizes.at(size));
  request.recordsPath = records;
  request.budgetMinutes = 0;
  request.trials = step->tuneTrials;
  QString problem;
  if (!tuner_->start(request, &problem)) return fail(problem);
  tuneLesson_ = currentLessonId();
  tuneStep_ = currentStepId();
  results_->clear();
  tuneProgress_ = new QListWidgetItem(tr("Tuning: starting %1 trials of %2...")
                                          .arg(step->tuneTrials)
                                          .arg(QString::fromStdString(step->op.describe())),
                                      results_);
  updateTuneButton();
  return true;
}

void LessonWindow::tuningFinished(bool succeeded, const QString& message, int waitsLeft) {
  // The feed parses the stream's last events on the event loop: the summary waits for them
  // (the rounds' accuracy figures), two seconds at most.
  if (tuner_->feed()->busy() && waitsLeft > 0) {
    QTimer::singleShot(20, this, [this, succeeded, message, waitsLeft] { tuningFinished(succeeded, message, waitsLeft - 1); });
    return;
  }
  delete tuneProgress_;  // its last line is the tool's own farewell; the summary below replaces it
  tuneProgress_ = nullptr;
  updateTuneButton();
  auto report = [this](bool ok, const QString& text) {
    results_->addItem(text);
    emit tuned(ok, text);
  };
  // The fastest valid record: the file is read on a worker (a long session's is megabytes).
  struct Best {
    bool readable = false, found = false;
    int trials = 0;
    double medianMs = 0;
    std::optional<double> gflops, speedup;
    std::string trace;
  };
  std::string records = tuneRecordsPath(tuneLesson_, tuneStep_).toStdString();
  workbench_->jobs().start<Best>(
      kTuneChannel, tr("Reading the tuner's records"),
      [records](views::JobContext&) {
        Best best;
        auto contents = tuner::readRecordFile(records);
        if (!contents) return best;
        best.readable = true;
        tuner::TuningDatabase database(contents->records);
        for (const tuner::WorkloadStatistics& workload : database.statistics()) {
          if (!workload.best) continue;
          best = {true, true, workload.trials, workload.best->result()->medianMs, workload.best->result()->gflops,
                  workload.speedupOverDefault(), workload.best->trace};
        }
        return best;
      },
      [this, report, succeeded, message](Best best) {
        if (!best.readable) {
          report(false, tr("The tuner stopped before measuring anything: %1").arg(message));
          return;
        }
        if (!best.found) {
          report(false, tr("The tuner measured no valid schedule (%1).").arg(succeeded ? tr("every trial failed") : message));
          return;
        }
        summarizeTuning(best.trials, best.medianMs, best.gflops, best.speedup, QString::fromStdString(best.trace));
      });
}

void LessonWindow::summarizeTuning(int trials, double medianMs, std::optional<double> gflops,
                                   std::optional<double> speedup, const QString& trace) {
  QString summary = tr("The tuner measured %1 schedules; the fastest took %2 ms").arg(trials).arg(medianMs, 0, 'f', 4);
  if (gflops) summary += tr(" (%1 GFLOP/s)").arg(*gflops, 0, 'f', 1);
  if (speedup) summary += tr(", %1x the starting schedule").arg(*speedup, 0, 'f', 1);
  summary += ".";
  // The model's quality as the session measured it, round by round: what the tuner lesson
  // teaches. Each round's figure is over its own few candidates, so the mean says more.
  std::optional<double> lastAccuracy;
  double accuracySum = 0;
  int scoredRounds = 0;
  for (const tuner::LoggedRound& round : tuner_->feed()->log().rounds())
    if (round.pairwiseAccuracy) {
      lastAccuracy = round.pairwiseAccuracy;
      accuracySum += *round.pairwiseAccuracy;
      ++scoredRounds;
    }
  if (lastAccuracy)
    summary += " " + tr("Before measuring each round, the cost model ranked its candidates: %1% of the pairs came "
                        "out in the right order in the last round, %2% on average over %3 scored rounds (50% is a "
                        "coin toss).")
                         .arg(*lastAccuracy * 100, 0, 'f', 0)
                         .arg(accuracySum / scoredRounds * 100, 0, 'f', 0)
                         .arg(scoredRounds);
  else
    summary += " " + tr("The session was too short to score the cost model (it trains after the first rounds).");
  bool sameStep = tuneLesson_ == currentLessonId() && tuneStep_ == currentStepId();
  if (sameStep) {
    setScheduleText(trace);
    summary += " " + tr("Its schedule is in the editor: Check grades it.");
  } else {
    QSettings().setValue(scheduleKey(tuneLesson_, tuneStep_), trace);
    summary += " " + tr("Its schedule is kept for step %1 of lesson %2.").arg(tuneStep_, tuneLesson_);
  }
  results_->addItem(summary);
  emit tuned(true, summary);
}

bool LessonWindow::showNextHint() {
  const lessons::LessonStep* step = currentStep();
  if (!step || hintsShown_ >= int(step->hints.size())) return false;
  ++hintsShown_;
  showStepText();
  return true;
}

void LessonWindow::check() {
  const lessons::LessonStep* step = currentStep();
  if (!step) return;
  lessons::LessonStep theStep = *step;
  QString lessonId = currentLessonId(), stepId = currentStepId();
  std::string text = scheduleText().toStdString();
  saveScheduleText();
  results_->clear();
  results_->addItem(tr("Checking..."));
  check_->setEnabled(false);
  workbench_->jobs().start<Expected<lessons::StepGrade>>(
      kCheckChannel, tr("Checking %1").arg(QString::fromStdString(theStep.title)),
      [theStep, text](views::JobContext&) { return lessons::gradeSchedule(theStep, text); },
      [this, lessonId, stepId](Expected<lessons::StepGrade> grade) {
        check_->setEnabled(true);
        results_->clear();
        if (!grade) {
          QString message = QString::fromStdString(grade.error().toString());
          results_->addItem(tr("The schedule has an error: %1").arg(message));
          emit checkFailed(message);
          return;
        }
        QStringList lines;
        for (const lessons::CheckResult& result : grade->results) {
          QString line = (result.passed ? QStringLiteral("✓ ") : QStringLiteral("✗ ")) + QString::fromStdString(result.message);
          auto* item = new QListWidgetItem(line, results_);
          item->setForeground(result.passed ? QColor(0x2e, 0x7d, 0x32) : QColor(0xc6, 0x28, 0x28));
          lines << (result.passed ? "PASS: " : "FAIL: ") + QString::fromStdString(result.message);
        }
        if (grade->passed) {
          results_->addItem(tr("Goal reached. Next Step (Alt+Right) goes on."));
          QSettings().setValue(passedKey(lessonId, stepId), true);
          if (QTreeWidgetItem* item = stepItem(lessonId, stepId)) markTreeItem(item, true);
        } else {
          results_->addItem(tr("Not yet: Hint shows a way."));
        }
        emit checked(grade->passed, lines);
      });
}

void LessonWindow::nextStep() {
  const lessons::Lesson* lesson = currentLesson();
  if (!lesson) return;
  if (stepIndex_ + 1 < int(lesson->steps.size())) {
    openStep(currentLessonId(), QString::number(stepIndex_ + 2));
  } else if (lessonIndex_ + 1 < int(lessons_.size())) {
    openStep(QString::fromStdString(lessons_[lessonIndex_ + 1].id), "1");
  }
}

void LessonWindow::previousStep() {
  const lessons::Lesson* lesson = currentLesson();
  if (!lesson) return;
  if (stepIndex_ > 0) {
    openStep(currentLessonId(), QString::number(stepIndex_));
  } else if (lessonIndex_ > 0) {
    const lessons::Lesson& before = lessons_[lessonIndex_ - 1];
    openStep(QString::fromStdString(before.id), QString::number(before.steps.size()));
  }
}

void LessonWindow::setPresenterMode(bool on) {
  presenter_ = on;
  // A style sheet on this window, not setFont: under the Studio's application style sheet each
  // widget's font is resolved from the sheets, and a parent's setFont no longer reaches it. The
  // rule keeps each font's family (the editor stays monospace) and scales its size.
  double base = normalFont_.pointSizeF() > 0 ? normalFont_.pointSizeF() : 10.0;
  setStyleSheet(on ? QStringLiteral("QWidget { font-size: %1pt; }").arg(base * kPresenterScale, 0, 'f', 1) : QString());
  tree_->setVisible(!on);
  showStepPane(true);
  if (!on) workbench_->setVisible(true);
  statusBar()->showMessage(on ? tr("Presenter mode: Page Down / Page Up step through the lesson, F6 switches between "
                                   "the step and the editor, F5 leaves")
                              : QString(),
                           on ? 8000 : 1);
}

void LessonWindow::showStepPane(bool stepPane) {
  if (!presenter_) {
    stepPane_->setVisible(true);
    workbench_->setVisible(true);
    return;
  }
  stepPane_->setVisible(stepPane);
  workbench_->setVisible(!stepPane);
}

bool LessonWindow::stepPaneShown() const { return !stepPane_->isHidden(); }

Status LessonWindow::exportAnimation(const QString& path) const {
  views::IterationOrderView* order = workbench_->iterationOrderView();
  if (!order->order()) {
    // The order is worked out only while its tab is shown: show it for the next try.
    workbench_->toolTabs()->setCurrentWidget(order);
    return Diagnostic{"the iteration order is not worked out yet", path.toStdString(), 0, 0,
                      "its tab is open now: export again once the animation shows"};
  }
  return order->exportAnimation(path);
}

}  // namespace tessel::studio
