// ImageExport: PNG through QImage, SVG through QSvgGenerator, whole scenes for graph views.
#include "views/common/ImageExport.h"

#include <QFileInfo>
#include <QGraphicsScene>
#include <QGraphicsView>
#include <QImage>
#include <QPainter>
#include <QSvgGenerator>
#include <QWidget>

namespace tessel::views {

namespace {

Diagnostic cannotWrite(const QString& path, const QString& why) {
  return Diagnostic{why.toStdString(), path.toStdString(), 0, 0, "choose a writable folder and a .png or .svg name"};
}

// The graph canvas of `view` when it has one with something drawn, else null.
QGraphicsView* canvasOf(QWidget* view) {
  if (auto* canvas = qobject_cast<QGraphicsView*>(view)) return canvas->scene() ? canvas : nullptr;
  // The largest visible canvas: a workbench may hold a minimap too.
  QGraphicsView* best = nullptr;
  for (QGraphicsView* candidate : view->findChildren<QGraphicsView*>()) {
    if (!candidate->scene() || !candidate->isVisible()) continue;
    if (!best || candidate->width() * candidate->height() > best->width() * best->height()) best = candidate;
  }
  return best;
}

}  // namespace

Status exportViewImage(QWidget* view, const QString& path) {
  if (!view) return cannotWrite(path, QObject::tr("there is no view to export"));
  QString suffix = QFileInfo(path).suffix().toLower();
  if (suffix != "png" && suffix != "svg")
    return cannotWrite(path, QObject::tr("unknown image format '%1' (use .png or .svg)").arg(suffix));

  QGraphicsView* canvas = canvasOf(view);
  QGraphicsScene* scene = canvas ? canvas->scene() : nullptr;
  QRectF source = scene ? scene->itemsBoundingRect().adjusted(-20, -20, 20, 20) : QRectF(view->rect());
  if (source.isEmpty()) source = QRectF(view->rect()), scene = nullptr;
  QBrush background = scene && scene->backgroundBrush().style() != Qt::NoBrush
                          ? scene->backgroundBrush()
                          : (canvas ? canvas->backgroundBrush() : QBrush());
  if (background.style() == Qt::NoBrush) background = view->palette().base();

  auto paint = [&](QPainter& painter, const QRectF& target) {
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setRenderHint(QPainter::TextAntialiasing);
    if (scene) {
      painter.fillRect(target, background);
      scene->render(&painter, target, source);
    } else {
      view->render(&painter);
    }
  };

  if (suffix == "svg") {
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setSize(source.size().toSize());
    svg.setViewBox(QRectF(QPointF(0, 0), source.size()));
    svg.setTitle(view->windowTitle());
    svg.setDescription(QObject::tr("Exported from Tessel Studio"));
    QPainter painter;
    if (!painter.begin(&svg)) return cannotWrite(path, QObject::tr("cannot write the SVG file"));
    paint(painter, QRectF(QPointF(0, 0), source.size()));
    painter.end();
    if (!QFileInfo::exists(path)) return cannotWrite(path, QObject::tr("cannot write the SVG file"));
    return Status::success();
  }

  QImage image;
  if (scene) {
    // Scenes are exported at twice the scene's scale (sharp when zoomed in), capped so a
    // 5,000-node graph does not ask for gigabytes.
    double scale = 2.0;
    double longest = std::max(source.width(), source.height());
    if (longest * scale > 16000) scale = 16000 / longest;
    image = QImage((source.size() * scale).toSize(), QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::transparent);
    QPainter painter(&image);
    paint(painter, QRectF(QPointF(0, 0), source.size() * scale));
  } else {
    image = view->grab().toImage();
  }
  if (image.isNull() || !image.save(path, "PNG")) return cannotWrite(path, QObject::tr("cannot write the PNG file"));
  return Status::success();
}

}  // namespace tessel::views
