// The Studio's toolbar and mode bar icons, drawn as vector shapes in the theme's colours (no
// image files to ship, crisp at any scale, and they follow a theme switch).
#pragma once

#include <QColor>
#include <QIcon>

namespace tessel::studio {

enum class StudioIcon { Graph, Timeline, Schedule, Tuning, Open, Save, Fit, ZoomIn, ZoomOut, ExportImage, ExportModule, Theme };

/// `which` drawn with `color` strokes (disabled state drawn faded automatically).
QIcon studioIcon(StudioIcon which, const QColor& color);

}  // namespace tessel::studio
