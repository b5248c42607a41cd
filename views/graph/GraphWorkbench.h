// The graph view as the main window embeds it: the view with a minimap in its corner, a find
// bar (Ctrl+F), a properties panel for a dock, and background layout with progress/cancel.
#pragma once

#include <QPointer>
#include <QWidget>

#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "core/graph/Graph.h"
#include "core/support/Error.h"
#include "views/common/JobRunner.h"
#include "views/graph/GraphLayout.h"
#include "views/graph/GraphPalette.h"

class QLabel;
class QTimer;

namespace tessel::views {

class GraphBreadcrumbs;
class GraphFindBar;
class GraphMinimap;
class GraphView;
class NodePropertiesPanel;
class UnsupportedNodesPanel;

/// Usage (MainWindow):
///
///   auto* graphView = new GraphWorkbench(this);
///   setCentralWidget(graphView);
///   propertiesDock->setWidget(graphView->propertiesPanel());   // follows the selection
///   connect(graphView, &GraphWorkbench::layoutProgress, statusBar, ...);  // + cancelLayout()
///   connect(session, &ModelSession::compiled, [=] {
///     graphView->setGraph(std::make_shared<const graph::Graph>(session->compiledModel()->optimized));
///   });
///
/// Layout runs on this widget's own JobRunner, channel "layout": a newer setGraph() or an
/// expand/collapse supersedes the layout in flight. The view keeps showing the previous
/// layout until the new one arrives; the group clicked stays where it was on screen. The last
/// few finished layouts of the graph are kept, so going back to a state seen before (closing
/// the group just opened) shows at once. Above the graph, breadcrumbs say where in the module
/// hierarchy the selection (or the middle of the view) is. Shortcuts (when the workbench has focus): Ctrl+F find,
/// Ctrl+= / Ctrl+- zoom, Ctrl+0 fit, F3 / Shift+F3 next/previous match.
class GraphWorkbench : public QWidget {
  Q_OBJECT

public:
  explicit GraphWorkbench(QWidget* parent = nullptr);
  ~GraphWorkbench() override;

  /// Lays `graph` out in the background and shows it (null clears the view).
  void setGraph(std::shared_ptr<const graph::Graph> graph);
  std::shared_ptr<const graph::Graph> graph() const { return graph_; }
  /// The layout on screen; null before the first one arrived.
  std::shared_ptr<const GraphLayout> currentLayout() const;

  /// Stops the layout in flight (layoutFinished(true) follows); the view keeps what it shows.
  void cancelLayout();
  bool isLayingOut() const;

  /// Expands (cluster with its body) or collapses a fused operation and lays out again, keeping
  /// its box or frame where it is on screen; a module group's id (isModuleGroupId: the + of a
  /// closed module's box) goes to setModuleGroupExpanded.
  void setFusedGroupExpanded(const QString& fusedNodeName, bool expanded);
  /// Opens (a frame around its members) or closes (one box) a module group of a graph drawn by
  /// module (GraphLayout::groupedByModule) and lays out again, keeping the group where it is
  /// on screen.
  void setModuleGroupExpanded(const QString& groupId, bool expanded);
  const std::set<QString>& expandedModuleGroups() const { return options_.expandedModules; }
  void setAllFusedGroupsExpanded(bool expanded);
  const std::set<QString>& expandedFusedGroups() const { return options_.expandedFusedNodes; }
  /// Graphs with more boxes than this use the layered layout instead of dot (default 8000).
  void setDotNodeLimit(int nodes);
  /// Graphs with more boxes than this (default kInteractiveDotNodeLimit; 0: never) are shown first with the
  /// layered layout, ready in well under a second, while dot lays them out again in the
  /// background (tens of seconds at 5,000 boxes); the dot layout then replaces it, keeping
  /// the box in the middle of the view where it was (or refitting a view nobody moved).
  /// isLayingOut() stays true until the dot layout is shown.
  void setQuickPreviewLimit(int nodes) { quickPreviewLimit_ = nodes; }
  /// dot is stopped after this long (GraphLayoutOptions::dotTimeLimitSeconds; default 30 s):
  /// a refinement stopped so leaves the layered layout on screen.
  void setDotTimeLimit(double seconds) { options_.dotTimeLimitSeconds = seconds; }

  /// What the graph's operations cost (FLOPs from the compile, time once profiled), summed on
  /// the boxes and frames of module groups; lays a graph drawn by module out again when the
  /// costs changed. Null: operation counts only.
  void setNodeCosts(std::shared_ptr<const NodeCosts> costs);

  /// Switches the graph's colours (the window calls it when its theme changes).
  void setGraphPalette(const GraphPalette& palette);

