// Building the Studio's main window: the views and their slots, the docks, the actions and
// menus, the tool bar and the status bar, and the wiring of the model session to them.
#include "app/studio/MainWindow.h"
#include "tuner/session/TuningTask.h"

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

#include "app/project/InstallLocation.h"
#include "app/project/ProjectOptions.h"
#include "app/project/ProjectRunner.h"
#include "app/studio/MainWindowSupport.h"
#include "app/studio/LessonWindow.h"
#include "app/studio/ModeBar.h"
#include "app/studio/ShortcutsDialog.h"
#include "app/studio/StudioIcons.h"
#include "app/studio/WelcomePage.h"
#include "views/common/DiagnosticsPanel.h"
#include "views/common/ImageExport.h"
#include "views/common/JobStatusWidget.h"
#include "views/graph/GraphScene.h"
#include "views/graph/GraphView.h"
#include "views/graph/GraphWorkbench.h"
#include "views/graph/NodePropertiesPanel.h"
#include "views/schedule/MeasureHistory.h"
#include "views/schedule/MeasureHistoryModel.h"
#include "views/schedule/MeasurePanel.h"
#include "views/schedule/ScheduleWorkbench.h"
#include "views/schedule/TaskListModel.h"
#include "views/quantization/QuantizationPanel.h"
#include "views/timeline/PassOptionsPanel.h"
#include "views/timeline/TimelineWorkbench.h"
#include "views/tuning/TuningDashboard.h"
#include "views/tuning/TuningHeatMap.h"

