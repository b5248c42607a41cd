// The graph view widget: a QGraphicsView over a GraphScene with zoom (wheel, Ctrl+=/Ctrl+-,
// Ctrl+0 fits), panning by dragging, selection, decorations and a viewport state other views
// can mirror for synchronized side-by-side navigation.
#pragma once

#include <QGraphicsView>
#include <QPointF>

#include <memory>

#include "views/graph/GraphLayout.h"
#include "views/graph/GraphPalette.h"

namespace tessel::views {

class GraphScene;

/// Where a GraphView looks: its zoom (device pixels per scene unit) and the scene point at
/// the viewport's center. Copy it from one view to another to show the same place.
struct GraphViewport {
  double zoom = 1.0;
  QPointF center;
  bool operator==(const GraphViewport& other) const = default;
};

/// Shows a GraphLayout. Owns its GraphScene. Signals what the user does; the owner (e.g.
/// GraphWorkbench) decides what follows (properties, re-layout, opening a schedule).
///
///   auto* view = new GraphView(parent);
///   view->setGraphLayout(layout);          // from layoutGraph() on a worker
///   connect(view, &GraphView::nodeSelected, ...);
///   view->setNodeDecoration("conv1", Qt::green, "+", "added by FuseOps");
class GraphView : public QGraphicsView {
  Q_OBJECT

public:
  explicit GraphView(QWidget* parent = nullptr);

  /// Shows `layout` (null clears). The first layout is fitted to the view; later ones keep
  /// the zoom and, when the selected node still exists, keep it where it was on screen.
  /// Shows `layout`. The first one is fitted; later ones keep `anchorId` (default: the
  /// selected box) where it was on screen, so a re-layout does not jump.
  void setGraphLayout(std::shared_ptr<const GraphLayout> layout, const QString& anchorId = {});
  /// The id of the box whose centre is nearest the middle of the viewport (empty without one).
  QString nodeNearestViewCenter() const;
  std::shared_ptr<const GraphLayout> graphLayout() const;
  GraphScene* graphScene() const { return scene_; }

  void setGraphPalette(const GraphPalette& palette);

  double zoom() const;
  /// Zooms to `zoom` (clamped to [minimumZoom, maximumZoom]) keeping the viewport's center.
  void setZoom(double zoom);
  void zoomIn();
  void zoomOut();
  /// Fits the whole graph in the viewport (never magnifying past 1:1).
  void fitToView();
  /// How a graph first appears: fitted when that leaves its boxes readable (zoom at least
  /// readableZoom), else at readableZoom showing its top (the inputs) centred across, as a
  /// reader starts at the beginning; the minimap shows the rest. Fit (Ctrl+0) still shows all.
  void showStart();
  /// The zoom below which box text gets too small to read (nodes draw only their headers).
  static constexpr double readableZoom = 0.7;
  GraphViewport viewportState() const;
  void setViewportState(const GraphViewport& state);

  /// Scrolls so the node (or fused-group frame) is in the center; false when unknown.
  bool centerOnNode(const QString& id);
  /// Centres the box or frame in the view, zooming out as far as it takes to show all of it
  /// (never in); false when unknown.
  bool revealItem(const QString& id);
  /// Selects the node (emits nodeSelected); an empty id clears the selection.
  void selectNode(const QString& id);
  QString selectedNode() const;

  /// Decorations from other views (the pass-diff overlay): an outline colour, a badge and a
  /// tooltip line on the node `id`. Kept across re-layouts until cleared.
  void setNodeDecoration(const QString& id, const QColor& colour, const QString& badge = {},
                         const QString& tooltip = {});
  void clearDecorations();

  static constexpr double minimumZoom = 0.01;
  static constexpr double maximumZoom = 8.0;

signals:
  void nodeSelected(const QString& id);
  void nodeActivated(const QString& id);
  void fusedGroupToggleRequested(const QString& fusedNodeName, bool expand);
  /// Zoom or scroll position changed (by the user or programmatically).
  void viewportChanged(const GraphViewport& state);

protected:
  void wheelEvent(QWheelEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void scrollContentsBy(int dx, int dy) override;
  void resizeEvent(QResizeEvent* event) override;

private:
  void zoomBy(double factor, bool underMouse);
  void notifyViewport();

  GraphScene* scene_;
  bool fitPending_ = true;
};

}  // namespace tessel::views
