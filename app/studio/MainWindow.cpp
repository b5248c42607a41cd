// MainWindow: wires the model session, the views, the docks and the background jobs.
#include "app/studio/MainWindow.h"

#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QHeaderView>
#include <QMimeData>
#include <QTableView>
#include <QSettings>
#include <QShortcut>
#include <QStackedWidget>
#include <QStatusBar>
#include <QStyle>
#include <QToolBar>
#include <QToolButton>

#include "app/project/ProjectOptions.h"
#include "app/project/ProjectRunner.h"
#include "app/studio/ModeBar.h"
#include "app/studio/ShortcutsDialog.h"
#include "app/studio/StudioIcons.h"
#include "app/studio/WelcomePage.h"
#include "views/common/DiagnosticsPanel.h"
#include "views/common/ImageExport.h"
#include "views/common/JobStatusWidget.h"
#include "views/graph/GraphView.h"
#include "views/graph/GraphWorkbench.h"
#include "views/graph/NodePropertiesPanel.h"
#include "views/schedule/MeasureHistory.h"
#include "views/schedule/MeasureHistoryModel.h"
#include "views/schedule/MeasurePanel.h"
#include "views/schedule/ScheduleWorkbench.h"
#include "views/schedule/TaskListModel.h"
#include "views/timeline/PassOptionsPanel.h"
#include "views/timeline/TimelineWorkbench.h"

namespace tessel::studio {

namespace {

const QString kExportChannel = QStringLiteral("export");
const QString kInputsChannel = QStringLiteral("inputs");
constexpr int kStatusMessageMs = 8000;

int indexOf(StudioView view) { return static_cast<int>(view); }

bool isOpenable(const QString& path) {
  QString suffix = QFileInfo(path).suffix().toLower();
  return suffix == "onnx" || suffix == "tessel";
}

QString describeException(const std::exception& error) {
  return QObject::tr("internal compiler error (please report): %1").arg(error.what());
}

/// What Run Project found, for the log.
struct ProjectRunOutcome {
  enum Kind { Passed, CheckFailed, Error } kind = Error;
  QString text;  ///< The report's lines, or the diagnostic.
};

}  // namespace

QString studioViewName(StudioView view) {
  switch (view) {
    case StudioView::Graph:
      return QStringLiteral("graph");
    case StudioView::Timeline:
      return QStringLiteral("timeline");
    case StudioView::Schedule:
      return QStringLiteral("schedule");
  }
  return {};
}

bool parseStudioView(const QString& name, StudioView* view) {
  for (StudioView candidate : {StudioView::Graph, StudioView::Timeline, StudioView::Schedule}) {
    if (name.compare(studioViewName(candidate), Qt::CaseInsensitive) == 0) {
      *view = candidate;
      return true;
    }
  }
  return false;
}

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setObjectName("TesselStudioMainWindow");
  setAcceptDrops(true);
  setDockOptions(AnimatedDocks | AllowTabbedDocks | AllowNestedDocks);
  setDocumentMode(true);
  projects_ = new ProjectController(this, this);
  records_ = new TuningRecordsController(this, this);
  inputShapesPrompt_ = [this](const QString& modelPath, const std::vector<frontend::OnnxInputInfo>& inputs,
                              const InputShapes& proposed) -> std::optional<InputShapes> {
    InputShapesDialog dialog(modelPath, inputs, proposed, this);
    if (dialog.exec() != QDialog::Accepted) return std::nullopt;
    return dialog.shapes();
  };
  jobList_.watch(&jobs_, tr("Studio"));
  jobList_.watch(&session_.jobs(), tr("Compiler"));
  jobList_.watch(&records_->jobs(), tr("Tuning records"));

  createViews();
  createDocks();
  createActions();
  createToolBar();
  createStatusBar();
  connectSession();
  restoreSettings();
  // The remembered theme (light the first time).
  setTheme(theme_);
  updateTitle();
}

MainWindow::~MainWindow() {
  // Jobs deliver into this window; stop them before its members go.
  jobs_.cancelAll();
  session_.cancel();
}

