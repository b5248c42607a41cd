// Builds and updates the graph view's items from a GraphLayout.
#include "views/graph/GraphScene.h"

#include <QFontMetricsF>

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
  setBackgroundBrush(style_.palette.background);
  connect(this, &QGraphicsScene::selectionChanged, this, &GraphScene::onSelectionChanged);
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

void GraphScene::setGraphLayout(std::shared_ptr<const GraphLayout> layout) {
  rebuilding_ = true;
  clearSelection();
  clear();
  nodeItems_.clear();
  clusterRects_.clear();
  layout_ = std::move(layout);
  if (layout_) {
    std::vector<int> depth(layout_->clusters.size(), 0);
    QHash<QString, int> clusterDepth;
    for (const auto& cluster : layout_->clusters) {
      int d = cluster.parentClusterId.isEmpty() ? 0 : clusterDepth.value(cluster.parentClusterId) + 1;
      clusterDepth.insert(cluster.id, d);
      addItem(new GraphClusterItem(cluster, d, &style_));
      clusterRects_.insert(cluster.id, cluster.box);
    }
    for (const auto& edge : layout_->edges) addItem(new GraphEdgeItem(edge, &style_));
    for (const auto& node : layout_->nodes) {
      auto* item = new GraphNodeItem(node, &style_);
      addItem(item);
      nodeItems_.insert(node.id, item);
    }
    setSceneRect(layout_->bounds);
  } else {
    setSceneRect(QRectF());
  }
  QString previous = selected_;
  selected_.clear();
  applyDecorationsAndHighlights();
  rebuilding_ = false;
  if (auto* item = nodeItems_.value(previous)) {
    item->setSelected(true);
  } else if (!previous.isEmpty()) {
    emit nodeSelected(QString());
  }
}

QRectF GraphScene::itemRect(const QString& id) const {
  if (auto* item = nodeItems_.value(id)) return item->box();
  return clusterRects_.value(id);
}

void GraphScene::selectNode(const QString& id) {
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
