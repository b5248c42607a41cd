// One data dependency of the graph view: a spline with an arrowhead and its tensor's shape.
#pragma once

#include <QGraphicsItem>
#include <QPainterPath>
#include <QPolygonF>
#include <QString>

#include "views/graph/GraphItemStyle.h"
#include "views/graph/GraphLayout.h"

namespace tessel::views {

class GraphEdgeItem : public QGraphicsItem {
public:
  /// `style` must outlive the item (the scene owns both).
  GraphEdgeItem(const LayoutEdge& edge, const GraphItemStyle* style);

  const QString& labelText() const { return label_; }
  const QPainterPath& path() const { return path_; }

  QRectF boundingRect() const override { return bounds_; }
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

private:
  const GraphItemStyle* style_;
  QPainterPath path_;
  QPolygonF arrow_;
  QString label_;
  QRectF labelRect_;
  QRectF bounds_;
  double lineWidth_ = 1.2;
  bool quantized_ = false;  ///< An int8 tensor: drawn in the palette's quantized colour.
};

}  // namespace tessel::views
