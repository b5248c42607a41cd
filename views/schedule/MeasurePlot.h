// The latency of each measured variant of a task's schedule, with the best so far marked, so a
// person sees at a glance which edit helped.
#pragma once

#include <qcustomplot.h>

#include <vector>

#include "views/schedule/MeasureHistory.h"

namespace tessel::views {

/// A QCustomPlot of median latency (line with points) and fastest sample (faint points) per
/// variant number, a best-so-far staircase, and the fastest variant marked with a star and its
/// value. Colours follow the widget's palette (light and dark themes).
class MeasurePlot : public QCustomPlot {
  Q_OBJECT

public:
  explicit MeasurePlot(QWidget* parent = nullptr);

  /// Shows `variants` (oldest first); an empty list shows a hint to press Measure.
  void setVariants(const std::vector<MeasuredVariant>& variants);

  /// Graphs, in this order, for tests and screenshots.
  QCPGraph* medianGraph() const { return median_; }
  QCPGraph* fastestGraph() const { return fastest_; }
  QCPGraph* bestSoFarGraph() const { return bestSoFar_; }
  QCPGraph* bestMarkerGraph() const { return bestMarker_; }

protected:
  void changeEvent(QEvent* event) override;

private:
  void applyPalette();

  QCPGraph* median_ = nullptr;
  QCPGraph* fastest_ = nullptr;
  QCPGraph* bestSoFar_ = nullptr;
  QCPGraph* bestMarker_ = nullptr;
  QCPItemText* bestLabel_ = nullptr;
  QCPItemText* emptyHint_ = nullptr;
};

}  // namespace tessel::views
