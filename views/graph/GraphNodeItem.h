// One box of the graph view: a category-coloured header with the op, the node's name, and
// its folded weights; selection, find highlights and decorations (badges) on top.
#pragma once

#include <QColor>
#include <QGraphicsItem>
#include <QString>
#include <QStringList>

#include "views/graph/GraphItemStyle.h"
#include "views/graph/GraphLayout.h"

namespace tessel::views {

class GraphNodeItem : public QGraphicsItem {
public:
  /// `style` must outlive the item (the scene owns both).
  GraphNodeItem(const LayoutNode& node, const GraphItemStyle* style);

  const QString& id() const { return id_; }
  const QRectF& box() const { return box_; }
  /// Drawn closed with a + toggle: a fused operation or a module group.
  bool isCollapsedFused() const { return collapsedFused_; }

  /// A colour outline, a badge above the top-right corner and a tooltip from another view
  /// (the pass-diff overlay). An invalid colour and empty badge remove it.
  void setDecoration(const QColor& colour, const QString& badge, const QString& tooltip);
  QColor decorationColour() const { return decoration_; }
  QString badge() const { return badge_; }

  enum class FindState { None, Match, Current };
  void setFindState(FindState state);
  FindState findState() const { return findState_; }

  /// The "+" glyph that expands a collapsed fused operation, in scene coordinates.
  QRectF toggleRect() const;

  QRectF boundingRect() const override;
  QPainterPath shape() const override;
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

protected:
  void mousePressEvent(QGraphicsSceneMouseEvent* event) override;
  void mouseDoubleClickEvent(QGraphicsSceneMouseEvent* event) override;

private:
  void elideTexts();

  const GraphItemStyle* style_;
  QString id_;
  QRectF box_;
  NodeCategory category_;
  bool collapsedFused_;
  QString title_, name_;
  QStringList details_;
  QString baseTooltip_;
  QColor decoration_;
  QString badge_;
  QString quantizationTag_;  ///< "int8", "→ int8", "int8 →" (a pill at the top-left corner) or empty.
  FindState findState_ = FindState::None;
  bool textsElided_ = false;
};

}  // namespace tessel::views