namespace tessel::studio {

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
  // A graph drawn by module colours its module boxes too, once the layout says what the modules are.
  connect(graph_, &views::GraphWorkbench::layoutFinished, this, [this](bool cancelled) {
    auto layout = graph_->currentLayout();
    const void* modules = layout ? layout->modules.get() : nullptr;
    if (!cancelled && heatMode_ != views::HeatMode::None && modules != heatModules_) updateHeatMap();
  });
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
  tuning_ = new views::TuningDashboard;
  views_[indexOf(StudioView::Tuning)].widget = tuning_;
  connect(tuning_, &views::TuningDashboard::message, this,
          [this](const QString& text) { statusBar()->showMessage(text, kStatusMessageMs); });
  connect(tuning_, &views::TuningDashboard::trialActivated, this, &MainWindow::openTuningTrial);
  // The heat map follows the session as it runs (the feed's updates are a few a second).
  connect(tuning_->feed(), &views::TuningEventFeed::changed, this, &MainWindow::updateHeatMap);
  // One selection everywhere: a task selected in the dashboard is highlighted in the graph
  // (every node it computes) and opened in the schedule editor; a node selected in the graph
  // selects its task in the dashboard.
  connect(tuning_, &views::TuningDashboard::taskSelected, this, [this](const QStringList& kernels) {
    auto model = session_.compiledModel();
    if (!model || linkingSelection_) return;
    linkingSelection_ = true;
    QStringList nodes;
    for (const driver::CompiledKernel& kernel : model->kernels)
      if (kernel.node && kernels.contains(QString::fromStdString(kernel.name)))
        nodes << QString::fromStdString(kernel.node->name);
    graph_->view()->graphScene()->setFindHighlights(nodes, nodes.value(0));
    if (!nodes.isEmpty()) graph_->view()->graphScene()->selectNode(nodes.front());
    if (!kernels.isEmpty()) schedule_->openTask(kernels.front());
    linkingSelection_ = false;
  });
  connect(graph_, &views::GraphWorkbench::nodeSelected, this, [this](const QString& id) {
    auto model = session_.compiledModel();
    if (!model || linkingSelection_ || id.isEmpty()) return;
    linkingSelection_ = true;
    for (const driver::CompiledKernel& kernel : model->kernels)
      if (kernel.node && QString::fromStdString(kernel.node->name) == id) {
        tuning_->selectKernel(QString::fromStdString(kernel.name));
        break;
      }
    linkingSelection_ = false;
  });
  connect(tuning_->runner(), &views::TuningRunner::finished, this, [this](bool succeeded, const QString& text) {
    diagnostics_.add(succeeded ? views::Severity::Note : views::Severity::Error, tr("Tuning"), text);
    // What the session found applies to the model at once, as the records file says (unless
    // another model was opened meanwhile: its project must not take this model's records).
    if (succeeded && hasModel() && tuning_->runner()->modelPath() == session_.modelPath() &&
        QFileInfo::exists(tuning_->recordsPath()))
      applyTuningRecords(tuning_->recordsPath());
  });
  schedule_ = new views::ScheduleWorkbench;
  views_[indexOf(StudioView::Schedule)].widget = schedule_;
  jobList_.watch(&schedule_->jobs(), tr("Schedule"));
  // Its measure panel runs on the workbench's runner, so measuring shows up here too.
  connect(schedule_, &views::ScheduleWorkbench::failed, this,
          [this](const QString& message) { diagnostics_.add(views::Severity::Error, tr("Schedule"), message); });
  connect(schedule_, &views::ScheduleWorkbench::tasksReady, this, [this] {
    // The Tuning view lists the tasks a session would tune before one runs.
    tuning_->setPreviewTasks(tuner::groupTasksByWorkload(schedule_->scheduleTasks()));
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
  // For a model open for viewing only, the views that need a compiled model say why not.
  notCompiledPage_ = new QLabel;
  notCompiledPage_->setObjectName("NotCompiledPage");
  notCompiledPage_->setAlignment(Qt::AlignCenter);
  notCompiledPage_->setWordWrap(true);
  notCompiledPage_->setTextFormat(Qt::RichText);
  notCompiledPage_->setMargin(48);
  central_->addWidget(notCompiledPage_);
  connect(welcome_, &WelcomePage::openRequested, this, [this] { studioAction("actionOpen")->trigger(); });
  connect(welcome_, &WelcomePage::recentFileRequested, this, &MainWindow::openFile);
  connect(welcome_, &WelcomePage::exampleRequested, this, &MainWindow::openExampleProject);
  connect(welcome_, &WelcomePage::lessonsRequested, this, [this] { openLessons(); });
  welcome_->setExampleAvailable(!project::exampleProjectPath().empty());

  modeBar_->addMode({}, tr("Graph"), tr("The model's graph (Ctrl+1)"));
  modeBar_->addMode({}, tr("Timeline"), tr("The graph after every pass, compared (Ctrl+2)"));
  modeBar_->addMode({}, tr("Schedule"), tr("Each kernel's schedule, lowered code and speed (Ctrl+3)"));
  modeBar_->addMode({}, tr("Tuning"), tr("Tune the model's kernels and watch the search (Ctrl+4)"));
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
  // Quantizing the open model: a child `tessel quantize`, its report, and the model it wrote
  // one click away.
  quantization_ = new views::QuantizationPanel;
  quantization_->setObjectName("QuantizationPanel");
  connect(quantization_, &views::QuantizationPanel::message, this,
          [this](const QString& text) { diagnostics_.add(views::Severity::Error, tr("Quantize"), text); });
  connect(quantization_, &views::QuantizationPanel::quantized, this, [this](const QString& path) {
    diagnostics_.add(views::Severity::Note, tr("Quantize"), tr("Wrote %1").arg(path));
  });
  connect(quantization_, &views::QuantizationPanel::openRequested, this, [this](const QString& path) { openFile(path); });
  quantizationDock_ = makeDock(tr("Quantization"), "QuantizationDock", quantization_);
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

LessonWindow* MainWindow::openLessons() {
  if (!lessons_) {
    lessons_ = new LessonWindow(this);
    lessons_->setWindowFlag(Qt::Window);
    lessons_->loadLessons();
  }
  lessons_->show();
  lessons_->raise();
  lessons_->activateWindow();
  return lessons_;
}

void MainWindow::openExampleProject() {
  auto example = project::editableExampleProject();
  if (!example) {
    QMessageBox::warning(this, tr("Open Example Project"), QString::fromStdString(example.error().toString()));
    return;
  }
  openFile(QString::fromStdString(*example));
}

void MainWindow::createActions() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  addStudioAction(file, "actionOpen", tr("&Open Model or Project..."), QKeySequence::Open, [this] {
    QString path = QFileDialog::getOpenFileName(this, tr("Open model or project"), QFileInfo(currentFile_).path(),
                                                tr("Models and projects (*.onnx *.tessel);;ONNX models (*.onnx);;"
                                                   "Tessel projects (*.tessel);;All files (*)"));
    if (!path.isEmpty()) openFile(path);
  });
  addStudioAction(file, "actionOpenExample", tr("Open &Example Project"), {}, [this] { openExampleProject(); });
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
  addStudioAction(file, "actionExportForCi", tr("Export for &CI..."), {}, [this] {
    QString directory = QFileDialog::getExistingDirectory(this, tr("Export the project for CI into"));
    if (!directory.isEmpty()) exportForCi(directory);
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
  const std::array<std::pair<StudioView, QString>, 4> modes = {
      {{StudioView::Graph, tr("&Graph")}, {StudioView::Timeline, tr("Pass &Timeline")},
       {StudioView::Schedule, tr("&Schedule Editor")}, {StudioView::Tuning, tr("T&uning")}}};
  for (const auto& [mode, text] : modes) {
    QString name = studioViewName(mode);
    name[0] = name[0].toUpper();
    QAction* action = addStudioAction(view, "actionView" + name, text,
                                      QKeySequence(QStringLiteral("Ctrl+%1").arg(indexOf(mode) + 1)),
                                      [this, chosen = mode] { setCurrentView(chosen); });
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
  QMenu* colouring = view->addMenu(tr("&Colour Graph by"));
  auto* colouringGroup = new QActionGroup(this);
  const std::array<std::pair<views::HeatMode, QString>, 5> heatModes = {
      {{views::HeatMode::None, tr("&Operator Category")},
       {views::HeatMode::Time, tr("Share of Model T&ime (Profile)")},
       {views::HeatMode::Speedup, tr("&Speedup over Default")},
       {views::HeatMode::Roofline, tr("Share of &Roofline")},
       {views::HeatMode::Trials, tr("&Trials Spent")}}};
  for (const auto& [mode, text] : heatModes) {
    QString name = views::heatModeName(mode);
    name[0] = name[0].toUpper();
    QAction* action = addStudioAction(colouring, "actionColourBy" + name, text, {}, [this, heat = mode] { setHeatMode(heat); });
    action->setCheckable(true);
    action->setChecked(mode == heatMode_);
    colouringGroup->addAction(action);
  }
  view->addSeparator();
  QMenu* panels = view->addMenu(tr("&Panels"));
  for (QDockWidget* dock : docks()) panels->addAction(dock->toggleViewAction());
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
  addStudioAction(build, "actionProfileModel", tr("&Profile Model"), QKeySequence(tr("F6")), [this] { profileModel(); });
  addStudioAction(build, "actionRunProject", tr("Run &Project"), QKeySequence(tr("Ctrl+R")), [this] { runProject(); });
  addStudioAction(build, "actionQuantize", tr("&Quantize to int8..."), {}, [this] {
    quantizationDock_->show();
    quantizationDock_->raise();
  });
  addStudioAction(build, "actionCancelJobs", tr("&Cancel Background Jobs"), QKeySequence(tr("Shift+F5")),
                  [this] { jobList_.cancelAll(); });

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  addStudioAction(help, "actionLessons", tr("&Lessons"), QKeySequence(tr("F1")), [this] { openLessons(); });
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
  connect(&session_, &views::ModelSession::openedForViewing, this, &MainWindow::modelOpenedForViewing);
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

}  // namespace tessel::studio