void MainWindow::createViews() {
  // The mode bar sits in a fixed tool bar on the left edge, outside the dock areas, so a
  // left dock (the task list) opens between it and the view, as in Qt Creator.
  modeBar_ = new ModeBar;
  auto* modeHost = new QToolBar(tr("Modes"));
  modeHost->setObjectName("ModeBarHost");
  modeHost->setMovable(false);
  modeHost->setFloatable(false);
  modeHost->toggleViewAction()->setVisible(false);
  modeHost->addWidget(modeBar_);
  addToolBar(Qt::LeftToolBarArea, modeHost);
  central_ = new QStackedWidget;
  setCentralWidget(central_);
  welcome_ = new WelcomePage;

  graph_ = new views::GraphWorkbench;
  ViewSlot& graphSlot = views_[indexOf(StudioView::Graph)];
  graphSlot.widget = graph_;
  graphSlot.fit = [this] { graph_->view()->fitToView(); };
  graphSlot.zoomIn = [this] { graph_->view()->zoomIn(); };
  graphSlot.zoomOut = [this] { graph_->view()->zoomOut(); };
  graphSlot.find = [this] { graph_->showFindBar(); };
  jobList_.watch(&graph_->jobs(), tr("Graph"));
  // Edit > Find (Ctrl+F, application-wide) routes to the workbench's find bar. Its own Ctrl+F
  // shortcut would make the key ambiguous while the graph has focus (Qt then fires neither).
  for (QShortcut* shortcut : graph_->findChildren<QShortcut*>())
    if (shortcut->key() == QKeySequence(QKeySequence::Find)) shortcut->setEnabled(false);
  connect(graph_, &views::GraphWorkbench::layoutFailed, this,
          [this](const QString& message) { diagnostics_.add(views::Severity::Error, tr("Layout"), message); });
  // Double-clicking an operation opens the schedule of the kernel computing it.
  connect(graph_, &views::GraphWorkbench::nodeActivated, this, [this](const QString& id) {
    setCurrentView(StudioView::Schedule);
    if (!schedule_->openTaskForNode(id))
      statusBar()->showMessage(tr("%1 has no schedule of its own (inputs, outputs and copies have none)").arg(id),
                               kStatusMessageMs);
  });
  timeline_ = new views::TimelineWorkbench;
  ViewSlot& timelineSlot = views_[indexOf(StudioView::Timeline)];
  timelineSlot.widget = timeline_;
  timelineSlot.fit = [this] { timeline_->stepView()->fitToView(); };
  timelineSlot.zoomIn = [this] { timeline_->stepView()->zoomIn(); };
  timelineSlot.zoomOut = [this] { timeline_->stepView()->zoomOut(); };
  jobList_.watch(&timeline_->jobs(), tr("Timeline"));
  connect(timeline_, &views::TimelineWorkbench::failed, this,
          [this](const QString& message) { diagnostics_.add(views::Severity::Error, tr("Timeline"), message); });
  // The properties dock follows the selection in the timeline's graphs too.
  connect(timeline_, &views::TimelineWorkbench::nodeSelected, this,
          [this](std::shared_ptr<const graph::Graph> owner, const QString& id) {
            if (!owner || id.isEmpty()) return;
            std::string name = id.toStdString();
            for (const graph::GraphNode* node : owner->topologicalOrder()) {
              if (node->name == name) {
                graph_->propertiesPanel()->setNode(owner, node);
                return;
              }
            }
          });
  connect(timeline_, &views::TimelineWorkbench::nodeActivated, this,
          [this](std::shared_ptr<const graph::Graph>, const QString& id) {
            // Only operations of the final graph have kernels; earlier steps' nodes may not.
            if (schedule_->openTaskForNode(id))
              setCurrentView(StudioView::Schedule);
            else
              statusBar()->showMessage(tr("%1 is not a kernel of the compiled model").arg(id), kStatusMessageMs);
          });
  schedule_ = new views::ScheduleWorkbench;
  views_[indexOf(StudioView::Schedule)].widget = schedule_;
  jobList_.watch(&schedule_->jobs(), tr("Schedule"));
  // Its measure panel runs on the workbench's runner, so measuring shows up here too.
  connect(schedule_, &views::ScheduleWorkbench::failed, this,
          [this](const QString& message) { diagnostics_.add(views::Severity::Error, tr("Schedule"), message); });
  connect(schedule_, &views::ScheduleWorkbench::tasksReady, this, [this] {
    // A project's saved schedules go into the editor once its tasks exist (as undoable
    // edits, so the user can step back to the defaults).
    if (!applyProjectSchedules_) return;
    applyProjectSchedules_ = false;
    if (const project::Project* project = projects_->project()) {
      for (const driver::ScheduleEdit& edit : project->tasks) {
        if (!schedule_->setScheduleText(QString::fromStdString(edit.task), QString::fromStdString(edit.trace)))
          diagnostics_.add(views::Severity::Warning, tr("Project"),
                           tr("The project's schedule for task %1 matches no kernel of the model")
                               .arg(QString::fromStdString(edit.task)));
      }
    }
  });
  connect(schedule_, &views::ScheduleWorkbench::scheduleEdited, this, [this](const QString& name, const QString& text) {
    // The project remembers the edit (and forgets it once the text is back to what the model
    // was compiled with: the default, or for a tuned kernel the record's schedule, which an
    // edit equal to the default must then override).
    const driver::ScheduleTask* task = schedule_->findTask(name);
    if (!task) return;
    if (text.trimmed() == QString::fromStdString(task->compiledTraceText()).trimmed())
      projects_->removeScheduleEdit(name);
    else
      projects_->setScheduleEdit(driver::ScheduleEdit{task->name, task->workloadName, text.toStdString()});
  });
  // Measured variants belong to the project, so a reopened project shows which edit helped.
  if (views::MeasureHistory* history = schedule_->measurePanel() ? schedule_->measurePanel()->history() : nullptr) {
    auto keep = [this, history] {
      if (!restoringMeasurements_) projects_->setMeasurements(history->toJson());
    };
    connect(history, &views::MeasureHistory::variantAdded, this, keep);
    connect(history, &views::MeasureHistory::historyReset, this, keep);
  }
  for (const ViewSlot& slot : views_) central_->addWidget(slot.widget);
  // Until a model is open the central area welcomes instead (the last page).
  central_->addWidget(welcome_);
  connect(welcome_, &WelcomePage::openRequested, this, [this] { studioAction("actionOpen")->trigger(); });
  connect(welcome_, &WelcomePage::recentFileRequested, this, &MainWindow::openFile);

  modeBar_->addMode({}, tr("Graph"), tr("The model's graph (Ctrl+1)"));
  modeBar_->addMode({}, tr("Timeline"), tr("The graph after every pass, compared (Ctrl+2)"));
  modeBar_->addMode({}, tr("Schedule"), tr("Each kernel's schedule, lowered code and speed (Ctrl+3)"));
  connect(modeBar_, &ModeBar::modeSelected, this, [this](int mode) { setCurrentView(static_cast<StudioView>(mode)); });
}

void MainWindow::createDocks() {
  auto makeDock = [this](const QString& title, const QString& objectName, QWidget* content) {
    auto* dock = new QDockWidget(title, this);
    dock->setObjectName(objectName);
    dock->setWidget(content);
    dock->setFeatures(QDockWidget::DockWidgetClosable | QDockWidget::DockWidgetMovable |
                      QDockWidget::DockWidgetFloatable);
    return dock;
  };
  propertiesDock_ = makeDock(tr("Properties"), "PropertiesDock", graph_->propertiesPanel());
  // The timeline's options panel, moved into a dock (setWidget reparents it).
  passOptionsDock_ = makeDock(tr("Pass Options"), "PassOptionsDock", timeline_->optionsPanel());
  connect(timeline_, &views::TimelineWorkbench::optionsChanged, this, [this](const graph::PassOptions& passes) {
    if (session_.modelPath().isEmpty()) return;
    driver::CompileOptions options = session_.compileOptions();
    options.passes = passes;
    diagnostics_.add(views::Severity::Note, tr("Compile"), tr("Recompiling with opt level %1").arg(passes.optLevel));
    projects_->setPassOptions(options.passes);
    session_.recompile(options);
  });
  // Every kernel of the model (the schedule workbench's own task model, shown again):
  // double-click opens its schedule, from whichever view the user is in.
  auto* tasks = new QTableView;
  tasks->setObjectName("TaskOverview");
  tasks->setModel(schedule_->taskModel());
  tasks->setSelectionBehavior(QAbstractItemView::SelectRows);
  tasks->setSelectionMode(QAbstractItemView::SingleSelection);
  tasks->setEditTriggers(QAbstractItemView::NoEditTriggers);
  tasks->setAlternatingRowColors(true);
  tasks->verticalHeader()->hide();
  tasks->horizontalHeader()->setStretchLastSection(true);
  tasks->setWordWrap(false);
  connect(tasks, &QTableView::activated, this, [this](const QModelIndex& index) {
    QString task = index.data(views::TaskListModel::TaskNameRole).toString();
    setCurrentView(StudioView::Schedule);
    schedule_->openTask(task);
  });
  tasksDock_ = makeDock(tr("Tasks"), "TasksDock", tasks);
  // The open task's measured variants (the measure panel's history), to keep in sight while
  // the workbench shows the iteration order.
  auto* measurements = new QTableView;
  measurements->setObjectName("MeasurementsTable");
  if (views::MeasurePanel* panel = schedule_->measurePanel()) measurements->setModel(panel->historyModel());
  measurements->setEditTriggers(QAbstractItemView::NoEditTriggers);
  measurements->setAlternatingRowColors(true);
  measurements->verticalHeader()->hide();
  measurements->horizontalHeader()->setStretchLastSection(true);
  measurementsDock_ = makeDock(tr("Measurements"), "MeasurementsDock", measurements);
  diagnosticsDock_ = makeDock(tr("Diagnostics"), "DiagnosticsDock", new views::DiagnosticsPanel(&diagnostics_));
  applyDefaultLayout(StudioView::Graph);
}

