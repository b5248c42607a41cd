// Painting of one graph edge; its path, arrowhead and label box are computed once.
#include "views/graph/GraphEdgeItem.h"

#include <QLineF>
#include <QPainter>
#include <QStyleOptionGraphicsItem>

namespace tessel::views {

namespace {

constexpr double kArrowLength = 7.0;
constexpr double kArrowHalfWidth = 3.5;
constexpr double kShowLabel = 0.55;  // Labels below this zoom would be unreadable smudges.

}  // namespace

GraphEdgeItem::GraphEdgeItem(const LayoutEdge& edge, const GraphItemStyle* style) : style_(style) {
  setZValue(1);
  setAcceptedMouseButtons(Qt::NoButton);
  if (!edge.spline.empty()) {
    path_.moveTo(edge.spline[0]);
    for (size_t i = 1; i + 2 < edge.spline.size(); i += 3) path_.cubicTo(edge.spline[i], edge.spline[i + 1], edge.spline[i + 2]);
    // The arrowhead runs from the spline's end to the tip; a degenerate one (tip on the end)
    // takes the direction of the last control points instead.
    QPointF base = edge.spline.back();
    QLineF direction(base, edge.arrowTip);
    if (direction.length() < 1.0 && edge.spline.size() >= 2)
      direction = QLineF(edge.spline[edge.spline.size() - 2], edge.arrowTip);
    if (direction.length() >= 0.01) {
      QLineF unit = direction.unitVector();
      QPointF along = (unit.p2() - unit.p1()) * kArrowLength;
      QPointF across(-along.y() * kArrowHalfWidth / kArrowLength, along.x() * kArrowHalfWidth / kArrowLength);
      QPointF tip = edge.arrowTip;
      arrow_ << tip << tip - along + across << tip - along - across;
    }
  }
  if (!edge.shapeText.isEmpty() && !edge.inLane) {
    label_ = edge.dtypeText == QLatin1String("float32") ? edge.shapeText : edge.label();
    // Estimated from a measured average: measuring each label costs more than the rest of
    // the item, and labels are digits, 'x' and a dtype.
    QSizeF size(double(label_.size()) * style_->edgeCharacterWidth + 8, style_->lineHeight - 1);
    labelRect_ = QRectF(edge.labelCenter - QPointF(size.width() / 2, size.height() / 2), size);
  }
  quantized_ = edge.quantized;
  if (quantized_) lineWidth_ = 1.8;
  if (edge.tensorCount > 1) {
    // A bundle drawn thicker, so it reads as several tensors at a glance.
    lineWidth_ = 2.4;
    setToolTip(QStringLiteral("%1 tensors (%2, …)").arg(edge.tensorCount).arg(edge.tensor));
  } else {
    setToolTip(edge.tensor + (edge.shapeText.isEmpty() ? QString() : QStringLiteral(": ") + edge.label()));
  }
  bounds_ = path_.boundingRect().united(arrow_.boundingRect()).united(labelRect_).adjusted(-2, -2, 2, 2);
}

void GraphEdgeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
  const GraphPalette& palette = style_->palette;
  const double lod = option->levelOfDetailFromTransform(painter->worldTransform());
  painter->setRenderHint(QPainter::Antialiasing, lod >= 0.3);
  painter->setBrush(Qt::NoBrush);
  const QColor colour = quantized_ ? palette.quantized : palette.edge;
  painter->setPen(QPen(colour, lod >= 0.3 ? lineWidth_ : 0.0));  // Width 0: one device pixel.
  painter->drawPath(path_);
  if (lod < 0.2) return;
  painter->setPen(Qt::NoPen);
  painter->setBrush(colour);
  painter->drawPolygon(arrow_);
  if (lod < kShowLabel || label_.isEmpty()) return;
  // A background-coloured plate keeps the label legible where it crosses the line.
  QColor plate = palette.background;
  plate.setAlpha(220);
  painter->setBrush(plate);
  painter->drawRoundedRect(labelRect_, 3, 3);
  painter->setFont(style_->edgeFont);
  painter->setPen(quantized_ ? palette.quantized : palette.edgeLabel);
  painter->drawText(labelRect_, Qt::AlignCenter, label_);
}

}  // namespace tessel::views
