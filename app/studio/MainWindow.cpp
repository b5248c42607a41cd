// MainWindow: opens models and projects and moves between the views. Building the window
// (views, docks, actions, tool bar, status bar) and wiring the model session to it is in
// MainWindowSetup.cpp; exporting a module, Export for CI and Run Project in
// MainWindowExport.cpp; tuning records, the heat map and tuning trials in MainWindowTuning.cpp.
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

#include <initializer_list>

#include "app/project/ProjectOptions.h"
#include "app/studio/MainWindowSupport.h"
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
#include "views/quantization/QuantizationPanel.h"
#include "views/tuning/TuningDashboard.h"

namespace tessel::studio {

namespace {

const QString kInputsChannel = QStringLiteral("inputs");
bool isOpenable(const QString& path) {
  QString suffix = QFileInfo(path).suffix().toLower();
  return suffix == "onnx" || suffix == "tessel";
}

}  // namespace

QString studioViewName(StudioView view) {
  switch (view) {
    case StudioView::Graph:
      return QStringLiteral("graph");
    case StudioView::Timeline:
      return QStringLiteral("timeline");
    case StudioView::Schedule:
      return QStringLiteral("schedule");
    case StudioView::Tuning:
      return QStringLiteral("tuning");
  }
  return {};
}

bool parseStudioView(const QString& name, StudioView* view) {
  for (StudioView candidate : kStudioViews) {
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
  // The views are destroyed after this body, as QObject children, and some signal on the
  // way out (the graph view cancels its layout: layoutFinished). By then this is no longer a
  // MainWindow, so the lambdas connected to them must not run (UBSan saw one that did).
  for (QObject* view : std::initializer_list<QObject*>{graph_, timeline_, schedule_, tuning_})
    if (view) view->disconnect(this);
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
  bool newFile = adoptOpenedModel();
  QString path = currentFile_;
  if (newFile) {
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

bool MainWindow::adoptOpenedModel() {
  QString modelPath = session_.modelPath();
  QString previousFile = currentFile_;
  QString path = modelPath;
  if (modelPath == pendingFile_) {
    // The project (or the untitled project over a model) becomes the open document only now
    // that its model opened: a failure keeps the previous one.
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
  currentFile_ = path;
  if (path == previousFile) return false;
  recent_.add(path);
  return true;
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
  if (isViewOnly() && imported) {
    modelInfo_->setText(tr("%1  ·  %2 ops  ·  view only: cannot be compiled")
                            .arg(QFileInfo(currentFile_).fileName())
                            .arg(imported->operationCount()));
    modelInfo_->setToolTip(tr("The model uses operators Tessel does not implement; the graph shows its structure"));
  } else if (model && imported) {
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
  // A model open for viewing has no compile: the graph shows its structure as imported.
  updateNodeCosts();
  graph_->setGraph(model ? std::shared_ptr<const graph::Graph>(model, &model->optimized)
                         : isViewOnly() ? imported : nullptr);
  timeline_->setModel(imported, model);
  timeline_->setPassOptions(session_.compileOptions().passes);
  // Measuring runs in a child `tessel measure`, which compiles the same model the same way.
  schedule_->setModelSource(session_.modelPath(), session_.loadOptions(), session_.compileOptions());
  schedule_->setModel(model, session_.compileOptions().target);
  // A tuning session tunes the model as it is loaded here, into the project's records file (or
  // one beside the model).
  QStringList loadArguments;
  for (const auto& [input, shape] : session_.loadOptions().inputShapes) {
    QStringList dimensions;
    for (int64_t dimension : shape) dimensions << QString::number(dimension);
    loadArguments << QStringLiteral("--input-shape")
                  << QStringLiteral("%1=%2").arg(QString::fromStdString(input), dimensions.join('x'));
  }
  // A model that cannot be compiled has nothing to tune.
  tuning_->setModel(isViewOnly() ? QString() : session_.modelPath(), loadArguments);
  quantization_->setModel(isViewOnly() ? QString() : session_.modelPath(), loadArguments);
  loadSavedProfile();
  updateHeatMap();
  if (!tuning_->runner()->isActive()) {
    const project::Project* project = projects_->project();
    QString records = project && !project->tuningRecords.empty()
                          ? QString::fromStdString(project->tuningRecords)
                          : QFileInfo(session_.modelPath()).absolutePath() + '/' +
                                QFileInfo(session_.modelPath()).completeBaseName() + QStringLiteral(".tuning.jsonl");
    if (records != tuning_->recordsPath()) tuning_->setRecordsPath(records);
  }
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
  // A model open for viewing only shows in the Graph view; nothing that compiles applies to it.
  const bool shown = hasModel() && (!isViewOnly() || currentView_ == StudioView::Graph);
  const bool compiled = hasModel() && !isViewOnly();
  studioAction("actionFit")->setEnabled(shown && slot.fit);
  studioAction("actionZoomIn")->setEnabled(shown && slot.zoomIn);
  studioAction("actionZoomOut")->setEnabled(shown && slot.zoomOut);
  studioAction("actionFind")->setEnabled(shown && slot.find);
  studioAction("actionExportModule")->setEnabled(compiled);
  studioAction("actionRecompile")->setEnabled(!session_.modelPath().isEmpty() && !isViewOnly());
  studioAction("actionMeasure")->setEnabled(compiled);
  studioAction("actionProfileModel")->setEnabled(compiled);
  studioAction("actionInputShapes")->setEnabled(compiled);
  studioAction("actionRunProject")->setEnabled(projects_->hasProject() && !isViewOnly());
  studioAction("actionExportForCi")->setEnabled(projects_->hasProject() && !isViewOnly());
  studioAction("actionApplyTuningRecords")->setEnabled(compiled);
  studioAction("actionStopTuningRecords")->setEnabled(compiled && session_.compileOptions().tunedSchedules);
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
  modeBar_->button(3)->setIcon(studioIcon(StudioIcon::Tuning, modeInk));
}

QAction* MainWindow::studioAction(const QString& objectName) const {
  for (QAction* action : actions_)
    if (action->objectName() == objectName) return action;
  return nullptr;
}

QWidget* MainWindow::viewWidget(StudioView view) const { return views_[indexOf(view)].widget; }

QList<QDockWidget*> MainWindow::docks() const {
  // In the order of Dock.
  return {propertiesDock_, passOptionsDock_, tasksDock_, measurementsDock_, diagnosticsDock_, quantizationDock_};
}

QDockWidget* MainWindow::dock(Dock which) const { return docks().value(int(which)); }

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
  const QList<QDockWidget*> all = docks();
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
    case StudioView::Tuning:
      // The dashboard holds its table and plots; the graph's properties stay at hand.
      addDockWidget(Qt::LeftDockWidgetArea, tasksDock_);
      addDockWidget(Qt::RightDockWidgetArea, propertiesDock_);
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

bool MainWindow::isIdle() const {
  return pendingFile_.isEmpty() && jobList_.allIdle() && !tuning_->feed()->busy() &&
         !tuning_->runner()->isLoadingHistory();
}

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
  for (StudioView view : kStudioViews)
    settings.setValue("window/layout/" + studioViewName(view), layoutByView_[indexOf(view)]);
}

void MainWindow::restoreSettings() {
  QSettings settings;
  theme_ = views::themeFromName(settings.value("theme").toString(), views::Theme::Light);
  restoreGeometry(settings.value("window/geometry").toByteArray());
  if (settings.value("window/geometry").isNull()) resize(1440, 900);
  for (StudioView view : kStudioViews)
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
  QWidget* shown = !hasModel()                                  ? welcome_
                   : isViewOnly() && view != StudioView::Graph ? static_cast<QWidget*>(notCompiledPage_)
                                                               : views_[indexOf(view)].widget;
  for (int page = 0; page < central_->count(); ++page) {
    QSizePolicy::Policy policy = central_->widget(page) == shown ? QSizePolicy::Preferred : QSizePolicy::Ignored;
    central_->widget(page)->setSizePolicy(policy, policy);
  }
  central_->setCurrentWidget(shown);
  modeBar_->setCurrentMode(indexOf(view));
}

}  // namespace tessel::studio
