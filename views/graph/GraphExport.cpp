// PNG export through QImage and SVG export through QSvgGenerator, both full detail.
#include "views/graph/GraphExport.h"

#include <QFileInfo>
#include <QGraphicsScene>
#include <QImage>
#include <QPainter>
#include <QSvgGenerator>

namespace tessel::views {

namespace {

Diagnostic writeFailure(const QString& path, const char* what) {
  return Diagnostic{std::string("could not write the ") + what, QFileInfo(path).absoluteFilePath().toStdString(), 0,
                    0, "check that the folder exists and is writable"};
}

}  // namespace

Status exportGraphPng(QGraphicsScene& scene, const QString& path, double scale, int maxPixels) {
  QRectF source = scene.sceneRect();
  if (source.isEmpty()) return Diagnostic{"there is no graph to export", path.toStdString(), 0, 0, "open a model first"};
  double longest = std::max(source.width(), source.height()) * scale;
  if (longest > maxPixels) scale *= maxPixels / longest;
  QSize size = (source.size() * scale).toSize().expandedTo(QSize(1, 1));
  QImage image(size, QImage::Format_ARGB32_Premultiplied);
  image.fill(scene.backgroundBrush().color());
  {
    QPainter painter(&image);
    painter.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing | QPainter::SmoothPixmapTransform);
    scene.render(&painter, QRectF(QPointF(0, 0), QSizeF(size)), source);
  }
  if (!image.save(path, "PNG")) return writeFailure(path, "PNG image");
  return Status::success();
}

Status exportGraphSvg(QGraphicsScene& scene, const QString& path, const QString& title) {
  QRectF source = scene.sceneRect();
  if (source.isEmpty()) return Diagnostic{"there is no graph to export", path.toStdString(), 0, 0, "open a model first"};
  QSvgGenerator generator;
  generator.setFileName(path);
  generator.setSize(source.size().toSize());
  generator.setViewBox(QRectF(QPointF(0, 0), source.size()));
  generator.setTitle(title.isEmpty() ? QStringLiteral("Tessel graph") : title);
  generator.setDescription(QStringLiteral("Exported from Tessel Studio"));
  QPainter painter;
  if (!painter.begin(&generator)) return writeFailure(path, "SVG document");
  painter.fillRect(QRectF(QPointF(0, 0), source.size()), scene.backgroundBrush());
  scene.render(&painter, QRectF(QPointF(0, 0), source.size()), source);
  painter.end();
  if (!QFileInfo(path).exists() || QFileInfo(path).size() == 0) return writeFailure(path, "SVG document");
  return Status::success();
}

}  // namespace tessel::views