QAction* MainWindow::addStudioAction(QMenu* menu, const QString& objectName, const QString& text,
                                     const QKeySequence& shortcut, std::function<void()> trigger) {
  auto* action = new QAction(text, this);
  action->setObjectName(objectName);
  if (!shortcut.isEmpty()) action->setShortcut(shortcut);
  // Shortcuts work while focus is in a dock or a floating panel too.
  action->setShortcutContext(Qt::ApplicationShortcut);
  connect(action, &QAction::triggered, this, [trigger = std::move(trigger)] { trigger(); });
  if (menu) menu->addAction(action);
  actions_ << action;
  return action;
}

void MainWindow::createActions() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  addStudioAction(file, "actionOpen", tr("&Open Model or Project..."), QKeySequence::Open, [this] {
    QString path = QFileDialog::getOpenFileName(this, tr("Open model or project"), QFileInfo(currentFile_).path(),
                                                tr("Models and projects (*.onnx *.tessel);;ONNX models (*.onnx);;"
                                                   "Tessel projects (*.tessel);;All files (*)"));
    if (!path.isEmpty()) openFile(path);
  });
  recentMenu_ = file->addMenu(tr("Open &Recent"));
  connect(&recent_, &RecentFiles::changed, this, &MainWindow::rebuildRecentMenu);
  rebuildRecentMenu();
  file->addSeparator();
  addStudioAction(file, "actionSave", tr("&Save Project"), QKeySequence::Save, [this] {
    if (projects_->save()) recent_.add(projects_->path());
  });
  addStudioAction(file, "actionSaveAs", tr("Save Project &As..."), QKeySequence::SaveAs, [this] {
    if (projects_->saveAs()) recent_.add(projects_->path());
  });
  file->addSeparator();
  addStudioAction(file, "actionApplyTuningRecords", tr("Apply &Tuning Records..."), {}, [this] {
    QString path = QFileDialog::getOpenFileName(this, tr("Apply tuning records"), QFileInfo(currentFile_).path(),
                                                tr("Tuning records (*.jsonl *.json);;All files (*)"));
    if (!path.isEmpty()) applyTuningRecords(path);
  });
  addStudioAction(file, "actionStopTuningRecords", tr("Stop Applying Tuning Records"), {},
                  [this] { stopApplyingTuningRecords(); });
  file->addSeparator();
  addStudioAction(file, "actionExportModule", tr("Export &Deployable Module..."), QKeySequence(tr("Ctrl+E")), [this] {
    QString directory = QFileDialog::getExistingDirectory(this, tr("Export deployable module into"));
    if (!directory.isEmpty()) exportModule(directory);
  });
  addStudioAction(file, "actionExportView", tr("Export &View as Image..."), QKeySequence(tr("Ctrl+Shift+E")), [this] {
    QString suggested = QFileInfo(currentFile_).completeBaseName() + "-" + studioViewName(currentView_) + ".png";
    QString path = QFileDialog::getSaveFileName(this, tr("Export view"), suggested,
                                                tr("PNG image (*.png);;SVG drawing (*.svg)"));
    if (!path.isEmpty()) exportCurrentView(path);
  });
  file->addSeparator();
  addStudioAction(file, "actionQuit", tr("&Quit"), QKeySequence(tr("Ctrl+Q")), [this] { close(); });

  QMenu* edit = menuBar()->addMenu(tr("&Edit"));
  addStudioAction(edit, "actionFind", tr("&Find..."), QKeySequence::Find, [this] {
    if (auto& find = views_[indexOf(currentView_)].find) find();
  });

  QMenu* view = menuBar()->addMenu(tr("&View"));
  auto* viewGroup = new QActionGroup(this);
  const std::array<std::pair<StudioView, QString>, 3> modes = {
      {{StudioView::Graph, tr("&Graph")}, {StudioView::Timeline, tr("Pass &Timeline")},
       {StudioView::Schedule, tr("&Schedule Editor")}}};
  for (const auto& [mode, text] : modes) {
    QString name = studioViewName(mode);
    name[0] = name[0].toUpper();
    QAction* action = addStudioAction(view, "actionView" + name, text,
                                      QKeySequence(QStringLiteral("Ctrl+%1").arg(indexOf(mode) + 1)),
                                      [this, mode] { setCurrentView(mode); });
    action->setCheckable(true);
    action->setChecked(mode == currentView_);
    viewGroup->addAction(action);
  }
  view->addSeparator();
  addStudioAction(view, "actionFit", tr("&Fit to Window"), QKeySequence(tr("Ctrl+0")), [this] {
    if (auto& fit = views_[indexOf(currentView_)].fit) fit();
  });
  addStudioAction(view, "actionZoomIn", tr("Zoom &In"), QKeySequence::ZoomIn, [this] {
    if (auto& zoom = views_[indexOf(currentView_)].zoomIn) zoom();
  });
  addStudioAction(view, "actionZoomOut", tr("Zoom &Out"), QKeySequence::ZoomOut, [this] {
    if (auto& zoom = views_[indexOf(currentView_)].zoomOut) zoom();
  });
  view->addSeparator();
  QMenu* panels = view->addMenu(tr("&Panels"));
  for (QDockWidget* dock : {propertiesDock_, passOptionsDock_, tasksDock_, measurementsDock_, diagnosticsDock_})
    panels->addAction(dock->toggleViewAction());
  diagnosticsDock_->toggleViewAction()->setShortcut(QKeySequence(tr("Ctrl+Shift+D")));
  actions_ << diagnosticsDock_->toggleViewAction();
  QMenu* themes = view->addMenu(tr("&Theme"));
  auto* themeGroup = new QActionGroup(this);
  QAction* light = addStudioAction(themes, "actionThemeLight", tr("&Light"), {}, [this] { setTheme(views::Theme::Light); });
  QAction* dark = addStudioAction(themes, "actionThemeDark", tr("&Dark"), {}, [this] { setTheme(views::Theme::Dark); });
  for (QAction* action : {light, dark}) {
    action->setCheckable(true);
    themeGroup->addAction(action);
  }
  addStudioAction(themes, "actionToggleTheme", tr("&Switch Light/Dark"), QKeySequence(tr("Ctrl+Shift+T")), [this] {
    setTheme(theme_ == views::Theme::Dark ? views::Theme::Light : views::Theme::Dark);
  });
  addStudioAction(view, "actionResetLayout", tr("&Reset Layout"), {}, [this] { resetLayout(); });

  QMenu* build = menuBar()->addMenu(tr("&Build"));
  addStudioAction(build, "actionRecompile", tr("&Recompile"), QKeySequence(tr("Ctrl+B")), [this] {
    if (!session_.modelPath().isEmpty()) session_.recompile(session_.compileOptions());
  });
  addStudioAction(build, "actionInputShapes", tr("&Input Shapes..."), QKeySequence(tr("Ctrl+Shift+I")),
                  [this] { editInputShapes(); });
  addStudioAction(build, "actionMeasure", tr("&Measure Task"), QKeySequence(tr("F5")), [this] {
    // Times the open task's current schedule (the measure panel's job, with progress and cancel).
    setCurrentView(StudioView::Schedule);
    if (schedule_->currentTask() && schedule_->measurePanel()) schedule_->measurePanel()->measure();
  });
  addStudioAction(build, "actionRunProject", tr("Run &Project"), QKeySequence(tr("Ctrl+R")), [this] { runProject(); });
  addStudioAction(build, "actionCancelJobs", tr("&Cancel Background Jobs"), QKeySequence(tr("Shift+F5")),
                  [this] { jobList_.cancelAll(); });

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  addStudioAction(help, "actionShortcuts", tr("&Keyboard Shortcuts"), QKeySequence(tr("Ctrl+/")), [this] {
    ShortcutsDialog dialog(actions_, this);
    dialog.exec();
  });
  addStudioAction(help, "actionAbout", tr("&About Tessel Studio"), {}, [this] {
    QMessageBox::about(this, tr("About Tessel Studio"),
                       tr("<h3>Tessel Studio</h3><p>See, compare, edit and measure a model's graph, its "
                          "optimization passes and every operator's schedule.</p><p>Part of Tessel, a deep "
                          "learning compiler in the spirit of TVM and Halide.</p>"));
  });
}

