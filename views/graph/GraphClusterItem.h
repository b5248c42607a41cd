// An expanded fused operation in the graph view: a rounded frame around its body's boxes with
// a title and a collapse toggle.
#pragma once

#include <QGraphicsItem>
#include <QString>

#include "views/graph/GraphItemStyle.h"
#include "views/graph/GraphLayout.h"

namespace tessel::views {

class GraphClusterItem : public QGraphicsItem {
public:
  /// `style` must outlive the item; `depth` is its nesting level (frames stack by it).
  GraphClusterItem(const LayoutCluster& cluster, int depth, const GraphItemStyle* style);

  const QString& id() const { return id_; }
  /// The "-" glyph that collapses the group, in scene coordinates.
  QRectF toggleRect() const;

  QRectF boundingRect() const override;
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

protected:
  void mousePressEvent(QGraphicsSceneMouseEvent* event) override;
  void mouseDoubleClickEvent(QGraphicsSceneMouseEvent* event) override;

private:
  const GraphItemStyle* style_;
  QString id_;
  QString title_;
  QRectF box_;
};

}  // namespace tessel::views
