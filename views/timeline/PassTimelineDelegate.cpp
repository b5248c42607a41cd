// Paints timeline cards with the palette's roles, so light and dark themes both read well.
#include "views/timeline/PassTimelineDelegate.h"

#include <QPainter>
#include <QPainterPath>

#include "views/timeline/PassTimelineModel.h"

namespace tessel::views {

PassTimelineDelegate::PassTimelineDelegate(QObject* parent) : QStyledItemDelegate(parent) {}

void PassTimelineDelegate::setComparedSteps(int before, int after) {
  comparedBefore_ = before;
  comparedAfter_ = after;
}

QSize PassTimelineDelegate::sizeHint(const QStyleOptionViewItem&, const QModelIndex&) const {
  return {cardWidth_, kCardHeight};
}

namespace {
// The timing bar's colour: the palette's accent, muted for skipped passes.
QColor barColour(const QPalette& palette, bool skipped) {
  QColor accent = palette.color(QPalette::Highlight);
  if (skipped) accent = palette.color(QPalette::Mid);
  return accent;
}

// Summaries that remove or fuse nodes read green-ish, additions neutral: a quick cue for which
// passes did work, without reading the text.
QColor summaryColour(const QPalette& palette, const QString& summary, bool skipped) {
  if (skipped || summary == QLatin1String("no change") || summary == QLatin1String("imported"))
    return palette.color(QPalette::PlaceholderText);
  const bool dark = palette.color(QPalette::Base).lightness() < 128;
  if (summary.contains(QLatin1String("fused"))) return dark ? QColor(0xc5, 0x9b, 0xff) : QColor(0x7b, 0x3f, 0xc4);
  if (summary.contains(QLatin1String("relaid"))) return dark ? QColor(0x79, 0xb8, 0xff) : QColor(0x1f, 0x5f, 0xbf);
  return palette.color(QPalette::Text);
}
}  // namespace

void PassTimelineDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option,
                                 const QModelIndex& index) const {
  painter->save();
  painter->setRenderHint(QPainter::Antialiasing);
  const QPalette& palette = option.palette;
  const bool selected = option.state & QStyle::State_Selected;
  const bool hovered = option.state & QStyle::State_MouseOver;
  const bool skipped = index.data(PassTimelineModel::SkippedRole).toBool();
  const int row = index.row();
  const bool compared = row == comparedBefore_ || row == comparedAfter_;

  QRectF card = QRectF(option.rect).adjusted(3.5, 4.5, -3.5, -4.5);
  const bool dark = palette.color(QPalette::Base).lightness() < 128;
  QColor fill = palette.color(QPalette::Base);
  if (selected)
    fill = dark ? palette.color(QPalette::Highlight).darker(260) : palette.color(QPalette::Highlight).lighter(185);
  else if (hovered)
    fill = palette.color(QPalette::AlternateBase);
  QColor border = selected || compared ? palette.color(QPalette::Highlight) : palette.color(QPalette::Mid);
  QPen pen(border, selected || compared ? 2.0 : 1.0);
  if (skipped) pen.setStyle(Qt::DashLine);
  painter->setPen(pen);
  painter->setBrush(fill);
  painter->drawRoundedRect(card, 6, 6);

  QRectF content = card.adjusted(10, 7, -10, -7);
  QColor text = skipped ? palette.color(QPalette::PlaceholderText) : palette.color(QPalette::Text);
  QColor secondary = palette.color(QPalette::PlaceholderText);

  // Header: step number and pass name.
  QFont base = option.font;
  QFont small = base;
  small.setPointSizeF(base.pointSizeF() * 0.85);
  QFont bold = base;
  bold.setBold(true);
  painter->setFont(small);
  painter->setPen(secondary);
  QString number = QString::number(row);
  QFontMetricsF smallMetrics(small);
  double numberWidth = smallMetrics.horizontalAdvance(number) + 6;
  QRectF header(content.left(), content.top(), content.width(), QFontMetricsF(bold).height());
  painter->drawText(QRectF(header.left(), header.top(), numberWidth, header.height()),
                    Qt::AlignLeft | Qt::AlignVCenter, number);
  painter->setFont(bold);
  painter->setPen(text);
  QString name = index.data(PassTimelineModel::PassNameRole).toString();
  double badgeRoom = compared ? 22 : 0;
  QRectF nameRect = header.adjusted(numberWidth, 0, -badgeRoom, 0);
  painter->drawText(nameRect, Qt::AlignLeft | Qt::AlignVCenter,
                    QFontMetricsF(bold).elidedText(name, Qt::ElideRight, nameRect.width()));

  if (compared) {
    QRectF badge(header.right() - 18, header.center().y() - 9, 18, 18);
    painter->setPen(Qt::NoPen);
    painter->setBrush(palette.color(QPalette::Highlight));
    painter->drawEllipse(badge);
    painter->setPen(palette.color(QPalette::HighlightedText));
    painter->setFont(small);
    painter->drawText(badge, Qt::AlignCenter, row == comparedBefore_ ? QStringLiteral("A") : QStringLiteral("B"));
  }

  // Time: the text and a bar relative to the slowest pass.
  double y = header.bottom() + 5;
  painter->setFont(small);
  QVariant ms = index.data(PassTimelineModel::MillisecondsRole);
  QString timeText = ms.isValid() ? (skipped ? QStringLiteral("skipped") : formatMilliseconds(ms.toDouble()))
                                  : QStringLiteral("input graph");
  double timeWidth = 64;
  painter->setPen(secondary);
  painter->drawText(QRectF(content.left(), y, timeWidth, smallMetrics.height()), Qt::AlignLeft | Qt::AlignVCenter,
                    timeText);
  QRectF track(content.left() + timeWidth, y + smallMetrics.height() / 2 - 3, content.width() - timeWidth, 6);
  painter->setPen(Qt::NoPen);
  painter->setBrush(palette.color(QPalette::Midlight));
  // The imported graph took no pass time: no bar at all rather than an empty one.
  if (ms.isValid()) painter->drawRoundedRect(track, 3, 3);
  double fraction = index.data(PassTimelineModel::TimeFractionRole).toDouble();
  if (fraction > 0) {
    QRectF bar = track;
    bar.setWidth(std::max(4.0, track.width() * fraction));
    painter->setBrush(barColour(palette, skipped));
    painter->drawRoundedRect(bar, 3, 3);
  }

  // Node count and the change summary.
  y += smallMetrics.height() + 5;
  painter->setFont(base);
  painter->setPen(text);
  QString count = QStringLiteral("%1 nodes").arg(index.data(PassTimelineModel::NodeCountRole).toInt());
  QFontMetricsF baseMetrics(base);
  painter->drawText(QRectF(content.left(), y, content.width(), baseMetrics.height()), Qt::AlignLeft | Qt::AlignVCenter,
                    count);
  y += baseMetrics.height() + 1;
  painter->setFont(small);
  QString summary = index.data(PassTimelineModel::ChangeSummaryRole).toString();
  painter->setPen(summaryColour(palette, summary, skipped));
  painter->drawText(QRectF(content.left(), y, content.width(), smallMetrics.height()), Qt::AlignLeft | Qt::AlignVCenter,
                    smallMetrics.elidedText(summary, Qt::ElideRight, content.width()));
  painter->restore();
}

}  // namespace tessel::views
