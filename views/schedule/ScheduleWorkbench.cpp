// The schedule workbench: per-task documents, debounced background lowering, and the links
// between the editor and the lowered code.
#include "views/schedule/ScheduleWorkbench.h"

#include <QAction>
#include <QElapsedTimer>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextDocumentLayout>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTextDocument>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include "views/common/Theme.h"
#include "views/schedule/IterationOrderView.h"
#include "views/schedule/LoweringPanel.h"
#include "views/schedule/MeasurePanel.h"
#include "views/schedule/ScheduleDiff.h"
#include "views/schedule/ScheduleEditor.h"
#include "views/schedule/TaskListModel.h"

namespace tessel::views {

namespace {

constexpr int kTypingPauseMs = 300;

/// What one background lowering returns: the result or the diagnostic, and how long it took.
struct LoweringOutcome {
  std::shared_ptr<const driver::TaskLowering> lowering;
  std::optional<Diagnostic> error;
  QString text;
  double milliseconds = 0;
};

/// Two texts schedule alike when they differ only in trailing white space.
bool sameSchedule(const QString& a, const QString& b) {
  auto trimmedEnd = [](QString text) {
    while (!text.isEmpty() && text.back().isSpace()) text.chop(1);
    return text;
  };
  return trimmedEnd(a) == trimmedEnd(b);
}

QString describe(const Diagnostic& d) {
  QString where = d.line > 0 ? QObject::tr("Line %1, column %2: ").arg(d.line).arg(d.column) : QString();
  QString text = where + QString::fromStdString(d.message);
  if (!d.hint.empty()) text += QStringLiteral(" \u2014 ") + QString::fromStdString(d.hint);
  return text;
}

}  // namespace

struct ScheduleWorkbench::TaskState {
  driver::ScheduleTask task;
  QString name;
  /// The schedule the compiled model runs (a tuning record's, or the default): the text a task
  /// starts from, "edited" means different from it, and Reset puts it back.
  QString compiledText;
  QTextDocument* document = nullptr;
  std::shared_ptr<const driver::TaskLowering> lastGood;
  QString lastGoodText;
  std::optional<Diagnostic> diagnostic;
  double milliseconds = 0;
  bool lowered = false;
  /// The text when last seen: re-highlighting also signals contentsChanged, without an edit.
  QString seenText;
};

ScheduleWorkbench::ScheduleWorkbench(QWidget* parent)
    : QWidget(parent),
      taskModel_(new TaskListModel(this)),
      taskFilter_(new QSortFilterProxyModel(this)),
      taskView_(new QTableView),
      taskSearch_(new QLineEdit),
      taskTitle_(new QLabel),
      undoButton_(new QToolButton),
      redoButton_(new QToolButton),
      resetButton_(new QToolButton),
      editor_(new ScheduleEditor),
      message_(new QLabel),
      panel_(new LoweringPanel),
      toolTabs_(new QTabWidget),
      measure_(new MeasurePanel),
      diff_(new ScheduleDiffView),
      iterationOrder_(new IterationOrderView),
      debounce_(new QTimer(this)),
      emptyDocument_(new QTextDocument(this)) {
  setObjectName(QStringLiteral("scheduleWorkbench"));
  emptyDocument_->setDocumentLayout(new QPlainTextDocumentLayout(emptyDocument_));
  debounce_->setSingleShot(true);
  debounce_->setInterval(kTypingPauseMs);
  connect(debounce_, &QTimer::timeout, this, [this] {
    if (current_.isEmpty()) return;
    if (!loadingText_) emit scheduleEdited(current_, scheduleText(current_));
    startLowering(current_);
  });
  buildLayout();
  editor_->setScheduleDocument(emptyDocument_);
  editor_->setReadOnly(true);

  connect(editor_, &ScheduleEditor::cursorLineChanged, this, &ScheduleWorkbench::linkScheduleLine);
  connect(panel_, &LoweringPanel::loopPointedAt, this, &ScheduleWorkbench::linkLoop);
  connect(panel_, &LoweringPanel::codeWanted, this, &ScheduleWorkbench::lowerNow);
}

ScheduleWorkbench::~ScheduleWorkbench() {
  // Destroying the editor's highlighter touches the open document; nothing may react now.
  for (auto& s : tasks_) disconnect(s->document, nullptr, this, nullptr);
  jobs_.cancelAll();
  jobs_.waitForAll();
  // The tools run on jobs_, which dies before the child widgets: they go first.
  delete measure_;
  delete iterationOrder_;
}

void ScheduleWorkbench::buildLayout() {
  // Left: the tasks, filterable and sortable.
  taskFilter_->setSourceModel(taskModel_);
  taskFilter_->setFilterKeyColumn(-1);
  taskFilter_->setFilterCaseSensitivity(Qt::CaseInsensitive);
  taskFilter_->setSortRole(TaskListModel::SortRole);
  taskView_->setObjectName(QStringLiteral("taskList"));
  taskView_->setModel(taskFilter_);
  taskView_->setSelectionBehavior(QAbstractItemView::SelectRows);
  taskView_->setSelectionMode(QAbstractItemView::SingleSelection);
  taskView_->setSortingEnabled(true);
  taskView_->sortByColumn(-1, Qt::AscendingOrder);
  taskView_->verticalHeader()->hide();
  taskView_->verticalHeader()->setDefaultSectionSize(taskView_->fontMetrics().height() + 6);
  taskView_->horizontalHeader()->setStretchLastSection(true);
  taskView_->horizontalHeader()->setHighlightSections(false);
  taskView_->setAlternatingRowColors(true);
  taskView_->setWordWrap(false);
  taskView_->setShowGrid(false);
  taskView_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  taskView_->setColumnHidden(TaskListModel::Workload, true);
  taskSearch_->setPlaceholderText(tr("Filter tasks (name, operation)"));
  taskSearch_->setClearButtonEnabled(true);
  connect(taskSearch_, &QLineEdit::textChanged, taskFilter_, &QSortFilterProxyModel::setFilterFixedString);
  connect(taskView_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& index) {
            if (index.isValid()) openTask(index.data(TaskListModel::TaskNameRole).toString());
          });
  auto* left = new QWidget;
  auto* leftLayout = new QVBoxLayout(left);
  leftLayout->setContentsMargins(0, 0, 0, 0);
  leftLayout->setSpacing(2);
  auto* tasksTitle = new QLabel(tr("<b>Tasks</b>"));
  tasksTitle->setContentsMargins(6, 4, 6, 2);
  leftLayout->addWidget(tasksTitle);
  leftLayout->addWidget(taskSearch_);
  leftLayout->addWidget(taskView_);
  left->setMinimumWidth(240);

