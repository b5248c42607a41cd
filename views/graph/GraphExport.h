// Saves the whole graph drawing as a PNG image or an SVG document.
#pragma once

#include <QString>

#include "core/support/Error.h"

class QGraphicsScene;

namespace tessel::views {

/// Renders the whole scene at `scale` (scene units to pixels) into a PNG at `path`. Very
/// large graphs are scaled down so the image stays under `maxPixels` pixels on its longer
/// side. A Diagnostic naming the file when it cannot be written.
Status exportGraphPng(QGraphicsScene& scene, const QString& path, double scale = 2.0, int maxPixels = 16000);

/// Writes the whole scene as SVG at `path`: vector shapes with real text, so node names can
/// be searched and the file scales without blur. `title` goes into the SVG metadata.
Status exportGraphSvg(QGraphicsScene& scene, const QString& path, const QString& title = {});

}  // namespace tessel::views
