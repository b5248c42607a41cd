// StudioIcons: small line-art icons painted with QPainter.
#include "app/studio/StudioIcons.h"

#include <QPainter>
#include <QPainterPath>
#include <QPixmap>

namespace tessel::studio {

namespace {

// Every icon is drawn on a 24x24 grid, scaled to the pixmap size.
void draw(QPainter& p, StudioIcon which, const QColor& color) {
  QPen pen(color, 1.8, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin);
  p.setPen(pen);
  p.setBrush(Qt::NoBrush);
  switch (which) {
    case StudioIcon::Graph: {
      // Three nodes feeding a fourth: a dataflow graph.
      p.drawLine(QPointF(6, 6), QPointF(12, 17));
      p.drawLine(QPointF(18, 6), QPointF(12, 17));
      p.setBrush(color);
      p.drawRoundedRect(QRectF(3, 3, 6, 5), 1.5, 1.5);
      p.drawRoundedRect(QRectF(15, 3, 6, 5), 1.5, 1.5);
      p.drawRoundedRect(QRectF(8.5, 16, 7, 5), 1.5, 1.5);
      break;
    }
    case StudioIcon::Timeline: {
      // A time axis with pass steps of different lengths.
      p.drawLine(QPointF(3, 20), QPointF(21, 20));
      p.setBrush(color);
      p.drawRect(QRectF(4, 4, 6, 3));
      p.drawRect(QRectF(8, 9.5, 9, 3));
      p.drawRect(QRectF(13, 15, 7, 2.5));
      break;
    }
    case StudioIcon::Schedule: {
      // Nested loops: braces around lines of a loop nest.
      p.drawLine(QPointF(4, 5), QPointF(14, 5));
      p.drawLine(QPointF(8, 10), QPointF(19, 10));
      p.drawLine(QPointF(12, 15), QPointF(20, 15));
      p.drawLine(QPointF(4, 5), QPointF(4, 20));
      p.drawLine(QPointF(8, 10), QPointF(8, 20));
      p.drawLine(QPointF(4, 20), QPointF(20, 20));
      break;
    }
    case StudioIcon::Tuning: {
      // A falling best-so-far curve over axes: a search getting faster.
      p.drawLine(QPointF(4, 4), QPointF(4, 20));
      p.drawLine(QPointF(4, 20), QPointF(20, 20));
      QPainterPath curve;
      curve.moveTo(6, 7);
      curve.lineTo(9, 7);
      curve.lineTo(9, 12);
      curve.lineTo(13, 12);
      curve.lineTo(13, 15);
      curve.lineTo(19, 15);
      p.drawPath(curve);
      break;
    }
    case StudioIcon::Open: {
      QPainterPath folder;
      folder.moveTo(3, 19);
      folder.lineTo(3, 5);
      folder.lineTo(9, 5);
      folder.lineTo(11, 7);
      folder.lineTo(19, 7);
      folder.lineTo(19, 10);
      p.drawPath(folder);
      QPainterPath front;
      front.moveTo(3, 19);
      front.lineTo(6, 10);
      front.lineTo(22, 10);
      front.lineTo(19, 19);
      front.closeSubpath();
      p.drawPath(front);
      break;
    }
    case StudioIcon::Save: {
      p.drawRoundedRect(QRectF(4, 4, 16, 16), 2, 2);
      p.drawRect(QRectF(8, 4, 8, 5));
      p.drawRect(QRectF(7, 13, 10, 7));
      break;
    }
    case StudioIcon::Fit: {
      // Four corners pointing outwards.
      for (auto [x, y, dx, dy] : {std::tuple{4, 4, 1, 1}, {20, 4, -1, 1}, {4, 20, 1, -1}, {20, 20, -1, -1}}) {
        p.drawLine(QPointF(x, y), QPointF(x + 5 * dx, y));
        p.drawLine(QPointF(x, y), QPointF(x, y + 5 * dy));
      }
      p.drawRect(QRectF(9, 9, 6, 6));
      break;
    }
    case StudioIcon::ZoomIn:
    case StudioIcon::ZoomOut: {
      p.drawEllipse(QPointF(10, 10), 6, 6);
      p.drawLine(QPointF(14.5, 14.5), QPointF(20, 20));
      p.drawLine(QPointF(7, 10), QPointF(13, 10));
      if (which == StudioIcon::ZoomIn) p.drawLine(QPointF(10, 7), QPointF(10, 13));
      break;
    }
    case StudioIcon::ExportImage: {
      p.drawRoundedRect(QRectF(3, 5, 18, 14), 2, 2);
      QPainterPath hills;
      hills.moveTo(5, 17);
      hills.lineTo(10, 11);
      hills.lineTo(13, 14);
      hills.lineTo(16, 10);
      hills.lineTo(19, 17);
      p.drawPath(hills);
      p.drawEllipse(QPointF(8, 9), 1.2, 1.2);
      break;
    }
    case StudioIcon::ExportModule: {
      // A box with an arrow leaving it.
      p.drawRoundedRect(QRectF(3, 9, 12, 12), 2, 2);
      p.drawLine(QPointF(11, 13), QPointF(20, 4));
      p.drawLine(QPointF(14, 4), QPointF(20, 4));
      p.drawLine(QPointF(20, 4), QPointF(20, 10));
      break;
    }
    case StudioIcon::Theme: {
      // Half-filled circle: light and dark.
      p.drawEllipse(QPointF(12, 12), 8, 8);
      QPainterPath half;
      half.moveTo(12, 4);
      half.arcTo(QRectF(4, 4, 16, 16), 90, 180);
      half.closeSubpath();
      p.setBrush(color);
      p.drawPath(half);
      break;
    }
  }
}

}  // namespace

QIcon studioIcon(StudioIcon which, const QColor& color) {
  QIcon icon;
  for (int size : {16, 24, 32, 48}) {
    QPixmap pixmap(size, size);
    pixmap.fill(Qt::transparent);
    QPainter painter(&pixmap);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.scale(size / 24.0, size / 24.0);
    draw(painter, which, color);
    painter.end();
    icon.addPixmap(pixmap);
  }
  return icon;
}

}  // namespace tessel::studio
