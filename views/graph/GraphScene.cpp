// Builds and updates the graph view's items from a GraphLayout.
#include "views/graph/GraphScene.h"

#include <QElapsedTimer>
#include <QFontMetricsF>
#include <QTimer>

#include <limits>
#include <utility>

#include "views/graph/GraphClusterItem.h"
#include "views/graph/GraphEdgeItem.h"
#include "views/graph/GraphNodeItem.h"

namespace tessel::views {

GraphScene::GraphScene(QObject* parent) : QGraphicsScene(parent) {
  // Pixel sizes, not points: the layout is in scene units, so text must not grow with the
  // screen's DPI setting relative to the boxes.
  QFont base;
  style_.titleFont = base;
  style_.titleFont.setPixelSize(12);
  style_.titleFont.setBold(true);
  style_.nameFont = base;
  style_.nameFont.setPixelSize(11);
  style_.detailFont = base;
  style_.detailFont.setPixelSize(10);
  style_.edgeFont = base;
  style_.edgeFont.setPixelSize(10);
  style_.clusterFont = base;
  style_.clusterFont.setPixelSize(11);
  style_.clusterFont.setBold(true);
  style_.lineHeight = std::ceil(QFontMetricsF(style_.nameFont).height()) + 2;
  const QString sampleLabel = QStringLiteral("1x64x56x56 float32@NCHW16c");
  style_.edgeCharacterWidth = QFontMetricsF(style_.edgeFont).horizontalAdvance(sampleLabel) / double(sampleLabel.size());
  setBackgroundBrush(style_.palette.background);
  connect(this, &QGraphicsScene::selectionChanged, this, &GraphScene::onSelectionChanged);
}

GraphScene::~GraphScene() {
  // ~QGraphicsScene deletes the items and reports a selected one leaving as a selection
  // change; by then this object's members are gone, so the slot must not run. Remove the
  // items while they still exist.
  disconnect(this, &QGraphicsScene::selectionChanged, this, nullptr);
  clear();
}

GraphLayoutOptions GraphScene::layoutOptions() const {
  GraphLayoutOptions options;
  // Widths of typical node text (names, shapes) rather than averageCharWidth, which
  // underestimates digits and the bold title.
  QFontMetricsF metrics(style_.nameFont);
  const QString sample = QStringLiteral("/layer1/Conv_0 1x64x56x56 ReluMaxPool");
  options.characterWidth = metrics.horizontalAdvance(sample) / double(sample.size());
  options.lineHeight = style_.lineHeight;
  return options;
}

void GraphScene::setGraphPalette(const GraphPalette& palette) {
  style_.palette = palette;
  setBackgroundBrush(palette.background);
  update();
}

namespace {

// What stays selected when `after` replaces `before`: the selected box itself, or when it went
// into a group that closed (a module, a fused operation), that group's box.
QString survivingSelection(const GraphLayout* before, const GraphLayout* after, const QString& selected) {
  if (selected.isEmpty() || !before || !after || after->findNode(selected)) return selected;
  for (const QString& group : before->enclosingClusters(selected))
    if (after->findNode(group)) return group;
  return selected;
}

}  // namespace

void GraphScene::setGraphLayout(std::shared_ptr<const GraphLayout> layout) {
  ++generation_;
  rebuilding_ = true;
  pendingSelection_ = survivingSelection(layout_.get(), layout.get(), selected_);
  clearSelection();
  // Between two big scenes the old items go in chunks (see populateFor); otherwise at once,
  // which also keeps a small new scene's spatial index from indexing them first.
  std::vector<QGraphicsItem*> previous;
  size_t newItemCount = layout ? layout->nodes.size() + layout->edges.size() + layout->clusters.size() : 0;
  if (newItemCount > kIncrementalItemCount) {
    for (QGraphicsItem* item : items())
      if (!item->parentItem()) previous.push_back(item);  // children go with their parents
  }
  if (previous.size() > kIncrementalItemCount) {
    retiring_ = std::move(previous);
  } else {
    retiring_.clear();
    clear();
  }
  nodeItems_.clear();
  layout_ = std::move(layout);
  nextCluster_ = nextNode_ = nextEdge_ = 0;
  clusterDepth_.clear();
  if (!layout_) {
    setSceneRect(QRectF());
    finishPopulation();
    return;
  }
  setSceneRect(layout_->bounds);
  size_t itemCount = layout_->nodes.size() + layout_->edges.size() + layout_->clusters.size();
  // A BSP index pays for itself on small scenes; on huge ones building it in one go is the
  // longest stall of all, while a linear scan of the visible test stays a few milliseconds.
  setItemIndexMethod(itemCount > kIncrementalItemCount ? QGraphicsScene::NoIndex : QGraphicsScene::BspTreeIndex);
  if (itemCount <= kIncrementalItemCount) {
    populateFor(std::numeric_limits<qint64>::max());
    return;
  }
  populateFor(kPopulateBudgetMs);
}

// Adds items for at most `budgetMs`, then continues on a later event-loop turn, so a huge
// graph appears within a few frames without freezing the window. Boxes come first (they
// carry the picture), then edges.
void GraphScene::populateFor(qint64 budgetMs) {
  QElapsedTimer clock;
  clock.start();
  const int generation = generation_;
  auto outOfTime = [&](size_t done) { return done % 64 == 0 && clock.elapsed() >= budgetMs; };
  while (!retiring_.empty()) {
    if (outOfTime(retiring_.size())) return continueLater(generation);
    QGraphicsItem* item = retiring_.back();
    retiring_.pop_back();
    removeItem(item);
    delete item;
  }
  for (; nextCluster_ < layout_->clusters.size(); ++nextCluster_) {
    const auto& cluster = layout_->clusters[nextCluster_];
    int depth = cluster.parentClusterId.isEmpty() ? 0 : clusterDepth_.value(cluster.parentClusterId) + 1;
    clusterDepth_.insert(cluster.id, depth);
    addItem(new GraphClusterItem(cluster, depth, &style_));
  }
  for (; nextNode_ < layout_->nodes.size(); ++nextNode_) {
    if (outOfTime(nextNode_)) return continueLater(generation);
    const auto& node = layout_->nodes[nextNode_];
    auto* item = new GraphNodeItem(node, &style_);
    addItem(item);
    nodeItems_.insert(node.id, item);
  }
  for (; nextEdge_ < layout_->edges.size(); ++nextEdge_) {
    if (outOfTime(nextEdge_)) return continueLater(generation);
    addItem(new GraphEdgeItem(layout_->edges[nextEdge_], &style_));
  }
  finishPopulation();
}

void GraphScene::continueLater(int generation) {
  QTimer::singleShot(0, this, [this, generation] {
    if (generation == generation_ && layout_) populateFor(kPopulateBudgetMs);
  });
}

void GraphScene::finishPopulation() {
  selected_.clear();
  applyDecorationsAndHighlights();
  rebuilding_ = false;
  QString previous = std::exchange(pendingSelection_, QString());
  if (auto* item = nodeItems_.value(previous)) {
    item->setSelected(true);
  } else if (!previous.isEmpty()) {
    emit nodeSelected(QString());
  }
  emit populated();
}

bool GraphScene::isPopulating() const { return rebuilding_; }

QRectF GraphScene::itemRect(const QString& id) const {
  if (!layout_) return {};
  if (const auto* node = layout_->findNode(id)) return node->box;
  if (const auto* cluster = layout_->findCluster(id)) return cluster->box;
  return {};
}

void GraphScene::selectNode(const QString& id) {
  if (rebuilding_) {
    pendingSelection_ = id;
    return;
  }
  auto* item = nodeItems_.value(id);
  if (item && item->isSelected() && selectedItems().size() == 1) return;
  clearSelection();
  if (item) item->setSelected(true);
}

void GraphScene::onSelectionChanged() {
  if (rebuilding_) return;
  QString now;
  const auto items = selectedItems();
  for (auto* item : items)
    if (auto* node = dynamic_cast<GraphNodeItem*>(item)) {
      now = node->id();
      break;
    }
  if (now == selected_) return;
  selected_ = now;
  emit nodeSelected(now);
}

void GraphScene::setNodeDecoration(const QString& id, const QColor& colour, const QString& badge,
                                   const QString& tooltip) {
  decorations_.insert(id, Decoration{colour, badge, tooltip});
  if (auto* item = nodeItems_.value(id)) item->setDecoration(colour, badge, tooltip);
}

void GraphScene::clearDecorations() {
  for (auto it = decorations_.cbegin(); it != decorations_.cend(); ++it)
    if (auto* item = nodeItems_.value(it.key())) item->setDecoration(QColor(), QString(), QString());
  decorations_.clear();
}

void GraphScene::setFindHighlights(const QStringList& matches, const QString& current) {
  for (const auto& id : std::as_const(findMatches_))
    if (auto* item = nodeItems_.value(id)) item->setFindState(GraphNodeItem::FindState::None);
  findMatches_ = matches;
  findCurrent_ = current;
  applyDecorationsAndHighlights();
}

void GraphScene::applyDecorationsAndHighlights() {
  for (auto it = decorations_.cbegin(); it != decorations_.cend(); ++it)
    if (auto* item = nodeItems_.value(it.key())) item->setDecoration(it->colour, it->badge, it->tooltip);
  for (const auto& id : std::as_const(findMatches_))
    if (auto* item = nodeItems_.value(id))
      item->setFindState(id == findCurrent_ ? GraphNodeItem::FindState::Current : GraphNodeItem::FindState::Match);
}

void GraphScene::requestFusedToggle(const QString& fusedNodeName, bool expand) {
  emit fusedGroupToggleRequested(fusedNodeName, expand);
}

void GraphScene::activateNode(const QString& id) { emit nodeActivated(id); }

}  // namespace tessel::views
