// Draws one pass timeline step as a card: pass name, a bar for its time, node count and what
// it changed, with the compared pair marked A and B.
#pragma once

#include <QStyledItemDelegate>

namespace tessel::views {

class PassTimelineDelegate : public QStyledItemDelegate {
  Q_OBJECT

public:
  explicit PassTimelineDelegate(QObject* parent = nullptr);

  /// The steps shown side by side (-1: none); their cards carry an "A" / "B" badge.
  void setComparedSteps(int before, int after);

  /// Cards share the strip's width between these bounds, so a whole pipeline usually fits
  /// without scrolling (the view sets the width when it resizes).
  static constexpr int kMinimumCardWidth = 128;
  static constexpr int kMaximumCardWidth = 180;
  static constexpr int kCardHeight = 88;
  void setCardWidth(int width) { cardWidth_ = width; }
  int cardWidth() const { return cardWidth_; }

  void paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const override;
  QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override;

private:
  int comparedBefore_ = -1, comparedAfter_ = -1;
  int cardWidth_ = kMaximumCardWidth;
};

}  // namespace tessel::views
