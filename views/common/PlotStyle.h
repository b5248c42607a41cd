// How every plot of the Studio takes its colours from the widget's palette, so plots follow
// the light and dark themes alike.
#pragma once

#include <qcustomplot.h>

namespace tessel::views {

/// Axis line, ticks and labels in the palette's text and mid colours, a dotted grid a little
/// off the canvas colour.
void stylePlotAxis(QCPAxis* axis, const QPalette& palette);

/// A legend without frame or fill, in the text colour.
void stylePlotLegend(QCPLegend* legend, const QPalette& palette);

}  // namespace tessel::views