void MainWindow::createToolBar() {
  QToolBar* bar = addToolBar(tr("Main"));
  bar->setObjectName("MainToolBar");
  bar->setMovable(false);
  bar->setIconSize(QSize(18, 18));
  for (const char* name : std::initializer_list<const char*>{"actionOpen", "actionSave", nullptr, "actionFit", "actionZoomIn", "actionZoomOut", nullptr,
                           "actionExportView", "actionExportModule", nullptr, "actionToggleTheme"}) {
    if (!name)
      bar->addSeparator();
    else
      bar->addAction(studioAction(name));
  }
  refreshIcons();
}

void MainWindow::createStatusBar() {
  modelInfo_ = new QLabel;
  modelInfo_->setObjectName("ModelInfo");
  errorBadge_ = new QToolButton;
  errorBadge_->setObjectName("ErrorBadge");
  errorBadge_->setAutoRaise(true);
  errorBadge_->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  errorBadge_->setIcon(style()->standardIcon(QStyle::SP_MessageBoxCritical));
  errorBadge_->setToolTip(tr("Show the diagnostics log"));
  errorBadge_->hide();
  auto* jobsWidget = new views::JobStatusWidget(&jobList_);
  jobsWidget->setObjectName("JobStatus");
  statusBar()->addPermanentWidget(jobsWidget);
  statusBar()->addPermanentWidget(modelInfo_);
  statusBar()->addPermanentWidget(errorBadge_);
  connect(errorBadge_, &QToolButton::clicked, this, [this] {
    diagnosticsDock_->show();
    diagnosticsDock_->raise();
  });
  connect(&diagnostics_, &views::DiagnosticsModel::entryAdded, this, [this](const views::DiagnosticEntry& entry) {
    int errors = diagnostics_.errorCount();
    errorBadge_->setVisible(errors > 0);
    errorBadge_->setText(QString::number(errors));
    if (entry.severity == views::Severity::Error) {
      // The first line in the status bar, all of it in the log, which comes forward.
      statusBar()->showMessage(entry.message.section('\n', 0, 0), kStatusMessageMs);
      diagnosticsDock_->show();
      diagnosticsDock_->raise();
    }
  });
  connect(&diagnostics_, &QAbstractItemModel::modelReset, errorBadge_, &QWidget::hide);
  // A background job that threw is a bug; the window keeps going and says so.
  connect(&jobList_, &views::JobListModel::jobFailed, this,
          [this](const QString& owner, const QString& title, const QString& message) {
            reportFailure(owner.isEmpty() ? tr("Studio") : owner,
                          tr("%1 stopped with an internal error (please report it): %2").arg(title, message));
          });
  statusBar()->showMessage(tr("Ready"));
}

void MainWindow::connectSession() {
  connect(projects_, &ProjectController::diagnostic, this,
          [this](views::Severity severity, const QString& source, const QString& message) {
            diagnostics_.add(severity, source, message);
          });
  connect(records_, &TuningRecordsController::diagnostic, this,
          [this](views::Severity severity, const QString& source, const QString& message) {
            diagnostics_.add(severity, source, message);
          });
  connect(projects_, &ProjectController::modifiedChanged, this, [this] {
    updateTitle();
    updateActions();
  });
  connect(projects_, &ProjectController::pathChanged, this, [this](const QString& path) {
    if (!path.isEmpty()) currentFile_ = path;
    updateTitle();
  });
  connect(&session_, &views::ModelSession::compiled, this, &MainWindow::modelCompiled);
  connect(&session_, &views::ModelSession::failed, this, [this](const QString& message, const QString& path) {
    reportFailure(tr("Compile"), message);
    if (path == pendingFile_) {
      // The session still holds the model that worked, and the views still show it.
      QString file = pendingProject_ && !pendingProject_->isUntitled() ? QString::fromStdString(pendingProject_->path()) : path;
      pendingFile_.clear();
      pendingProject_.reset();
      if (session_.compiledModel())
        diagnostics_.add(views::Severity::Note, tr("Open"),
                         tr("Keeping %1").arg(QFileInfo(session_.modelPath()).fileName()));
      emit openFailed(file, message);
    }
  });
}

void MainWindow::openFile(const QString& path) {
  QFileInfo info(path);
  if (!info.exists()) {
    reportFailure(tr("Open"), tr("%1: no such file").arg(path));
    recent_.remove(path);
    emit openFailed(path, tr("%1: no such file").arg(path));
    return;
  }
  // Unsaved changes of the open project are settled first (or the open is cancelled).
  if (!projects_->confirmClose()) return;
  if (info.suffix().compare("tessel", Qt::CaseInsensitive) == 0) {
    auto document = projects_->load(info.absoluteFilePath());
    if (!document) {
      QString message = QString::fromStdString(document.error().toString());
      reportFailure(tr("Open"), message);
      emit openFailed(path, message);
      return;
    }
    openProjectDocument(std::move(*document));
    return;
  }
  // The same model edited untitled in a session that ended without saving: offer that work.
  if (auto recovered = projects_->offerUntitledRecovery(info.absoluteFilePath())) {
    openProjectDocument(std::move(*recovered));
    return;
  }
  pendingProject_.reset();
  openModel(info.absoluteFilePath(), {}, {});
}

