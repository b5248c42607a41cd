// A small overview of the whole graph with the main view's visible rectangle; click or drag
// in it to move the view there.
#pragma once

#include <QPixmap>
#include <QPointer>
#include <QWidget>

namespace tessel::views {

class GraphView;

class GraphMinimap : public QWidget {
  Q_OBJECT

public:
  explicit GraphMinimap(QWidget* parent = nullptr);

  /// Follows `view`: redraws its overview when the scene changes and its frame when the
  /// view scrolls or zooms.
  void setView(GraphView* view);
  GraphView* view() const { return view_; }

  /// The scene rectangle the main view shows, mapped into this widget (for tests).
  QRectF visibleFrame() const;

  QSize sizeHint() const override { return {200, 150}; }

protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;

private:
  void invalidateOverview();
  void renderOverview();
  QRectF overviewTarget() const;
  QPointF toScene(const QPointF& widgetPoint) const;

  QPointer<GraphView> view_;
  QPixmap overview_;
  bool overviewStale_ = true;
};

}  // namespace tessel::views