  // Middle: the editor with its title bar and message line.
  auto* middle = new QWidget;
  auto* middleLayout = new QVBoxLayout(middle);
  middleLayout->setContentsMargins(0, 0, 0, 0);
  middleLayout->setSpacing(0);
  auto* bar = new QHBoxLayout;
  bar->setContentsMargins(6, 3, 3, 3);
  taskTitle_->setObjectName(QStringLiteral("taskTitle"));
  taskTitle_->setTextFormat(Qt::RichText);
  taskTitle_->setText(tr("<i>No task open</i>"));
  // A long kernel name must not set the editor's minimum width; the tooltip has it all.
  taskTitle_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  bar->addWidget(taskTitle_, 1);
  auto setUpButton = [this, bar](QToolButton* button, const QString& text, const QString& tip,
                                 const QKeySequence& shortcut, auto slot) {
    auto* action = new QAction(text, this);
    action->setToolTip(shortcut.isEmpty() ? tip : tip + QStringLiteral(" (") + shortcut.toString(QKeySequence::NativeText) + ')');
    if (!shortcut.isEmpty()) {
      action->setShortcut(shortcut);
      action->setShortcutContext(Qt::WidgetWithChildrenShortcut);
      addAction(action);
    }
    connect(action, &QAction::triggered, this, slot);
    button->setDefaultAction(action);
    button->setAutoRaise(true);
    bar->addWidget(button);
  };
  // Undo/redo go to the editor's own shortcuts (Ctrl+Z, Ctrl+Shift+Z) when it has focus;
  // the buttons are for the mouse.
  setUpButton(undoButton_, tr("Undo"), tr("Undo the last edit of this task's schedule"), {}, &ScheduleWorkbench::undo);
  setUpButton(redoButton_, tr("Redo"), tr("Redo"), {}, &ScheduleWorkbench::redo);
  setUpButton(resetButton_, tr("Reset"), tr("Reset to the schedule the model was compiled with: the default, or a tuning record's (undoable)"),
              QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R), &ScheduleWorkbench::resetToDefault);
  middleLayout->addLayout(bar);
  middleLayout->addWidget(editor_, 1);
  message_->setObjectName(QStringLiteral("scheduleMessage"));
  message_->setWordWrap(true);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  message_->setContentsMargins(6, 3, 6, 3);
  message_->setMinimumHeight(message_->fontMetrics().height() * 2 + 6);
  message_->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  middleLayout->addWidget(message_);

  // Right: the lowered code over the task tools.
  toolTabs_->setObjectName(QStringLiteral("scheduleTools"));
  toolTabs_->setDocumentMode(true);
  measure_->setJobRunner(&jobs_);
  toolTabs_->addTab(measure_, tr("Measure"));
  iterationOrder_->setJobRunner(&jobs_);
  toolTabs_->addTab(iterationOrder_, tr("Iteration order"));
  diff_->setObjectName(QStringLiteral("scheduleDiff"));
  toolTabs_->addTab(diff_, tr("Diff vs default"));
  connect(toolTabs_, &QTabWidget::currentChanged, this, &ScheduleWorkbench::updateIterationOrder);
  auto* right = new QSplitter(Qt::Vertical);
  codeAndTools_ = right;
  right->addWidget(panel_);
  right->addWidget(toolTabs_);
  right->setStretchFactor(0, 3);
  right->setStretchFactor(1, 1);
  right->setChildrenCollapsible(false);

  auto* splitter = new QSplitter(Qt::Horizontal);
  splitter_ = splitter;
  splitter->addWidget(left);
  splitter->addWidget(middle);
  splitter->addWidget(right);
  splitter->setStretchFactor(0, 0);
  splitter->setStretchFactor(1, 2);
  splitter->setStretchFactor(2, 3);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(splitter);
}

