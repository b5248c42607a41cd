// Tessel Studio's main window: menus, toolbar, the mode bar switching the central view
// (Graph / Timeline / Schedule), dock panels whose layout is remembered, a status bar showing
// every background job, and the diagnostics log. It wires one model session to the views.
#pragma once

#include <QByteArray>
#include <QMainWindow>

#include <array>
#include <functional>
#include <optional>

#include "app/studio/InputShapesDialog.h"
#include "app/studio/ProjectController.h"
#include "app/studio/RecentFiles.h"
#include "app/studio/TuningRecordsController.h"
#include "views/common/DiagnosticsModel.h"
#include "views/tuning/TuningHeatMap.h"
#include "views/common/JobListModel.h"
#include "views/common/JobRunner.h"
#include "views/common/Theme.h"
#include "views/session/ModelSession.h"

class QDockWidget;
class QLabel;
class QMenu;
class QStackedWidget;
class QToolButton;

namespace tessel::views {
class GraphWorkbench;
class ScheduleWorkbench;
class TuningDashboard;
class QuantizationPanel;
class TimelineWorkbench;
}

namespace tessel::studio {

class LessonWindow;
class ModeBar;
class WelcomePage;

/// The central views, in mode bar order.
enum class StudioView { Graph = 0, Timeline = 1, Schedule = 2, Tuning = 3 };
/// Every view, in mode-bar order.
inline constexpr StudioView kStudioViews[] = {StudioView::Graph, StudioView::Timeline, StudioView::Schedule,
                                             StudioView::Tuning};
/// "graph" / "timeline" / "schedule" / "tuning".
QString studioViewName(StudioView view);
/// Parses studioViewName's output; false for anything else.
bool parseStudioView(const QString& name, StudioView* view);

/// Settings (window geometry, dock layout per view, theme, recent files) go to the default
/// QSettings (organization "Tessel", application "Tessel Studio"): tests redirect them with
/// QStandardPaths::setTestModeEnabled or QSettings::setPath.
class MainWindow : public QMainWindow {
  Q_OBJECT

public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  /// Opens a model (.onnx) or project (.tessel) in the background. A file that fails to
  /// open is reported in the diagnostics log and the status bar; the open model stays.
  void openFile(const QString& path);
  /// Opens the shipped example project from the user's own copy of it (made on first use, so
  /// it can be edited and saved; see project::editableExampleProject).
  void openExampleProject();
  /// Help > Lessons: the Lessons window (created on first use, then raised), at the step the
  /// learner left off.
  LessonWindow* openLessons();
  /// At start-up: offers back an untitled project (a model opened directly and edited) that a
  /// session ending without saving left in its autosave, and opens it when the user accepts
  /// (untitled and modified, so Save asks for a name). False when there was nothing to
  /// recover or the user declined. Opening the same model again offers it too (openFile).
  bool offerUntitledRecovery();
  /// Asked, before a model is compiled, for the shapes its file leaves open (a dynamic batch)
  /// that neither the project nor an earlier answer gives: the model's path, its inputs and
  /// the shapes proposed; nullopt cancels the open. The default shows an InputShapesDialog;
  /// tests and screenshot mode answer without one.
  using InputShapesPrompt = std::function<std::optional<InputShapes>(
      const QString& modelPath, const std::vector<frontend::OnnxInputInfo>& inputs, const InputShapes& proposed)>;
  void setInputShapesPrompt(InputShapesPrompt prompt) { inputShapesPrompt_ = std::move(prompt); }
  /// Build > Input Shapes: asks again for the open model's open input dimensions and, when
  /// they change, compiles it with them (the project keeps them).
  void editInputShapes();
  /// The file the window shows (empty before the first successful open).
  QString currentFile() const { return currentFile_; }

  void setCurrentView(StudioView view);
  StudioView currentView() const { return currentView_; }
  /// The widget in the central area for `view`.
  QWidget* viewWidget(StudioView view) const;

  void setTheme(views::Theme theme);
  views::Theme theme() const { return theme_; }

  /// Docks by role; their object names ("PropertiesDock", ...) key the saved layout.
  enum class Dock { Properties, PassOptions, Tasks, Measurements, Diagnostics, Quantization };
  QDockWidget* dock(Dock which) const;
  /// Every dock, in the order of Dock.
  QList<QDockWidget*> docks() const;
  /// Puts every dock back where it starts for the current view.
  void resetLayout();

