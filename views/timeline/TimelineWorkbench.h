// The pass timeline workbench the main window embeds: the timeline strip on top, below it the
// selected step's graph or two steps side by side, and the pass options panel.
#pragma once

#include <QWidget>

#include <memory>
#include <set>

#include "compiler/driver/Driver.h"
#include "views/common/JobRunner.h"
#include "views/timeline/DiffDecorations.h"

class QCheckBox;
class QLabel;
class QSplitter;
class QStackedWidget;

namespace tessel::views {

class GraphCompareView;
class GraphView;
class PassOptionsPanel;
class PassTimelineModel;
class PassTimelineView;

/// Everything about a model's graph passes in one widget.
///
///   auto* timeline = new TimelineWorkbench(window);
///   connect(session, &ModelSession::compiled, timeline, [=] {
///     timeline->setModel(session->imported(), session->compiledModel());
///     timeline->setPassOptions(session->compileOptions().passes);
///   });
///   connect(timeline, &TimelineWorkbench::optionsChanged, session, [=](const graph::PassOptions& o) {
///     auto options = session->compileOptions(); options.passes = o; session->recompile(options);
///   });
///   dock->setWidget(timeline->optionsPanel());   // optional: it sits at the right until moved
///
/// Work (diffing steps, laying out graphs) runs on jobs(); stepShown / comparisonShown follow.
class TimelineWorkbench : public QWidget {
  Q_OBJECT

public:
  explicit TimelineWorkbench(QWidget* parent = nullptr);
  ~TimelineWorkbench() override;

  /// Shows a compile: the imported graph and the graph after each pass. Null clears. A
  /// recompile keeps the selected step (or comparison) when it still exists.
  void setModel(std::shared_ptr<const graph::Graph> imported, std::shared_ptr<const driver::CompiledModel> compiled);
  /// The options the shown model was compiled with (shown by the options panel).
  void setPassOptions(const graph::PassOptions& options);

  /// Shows step `row` alone (0: imported graph).
  void selectStep(int row);
  /// Shows two steps side by side (the earlier one as A).
  void compareSteps(int first, int second);
  int selectedStep() const;
  bool isComparing() const;

  /// When on (the default), the single step view outlines what the step changed against the
  /// step before it.
  void setHighlightChanges(bool on);
  /// A colouring from another view (the tuning heat map): decorations by node name, shown on
  /// every single step instead of the change outline while there are any (nodes a step does
  /// not have are skipped: only the steps after fusion have the kernels' nodes), with `legend`
  /// (rich text) under the step's title. Empty brings the change outline back.
  void setNodeColouring(std::vector<NodeDecoration> decorations, const QString& legend);
  QString nodeColouringLegend() const;

  PassTimelineModel* timelineModel() const { return model_; }
  PassTimelineView* timelineView() const { return timeline_; }
  GraphView* stepView() const { return stepView_; }
  GraphCompareView* compareView() const { return compare_; }
  /// At the right of the workbench; the window may move it into a dock (setWidget reparents).
  PassOptionsPanel* optionsPanel() const { return options_; }
  JobRunner& jobs() { return jobs_; }

signals:
  /// The user applied new pass options: recompile with them.
  void optionsChanged(const tessel::graph::PassOptions& options);
  /// Step `row`'s graph is laid out and shown alone.
  void stepShown(int row);
  /// Steps `before` and `after` are shown side by side.
  void comparisonShown(int before, int after);
  /// A node was selected in the shown graph (either side when comparing); `graph` is the
  /// graph it belongs to, `id` the node's name (empty: selection cleared).
  void nodeSelected(std::shared_ptr<const tessel::graph::Graph> graph, const QString& id);
  /// A node was double-clicked (open a fused node's schedule).
  void nodeActivated(std::shared_ptr<const tessel::graph::Graph> graph, const QString& id);
  /// A background job failed (layout); the compiler's message.
  void failed(const QString& message);

protected:
  void changeEvent(QEvent* event) override;

private:
  struct StepLayout;
  void showStep(int row);
  void showComparison(int before, int after);
  void onStepsReady();

  JobRunner jobs_;
  PassTimelineModel* model_;
  PassTimelineView* timeline_;
  QStackedWidget* stack_;
  QLabel* placeholder_;
  QWidget* stepPane_;
  QLabel* stepTitle_;
  QLabel* colouringLegend_;
  std::vector<NodeDecoration> colouring_;
  QCheckBox* highlightBox_;
  GraphView* stepView_;
  GraphCompareView* compare_;
  QSplitter* mainSplitter_;
  PassOptionsPanel* options_;
  std::shared_ptr<const graph::Graph> imported_;
  std::shared_ptr<const driver::CompiledModel> compiled_;
  int shownStep_ = -1;
  std::set<QString> expandedFused_;  ///< Fused and module groups the user expanded in the step view.
  std::set<QString> collapsedModules_;  ///< Module groups that open by default, closed by the user.
  bool highlightChanges_ = true;
  // The comparison to restore after a recompile (the strip keeps the selected step itself).
  int pendingBefore_ = -1, pendingAfter_ = -1;
};

}  // namespace tessel::views