void ScheduleWorkbench::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (sized_) return;
  sized_ = true;
  // The code is what the user watches while typing: it gets the largest share. The splitter
  // has its final width only once the layout ran, after this event.
  QTimer::singleShot(0, this, [this] {
    int width = std::max(splitter_->width(), 900);
    splitter_->setSizes({width * 18 / 100, width * 34 / 100, width * 48 / 100});
    int height = std::max(codeAndTools_->height(), 600);
    codeAndTools_->setSizes({height * 60 / 100, height * 40 / 100});
  });
}

// --- Tasks ----------------------------------------------------------------------------------------

void ScheduleWorkbench::setModel(std::shared_ptr<const driver::CompiledModel> model, const Target& target) {
  int generation = ++modelGeneration_;
  if (!model) {
    jobs_.cancel(QStringLiteral("tasks"));
    setTasks({});
    return;
  }
  using Tasks = Expected<std::vector<driver::ScheduleTask>>;
  jobs_.start<Tasks>(
      QStringLiteral("tasks"), tr("Finding schedule tasks"),
      [model, target](JobContext&) -> Tasks {
        try {
          return driver::extractTasks(*model, target);
        } catch (const std::exception& error) {
          return Diagnostic{std::string("internal compiler error: ") + error.what(), "", 0, 0, ""};
        }
      },
      [this, generation](Tasks tasks) {
        if (generation != modelGeneration_) return;
        if (!tasks) {
          emit failed(QString::fromStdString(tasks.error().toString()));
          return;
        }
        setTasks(std::move(*tasks));
      });
}

