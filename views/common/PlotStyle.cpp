// Plot colours from the palette.
#include "views/common/PlotStyle.h"

namespace tessel::views {

void stylePlotAxis(QCPAxis* axis, const QPalette& palette) {
  QColor text = palette.color(QPalette::Text);
  QColor faint = palette.color(QPalette::Mid);
  axis->setBasePen(QPen(faint));
  axis->setTickPen(QPen(faint));
  axis->setSubTickPen(QPen(faint));
  axis->setTickLabelColor(text);
  axis->setLabelColor(text);
  bool lightCanvas = palette.color(QPalette::Base).lightness() > 128;
  axis->grid()->setPen(QPen(faint.lighter(lightCanvas ? 130 : 70), 0, Qt::DotLine));
}

void stylePlotLegend(QCPLegend* legend, const QPalette& palette) {
  legend->setBrush(Qt::NoBrush);
  legend->setBorderPen(Qt::NoPen);
  legend->setTextColor(palette.color(QPalette::Text));
}

}  // namespace tessel::views