bool MainWindow::offerUntitledRecovery() {
  if (!projects_->confirmClose()) return false;
  auto recovered = projects_->offerUntitledRecovery();
  if (!recovered) return false;
  openProjectDocument(std::move(*recovered));
  return true;
}

void MainWindow::openProjectDocument(project::ProjectDocument document) {
  const project::Project& project = document.project();
  QString model = QString::fromStdString(project.model);
  driver::LoadOptions load = project::loadOptionsFor(project);
  driver::CompileOptions compile = project::compileOptionsFor(project);
  pendingProject_ = std::move(document);
  openModel(model, load, compile);
}

void MainWindow::openModel(const QString& path, const driver::LoadOptions& load,
                           const driver::CompileOptions& compile) {
  pendingFile_ = path;
  statusBar()->showMessage(tr("Opening %1").arg(path));
  // Reading the inputs parses the whole file: a worker's job, like the compile after it.
  struct ModelInputs {
    Expected<std::vector<frontend::OnnxInputInfo>> declared = std::vector<frontend::OnnxInputInfo>{};
    /// The reference data's inputs (the project's, or for a model alone the test data beside
    /// it): known values, so a model that needs one by value (a Reshape's shape) compiles.
    Expected<std::map<std::string, runtime::NDArray>> reference = std::map<std::string, runtime::NDArray>{};
    /// The project's tuning records, read for the target it compiles for; none without any.
    std::optional<Expected<tuner::AppliedRecords>> records;
  };
  std::optional<project::Project> project;
  if (pendingProject_) project = pendingProject_->project();
  jobs_.start<std::shared_ptr<ModelInputs>>(
      kInputsChannel, tr("Reading the inputs of %1").arg(QFileInfo(path).fileName()),
      [file = path.toStdString(), project, target = compile.target](views::JobContext&) {
        auto inputs = std::make_shared<ModelInputs>();
        // One read of the file serves both: the reference files are named after its inputs.
        inputs->declared = frontend::readOnnxInputs(file);
        if (inputs->declared)
          inputs->reference =
              project::referenceInputValues(project ? *project : project::starterProject(file), *inputs->declared);
        if (project && !project->tuningRecords.empty())
          inputs->records = tuner::loadTuningRecords(project->tuningRecords, target);
        return inputs;
      },
      [this, path, load, compile](std::shared_ptr<ModelInputs> found) {
        if (path != pendingFile_) return;  // another open came since
        driver::LoadOptions withShapes = load;
        if (found->reference) {
          for (auto& [name, value] : *found->reference) withShapes.inputValues.emplace(name, value);
        } else {
          diagnostics_.add(views::Severity::Warning, tr("Open"),
                           tr("The reference inputs were not read, so inputs needed by value stay unknown.\n%1")
                               .arg(QString::fromStdString(found->reference.error().toString())));
        }
        // Known values fix their inputs' shapes too.
        InputShapes given = withShapes.inputShapes;
        for (auto& [name, value] : withShapes.inputValues) given.emplace(name, value.shape());
        const auto& inputs = found->declared;
        // A file that cannot be read is the session's to report, the usual way.
        if (inputs && !inputsNeedingShapes(*inputs, given).empty()) {
          auto shapes = inputShapesPrompt_(path, *inputs, proposedShapes(*inputs, given));
          if (!shapes) {
            QString message = tr("Opening %1 was cancelled: its inputs need shapes").arg(path);
            diagnostics_.add(views::Severity::Note, tr("Open"), message);
            statusBar()->showMessage(message, kStatusMessageMs);
            pendingFile_.clear();
            pendingProject_.reset();
            emit openFailed(path, message);
            return;
          }
          for (auto& [name, shape] : *shapes) withShapes.inputShapes[name] = shape;
          // A project opening keeps the answer (and so has unsaved changes).
          if (pendingProject_) {
            project::Project changed = pendingProject_->project();
            changed.inputShapes = withShapes.inputShapes;
            pendingProject_->setProject(changed);
          }
        }
        // A records file that cannot be read is said, and the model opens with its defaults.
        driver::CompileOptions withRecords = compile;
        if (found->records) withRecords.tunedSchedules = records_->accept(std::move(*found->records));
        // The session keeps the open model until this one compiled, so a file that fails to
        // open never disturbs what is on screen.
        session_.open(path, withShapes, withRecords);
      });
}

void MainWindow::editInputShapes() {
  QString path = session_.modelPath();
  if (path.isEmpty() || !session_.compiledModel()) return;
  jobs_.start<std::shared_ptr<Expected<std::vector<frontend::OnnxInputInfo>>>>(
      kInputsChannel, tr("Reading the inputs of %1").arg(QFileInfo(path).fileName()),
      [file = path.toStdString()](views::JobContext&) {
        return std::make_shared<Expected<std::vector<frontend::OnnxInputInfo>>>(frontend::readOnnxInputs(file));
      },
      [this, path](std::shared_ptr<Expected<std::vector<frontend::OnnxInputInfo>>> inputs) {
        if (path != session_.modelPath()) return;
        if (!*inputs) {
          reportFailure(tr("Input Shapes"), QString::fromStdString(inputs->error().toString()));
          return;
        }
        driver::LoadOptions load = session_.loadOptions();
        InputShapes proposed = proposedShapes(**inputs, load.inputShapes);
        if (inputsNeedingShapes(**inputs, {}).empty()) {
          statusBar()->showMessage(tr("Every input of %1 has a fixed shape").arg(QFileInfo(path).fileName()),
                                   kStatusMessageMs);
          return;
        }
        auto shapes = inputShapesPrompt_(path, **inputs, proposed);
        if (!shapes || *shapes == load.inputShapes) return;
        load.inputShapes = *shapes;
        projects_->setInputShapes(*shapes);
        // Not an open: the project and its edits stay; the views follow the new compile.
        session_.open(path, load, session_.compileOptions());
      });
}

void MainWindow::modelCompiled() {
  auto model = session_.compiledModel();
  if (!model) return;
  records_->compiled(*model, session_.compileOptions().tunedSchedules);
  QString modelPath = session_.modelPath();
  QString previousFile = currentFile_;
  bool opening = modelPath == pendingFile_;
  QString path = modelPath;
  if (opening) {
    // The project (or the untitled project over a model) becomes the open document only now
    // that its model compiled: a failure keeps the previous one.
    if (pendingProject_) {
      // A recovered untitled project has no file yet: the window shows its model.
      if (!pendingProject_->isUntitled()) path = QString::fromStdString(pendingProject_->path());
      projects_->adopt(std::move(*pendingProject_));
      pendingProject_.reset();
      applyProjectSchedules_ = true;
    } else {
      projects_->startUntitled(modelPath, session_.loadOptions().inputShapes);
    }
    restoreMeasurements();
    pendingFile_.clear();
  } else if (!projects_->isUntitled()) {
    path = projects_->path();
  }
  bool newFile = path != previousFile;
  currentFile_ = path;
  if (newFile) {
    recent_.add(path);
    diagnostics_.add(views::Severity::Note, tr("Open"),
                     tr("Opened %1: %2 operations, %3 kernels after %4 passes (%5 ms in passes, %6 ms lowering)")
                         .arg(path == modelPath ? path : tr("%1 (model %2)").arg(path, modelPath))
                         .arg(session_.imported() ? session_.imported()->operationCount() : 0)
                         .arg(model->kernels.size())
                         .arg(model->snapshots.size())
                         .arg(model->passSeconds * 1000, 0, 'f', 1)
                         .arg(model->lowerSeconds * 1000, 0, 'f', 1));
  }
  statusBar()->showMessage(tr("Compiled %1").arg(QFileInfo(path).fileName()), kStatusMessageMs);
  showModelInViews();
  showPage(currentView_);
  updateTitle();
  updateActions();
  emit fileOpened(path);
}

