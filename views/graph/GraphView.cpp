// Zoom, pan, fit and keyboard handling of the graph view.
#include "views/graph/GraphView.h"

#include <QCoreApplication>

#include <QKeyEvent>
#include <QScrollBar>
#include <QWheelEvent>

#include <cmath>

#include "views/graph/GraphScene.h"

namespace tessel::views {

namespace {
constexpr double kZoomStep = 1.25;
}

GraphView::GraphView(QWidget* parent) : QGraphicsView(parent), scene_(new GraphScene(this)) {
  setScene(scene_);
  setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
  setDragMode(QGraphicsView::ScrollHandDrag);
  setTransformationAnchor(QGraphicsView::AnchorViewCenter);
  setResizeAnchor(QGraphicsView::AnchorViewCenter);
  // Items restore what they change and never draw outside their bounds, so the view can
  // skip the per-item bookkeeping; this matters with thousands of visible items.
  setOptimizationFlags(QGraphicsView::DontSavePainterState | QGraphicsView::DontAdjustForAntialiasing);
  setViewportUpdateMode(QGraphicsView::SmartViewportUpdate);
  setFrameShape(QFrame::NoFrame);
  // Navigation is by dragging, the wheel and the minimap, as in Netron; scroll bars would
  // only take room from the graph.
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setFocusPolicy(Qt::StrongFocus);
  connect(scene_, &GraphScene::nodeSelected, this, &GraphView::nodeSelected);
  connect(scene_, &GraphScene::nodeActivated, this, &GraphView::nodeActivated);
  connect(scene_, &GraphScene::fusedGroupToggleRequested, this, &GraphView::fusedGroupToggleRequested);
}

void GraphView::setGraphLayout(std::shared_ptr<const GraphLayout> layout, const QString& requestedAnchor) {
  // Keep the anchor (the selected node by default) where it is on screen, so expanding a
  // group does not jump. Its top edge, centred, is what stays put: an expanded group's frame
  // grows downwards from where its box was, its title where the box's title was.
  auto anchorPoint = [](const QRectF& rect) { return QPointF(rect.center().x(), rect.top()); };
  QString anchorId = requestedAnchor.isEmpty() ? scene_->selectedNode() : requestedAnchor;
  QPointF anchorOnScreen;
  QStringList anchorGroups;  // where the anchor may have gone: the groups around it, outermost first
  bool hadAnchor = false;
  if (!anchorId.isEmpty() && !scene_->itemRect(anchorId).isNull()) {
    anchorOnScreen = mapFromScene(anchorPoint(scene_->itemRect(anchorId)));
    anchorGroups = scene_->graphLayout()->enclosingClusters(anchorId);
    hadAnchor = true;
  }
  bool first = !scene_->graphLayout();
  scene_->setGraphLayout(std::move(layout));
  if (first || fitPending_) {
    showStart();
    fitPending_ = !isVisible();
    return;
  }
  // The new scene may bring or take away a scroll bar, which shrinks or grows the viewport:
  // settle that now, or it moves the view after the anchor was placed.
  QEvent relayout(QEvent::LayoutRequest);
  QCoreApplication::sendEvent(this, &relayout);
  if (hadAnchor && scene_->itemRect(anchorId).isNull()) {
    // A box inside a group that closed: the group's box stands where it was.
    for (const QString& group : anchorGroups)
      if (scene_->graphLayout()->findNode(group)) {
        anchorId = group;
        break;
      }
  }
  if (hadAnchor && !scene_->itemRect(anchorId).isNull()) {
    QPointF delta = mapToScene(anchorOnScreen.toPoint()) - mapToScene(viewport()->rect().center());
    centerOn(anchorPoint(scene_->itemRect(anchorId)) - delta);
  }
  notifyViewport();
}

std::shared_ptr<const GraphLayout> GraphView::graphLayout() const { return scene_->graphLayout(); }

QString GraphView::nodeNearestViewCenter() const {
  auto layout = scene_->graphLayout();
  if (!layout) return {};
  QPointF center = mapToScene(viewport()->rect().center());
  const LayoutNode* nearest = nullptr;
  double best = 0;
  for (const LayoutNode& node : layout->nodes) {
    QPointF offset = node.box.center() - center;
    double distance = QPointF::dotProduct(offset, offset);
    if (!nearest || distance < best) {
      nearest = &node;
      best = distance;
    }
  }
  return nearest ? nearest->id : QString();
}

void GraphView::setGraphPalette(const GraphPalette& palette) { scene_->setGraphPalette(palette); }

double GraphView::zoom() const { return transform().m11(); }

void GraphView::setZoom(double zoom) {
  zoom = std::clamp(zoom, minimumZoom, maximumZoom);
  QPointF center = mapToScene(viewport()->rect().center());
  setTransform(QTransform::fromScale(zoom, zoom));
  centerOn(center);
  notifyViewport();
}

void GraphView::zoomBy(double factor, bool underMouse) {
  double target = std::clamp(zoom() * factor, minimumZoom, maximumZoom);
  if (std::abs(target - zoom()) < 1e-9) return;
  setTransformationAnchor(underMouse ? QGraphicsView::AnchorUnderMouse : QGraphicsView::AnchorViewCenter);
  scale(target / zoom(), target / zoom());
  setTransformationAnchor(QGraphicsView::AnchorViewCenter);
  notifyViewport();
}

void GraphView::zoomIn() { zoomBy(kZoomStep, false); }
void GraphView::zoomOut() { zoomBy(1.0 / kZoomStep, false); }

void GraphView::fitToView() {
  QRectF bounds = scene_->sceneRect();
  if (bounds.isEmpty() || viewport()->width() < 2) return;
  double fit = std::min(viewport()->width() / bounds.width(), viewport()->height() / bounds.height());
  // Small graphs stay at 1:1 rather than being blown up to fill the window.
  double zoom = std::clamp(fit * 0.97, minimumZoom, 1.0);
  setTransform(QTransform::fromScale(zoom, zoom));
  centerOn(bounds.center());
  notifyViewport();
}

void GraphView::showStart() {
  fitToView();
  QRectF bounds = scene_->sceneRect();
  if (bounds.isEmpty() || viewport()->width() < 2 || zoom() >= readableZoom * 0.999) return;
  setTransform(QTransform::fromScale(readableZoom, readableZoom));
  double visibleHeight = viewport()->height() / readableZoom, visibleWidth = viewport()->width() / readableZoom;
  // Across the boxes at the top, the inputs first: the middle of the whole graph's width can
  // be empty space at its top (a graph that drifts sideways as it goes down), and a view of
  // nothing tells a reader nothing.
  QRectF top, inputs;
  if (auto layout = scene_->graphLayout()) {
    for (const LayoutNode& node : layout->nodes) {
      if (node.box.top() > bounds.top() + visibleHeight / 2) continue;
      top |= node.box;
      if (node.op == QLatin1String("Input")) inputs |= node.box;
    }
  }
  double x = bounds.center().x();
  if (!inputs.isEmpty())
    x = inputs.width() > visibleWidth ? inputs.left() + visibleWidth / 2 : inputs.center().x();
  else if (!top.isEmpty())
    x = top.width() > visibleWidth ? top.left() + visibleWidth / 2 : top.center().x();
  centerOn(x, bounds.top() + visibleHeight / 2);
  notifyViewport();
}

GraphViewport GraphView::viewportState() const {
  return GraphViewport{zoom(), mapToScene(viewport()->rect().center())};
}

void GraphView::setViewportState(const GraphViewport& state) {
  double zoom = std::clamp(state.zoom, minimumZoom, maximumZoom);
  setTransform(QTransform::fromScale(zoom, zoom));
  centerOn(state.center);
  notifyViewport();
}

bool GraphView::centerOnNode(const QString& id) {
  QRectF rect = scene_->itemRect(id);
  if (rect.isNull()) return false;
  centerOn(rect.center());
  notifyViewport();
  return true;
}

bool GraphView::revealItem(const QString& id) {
  QRectF rect = scene_->itemRect(id);
  if (rect.isNull()) return false;
  QRectF visible = mapToScene(viewport()->rect()).boundingRect();
  if (rect.width() > visible.width() || rect.height() > visible.height()) {
    const double margin = 0.95;
    double fit = std::min(viewport()->width() / rect.width(), viewport()->height() / rect.height()) * margin;
    setTransform(QTransform::fromScale(std::clamp(fit, minimumZoom, zoom()), std::clamp(fit, minimumZoom, zoom())));
  }
  return centerOnNode(id);
}

void GraphView::selectNode(const QString& id) { scene_->selectNode(id); }
QString GraphView::selectedNode() const { return scene_->selectedNode(); }

void GraphView::setNodeDecoration(const QString& id, const QColor& colour, const QString& badge,
                                  const QString& tooltip) {
  scene_->setNodeDecoration(id, colour, badge, tooltip);
}

void GraphView::clearDecorations() { scene_->clearDecorations(); }

void GraphView::wheelEvent(QWheelEvent* event) {
  // Horizontal wheels and shift-scroll pan; the vertical wheel zooms around the cursor.
  if (event->modifiers() & Qt::ShiftModifier || event->angleDelta().y() == 0) {
    QGraphicsView::wheelEvent(event);
    return;
  }
  double steps = event->angleDelta().y() / 120.0;
  zoomBy(std::pow(kZoomStep, steps), true);
  event->accept();
}

void GraphView::keyPressEvent(QKeyEvent* event) {
  const bool control = event->modifiers() & Qt::ControlModifier;
  if (control && (event->key() == Qt::Key_Equal || event->key() == Qt::Key_Plus)) {
    zoomIn();
  } else if (control && (event->key() == Qt::Key_Minus || event->key() == Qt::Key_Underscore)) {
    zoomOut();
  } else if (control && event->key() == Qt::Key_0) {
    fitToView();
  } else {
    QGraphicsView::keyPressEvent(event);
    return;
  }
  event->accept();
}

void GraphView::scrollContentsBy(int dx, int dy) {
  QGraphicsView::scrollContentsBy(dx, dy);
  notifyViewport();
}

void GraphView::resizeEvent(QResizeEvent* event) {
  QGraphicsView::resizeEvent(event);
  if (fitPending_ && scene_->graphLayout() && isVisible()) {
    showStart();
    fitPending_ = false;
  }
  notifyViewport();
}

void GraphView::notifyViewport() { emit viewportChanged(viewportState()); }

}  // namespace tessel::views