void ScheduleWorkbench::setModelSource(const QString& modelPath, const driver::LoadOptions& load,
                                       const driver::CompileOptions& compile) {
  measure_->setModelSource(modelPath, load, compile);
}

void ScheduleWorkbench::setTasks(std::vector<driver::ScheduleTask> tasks) {
  // Lowerings still running belong to the old tasks: their results are dropped on arrival.
  ++modelGeneration_;
  // Keep the documents (text and undo history) of tasks whose workload did not change.
  std::vector<std::unique_ptr<TaskState>> previous = std::move(tasks_);
  tasks_.clear();
  QString reopen = current_;
  current_.clear();
  debounce_->stop();
  editor_->setScheduleDocument(emptyDocument_);
  for (auto& task : tasks) {
    auto state = std::make_unique<TaskState>();
    state->name = QString::fromStdString(task.name);
    state->compiledText = QString::fromStdString(task.compiledTraceText());
    // A person's edits survive a recompile; an unedited task follows what the model now runs
    // (records applied or dropped), keeping its undo history when that did not change.
    for (auto& old : previous)
      if (old && old->name == state->name && old->task.workloadName == task.workloadName &&
          (old->compiledText == state->compiledText || !sameSchedule(old->document->toPlainText(), old->compiledText))) {
        state->document = old->document;
        old->document = nullptr;
      }
    if (!state->document) {
      state->document = new QTextDocument(this);
      state->document->setDocumentLayout(new QPlainTextDocumentLayout(state->document));
      state->document->setPlainText(state->compiledText);
      state->document->setModified(false);
      state->document->clearUndoRedoStacks();
    }
    state->task = std::move(task);
    state->seenText = state->document->toPlainText();
    QString name = state->name;
    connect(state->document, &QTextDocument::contentsChanged, this, [this, name] { onTextChanged(name); });
    tasks_.push_back(std::move(state));
  }
  for (auto& old : previous) {
    if (!old) continue;
    jobs_.cancel(QStringLiteral("lower:") + old->name);
    if (old->document) old->document->deleteLater();
  }
  std::vector<driver::ScheduleTask> rows;
  for (auto& state : tasks_) rows.push_back(state->task);
  taskModel_->setTasks(rows);
  for (auto& state : tasks_)
    taskModel_->setEdited(state->name, !sameSchedule(state->document->toPlainText(), state->compiledText));
  taskView_->resizeColumnsToContents();
  // Long fused-kernel names would push the other columns out of sight; the full name is in
  // the tooltip and the editor's title.
  taskView_->setColumnWidth(TaskListModel::Name, std::min(taskView_->columnWidth(TaskListModel::Name), 190));
  taskView_->setColumnWidth(TaskListModel::Operation, std::min(taskView_->columnWidth(TaskListModel::Operation), 150));
  if (!tasks_.empty()) {
    if (!openTask(reopen)) openTask(tasks_.front()->name);
  } else {
    updateTaskTitle();
    panel_->setLowering(nullptr, {});
    editor_->setLowering(nullptr);
    editor_->setReadOnly(true);
    message_->clear();
    updateDiff();
  }
  emit tasksReady();
}

ScheduleWorkbench::TaskState* ScheduleWorkbench::state(const QString& name) {
  for (auto& s : tasks_)
    if (s->name == name) return s.get();
  return nullptr;
}

const ScheduleWorkbench::TaskState* ScheduleWorkbench::state(const QString& name) const {
  for (auto& s : tasks_)
    if (s->name == name) return s.get();
  return nullptr;
}

QStringList ScheduleWorkbench::taskNames() const {
  QStringList names;
  for (auto& s : tasks_) names << s->name;
  return names;
}

QString ScheduleWorkbench::currentTaskName() const { return current_; }

const driver::ScheduleTask* ScheduleWorkbench::currentTask() const { return findTask(current_); }

const driver::ScheduleTask* ScheduleWorkbench::findTask(const QString& name) const {
  const TaskState* s = state(name);
  return s ? &s->task : nullptr;
}

