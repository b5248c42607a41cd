// Painting and the collapse interaction of a fused group's frame.
#include "views/graph/GraphClusterItem.h"

#include <QFontMetricsF>
#include <QGraphicsSceneMouseEvent>
#include <QPainter>
#include <QStyleOptionGraphicsItem>

#include "views/graph/GraphScene.h"

namespace tessel::views {

namespace {
constexpr double kToggleSize = 13.0;
constexpr double kHeader = 22.0;
}  // namespace

GraphClusterItem::GraphClusterItem(const LayoutCluster& cluster, int depth, const GraphItemStyle* style)
    : style_(style), id_(cluster.id), box_(cluster.box) {
  setZValue(0.01 * depth);
  title_ = QFontMetricsF(style_->clusterFont).elidedText(cluster.title, Qt::ElideRight, box_.width() - kToggleSize - 20);
  setToolTip(QStringLiteral("<b>%1</b><br>%2<br><i>Click - or double-click the frame to collapse</i>")
                 .arg(cluster.title.toHtmlEscaped(), cluster.id.toHtmlEscaped()));
}

QRectF GraphClusterItem::toggleRect() const {
  return QRectF(box_.right() - 6 - kToggleSize, box_.top() + (kHeader - kToggleSize) / 2, kToggleSize, kToggleSize);
}

QRectF GraphClusterItem::boundingRect() const { return box_.adjusted(-2, -2, 2, 2); }

void GraphClusterItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
  const GraphPalette& palette = style_->palette;
  const double lod = option->levelOfDetailFromTransform(painter->worldTransform());
  painter->setRenderHint(QPainter::Antialiasing, lod >= 0.3);
  painter->setPen(QPen(palette.clusterBorder, 1.3, Qt::DashLine));
  painter->setBrush(palette.clusterFill);
  painter->drawRoundedRect(box_, 8, 8);
  if (lod < 0.4) return;
  painter->setFont(style_->clusterFont);
  painter->setPen(palette.clusterTitle);
  painter->drawText(QRectF(box_.left() + 10, box_.top(), box_.width() - 20 - kToggleSize, kHeader),
                    Qt::AlignLeft | Qt::AlignVCenter, title_);
  QRectF toggle = toggleRect();
  painter->setPen(QPen(palette.clusterBorder, 1.2));
  painter->setBrush(Qt::NoBrush);
  painter->drawRoundedRect(toggle, 2.5, 2.5);
  QPointF c = toggle.center();
  painter->drawLine(QPointF(c.x() - 3.5, c.y()), QPointF(c.x() + 3.5, c.y()));
}

void GraphClusterItem::mousePressEvent(QGraphicsSceneMouseEvent* event) {
  if (event->button() == Qt::LeftButton && toggleRect().adjusted(-3, -3, 3, 3).contains(event->scenePos())) {
    if (auto* graphScene = qobject_cast<GraphScene*>(scene())) graphScene->requestFusedToggle(id_, false);
    event->accept();
    return;
  }
  event->ignore();  // Let the view pan when the frame's inside is dragged.
}

void GraphClusterItem::mouseDoubleClickEvent(QGraphicsSceneMouseEvent* event) {
  if (auto* graphScene = qobject_cast<GraphScene*>(scene())) graphScene->requestFusedToggle(id_, false);
  event->accept();
}

}  // namespace tessel::views
