// Renders the scene once into a pixmap (re-rendered only when the scene changes) and draws
// the visible rectangle over it on every scroll.
#include "views/graph/GraphMinimap.h"

#include <QMouseEvent>
#include <QPainter>

#include "views/graph/GraphScene.h"
#include "views/graph/GraphView.h"

namespace tessel::views {

GraphMinimap::GraphMinimap(QWidget* parent) : QWidget(parent) {
  setAttribute(Qt::WA_OpaquePaintEvent, false);
  setCursor(Qt::PointingHandCursor);
  setToolTip(tr("Overview: click or drag to navigate"));
  resize(sizeHint());
}

void GraphMinimap::setView(GraphView* view) {
  if (view_) disconnect(view_, nullptr, this, nullptr);
  view_ = view;
  if (view_) {
    connect(view_, &GraphView::viewportChanged, this, [this] { update(); });
    connect(view_->graphScene(), &QGraphicsScene::sceneRectChanged, this, &GraphMinimap::invalidateOverview);
    connect(view_->graphScene(), &QGraphicsScene::changed, this, &GraphMinimap::invalidateOverview);
  }
  invalidateOverview();
}

void GraphMinimap::invalidateOverview() {
  overviewStale_ = true;
  update();
}

QRectF GraphMinimap::overviewTarget() const {
  if (!view_) return {};
  QRectF scene = view_->graphScene()->sceneRect();
  if (scene.isEmpty()) return {};
  QRectF area = QRectF(rect()).adjusted(4, 4, -4, -4);
  double scale = std::min(area.width() / scene.width(), area.height() / scene.height());
  QSizeF size = scene.size() * scale;
  return QRectF(area.center() - QPointF(size.width() / 2, size.height() / 2), size);
}

void GraphMinimap::renderOverview() {
  overviewStale_ = false;
  overview_ = QPixmap();
  QRectF target = overviewTarget();
  if (!view_ || target.isEmpty()) return;
  const qreal ratio = devicePixelRatioF();
  overview_ = QPixmap((target.size() * ratio).toSize());
  overview_.setDevicePixelRatio(ratio);
  if (overview_.isNull()) return;  // A graph so long its overview is under a pixel wide.
  overview_.fill(Qt::transparent);
  QPainter painter(&overview_);
  // At this scale items paint their cheapest level of detail: flat boxes, hairline edges.
  view_->graphScene()->render(&painter, QRectF(QPointF(0, 0), target.size()), view_->graphScene()->sceneRect());
}

QRectF GraphMinimap::visibleFrame() const {
  QRectF target = overviewTarget();
  if (!view_ || target.isEmpty()) return {};
  QRectF scene = view_->graphScene()->sceneRect();
  QRectF visible = view_->mapToScene(view_->viewport()->rect()).boundingRect().intersected(scene);
  double scale = target.width() / scene.width();
  return QRectF(target.topLeft() + (visible.topLeft() - scene.topLeft()) * scale, visible.size() * scale);
}

void GraphMinimap::paintEvent(QPaintEvent*) {
  if (overviewStale_) renderOverview();
  QPainter painter(this);
  painter.setRenderHint(QPainter::Antialiasing);
  const GraphPalette palette = view_ ? view_->graphScene()->graphPalette() : GraphPalette::light();
  QColor panel = palette.background;
  panel.setAlpha(235);
  painter.setPen(QPen(palette.nodeBorder, 1));
  painter.setBrush(panel);
  painter.drawRoundedRect(QRectF(rect()).adjusted(0.5, 0.5, -0.5, -0.5), 5, 5);
  QRectF target = overviewTarget();
  if (!overview_.isNull()) painter.drawPixmap(target.topLeft(), overview_);
  QRectF frame = visibleFrame();
  if (!frame.isEmpty()) {
    QColor fill = palette.minimapFrame;
    fill.setAlpha(40);
    painter.setBrush(fill);
    painter.setPen(QPen(palette.minimapFrame, 1.5));
    painter.drawRect(frame);
  }
}

void GraphMinimap::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  invalidateOverview();
}

QPointF GraphMinimap::toScene(const QPointF& widgetPoint) const {
  QRectF target = overviewTarget();
  QRectF scene = view_->graphScene()->sceneRect();
  double scale = scene.width() / target.width();
  return scene.topLeft() + (widgetPoint - target.topLeft()) * scale;
}

void GraphMinimap::mousePressEvent(QMouseEvent* event) {
  if (!view_ || overviewTarget().isEmpty() || event->button() != Qt::LeftButton) return;
  view_->centerOn(toScene(event->position()));
  event->accept();
}

void GraphMinimap::mouseMoveEvent(QMouseEvent* event) {
  if (!view_ || overviewTarget().isEmpty() || !(event->buttons() & Qt::LeftButton)) return;
  view_->centerOn(toScene(event->position()));
  event->accept();
}

}  // namespace tessel::views
