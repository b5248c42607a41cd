// Wires the graph view, minimap, find bar and properties panel to background layout jobs.
#include "views/graph/GraphWorkbench.h"

#include <QEvent>
#include <QLabel>
#include <QScrollBar>
#include <QShortcut>
#include <QTimer>
#include <QVBoxLayout>

#include <utility>

#include "views/graph/GraphBreadcrumbs.h"
#include "views/graph/GraphExport.h"
#include "views/graph/GraphFindBar.h"
#include "views/graph/GraphMinimap.h"
#include "views/graph/GraphScene.h"
#include "views/graph/GraphView.h"
#include "views/graph/ModuleGroups.h"
#include "views/graph/NodePropertiesPanel.h"
#include "views/graph/UnsupportedNodesPanel.h"

namespace tessel::views {

namespace {
const QString kLayoutChannel = QStringLiteral("layout");
constexpr int kMinimapMargin = 12;
}  // namespace

GraphWorkbench::GraphWorkbench(QWidget* parent)
    : QWidget(parent),
      view_(new GraphView(this)),
      minimap_(new GraphMinimap(view_)),
      findBar_(new GraphFindBar(this)),
      unsupported_(new UnsupportedNodesPanel(this)),
      properties_(new NodePropertiesPanel(this)) {
  breadcrumbs_ = new GraphBreadcrumbs(this);
  breadcrumbs_->hide();
  breadcrumbTimer_ = new QTimer(this);
  breadcrumbTimer_->setSingleShot(true);
  breadcrumbTimer_->setInterval(100);  // a pan or zoom moves the view many times a second
  connect(breadcrumbTimer_, &QTimer::timeout, this, &GraphWorkbench::updateBreadcrumbs);
  properties_->hide();
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  colouringLegend_ = new QLabel(this);
  colouringLegend_->setObjectName(QStringLiteral("GraphColouringLegend"));
  colouringLegend_->setTextFormat(Qt::RichText);
  colouringLegend_->setContentsMargins(8, 4, 8, 4);
  colouringLegend_->hide();
  layout->addWidget(colouringLegend_);
  layout->addWidget(unsupported_);
  layout->addWidget(breadcrumbs_);
  layout->addWidget(view_, 1);
  layout->addWidget(findBar_);
  findBar_->hide();
  minimap_->setView(view_);
  minimap_->hide();
  view_->installEventFilter(this);

  connect(view_, &GraphView::nodeSelected, this, &GraphWorkbench::showProperties);
  connect(view_, &GraphView::nodeSelected, this, &GraphWorkbench::nodeSelected);
  connect(view_, &GraphView::nodeSelected, unsupported_, &UnsupportedNodesPanel::setCurrentNode);
  connect(unsupported_, &UnsupportedNodesPanel::nodeChosen, this, &GraphWorkbench::goToOperation);
  connect(view_, &GraphView::nodeActivated, this, &GraphWorkbench::nodeActivated);
  connect(view_, &GraphView::nodeSelected, this, &GraphWorkbench::updateBreadcrumbs);
  connect(view_, &GraphView::viewportChanged, breadcrumbTimer_, qOverload<>(&QTimer::start));
  connect(breadcrumbs_, &GraphBreadcrumbs::crumbClicked, this, &GraphWorkbench::goToCrumb);
  connect(view_, &GraphView::fusedGroupToggleRequested, this, &GraphWorkbench::setFusedGroupExpanded);
  connect(view_->graphScene(), &GraphScene::populated, this, [this] {
    updateBreadcrumbs();
    if (std::exchange(awaitingPopulation_, false)) emit layoutFinished(false);
  });
  connect(findBar_, &GraphFindBar::matchesChanged, view_->graphScene(), &GraphScene::setFindHighlights);
  connect(findBar_, &GraphFindBar::currentMatchChanged, this, [this](const QString& id) {
    if (id.isEmpty()) return;
    view_->centerOnNode(id);
    // A match inside a closed module is opened up to it (the find runs again in the new layout).
    if (isModuleGroupId(id)) revealInModule(id, findBar_->query());
  });
  connect(findBar_, &GraphFindBar::closed, this, [this] {
    view_->graphScene()->setFindHighlights({}, {});
    view_->setFocus();
  });

  auto* find = new QShortcut(QKeySequence::Find, this, this, &GraphWorkbench::showFindBar);
  find->setContext(Qt::WidgetWithChildrenShortcut);
  auto* next = new QShortcut(QKeySequence::FindNext, this, findBar_, &GraphFindBar::findNext);
  next->setContext(Qt::WidgetWithChildrenShortcut);
  auto* previous = new QShortcut(QKeySequence::FindPrevious, this, findBar_, &GraphFindBar::findPrevious);
  previous->setContext(Qt::WidgetWithChildrenShortcut);

  connect(&jobs_, &JobRunner::jobStarted, this, [this](const QString& channel, const QString& title) {
    if (channel == kLayoutChannel) emit layoutStarted(title);
  });
  connect(&jobs_, &JobRunner::jobProgress, this, [this](const QString& channel, int percent, const QString& message) {
    if (channel == kLayoutChannel) emit layoutProgress(percent, message);
  });
  connect(&jobs_, &JobRunner::jobFinished, this, [this](const QString& channel, bool cancelled) {
    if (channel == kLayoutChannel && cancelled) emit layoutFinished(true);
  });
}

void GraphWorkbench::setColouringLegend(const QString& html) {
  colouringLegend_->setText(html);
  colouringLegend_->setVisible(!html.isEmpty());
}

QString GraphWorkbench::colouringLegend() const { return colouringLegend_->text(); }

GraphWorkbench::~GraphWorkbench() {
  // A layout in flight holds no pointer into this widget, but its delivery would; stop it
  // and wait, so nothing is delivered into a half-destroyed object.
  jobs_.cancelAll();
  jobs_.waitForAll();
}

void GraphWorkbench::setGraph(std::shared_ptr<const graph::Graph> graph) {
  if (graph != graph_) layoutCache_.clear();
  graph_ = std::move(graph);
  if (!graph_) {
    jobs_.cancel(kLayoutChannel);
    showLayout(nullptr);
    return;
  }
  startLayout();
}

std::shared_ptr<const GraphLayout> GraphWorkbench::currentLayout() const { return view_->graphLayout(); }

void GraphWorkbench::cancelLayout() { jobs_.cancel(kLayoutChannel); }
bool GraphWorkbench::isLayingOut() const { return jobs_.isRunning(kLayoutChannel); }

void GraphWorkbench::setFusedGroupExpanded(const QString& fusedNodeName, bool expanded) {
  if (isModuleGroupId(fusedNodeName)) {
    setModuleGroupExpanded(fusedNodeName, expanded);
    return;
  }
  bool changed = expanded ? options_.expandedFusedNodes.insert(fusedNodeName).second
                          : options_.expandedFusedNodes.erase(fusedNodeName) > 0;
  if (options_.expandAllFused && !expanded) {
    // Collapsing one group out of "all expanded": expand every other one explicitly.
    options_.expandAllFused = false;
    if (graph_)
      for (const auto* op : graph_->operations())
        if (op->isFused() && QString::fromStdString(op->name) != fusedNodeName)
          options_.expandedFusedNodes.insert(QString::fromStdString(op->name));
    changed = true;
  }
  if (changed && graph_) {
    layoutAnchor_ = fusedNodeName;
    startLayout();
  }
}

void GraphWorkbench::setModuleGroupExpanded(const QString& groupId, bool expanded) {
  // A group that opens by default is closed by naming it in collapsedModules.
  auto shown = view_->graphLayout();
  bool opensByDefault = shown && shown->modules && shown->modules->opensByDefault(groupId);
  bool changed = expanded ? options_.collapsedModules.erase(groupId) > 0
                          : opensByDefault && options_.collapsedModules.insert(groupId).second;
  changed = (expanded ? options_.expandedModules.insert(groupId).second : options_.expandedModules.erase(groupId) > 0) ||
            changed;
  if (changed && graph_) {
    layoutAnchor_ = groupId;
    startLayout();
  }
}

void GraphWorkbench::revealInModule(const QString& groupId, const QString& query) {
  auto layout = view_->graphLayout();
  if (!layout || !layout->modules || layout->graph != graph_ || query.isEmpty()) return;
  for (const graph::OperationNode* op : graph_->operations()) {
    const QStringList& path = layout->modules->groupsOf(op);
    if (!path.contains(groupId)) continue;
    if (!QString::fromStdString(op->name).contains(query, Qt::CaseInsensitive) &&
        !QString::fromStdString(op->op).contains(query, Qt::CaseInsensitive))
      continue;
    if (openModuleGroups(path)) {
      layoutAnchor_ = groupId;
      startLayout();
    }
    return;
  }
}

void GraphWorkbench::goToOperation(const QString& name) {
  auto layout = view_->graphLayout();
  if (!layout) return;
  if (layout->findNode(name)) {
    view_->selectNode(name);
    view_->centerOnNode(name);
    return;
  }
  if (!layout->modules || !graph_ || layout->graph != graph_) return;
  const std::string wanted = name.toStdString();
  for (const graph::OperationNode* op : graph_->operations()) {
    if (op->name != wanted) continue;
    // Inside closed module groups: open them, and select it once the new layout is shown.
    if (openModuleGroups(layout->modules->groupsOf(op))) {
      pendingReveal_ = name;
      startLayout();
    }
    return;
  }
}

bool GraphWorkbench::openModuleGroups(const QStringList& groups) {
  bool changed = false;
  for (const QString& group : groups) {
    changed = options_.collapsedModules.erase(group) > 0 || changed;
    changed = options_.expandedModules.insert(group).second || changed;
  }
  return changed;
}

void GraphWorkbench::setAllFusedGroupsExpanded(bool expanded) {
  options_.expandAllFused = expanded;
  options_.expandedFusedNodes.clear();
  if (graph_) startLayout();
}

void GraphWorkbench::setDotNodeLimit(int nodes) {
  options_.dotNodeLimit = nodes;
  layoutCache_.clear();
}

void GraphWorkbench::setNodeCosts(std::shared_ptr<const NodeCosts> costs) {
  bool same = costs == options_.costs || (costs && options_.costs && *costs == *options_.costs);
  options_.costs = std::move(costs);
  if (same) return;
  layoutCache_.clear();
  // Only module boxes and frames say what they cost: other drawings stay as they are.
  auto shown = view_->graphLayout();
  if (graph_ && (isLayingOut() || (shown && shown->graph == graph_ && shown->groupedByModule()))) startLayout();
}

void GraphWorkbench::setGraphPalette(const GraphPalette& palette) {
  view_->setGraphPalette(palette);
  minimap_->update();
}

QString GraphWorkbench::layoutKey() const {
  QStringList parts{options_.expandAllFused ? QStringLiteral("all fused") : QString()};
  for (const QString& name : options_.expandedFusedNodes) parts << name;
  parts << QStringLiteral("modules:");
  for (const QString& id : options_.expandedModules) parts << id;
  parts << QStringLiteral("closed:");
  for (const QString& id : options_.collapsedModules) parts << id;
  return parts.join(QLatin1Char('\n'));
}

void GraphWorkbench::cacheLayout(const QString& key, std::shared_ptr<const GraphLayout> layout) {
  if (!layout || layout->graph != graph_) return;
  std::erase_if(layoutCache_, [&](const auto& entry) { return entry.first == key; });
  layoutCache_.emplace_back(key, std::move(layout));
  if (layoutCache_.size() > kCachedLayouts) layoutCache_.erase(layoutCache_.begin());
}

std::shared_ptr<const GraphLayout> GraphWorkbench::cachedLayout(const QString& key) const {
  for (const auto& [cachedKey, layout] : layoutCache_)
    if (cachedKey == key && layout->graph == graph_) return layout;
  return nullptr;
}

void GraphWorkbench::startLayout(LayoutPass pass) {
  const QString key = layoutKey();
  // Seen before (the group just opened is closed again): nothing to lay out, but it is shown
  // through the same job, so it supersedes and is delivered like any other layout.
  std::shared_ptr<const GraphLayout> cached = pass == LayoutPass::Full ? cachedLayout(key) : nullptr;
  GraphLayoutOptions options = options_;
  // The module groups of the layout on screen, when it is of this graph (builtFor checks).
  if (auto shown = view_->graphLayout(); shown && shown->graph == graph_) options.reuseModules = shown->modules;
  GraphLayoutOptions measured = view_->graphScene()->layoutOptions();
  options.characterWidth = measured.characterWidth;
  options.lineHeight = measured.lineHeight;
  // A first pass over a big graph uses the quick layered layout; dot follows as a refinement.
  const int dotNodeLimit = options_.dotNodeLimit;
  if (pass == LayoutPass::Full && quickPreviewLimit_ > 0)
    options.dotNodeLimit = std::min(options.dotNodeLimit, quickPreviewLimit_);
  auto graph = graph_;
  // No counting here: walking a huge graph is work for the worker, not the GUI thread.
  using LayoutResult = std::shared_ptr<Expected<std::shared_ptr<const GraphLayout>>>;
  jobs_.start<LayoutResult>(
      kLayoutChannel,
      pass == LayoutPass::Full ? tr("Laying out the graph") : tr("Refining the graph layout with dot"),
      [graph, options, cached](JobContext& job) -> LayoutResult {
        using Result = Expected<std::shared_ptr<const GraphLayout>>;
        if (cached) return std::make_shared<Result>(cached);
        Expected<GraphLayout> laidOut = layoutGraph(graph, options, job);
        if (!laidOut) return std::make_shared<Result>(laidOut.error());
        return std::make_shared<Result>(std::make_shared<const GraphLayout>(std::move(*laidOut)));
      },
      [this, pass, dotNodeLimit, key, fromCache = cached != nullptr](LayoutResult result) {
        if (!*result) {
          emit layoutFailed(QString::fromStdString(result->error().toString()));
          emit layoutFinished(false);
          return;
        }
        std::shared_ptr<const GraphLayout> layout = **result;
        if (pass == LayoutPass::Refinement && layout->dotTimedOut) {
          // dot was stopped at its time limit: the layered picture on screen stays.
          cacheLayout(key, view_->graphLayout());
          emit layoutProgress(100, tr("dot took longer than %1 s; the layered layout stays")
                                       .arg(options_.dotTimeLimitSeconds));
          emit layoutFinished(false);
          return;
        }
        bool preview = pass == LayoutPass::Full && !fromCache && layout->engine == QLatin1String("layered") && !layout->dotTimedOut &&
                       int(layout->nodes.size()) <= dotNodeLimit && layout->widestRankGap <= options_.dotRankGapLimit &&
                       !layout->denselyConnected;
        // layoutFinished follows when the scene has every item (large graphs fill in over a
        // few event-loop turns).
        awaitingPopulation_ = true;
        if (!preview) cacheLayout(key, layout);
        if (pass == LayoutPass::Refinement) {
          showRefinedLayout(std::move(layout));
          return;
        }
        auto shown = view_->graphLayout();
        previewShowsStart_ = !shown || shown->graph != layout->graph;
        showLayout(std::move(layout), std::exchange(layoutAnchor_, QString()));
        if (preview) {
          previewViewState_ = viewState();
          startLayout(LayoutPass::Refinement);
        }
      });
}

GraphWorkbench::ViewState GraphWorkbench::viewState() const {
  return {view_->zoom(), view_->horizontalScrollBar()->value(), view_->verticalScrollBar()->value()};
}

void GraphWorkbench::showRefinedLayout(std::shared_ptr<const GraphLayout> layout) {
  // The two layouts place every box differently: a view nobody touched since the graph's
  // first picture shows the start again, otherwise the box the user was looking at stays
  // where it was on screen.
  bool untouched = previewShowsStart_ && viewState() == previewViewState_;
  QString anchor = view_->graphScene()->selectedNode();
  if (anchor.isEmpty()) anchor = view_->nodeNearestViewCenter();
  showUnsupportedNodes(layout);
  view_->setGraphLayout(layout, anchor);
  if (untouched) view_->showStart();
  placeMinimap();
  // Indexing the names for find is a turn of its own: the swap already filled this one.
  QTimer::singleShot(0, this, [this, layout] {
    if (view_->graphLayout() == layout) findBar_->setGraphLayout(layout);
  });
}

void GraphWorkbench::showLayout(std::shared_ptr<const GraphLayout> layout, const QString& anchorId) {
  showUnsupportedNodes(layout);
  view_->setGraphLayout(layout, anchorId);
  if (layout && !pendingReveal_.isEmpty() && layout->findNode(pendingReveal_)) {
    view_->selectNode(pendingReveal_);
    view_->centerOnNode(std::exchange(pendingReveal_, QString()));
  }
  findBar_->setGraphLayout(layout);
  minimap_->setVisible(layout != nullptr);
  placeMinimap();
  if (!layout) showProperties(QString());
}

namespace {
// Breadcrumbs have something to say: the graph has module boxes or frames.
bool isHierarchical(const GraphLayout* layout) {
  return layout && (layout->groupedByModule() || !layout->clusters.empty());
}
}  // namespace

void GraphWorkbench::updateBreadcrumbs() {
  breadcrumbTimer_->stop();
  auto layout = view_->graphLayout();
  if (!isHierarchical(layout.get())) {
    breadcrumbs_->setPath({});
    breadcrumbs_->hide();
    return;
  }
  QString id = view_->selectedNode();
  if (id.isEmpty()) id = view_->nodeNearestViewCenter();
  breadcrumbs_->setPath(breadcrumbPath(*layout, id));
  breadcrumbs_->show();
}

void GraphWorkbench::goToCrumb(const QString& id) {
  auto layout = view_->graphLayout();
  if (!layout) return;
  if (id.isEmpty()) {
    view_->fitToView();
    return;
  }
  view_->revealItem(id);
  if (layout->findNode(id)) view_->selectNode(id);
}

void GraphWorkbench::showUnsupportedNodes(const std::shared_ptr<const GraphLayout>& layout) {
  unsupported_->setGraphLayout(layout);
  breadcrumbs_->setVisible(isHierarchical(layout.get()));
  // The view places the new layout in the height it has: give it the height it will have.
  this->layout()->activate();
}

void GraphWorkbench::showProperties(const QString& id) {
  if (!properties_) return;
  auto layout = view_->graphLayout();
  const LayoutNode* node = layout && !id.isEmpty() ? layout->findNode(id) : nullptr;
  if (node) properties_->setNode(layout->graph, node->source);
  else properties_->setNode(nullptr, nullptr);
}

NodePropertiesPanel* GraphWorkbench::propertiesPanel() const { return properties_.data(); }

void GraphWorkbench::showFindBar() { findBar_->activate(); }

Status GraphWorkbench::exportPng(const QString& path) const { return exportGraphPng(*view_->graphScene(), path); }

Status GraphWorkbench::exportSvg(const QString& path) const {
  return exportGraphSvg(*view_->graphScene(), path, graph_ ? tr("Tessel graph") : QString());
}

void GraphWorkbench::placeMinimap() {
  QSize size(std::clamp(view_->width() / 5, 140, 240), std::clamp(view_->height() / 4, 100, 180));
  minimap_->resize(size);
  minimap_->move(view_->width() - size.width() - kMinimapMargin, view_->height() - size.height() - kMinimapMargin);
  minimap_->raise();
}

bool GraphWorkbench::eventFilter(QObject* watched, QEvent* event) {
  if (watched == view_ && event->type() == QEvent::Resize) placeMinimap();
  return QWidget::eventFilter(watched, event);
}

}  // namespace tessel::views
