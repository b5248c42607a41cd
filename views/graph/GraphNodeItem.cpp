// Painting and interaction of one graph box, with level of detail: far out a box is a
// coloured rectangle, closer its op appears, closest its name and weights.
#include "views/graph/GraphNodeItem.h"

#include <QFontMetricsF>
#include <QGraphicsSceneMouseEvent>
#include <QPainter>
#include <QStyleOptionGraphicsItem>

#include "views/graph/GraphScene.h"

namespace tessel::views {

namespace {

constexpr double kRadius = 5.0;
constexpr double kPadding = 8.0;
constexpr double kToggleSize = 13.0;
// Zoom levels (device pixels per scene unit) below which detail is left out: text smaller
// than a few pixels costs time and reads as noise.
constexpr double kShowTitle = 0.4;
constexpr double kShowBody = 0.6;

}  // namespace

GraphNodeItem::GraphNodeItem(const LayoutNode& node, const GraphItemStyle* style)
    : style_(style),
      id_(node.id),
      box_(node.box),
      category_(node.category),
      collapsedFused_(node.collapsedFused || node.collapsedModule),
      title_(node.title),
      name_(node.name),
      details_(node.details),
      quantizationTag_(node.quantizationTag) {
  setPos(box_.topLeft());
  setFlag(ItemIsSelectable);
  setZValue(2);
  baseTooltip_ = QStringLiteral("<b>%1</b><br>%2").arg(node.title.toHtmlEscaped(), node.name.toHtmlEscaped());
  if (node.collapsedFused && node.op != node.title) baseTooltip_ += QStringLiteral("<br><i>%1</i>").arg(node.op.toHtmlEscaped());
  for (const auto& line : node.details) baseTooltip_ += QStringLiteral("<br>") + line.toHtmlEscaped();
  if (node.collapsedFused) baseTooltip_ += QStringLiteral("<br><i>Click + to show the fused operations</i>");
  if (node.collapsedModule) baseTooltip_ += QStringLiteral("<br><i>Click + to open the module</i>");
  if (!quantizationTag_.isEmpty())
    baseTooltip_ += quantizationTag_ == QLatin1String("int8")    ? QStringLiteral("<br>Computes on int8 tensors")
                    : quantizationTag_.startsWith(QLatin1String("→")) ? QStringLiteral("<br>Float in, int8 out")
                                                                        : QStringLiteral("<br>int8 in, float out");
  if (category_ == NodeCategory::Unsupported)
    baseTooltip_ += QStringLiteral("<br><i>Tessel does not implement this operator: the model cannot be compiled "
                                   "until it does</i>");
  setToolTip(baseTooltip_);
}

// Measuring text is the costliest part of making an item, and most boxes of a big graph are
// never drawn close enough to show text, so it waits for the first detailed paint.
void GraphNodeItem::elideTexts() {
  textsElided_ = true;
  // The header's right end holds the fused toggle or the unsupported operator's sign.
  double room = box_.width() - 2 * kPadding - (collapsedFused_ ? kToggleSize + 4 : 0) -
                (category_ == NodeCategory::Unsupported ? style_->headerHeight() * 0.62 + 4 : 0);
  title_ = QFontMetricsF(style_->titleFont).elidedText(title_, Qt::ElideRight, room);
  name_ = QFontMetricsF(style_->nameFont).elidedText(name_, Qt::ElideMiddle, box_.width() - 2 * kPadding);
  QFontMetricsF detail(style_->detailFont);
  for (auto& line : details_) line = detail.elidedText(line, Qt::ElideMiddle, box_.width() - 2 * kPadding);
}

void GraphNodeItem::setDecoration(const QColor& colour, const QString& badge, const QString& tooltip) {
  prepareGeometryChange();
  decoration_ = colour;
  badge_ = badge;
  setToolTip(tooltip.isEmpty() ? baseTooltip_ : baseTooltip_ + QStringLiteral("<hr>") + tooltip.toHtmlEscaped());
  update();
}

void GraphNodeItem::setFindState(FindState state) {
  if (state == findState_) return;
  findState_ = state;
  update();
}

QRectF GraphNodeItem::toggleRect() const {
  double header = style_->headerHeight();
  return QRectF(box_.right() - kPadding / 2 - kToggleSize, box_.top() + (header - kToggleSize) / 2, kToggleSize,
                kToggleSize);
}

QRectF GraphNodeItem::boundingRect() const {
  // Room for the thick outlines and for a badge that sticks out above the top-right corner
  // (and the int8 mark above the top-left one).
  QRectF rect(QPointF(0, 0), box_.size());
  bool above = !badge_.isEmpty() || !quantizationTag_.isEmpty();
  rect.adjust(quantizationTag_.isEmpty() ? -4 : -8, above ? -14 : -4, 4, 4);
  if (!badge_.isEmpty()) rect.setRight(rect.right() + 20);
  return rect;
}

QPainterPath GraphNodeItem::shape() const {
  QPainterPath path;
  path.addRect(QRectF(QPointF(0, 0), box_.size()));
  return path;
}

void GraphNodeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
  const GraphPalette& palette = style_->palette;
  const double lod = option->levelOfDetailFromTransform(painter->worldTransform());
  const QRectF rect(QPointF(0, 0), box_.size());
  const QColor header = palette.category(category_);