void MainWindow::restoreMeasurements() {
  views::MeasureHistory* history = schedule_->measurePanel() ? schedule_->measurePanel()->history() : nullptr;
  if (!history) return;
  // Replacing the previous document's variants is not an edit of the new one.
  restoringMeasurements_ = true;
  for (const QString& task : history->tasks()) history->clear(task);
  int restored = history->restoreFromJson(projects_->measurements());
  restoringMeasurements_ = false;
  if (restored > 0)
    diagnostics_.add(views::Severity::Note, tr("Project"), tr("Restored %n measured schedule variant(s)", "", restored));
}

void MainWindow::showModelInViews() {
  auto model = session_.compiledModel();
  auto imported = session_.imported();
  if (model && imported) {
    double plannedMiB = model->memory.plannedBytes / (1024.0 * 1024.0);
    QString tuned = records_->summary();
    modelInfo_->setText(tr("%1  ·  %2 ops → %3 kernels  ·  %4 MiB planned")
                            .arg(QFileInfo(currentFile_).fileName())
                            .arg(imported->operationCount())
                            .arg(model->kernels.size())
                            .arg(plannedMiB, 0, 'f', 2) +
                        (tuned.isEmpty() ? QString() : QStringLiteral("  ·  ") + tuned));
    QString tip = tr("%1 operations imported, %2 after optimization, %3 kernels")
                      .arg(imported->operationCount())
                      .arg(model->optimized.operationCount())
                      .arg(model->kernels.size());
    if (const tuner::AppliedRecords* applied = records_->applied())
      tip += tr("\n%1 by the tuning records %2").arg(tuned, QString::fromStdString(applied->path));
    modelInfo_->setToolTip(tip);
  }
  // Every view gets the same compile; each lays out or extracts what it needs on its own jobs.
  graph_->setGraph(model ? std::shared_ptr<const graph::Graph>(model, &model->optimized) : nullptr);
  timeline_->setModel(imported, model);
  timeline_->setPassOptions(session_.compileOptions().passes);
  // Measuring runs in a child `tessel measure`, which compiles the same model the same way.
  schedule_->setModelSource(session_.modelPath(), session_.loadOptions(), session_.compileOptions());
  schedule_->setModel(model, session_.compileOptions().target);
}

void MainWindow::reportFailure(const QString& source, const QString& message) {
  // The compiler's diagnostic already names the file, node and line; the log keeps all of it
  // and the status bar shows its first line (see createStatusBar).
  diagnostics_.add(views::Severity::Error, source, message);
}

void MainWindow::updateTitle() {
  QString name = currentFile_.isEmpty() ? QString() : QFileInfo(currentFile_).fileName();
  setWindowTitle(name.isEmpty() ? tr("Tessel Studio") : tr("%1[*] — Tessel Studio").arg(name));
  setWindowModified(projects_->isModified());
}

void MainWindow::updateActions() {
  const ViewSlot& slot = views_[indexOf(currentView_)];
  studioAction("actionFit")->setEnabled(hasModel() && slot.fit);
  studioAction("actionZoomIn")->setEnabled(hasModel() && slot.zoomIn);
  studioAction("actionZoomOut")->setEnabled(hasModel() && slot.zoomOut);
  studioAction("actionFind")->setEnabled(hasModel() && slot.find);
  studioAction("actionExportModule")->setEnabled(hasModel());
  studioAction("actionRecompile")->setEnabled(!session_.modelPath().isEmpty());
  studioAction("actionMeasure")->setEnabled(hasModel());
  studioAction("actionInputShapes")->setEnabled(hasModel());
  studioAction("actionRunProject")->setEnabled(projects_->hasProject());
  studioAction("actionApplyTuningRecords")->setEnabled(hasModel());
  studioAction("actionStopTuningRecords")->setEnabled(hasModel() && session_.compileOptions().tunedSchedules);
  studioAction("actionSave")->setEnabled(projects_->hasProject());
  studioAction("actionSaveAs")->setEnabled(projects_->hasProject());
  QString name = studioViewName(currentView_);
  name[0] = name[0].toUpper();
  if (QAction* action = studioAction("actionView" + name)) action->setChecked(true);
  studioAction("actionThemeLight")->setChecked(theme_ == views::Theme::Light);
  studioAction("actionThemeDark")->setChecked(theme_ == views::Theme::Dark);
}

void MainWindow::rebuildRecentMenu() {
  recentMenu_->clear();
  const QStringList files = recent_.files();
  welcome_->setRecentFiles(files);
  for (int i = 0; i < files.size(); ++i) {
    QString path = files[i];
    // Alt+1..9 style mnemonics make the list keyboard friendly.
    QString text = i < 9 ? QStringLiteral("&%1  %2").arg(i + 1).arg(QFileInfo(path).fileName())
                         : QFileInfo(path).fileName();
    QAction* action = recentMenu_->addAction(text, this, [this, path] { openFile(path); });
    action->setToolTip(path);
    action->setStatusTip(path);
  }
  if (files.isEmpty()) recentMenu_->addAction(tr("No recent files"))->setEnabled(false);
  recentMenu_->addSeparator();
  recentMenu_->addAction(tr("Clear List"), &recent_, &RecentFiles::clear)->setEnabled(!files.isEmpty());
}

void MainWindow::refreshIcons() {
  QColor ink = QApplication::palette().color(QPalette::WindowText);
  auto set = [&](const char* name, StudioIcon icon) {
    if (QAction* action = studioAction(name)) action->setIcon(studioIcon(icon, ink));
  };
  set("actionOpen", StudioIcon::Open);
  set("actionSave", StudioIcon::Save);
  set("actionFit", StudioIcon::Fit);
  set("actionZoomIn", StudioIcon::ZoomIn);
  set("actionZoomOut", StudioIcon::ZoomOut);
  set("actionExportView", StudioIcon::ExportImage);
  set("actionExportModule", StudioIcon::ExportModule);
  set("actionToggleTheme", StudioIcon::Theme);
  // The mode bar is dark in both themes.
  QColor modeInk("#c9ccd1");
  modeBar_->button(0)->setIcon(studioIcon(StudioIcon::Graph, modeInk));
  modeBar_->button(1)->setIcon(studioIcon(StudioIcon::Timeline, modeInk));
  modeBar_->button(2)->setIcon(studioIcon(StudioIcon::Schedule, modeInk));
}