std::vector<driver::ScheduleTask> ScheduleWorkbench::scheduleTasks() const {
  std::vector<driver::ScheduleTask> tasks;
  tasks.reserve(tasks_.size());
  for (const auto& state : tasks_) tasks.push_back(state->task);
  return tasks;
}

bool ScheduleWorkbench::openTask(const QString& name) {
  TaskState* s = state(name);
  if (!s) return false;
  if (name == current_) return true;
  // A pending edit of the task being left is lowered now, so its result is not lost.
  if (debounce_->isActive() && !current_.isEmpty()) {
    debounce_->stop();
    if (!loadingText_) emit scheduleEdited(current_, scheduleText(current_));
    startLowering(current_);
  }
  current_ = name;
  editor_->setReadOnly(false);
  editor_->setScheduleDocument(s->document);
  const driver::ScheduleTask& task = s->task;
  // The gutter marks what the text changed against the default schedule, and the diff tab
  // shows it line against line.
  editor_->setReferenceText(QString::fromStdString(task.defaultTraceText()));
  updateDiff();
  updateTaskTitle();
  int row = taskModel_->rowOf(name);
  QModelIndex index = taskFilter_->mapFromSource(taskModel_->index(row, 0));
  if (index.isValid() && taskView_->currentIndex().row() != index.row()) {
    QSignalBlocker block(taskView_->selectionModel());
    taskView_->setCurrentIndex(index);
    taskView_->selectRow(index.row());
  }
  measure_->setTask(name, task.workload, task.flops);
  measure_->setTraceText(s->document->toPlainText());
  showState(*s);
  updateIterationOrder();
  if (!s->lowered || !sameSchedule(s->lastGoodText, s->document->toPlainText()) || s->diagnostic) startLowering(name);
  emit taskOpened(name);
  return true;
}

void ScheduleWorkbench::updateTaskTitle() {
  const driver::ScheduleTask* task = currentTask();
  if (!task) {
    taskTitle_->setText(tr("<i>No task open</i>"));
    taskTitle_->setToolTip({});
    return;
  }
  QString muted = palette().color(QPalette::PlaceholderText).name();
  taskTitle_->setText(QStringLiteral("<b>%1</b>&nbsp;&nbsp;<span style='color:%2'>%3 &middot; %4 &middot; %5 GFLOP</span>")
                          .arg(QString::fromStdString(task->nodeName).toHtmlEscaped(), muted,
                               QString::fromStdString(task->op).toHtmlEscaped(),
                               QString::fromStdString(task->workloadName).toHtmlEscaped())
                          .arg(task->flops / 1e9, 0, 'g', 4));
  taskTitle_->setToolTip(QStringLiteral("%1\n%2 \u00b7 %3")
                             .arg(current_, QString::fromStdString(task->op), QString::fromStdString(task->workloadName)));
}

void ScheduleWorkbench::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  // Colours picked from the palette (title, message line) follow a theme switch.
  if (event->type() == QEvent::PaletteChange) {
    updateTaskTitle();
    if (const TaskState* s = state(current_)) showState(*s);
  }
}

bool ScheduleWorkbench::openTaskForNode(const QString& nodeName) {
  for (auto& s : tasks_)
    if (QString::fromStdString(s->task.nodeName) == nodeName) return openTask(s->name);
  return false;
}

// --- Text ---------------------------------------------------------------------------------------------

bool ScheduleWorkbench::setScheduleText(const QString& name, const QString& text) {
  TaskState* s = state(name);
  if (!s) return false;
  if (s->document->toPlainText() == text) return true;
  loadingText_ = true;
  QTextCursor cursor(s->document);
  cursor.beginEditBlock();
  cursor.select(QTextCursor::Document);
  cursor.insertText(text);
  cursor.endEditBlock();
  loadingText_ = false;
  // The edit came from the caller, not the user: lower it, but do not report it back.
  if (name == current_) {
    debounce_->stop();
    startLowering(name);
  }
  return true;
}

QString ScheduleWorkbench::scheduleText(const QString& name) const {
  const TaskState* s = state(name);
  return s ? s->document->toPlainText() : QString();
}

