// Saves what a view shows as PNG or SVG (File > Export view): a graph canvas as its whole
// scene, any other widget as it looks on screen.
#pragma once

#include <QString>

#include "core/support/Error.h"

class QWidget;

namespace tessel::views {

/// Writes `view` to `path`; the format follows the suffix (.png or .svg). When `view` is or
/// contains a QGraphicsView, its whole scene is exported (not just the visible part), on the
/// scene's background. A Diagnostic names the path when the format is unknown or the file
/// cannot be written.
Status exportViewImage(QWidget* view, const QString& path);

}  // namespace tessel::views