QAction* MainWindow::studioAction(const QString& objectName) const {
  for (QAction* action : actions_)
    if (action->objectName() == objectName) return action;
  return nullptr;
}

QWidget* MainWindow::viewWidget(StudioView view) const { return views_[indexOf(view)].widget; }

QDockWidget* MainWindow::dock(Dock which) const {
  switch (which) {
    case Dock::Properties:
      return propertiesDock_;
    case Dock::PassOptions:
      return passOptionsDock_;
    case Dock::Tasks:
      return tasksDock_;
    case Dock::Measurements:
      return measurementsDock_;
    case Dock::Diagnostics:
      return diagnosticsDock_;
  }
  return nullptr;
}

void MainWindow::setCurrentView(StudioView view) {
  if (view == currentView_) return;
  // Each view keeps its own dock arrangement, as Qt Creator's modes do.
  layoutByView_[indexOf(currentView_)] = saveState();
  currentView_ = view;
  showPage(view);
  const QByteArray& saved = layoutByView_[indexOf(view)];
  if (saved.isEmpty() || !restoreState(saved)) applyDefaultLayout(view);
  updateActions();
  emit currentViewChanged(view);
}

void MainWindow::applyDefaultLayout(StudioView view) {
  const QList<QDockWidget*> all = {propertiesDock_, passOptionsDock_, tasksDock_, measurementsDock_, diagnosticsDock_};
  for (QDockWidget* dock : all) {
    dock->setFloating(false);
    removeDockWidget(dock);
  }
  QList<QDockWidget*> shown;
  switch (view) {
    case StudioView::Graph:
      addDockWidget(Qt::RightDockWidgetArea, propertiesDock_);
      addDockWidget(Qt::LeftDockWidgetArea, tasksDock_);
      shown = {propertiesDock_};
      break;
    case StudioView::Timeline:
      addDockWidget(Qt::RightDockWidgetArea, passOptionsDock_);
      addDockWidget(Qt::RightDockWidgetArea, propertiesDock_);
      splitDockWidget(passOptionsDock_, propertiesDock_, Qt::Vertical);
      shown = {passOptionsDock_, propertiesDock_};
      break;
    case StudioView::Schedule:
      // The workbench holds its task list and measure panel; the docks stay available
      // (View > Panels) for a second look at them.
      addDockWidget(Qt::LeftDockWidgetArea, tasksDock_);
      addDockWidget(Qt::RightDockWidgetArea, measurementsDock_);
      break;
  }
  // The log waits at the bottom, closed: the views need the height (a timeline step fitted
  // into a short view shrinks its boxes below readable text), and it comes forward by itself
  // when an error arrives (or with the error badge, Ctrl+Shift+D).
  addDockWidget(Qt::BottomDockWidgetArea, diagnosticsDock_);
  // Docks not used by this view still need an area, so the Panels menu can bring them back.
  for (QDockWidget* dock : all) {
    if (!shown.contains(dock)) {
      if (dockWidgetArea(dock) == Qt::NoDockWidgetArea) addDockWidget(Qt::RightDockWidgetArea, dock);
      dock->hide();
    } else {
      dock->show();
    }
  }
  resizeDocks({diagnosticsDock_}, {120}, Qt::Vertical);
  QList<QDockWidget*> sides;
  QList<int> widths;
  for (QDockWidget* dock : shown) {
    sides << dock;
    widths << (dock == tasksDock_ ? 240 : 320);
  }
  resizeDocks(sides, widths, Qt::Horizontal);
}

void MainWindow::resetLayout() {
  applyDefaultLayout(currentView_);
  layoutByView_[indexOf(currentView_)] = saveState();
}

void MainWindow::setTheme(views::Theme theme) {
  if (auto* application = qobject_cast<QApplication*>(QCoreApplication::instance()))
    views::applyTheme(*application, theme);
  theme_ = theme;
  QSettings().setValue("theme", views::themeName(theme));
  graph_->setGraphPalette(theme == views::Theme::Dark ? views::GraphPalette::dark() : views::GraphPalette::light());
  refreshIcons();
  updateActions();
  emit themeChanged(theme);
}

bool MainWindow::exportCurrentView(const QString& path) {
  // The graph exports its whole drawing (vector text in SVG); other views as they look.
  QString suffix = QFileInfo(path).suffix().toLower();
  Status status = currentView_ == StudioView::Graph && graph_->currentLayout() && suffix == "png" ? graph_->exportPng(path)
                  : currentView_ == StudioView::Graph && graph_->currentLayout() && suffix == "svg"
                      ? graph_->exportSvg(path)
                      : views::exportViewImage(viewWidget(currentView_), path);
  if (!status) {
    reportFailure(tr("Export"), QString::fromStdString(status.error().toString()));
    return false;
  }
  diagnostics_.add(views::Severity::Note, tr("Export"), tr("Saved the %1 view as %2").arg(studioViewName(currentView_), path));
  statusBar()->showMessage(tr("Saved %1").arg(path), kStatusMessageMs);
  return true;
}

void MainWindow::exportModule(const QString& directory) {
  auto model = session_.compiledModel();
  if (!model) {
    QString message = tr("%1: there is no compiled model to export; open a model first").arg(directory);
    reportFailure(tr("Export"), message);
    emit moduleExported(directory, false, message);
    return;
  }
  Target target = session_.compileOptions().target;
  jobs_.start<QString>(
      kExportChannel, tr("Exporting to %1").arg(directory),
      [model, directory, target](views::JobContext& job) -> QString {
        ExportOptions options;
        options.target = target;
        // The exporter asks between kernels and steps, and kills the linker when told to stop;
        // a stopped export leaves a module already in `directory` as it was.
        options.cancelled = [&job] { return job.cancelled(); };
        options.progress = [&job](int percent, const std::string& what) {
          job.reportProgress(percent, QString::fromStdString(what));
        };
        try {
          Status status = driver::exportModel(*model, directory.toStdString(), options);
          if (!status && !driver::isCancellation(status.error())) return QString::fromStdString(status.error().toString());
        } catch (const std::exception& error) {
          return describeException(error);
        }
        return {};
      },
      [this, directory](QString error) {
        if (!error.isEmpty()) {
          reportFailure(tr("Export"), error);
        } else {
          diagnostics_.add(views::Severity::Note, tr("Export"), tr("Exported the deployable module to %1").arg(directory));
          statusBar()->showMessage(tr("Exported to %1").arg(directory), kStatusMessageMs);
        }
        emit moduleExported(directory, error.isEmpty(), error);
      });
}