  /// Saves the view as PNG or SVG (by suffix). False, with a diagnostic logged, on failure.
  bool exportCurrentView(const QString& path);
  /// Writes the deployable module of the compiled model into `directory` in the background.
  void exportModule(const QString& directory);
  /// File > Export for CI: the open project (with its unsaved edits), its model, reference
  /// data and records in `directory` with GitLab CI and GitHub Actions jobs
  /// (project::exportProjectForCi), in the background; exportedForCi says how it went.
  void exportForCi(const QString& directory);

  /// File > Apply Tuning Records: reads the records file `path` (on a worker) for the open model's
  /// target and recompiles the model with them; the project keeps the path (tuning_records), so
  /// reopening it applies them again. A file that cannot be read is put before the user (the
  /// model keeps what it had); lines skipped are shown, the other records applied. How many
  /// kernels were tuned goes to the status bar and the log.
  void applyTuningRecords(const QString& path);
  /// Opens a tuning trial's schedule (from the dashboard's records file) in the schedule editor.
  void openTuningTrial(const QString& kernel, const QString& point, int trial);
  /// Build > Profile Model: runs the compiled model (random inputs) on a worker, at least 10
  /// times and a second, and keeps each node's median time. The profile is saved beside the
  /// model (MODEL.profile.json) and read back when the model is opened again; the Tuning view's
  /// Share column and View > Colour Graph by > Share of Model Time show it.
  void profileModel();
  /// The open model's last profile (null when it has none).
  std::shared_ptr<const driver::ModelProfile> modelProfile() const { return profile_; }
  /// Colours the graph's nodes by the tuning session's results or the model's last profile
  /// (View > Colour Graph by).
  void setHeatMode(views::HeatMode mode);
  views::HeatMode heatMode() const { return heatMode_; }
  /// File > Stop Applying Tuning Records: recompiles with the default schedules, and the project
  /// forgets its records.
  void stopApplyingTuningRecords();

  /// Runs the open project as `tessel project run` does (verify against its reference data,
  /// benchmark, check its expectations, export if asked), unsaved edits included, in the
  /// background; the summary goes to the diagnostics log (an error when a check fails).
  void runProject();

  /// True when no background job of the window, the session or any view is running and no
  /// open is pending: what screenshot mode and tests wait for.
  bool isIdle() const;
  /// Whether a model is shown (compiled, or open for viewing only).
  bool hasModel() const;
  /// Whether the model shown uses operators Tessel does not implement: the Graph view shows its
  /// structure with those nodes marked and listed; the Timeline, Schedule and Tuning views say
  /// why they are empty, and compiling, measuring, profiling and exporting are disabled.
  bool isViewOnly() const;