  /// A line above the graph explaining its colouring (rich text); empty hides it.
  void setColouringLegend(const QString& html);
  QString colouringLegend() const;

  /// Opens the find bar with the focus in its query field.
  void showFindBar();

  /// Exports the whole graph; a Diagnostic naming the file when it cannot be written.
  Status exportPng(const QString& path) const;
  Status exportSvg(const QString& path) const;

  GraphView* view() const { return view_; }
  GraphMinimap* minimap() const { return minimap_; }
  GraphFindBar* findBar() const { return findBar_; }
  /// Shown while the graph has frames or module boxes.
  GraphBreadcrumbs* breadcrumbs() const { return breadcrumbs_; }
  /// Above the graph while it holds nodes whose operators Tessel does not implement (a model
  /// imported to be viewed): says the model cannot be compiled and lists those nodes; clicking
  /// one selects it in the graph.
  UnsupportedNodesPanel* unsupportedNodesPanel() const { return unsupported_; }
  /// Not in this widget's layout: put it in a dock (it follows the view's selection).
  NodePropertiesPanel* propertiesPanel() const;
  JobRunner& jobs() { return jobs_; }

signals:
  void layoutStarted(const QString& title);
  /// `percent` 0-100 or -1 (busy); `message` says what is happening ("Running dot on 812
  /// nodes").
  void layoutProgress(int percent, const QString& message);
  /// The layout ended: shown (`cancelled` false) or cancelled/superseded.
  void layoutFinished(bool cancelled);
  /// Layout failed; `message` is the diagnostic text.
  void layoutFailed(const QString& message);
  void nodeSelected(const QString& id);
  /// A node was double-clicked (open its schedule).
  void nodeActivated(const QString& id);

protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

private:
  enum class LayoutPass { Full, Refinement };
  void startLayout(LayoutPass pass = LayoutPass::Full);
  void showRefinedLayout(std::shared_ptr<const GraphLayout> layout);
  void showLayout(std::shared_ptr<const GraphLayout> layout, const QString& anchorId = {});
  /// What a layout of the graph depends on besides the graph: the groups open.
  QString layoutKey() const;
  /// Keeps `layout` as the finished one for `key` (the last kCachedLayouts).
  void cacheLayout(const QString& key, std::shared_ptr<const GraphLayout> layout);
  std::shared_ptr<const GraphLayout> cachedLayout(const QString& key) const;
  void updateBreadcrumbs();
  void goToCrumb(const QString& id);
  /// Selects and centres the operation's box, opening the module groups it is inside first
  /// (an unsupported node chosen in the list above the graph).
  void goToOperation(const QString& name);
  /// Marks `groups` open (also those that open by default and were closed); true when any was
  /// not. The caller lays out again.
  bool openModuleGroups(const QStringList& groups);
  void showProperties(const QString& id);
  /// Opens the module groups down to the first operation of closed group `groupId` whose name
  /// or operator contains `query` (what find matched inside the group's box).
  void revealInModule(const QString& groupId, const QString& query);
  /// Shows or hides the list of unsupported nodes before the view places `layout`.
  void showUnsupportedNodes(const std::shared_ptr<const GraphLayout>& layout);
  void placeMinimap();

  JobRunner jobs_;
  GraphView* view_;
  QLabel* colouringLegend_ = nullptr;
  GraphBreadcrumbs* breadcrumbs_;
  QTimer* breadcrumbTimer_;
  GraphMinimap* minimap_;
  GraphFindBar* findBar_;
  UnsupportedNodesPanel* unsupported_;
  QPointer<NodePropertiesPanel> properties_;
  std::shared_ptr<const graph::Graph> graph_;
  GraphLayoutOptions options_;
  bool awaitingPopulation_ = false;
  /// The group last expanded or collapsed: the next layout keeps it where it is on screen.
  QString layoutAnchor_;
  /// An operation to select once the layout opening its groups is shown (goToOperation).
  QString pendingReveal_;
  static constexpr size_t kCachedLayouts = 8;
  std::vector<std::pair<QString, std::shared_ptr<const GraphLayout>>> layoutCache_;  ///< Newest last.
  /// The preview on screen was the graph's first picture, shown from the start: the refined
  /// layout may show the start again if nobody moved the view.
  bool previewShowsStart_ = false;
  int quickPreviewLimit_ = kInteractiveDotNodeLimit;
  /// The view's zoom and scroll position right after the quick preview was shown.
  struct ViewState {
    double zoom = 0;
    int horizontal = 0, vertical = 0;
    bool operator==(const ViewState&) const = default;
  };
  ViewState viewState() const;
  ViewState previewViewState_;
};

}  // namespace tessel::views
