// The grid of the iteration-order view: an output tile whose cells fill in, in production
// order, coloured by thread, vector instructions outlined.
#pragma once

#include <QColor>
#include <QWidget>

#include <memory>
#include <vector>

#include "compiler/lower/IterationOrder.h"

namespace tessel::views {

/// Paints an IterationOrder at one moment: the cells produced in steps before currentStep()
/// are filled with their thread's colour (faded when older, full and ringed when produced in
/// the latest step), cells of one vector instruction share an outline, and the rest are empty.
/// Row and column indices run along the edges; small tiles show each cell's step number.
class IterationOrderCanvas : public QWidget {
  Q_OBJECT

public:
  explicit IterationOrderCanvas(QWidget* parent = nullptr);

  void setOrder(std::shared_ptr<const IterationOrder> order);
  /// Shows the cells of steps 0 .. step-1 as produced (0: an empty grid).
  void setCurrentStep(int64_t step);
  int64_t currentStep() const { return step_; }

  /// The colour of `thread` (-1, outside parallel loops, shares thread 0's).
  static QColor threadColor(int thread);
  /// "C[0, 3, 17]": the output element shown in a cell of the tile.
  static QString elementText(const IterationOrder& order, int row, int column);
  /// "C[0, 0:32, 0:32, 0]": the part of the output the tile shows.
  static QString tileText(const IterationOrder& order);
  /// The cell (row, column) under a widget position, or (-1, -1).
  QPoint cellAt(const QPoint& position) const;
  /// The rectangle of a cell in widget coordinates.
  QRectF cellRect(int row, int column) const;

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

protected:
  void paintEvent(QPaintEvent* event) override;
  bool event(QEvent* event) override;

private:
  struct Geometry {
    QRectF grid;
    double cell = 0;
  };
  Geometry geometry() const;
  void paintLabels(QPainter& painter, const Geometry& g) const;
  void paintVectorOutlines(QPainter& painter, const Geometry& g, int64_t latestStep) const;

  std::shared_ptr<const IterationOrder> order_;
  std::vector<int> cellToEvent_;  // row * columns + column -> index into order_->cells, or -1
  int64_t step_ = 0;
};

}  // namespace tessel::views