void MainWindow::runProject() {
  const project::Project* open = projects_->project();
  if (!open) {
    reportFailure(tr("Run"), tr("there is no project to run; open a model or project first"));
    return;
  }
  // What CI's `tessel project run` does, with the unsaved edits included.
  project::Project project = *open;
  QString name = QFileInfo(currentFile_).fileName();
  jobs_.start<ProjectRunOutcome>(
      QStringLiteral("run-project"), tr("Running %1").arg(name),
      [project](views::JobContext& job) -> ProjectRunOutcome {
        project::ProjectRunOptions options;
        options.progress = [&job](const std::string& stage) { job.reportProgress(-1, QString::fromStdString(stage)); };
        options.cancelled = [&job] { return job.cancelled(); };
        try {
          auto report = project::runProject(project, options);
          if (!report) return {ProjectRunOutcome::Error, QString::fromStdString(report.error().toString())};
          QStringList lines;
          bool passed = report->outputsMatch() && report->expectationsMet();
          for (const driver::OutputComparison& comparison : report->comparisons)
            lines << QString::fromStdString(comparison.describe());
          if (report->benchmarked)
            lines << QObject::tr("median latency %1 ms over %2 runs (fastest %3 ms), %4 threads, %5 tasks with saved schedules")
                         .arg(report->latencyMs, 0, 'g', 4)
                         .arg(report->runs)
                         .arg(report->minMs, 0, 'g', 4)
                         .arg(report->threads)
                         .arg(report->tasksEdited);
          for (const project::ExpectationResult& expectation : report->expectations)
            lines << QString::fromStdString(expectation.describe());
          if (report->tuningRecords)
            for (const std::string& line : tuner::describeAppliedRecords(*report->tuningRecords))
              lines << QString::fromStdString(line);
          if (!report->exportedTo.empty())
            lines << QObject::tr("exported to %1").arg(QString::fromStdString(report->exportedTo));
          return {passed ? ProjectRunOutcome::Passed : ProjectRunOutcome::CheckFailed, lines.join('\n')};
        } catch (const std::exception& error) {
          return {ProjectRunOutcome::Error, describeException(error)};
        }
      },
      [this, name](ProjectRunOutcome outcome) {
        if (outcome.kind == ProjectRunOutcome::Error) {
          reportFailure(tr("Run"), outcome.text);
        } else {
          bool passed = outcome.kind == ProjectRunOutcome::Passed;
          diagnostics_.add(passed ? views::Severity::Note : views::Severity::Error, tr("Run"),
                           (passed ? tr("%1: every check passed") : tr("%1: a check failed")).arg(name) + '\n' +
                               outcome.text);
          statusBar()->showMessage(passed ? tr("%1: every check passed").arg(name) : tr("%1: a check failed").arg(name),
                                   kStatusMessageMs);
        }
      });
}

void MainWindow::applyTuningRecords(const QString& path) {
  QString model = session_.modelPath();
  if (model.isEmpty()) {
    reportFailure(tr("Tuning Records"), tr("%1: open a model first, then apply tuning records to it").arg(path));
    return;
  }
  QString absolute = QFileInfo(path).absoluteFilePath();
  // Records match the target string the model is compiled for; reading them is a worker's job.
  records_->load(absolute, session_.compileOptions().target,
                 [this, absolute, model](std::shared_ptr<const driver::TunedSchedules> schedules) {
                   if (!schedules || session_.modelPath() != model) return;
                   projects_->setTuningRecords(absolute);
                   driver::CompileOptions options = session_.compileOptions();
                   options.tunedSchedules = std::move(schedules);
                   diagnostics_.add(views::Severity::Note, tr("Compile"),
                                    tr("Recompiling with the tuning records %1").arg(absolute));
                   session_.recompile(options);
                 });
}

void MainWindow::stopApplyingTuningRecords() {
  projects_->setTuningRecords({});
  if (!session_.compileOptions().tunedSchedules) return;
  driver::CompileOptions options = session_.compileOptions();
  options.tunedSchedules = nullptr;
  diagnostics_.add(views::Severity::Note, tr("Compile"), tr("Recompiling with the default schedules"));
  session_.recompile(options);
}

bool MainWindow::isIdle() const { return pendingFile_.isEmpty() && jobList_.allIdle(); }

bool MainWindow::hasModel() const { return !currentFile_.isEmpty(); }

void MainWindow::closeEvent(QCloseEvent* event) {
  if (!projects_->confirmClose()) {
    event->ignore();
    return;
  }
  saveSettings();
  jobList_.cancelAll();
  event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  const QMimeData* mime = event->mimeData();
  if (!mime->hasUrls()) return;
  for (const QUrl& url : mime->urls()) {
    if (url.isLocalFile() && isOpenable(url.toLocalFile())) {
      event->acceptProposedAction();
      return;
    }
  }
}

void MainWindow::dropEvent(QDropEvent* event) {
  for (const QUrl& url : event->mimeData()->urls()) {
    if (url.isLocalFile() && isOpenable(url.toLocalFile())) {
      event->acceptProposedAction();
      openFile(url.toLocalFile());
      return;
    }
  }
}

void MainWindow::saveSettings() {
  QSettings settings;
  layoutByView_[indexOf(currentView_)] = saveState();
  settings.setValue("window/geometry", saveGeometry());
  settings.setValue("window/view", studioViewName(currentView_));
  for (StudioView view : {StudioView::Graph, StudioView::Timeline, StudioView::Schedule})
    settings.setValue("window/layout/" + studioViewName(view), layoutByView_[indexOf(view)]);
}

void MainWindow::restoreSettings() {
  QSettings settings;
  theme_ = views::themeFromName(settings.value("theme").toString(), views::Theme::Light);
  restoreGeometry(settings.value("window/geometry").toByteArray());
  if (settings.value("window/geometry").isNull()) resize(1440, 900);
  for (StudioView view : {StudioView::Graph, StudioView::Timeline, StudioView::Schedule})
    layoutByView_[indexOf(view)] = settings.value("window/layout/" + studioViewName(view)).toByteArray();
  StudioView view = StudioView::Graph;
  parseStudioView(settings.value("window/view").toString(), &view);
  currentView_ = view;
  showPage(view);
  const QByteArray& saved = layoutByView_[indexOf(view)];
  if (saved.isEmpty() || !restoreState(saved)) applyDefaultLayout(view);
}

void MainWindow::showPage(StudioView view) {
  // A stacked widget is as large as its largest page's minimum; hidden pages must not hold the
  // window wider than the page on screen needs.
  QWidget* shown = hasModel() ? views_[indexOf(view)].widget : welcome_;
  for (int page = 0; page < central_->count(); ++page) {
    QSizePolicy::Policy policy = central_->widget(page) == shown ? QSizePolicy::Preferred : QSizePolicy::Ignored;
    central_->widget(page)->setSizePolicy(policy, policy);
  }
  central_->setCurrentWidget(shown);
  modeBar_->setCurrentMode(indexOf(view));
}

}  // namespace tessel::studio