std::map<QString, QString> ScheduleWorkbench::editedSchedules() const {
  std::map<QString, QString> edited;
  for (auto& s : tasks_) {
    QString text = s->document->toPlainText();
    if (!sameSchedule(text, s->compiledText)) edited[s->name] = text;
  }
  return edited;
}

std::shared_ptr<const driver::TaskLowering> ScheduleWorkbench::currentLowering() const {
  const TaskState* s = state(current_);
  return s ? s->lastGood : nullptr;
}

void ScheduleWorkbench::onTextChanged(const QString& name) {
  TaskState* s = state(name);
  if (!s) return;
  QString text = s->document->toPlainText();
  if (text == s->seenText) return;
  s->seenText = text;
  taskModel_->setEdited(name, !sameSchedule(text, s->compiledText));
  undoButton_->setEnabled(current_.isEmpty() ? false : state(current_)->document->isUndoAvailable());
  redoButton_->setEnabled(current_.isEmpty() ? false : state(current_)->document->isRedoAvailable());
  if (name == current_) updateDiff();
  if (loadingText_) return;
  if (name == current_) {
    debounce_->start();
  } else {
    emit scheduleEdited(name, s->document->toPlainText());
  }
}

void ScheduleWorkbench::updateDiff() {
  const TaskState* s = state(current_);
  if (!s) {
    diff_->setTexts(tr("Default schedule"), {}, {});
    return;
  }
  diff_->setTexts(tr("Default schedule"), QString::fromStdString(s->task.defaultTraceText()), s->document->toPlainText());
}

void ScheduleWorkbench::showDiffAgainstDefault() { toolTabs_->setCurrentWidget(diff_); }

void ScheduleWorkbench::resetToDefault() {
  TaskState* s = state(current_);
  if (!s || s->document->toPlainText() == s->compiledText) return;
  QTextCursor cursor(s->document);
  cursor.beginEditBlock();
  cursor.select(QTextCursor::Document);
  cursor.insertText(s->compiledText);
  cursor.endEditBlock();
}

void ScheduleWorkbench::undo() {
  if (TaskState* s = state(current_)) s->document->undo();
}

void ScheduleWorkbench::redo() {
  if (TaskState* s = state(current_)) s->document->redo();
}

void ScheduleWorkbench::addToolTab(QWidget* tool, const QString& title) {
  for (int i = 0; i < toolTabs_->count(); ++i)
    if (toolTabs_->tabText(i) == title) {
      QWidget* placeholder = toolTabs_->widget(i);
      toolTabs_->removeTab(i);
      placeholder->deleteLater();
      toolTabs_->insertTab(i, tool, title);
      return;
    }
  toolTabs_->addTab(tool, title);
}

// --- Lowering ---------------------------------------------------------------------------------------

void ScheduleWorkbench::lowerNow() {
  debounce_->stop();
  if (!current_.isEmpty()) startLowering(current_);
}

