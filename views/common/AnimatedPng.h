// Writing an animation as an animated PNG (APNG), which browsers, slide tools and image
// viewers play and which keeps full colour (a GIF has 256). Qt writes single PNGs only; the
// frames are Qt's PNGs, re-chunked into one file as the APNG specification lays out.
#pragma once

#include <QImage>
#include <QString>

#include <vector>

#include "core/support/Error.h"

namespace tessel::views {

/// Writes `frames` (all the same size) to `path` as an APNG that loops forever, each frame shown
/// for `frameMilliseconds` and the last one for `lastFrameMilliseconds` (a pause before the
/// loop starts again). A Diagnostic naming the file when it cannot be written or the frames are
/// empty or of different sizes.
Status writeAnimatedPng(const QString& path, const std::vector<QImage>& frames, int frameMilliseconds,
                        int lastFrameMilliseconds);

}  // namespace tessel::views