  // An unsupported operator has a dashed outline in its colour (a gap in what Tessel compiles)
  // until a selection, find or decoration outline takes its place.
  const bool unsupported = category_ == NodeCategory::Unsupported;
  QColor outline = unsupported ? header : palette.nodeBorder;
  double outlineWidth = unsupported ? 2.0 : 1.0;
  if (decoration_.isValid()) {
    outline = decoration_;
    outlineWidth = 2.5;
  }
  if (findState_ == FindState::Match) {
    outline = palette.findMatch;
    outlineWidth = 2.5;
  } else if (findState_ == FindState::Current) {
    outline = palette.findCurrent;
    outlineWidth = 3.5;
  }
  if (isSelected()) {
    outline = palette.selection;
    outlineWidth = 3.0;
  }

  if (lod < kShowTitle) {
    // Far out: a flat box in the category colour (a decorated node in its decoration's, so
    // a heat map reads over the whole graph); outlines scale up so they stay visible.
    painter->setRenderHint(QPainter::Antialiasing, false);
    painter->fillRect(rect, decoration_.isValid() ? decoration_ : header);
    if (outline != palette.nodeBorder) {
      painter->setPen(QPen(outline, std::max(outlineWidth, 2.0 / std::max(lod, 0.01))));
      painter->setBrush(Qt::NoBrush);
      painter->drawRect(rect);
    }
    return;
  }

  if (!textsElided_) elideTexts();
  painter->setRenderHint(QPainter::Antialiasing, true);
  QPainterPath body;
  body.addRoundedRect(rect, kRadius, kRadius);
  painter->setPen(Qt::NoPen);
  QColor bodyColour = palette.nodeBody;
  if (decoration_.isValid()) {
    // A decorated body takes a tint of its colour: heat maps and diffs show across the box.
    const double tint = 0.28;
    bodyColour = QColor::fromRgbF(float(bodyColour.redF() * (1 - tint) + decoration_.redF() * tint),
                                  float(bodyColour.greenF() * (1 - tint) + decoration_.greenF() * tint),
                                  float(bodyColour.blueF() * (1 - tint) + decoration_.blueF() * tint));
  }
  painter->setBrush(bodyColour);
  painter->drawPath(body);

  const double headerHeight = std::min(style_->headerHeight(), rect.height());
  QPainterPath headerPath;
  headerPath.addRoundedRect(QRectF(0, 0, rect.width(), headerHeight + kRadius), kRadius, kRadius);
  QPainterPath headerClip;
  headerClip.addRect(QRectF(0, 0, rect.width(), headerHeight));
  painter->setBrush(header);
  painter->drawPath(headerPath.intersected(headerClip));

  painter->setBrush(Qt::NoBrush);
  QPen outlinePen(outline, outlineWidth);
  if (unsupported && outline == header) outlinePen.setStyle(Qt::DashLine);
  painter->setPen(outlinePen);
  painter->drawPath(body);

