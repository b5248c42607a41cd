// Counting pixels of one colour in a grab: a category colour shows only where a box of that
// category was drawn, so tests of what views draw can check colours without golden images.
#pragma once

#include <QColor>
#include <QImage>

namespace tessel::views::testing {

/// Pixels of exactly `colour` (alpha ignored) in `image`.
inline int pixelsOf(const QImage& image, const QColor& colour) {
  int count = 0;
  QImage converted = image.convertToFormat(QImage::Format_RGB32);
  for (int y = 0; y < converted.height(); ++y) {
    const QRgb* line = reinterpret_cast<const QRgb*>(converted.constScanLine(y));
    for (int x = 0; x < converted.width(); ++x)
      if (qRed(line[x]) == colour.red() && qGreen(line[x]) == colour.green() && qBlue(line[x]) == colour.blue()) ++count;
  }
  return count;
}

}  // namespace tessel::views::testing