void ScheduleWorkbench::startLowering(const QString& name) {
  TaskState* s = state(name);
  if (!s) return;
  driver::TaskLoweringOptions options;
  options.llvmIR = name == current_ && panel_->wantsLlvmIR();
  options.assembly = name == current_ && panel_->wantsAssembly();
  if (name == current_) options.gpuTarget = panel_->wantsGpuCode();
  QString text = s->document->toPlainText();
  if (name == current_) measure_->setTraceText(text);
  driver::ScheduleTask task = s->task;
  int generation = modelGeneration_;
  jobs_.start<LoweringOutcome>(
      QStringLiteral("lower:") + name, tr("Lowering %1").arg(name),
      [task = std::move(task), text, options](JobContext&) {
        LoweringOutcome outcome;
        outcome.text = text;
        QElapsedTimer timer;
        timer.start();
        try {
          auto lowered = driver::lowerTaskSchedule(task, text.toStdString(), options);
          if (lowered) outcome.lowering = std::make_shared<const driver::TaskLowering>(std::move(*lowered));
          else outcome.error = lowered.error();
        } catch (const std::exception& error) {
          // A compiler bug must not take the Studio down; it is reported like a user error.
          outcome.error = Diagnostic{std::string("internal compiler error: ") + error.what(), "", 0, 0,
                                     "please report this schedule with the model"};
        }
        outcome.milliseconds = double(timer.nsecsElapsed()) / 1e6;
        return outcome;
      },
      [this, name, generation](LoweringOutcome outcome) {
        TaskState* s = state(name);
        if (!s || generation != modelGeneration_) return;
        s->lowered = true;
        s->milliseconds = outcome.milliseconds;
        s->diagnostic = outcome.error;
        if (outcome.lowering) {
          // Code emitted for the same text while another tab was shown stays, so switching
          // between the LLVM IR and assembly tabs re-emits nothing.
          if (s->lastGood && s->lastGoodText == outcome.text &&
              ((!outcome.lowering->llvmIR && s->lastGood->llvmIR) ||
               (!outcome.lowering->assembly && s->lastGood->assembly))) {
            auto merged = std::make_shared<driver::TaskLowering>(*outcome.lowering);
            if (!merged->llvmIR) merged->llvmIR = s->lastGood->llvmIR;
            if (!merged->assembly) merged->assembly = s->lastGood->assembly;
            outcome.lowering = std::move(merged);
          }
          s->lastGood = outcome.lowering;
          s->lastGoodText = outcome.text;
        }
        if (name == current_) showState(*s);
        emit loweringFinished(name, !outcome.error);
        if (name == current_ && outcome.lowering) {
          updateIterationOrder();
          emit currentScheduleChanged(s->task, outcome.text);
        }
      });
}

void ScheduleWorkbench::updateIterationOrder() {
  // Interpreting a loop nest costs as much as lowering it: only while the animation is seen.
  if (toolTabs_->currentWidget() != iterationOrder_) return;
  const TaskState* s = state(current_);
  if (!s || !s->lastGood || s->lastGood == iterationOrderShown_.lock()) return;
  iterationOrderShown_ = s->lastGood;
  iterationOrder_->setLoweredFunction(s->lastGood->function);
}

void ScheduleWorkbench::showState(const TaskState& s) {
  editor_->setLowering(s.lastGood);
  editor_->setDiagnostic(s.diagnostic);
  panel_->setLowering(s.lastGood, s.name);
  panel_->setStale(s.diagnostic.has_value() && s.lastGood != nullptr);
  ThemeColors colors = themeColors(palette());
  QPalette messagePalette = message_->palette();
  if (s.diagnostic) {
    message_->setText(describe(*s.diagnostic));
    messagePalette.setColor(QPalette::WindowText, colors.error);
  } else if (s.lowered) {
    message_->setText(tr("Lowered in %1 ms").arg(s.milliseconds, 0, 'f', 1));
    messagePalette.setColor(QPalette::WindowText, palette().color(QPalette::PlaceholderText));
  } else {
    message_->setText(tr("Lowering\u2026"));
    messagePalette.setColor(QPalette::WindowText, palette().color(QPalette::PlaceholderText));
  }
  message_->setPalette(messagePalette);
  undoButton_->setEnabled(s.document->isUndoAvailable());
  redoButton_->setEnabled(s.document->isRedoAvailable());
  linkScheduleLine(editor_->cursorLine());
}

// --- Linking --------------------------------------------------------------------------------------------

bool ScheduleWorkbench::codeMatchesText() const {
  // Links are by line number: they hold only while the code shown came from the text shown.
  const TaskState* s = state(current_);
  return s && s->lastGood && !s->diagnostic && s->lastGoodText == s->document->toPlainText();
}

void ScheduleWorkbench::linkScheduleLine(int line) {
  panel_->highlightLoops(codeMatchesText() ? panel_->linking().loopsOfLine(line) : QStringList{});
}

void ScheduleWorkbench::linkLoop(const QString& loop) {
  int line = loop.isEmpty() || !codeMatchesText() ? 0 : panel_->linking().originLine(loop);
  editor_->setLinkedLines(line > 0 ? QList<int>{line} : QList<int>{});
}

}  // namespace tessel::views