  views::ModelSession& session() { return session_; }
  /// The Graph view (screenshot mode's --timings reads its layouts).
  views::GraphWorkbench* graphWorkbench() const { return graph_; }
  views::TimelineWorkbench* timelineWorkbench() const { return timeline_; }
  views::JobListModel& jobs() { return jobList_; }
  views::DiagnosticsModel& diagnostics() { return diagnostics_; }
  RecentFiles& recentFiles() { return recent_; }
  /// The open project (an untitled one over a model opened directly).
  ProjectController& projects() { return *projects_; }
  /// The tuning records applied to the open model.
  TuningRecordsController& tuningRecords() { return *records_; }
  /// Every action with its shortcut (File, View, Help menus), for the shortcuts dialog and
  /// tests; each has an object name ("actionOpen").
  QList<QAction*> studioActions() const { return actions_; }
  QAction* studioAction(const QString& objectName) const;

signals:
  /// A model (or project) finished opening and compiling, or opened for viewing only
  /// (isViewOnly()); views show it.
  void fileOpened(const QString& path);
  /// Opening `path` failed; `message` is the compiler's diagnostic. The previous model stays.
  void openFailed(const QString& path, const QString& message);
  void currentViewChanged(tessel::studio::StudioView view);
  void themeChanged(tessel::views::Theme theme);
  /// Build > Profile Model finished: `ok`, or `message` says why not.
  void modelProfiled(bool ok, const QString& message);
  /// A deployable module was written (`ok`) or failed (`message` says why).
  void moduleExported(const QString& directory, bool ok, const QString& message);
  void exportedForCi(const QString& directory, bool ok, const QString& message);

protected:
  void closeEvent(QCloseEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

private:
  LessonWindow* lessons_ = nullptr;
  /// What the window needs from a central view: its widget and how to route the View
  /// menu's navigation actions to it (null functions disable the actions there).
  struct ViewSlot {
    QWidget* widget = nullptr;
    std::function<void()> fit, zoomIn, zoomOut, find;
  };

  void createViews();
  void createDocks();
  void createActions();
  void createToolBar();
  void createStatusBar();
  void connectSession();
  /// Opens `document`'s model with its options; it becomes the open project once compiled.
  void openProjectDocument(project::ProjectDocument document);
  /// Replaces the measure history with the open project's measured variants.
  void restoreMeasurements();
  /// Opens the model once the shapes its file leaves open are known (read on a worker, then
  /// asked for when neither `load` nor the pending project gives them).
  void openModel(const QString& path, const driver::LoadOptions& load, const driver::CompileOptions& compile);
  void modelCompiled();
  /// The session opened a model it cannot compile (ModelSession::openedForViewing).
  void modelOpenedForViewing(const QString& message);
  /// Makes the session's model the window's: the pending project (or an untitled one over the
  /// model) becomes the open one and currentFile_ follows. True when that is another file.
  bool adoptOpenedModel();
  void reportFailure(const QString& source, const QString& message);
  void showModelInViews();
  void updateTitle();
  void updateActions();
  void updateHeatMap();
  /// Makes `profile` the model's last profile everywhere it shows.
  void setModelProfile(std::shared_ptr<const driver::ModelProfile> profile);
  /// Reads the profile saved beside the model, if any, on a worker.
  void loadSavedProfile();
  /// Gives the graph view what each operation costs: the compiled kernels' FLOPs and, with a
  /// profile of this model, their times (module boxes sum them).
  void updateNodeCosts();
  void rebuildRecentMenu();
  void refreshIcons();
  void applyDefaultLayout(StudioView view);
  void showPage(StudioView view);
  void saveSettings();
  void restoreSettings();
  QAction* addStudioAction(QMenu* menu, const QString& objectName, const QString& text, const QKeySequence& shortcut,
                           std::function<void()> trigger);

  views::ModelSession session_;
  views::JobRunner jobs_;  // the window's own work: checking a file before opening, exports
  views::JobListModel jobList_;
  views::DiagnosticsModel diagnostics_;
  RecentFiles recent_;

  QString currentFile_;      // shown in the views
  QString pendingFile_;      // being opened
  ProjectController* projects_ = nullptr;
  TuningRecordsController* records_ = nullptr;
  std::optional<project::ProjectDocument> pendingProject_;  // its model is being opened

  StudioView currentView_ = StudioView::Graph;
  std::array<ViewSlot, 4> views_;
  std::array<QByteArray, 4> layoutByView_;
  views::Theme theme_ = views::Theme::Light;

  ModeBar* modeBar_ = nullptr;
  QStackedWidget* central_ = nullptr;
  WelcomePage* welcome_ = nullptr;
  QLabel* notCompiledPage_ = nullptr;  // instead of the views that need a compiled model
  views::GraphWorkbench* graph_ = nullptr;
  views::TimelineWorkbench* timeline_ = nullptr;
  views::ScheduleWorkbench* schedule_ = nullptr;
  views::TuningDashboard* tuning_ = nullptr;
  views::HeatMode heatMode_ = views::HeatMode::None;
  const void* heatModules_ = nullptr;  ///< The module groups the heat map last coloured (identity only).
  std::shared_ptr<const driver::ModelProfile> profile_;  // of the model at profileModelPath_
  QString profileModelPath_;
  bool applyProjectSchedules_ = false;
  bool restoringMeasurements_ = false;
  bool linkingSelection_ = false;  // one view's selection is being shown in the others  // a project's variants going into the history
  InputShapesPrompt inputShapesPrompt_;  // when the next tasksReady follows a project's open
  QDockWidget* propertiesDock_ = nullptr;
  QDockWidget* passOptionsDock_ = nullptr;
  QDockWidget* tasksDock_ = nullptr;
  QDockWidget* measurementsDock_ = nullptr;
  QDockWidget* quantizationDock_ = nullptr;
  views::QuantizationPanel* quantization_ = nullptr;
  QDockWidget* diagnosticsDock_ = nullptr;
  QMenu* recentMenu_ = nullptr;
  QLabel* modelInfo_ = nullptr;
  QToolButton* errorBadge_ = nullptr;
  QList<QAction*> actions_;
};

}  // namespace tessel::studio