  painter->setFont(style_->titleFont);
  painter->setPen(palette.headerText);
  painter->drawText(QRectF(kPadding, 0, rect.width() - 2 * kPadding, headerHeight), Qt::AlignLeft | Qt::AlignVCenter,
                    title_);
  if (unsupported) {
    // A warning sign at the header's right end: the mark survives printing in grey.
    const double size = headerHeight * 0.62;
    QRectF sign(rect.width() - kPadding - size, (headerHeight - size) / 2, size, size);
    QPainterPath triangle;
    triangle.moveTo(sign.center().x(), sign.top());
    triangle.lineTo(sign.bottomRight());
    triangle.lineTo(sign.bottomLeft());
    triangle.closeSubpath();
    painter->setPen(Qt::NoPen);
    painter->setBrush(palette.headerText);
    painter->drawPath(triangle);
    painter->setPen(QPen(header, std::max(1.2, size / 9)));
    const double x = sign.center().x();
    painter->drawLine(QPointF(x, sign.top() + size * 0.35), QPointF(x, sign.top() + size * 0.68));
    painter->drawPoint(QPointF(x, sign.top() + size * 0.84));
  }

  if (collapsedFused_) {
    QRectF toggle = toggleRect().translated(-box_.topLeft());
    painter->setPen(QPen(palette.headerText, 1.2));
    painter->drawRoundedRect(toggle, 2.5, 2.5);
    QPointF c = toggle.center();
    painter->drawLine(QPointF(c.x() - 3.5, c.y()), QPointF(c.x() + 3.5, c.y()));
    painter->drawLine(QPointF(c.x(), c.y() - 3.5), QPointF(c.x(), c.y() + 3.5));
  }

  if (lod >= kShowBody) {
    double y = headerHeight + 2;
    painter->setFont(style_->nameFont);
    painter->setPen(palette.text);
    painter->drawText(QRectF(kPadding, y, rect.width() - 2 * kPadding, style_->lineHeight),
                      Qt::AlignLeft | Qt::AlignVCenter, name_);
    y += style_->lineHeight;
    painter->setFont(style_->detailFont);
    painter->setPen(palette.mutedText);
    for (const auto& line : details_) {
      painter->drawText(QRectF(kPadding, y, rect.width() - 2 * kPadding, style_->lineHeight * 0.95),
                        Qt::AlignLeft | Qt::AlignVCenter, line);
      y += style_->lineHeight * 0.95;
    }
  }

  if (!quantizationTag_.isEmpty() && lod >= kShowBody) {
    // Across the top-left corner, clear of the decoration badge at the top right.
    painter->setFont(style_->detailFont);
    QFontMetricsF metrics(style_->detailFont);
    QRectF pill(-6, -10, metrics.horizontalAdvance(quantizationTag_) + 10, 15);
    painter->setPen(Qt::NoPen);
    painter->setBrush(palette.quantized);
    painter->drawRoundedRect(pill, 7.5, 7.5);
    painter->setPen(Qt::white);
    painter->drawText(pill, Qt::AlignCenter, quantizationTag_);
  }

  if (!badge_.isEmpty()) {
    painter->setFont(style_->detailFont);
    QFontMetricsF metrics(style_->detailFont);
    double width = std::max(18.0, metrics.horizontalAdvance(badge_) + 10);
    QRectF pill(rect.right() - width + 12, -10, width, 17);
    painter->setPen(Qt::NoPen);
    painter->setBrush(decoration_.isValid() ? decoration_ : palette.selection);
    painter->drawRoundedRect(pill, 8.5, 8.5);
    painter->setPen(Qt::white);
    painter->drawText(pill, Qt::AlignCenter, badge_);
  }
}

void GraphNodeItem::mousePressEvent(QGraphicsSceneMouseEvent* event) {
  if (collapsedFused_ && event->button() == Qt::LeftButton && toggleRect().contains(event->scenePos())) {
    if (auto* graphScene = qobject_cast<GraphScene*>(scene())) graphScene->requestFusedToggle(id_, true);
    event->accept();
    return;
  }
  QGraphicsItem::mousePressEvent(event);
}

void GraphNodeItem::mouseDoubleClickEvent(QGraphicsSceneMouseEvent* event) {
  if (auto* graphScene = qobject_cast<GraphScene*>(scene())) graphScene->activateNode(id_);
  event->accept();
}

}  // namespace tessel::views
