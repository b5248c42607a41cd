// The latency of each measured variant of a task's schedule, with the best so far marked.
#include "views/schedule/MeasurePlot.h"

#include "views/common/PlotStyle.h"

#include <algorithm>

namespace tessel::views {

namespace {
// Fixed series colours that read on both light and dark canvases.
const QColor kMedianColor(0x3d, 0x8b, 0xd9);
const QColor kBestColor(0x3f, 0xa8, 0x5a);
}  // namespace

MeasurePlot::MeasurePlot(QWidget* parent) : QCustomPlot(parent) {
  setMinimumHeight(140);
  setAntialiasedElements(QCP::aePlottables | QCP::aeItems);

  bestSoFar_ = addGraph();
  bestSoFar_->setName(tr("best so far"));
  bestSoFar_->setLineStyle(QCPGraph::lsStepLeft);
  bestSoFar_->setPen(QPen(kBestColor, 1.5, Qt::DashLine));

  fastest_ = addGraph();
  fastest_->setName(tr("fastest sample"));
  fastest_->setLineStyle(QCPGraph::lsNone);

  median_ = addGraph();
  median_->setName(tr("median latency"));
  median_->setPen(QPen(kMedianColor, 2));
  median_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, kMedianColor, kMedianColor, 6));

  bestMarker_ = addGraph();
  bestMarker_->setName(tr("fastest variant"));
  bestMarker_->setLineStyle(QCPGraph::lsNone);
  bestMarker_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssStar, QPen(kBestColor, 2.5), Qt::NoBrush, 16));

  bestLabel_ = new QCPItemText(this);
  bestLabel_->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
  bestLabel_->setPadding(QMargins(4, 2, 4, 6));
  bestLabel_->setColor(kBestColor);
  bestLabel_->setVisible(false);

  emptyHint_ = new QCPItemText(this);
  emptyHint_->position->setType(QCPItemPosition::ptAxisRectRatio);
  emptyHint_->position->setCoords(0.5, 0.5);
  emptyHint_->setText(tr("Press Measure to time the current schedule.\nEach variant you measure adds a point."));

  auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
  ticker->setTickStep(1);
  ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
  xAxis->setTicker(ticker);
  xAxis->setLabel(tr("variant"));
  yAxis->setLabel(tr("latency (ms)"));
  // The legend is a row above the axes, so it never hides the newest (often the best) point.
  legend->setVisible(true);
  legend->setIconSize(18, 10);
  legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  legend->setRowSpacing(0);
  legend->setColumnSpacing(12);
  plotLayout()->insertRow(0);
  plotLayout()->addElement(0, 0, legend);
  plotLayout()->setRowStretchFactor(0, 0.001);
  legend->setMargins(QMargins(6, 4, 6, 0));
  applyPalette();
  setVariants({});
}

void MeasurePlot::setVariants(const std::vector<MeasuredVariant>& variants) {
  QVector<double> numbers, medians, fastest, bestSoFar;
  double best = 0;
  int bestIndex = -1;
  for (size_t i = 0; i < variants.size(); ++i) {
    const driver::Measurement& m = variants[i].measurement;
    numbers << variants[i].number;
    medians << m.medianMilliseconds;
    fastest << m.minMilliseconds;
    if (bestIndex < 0 || m.medianMilliseconds < best) {
      best = m.medianMilliseconds;
      bestIndex = int(i);
    }
    bestSoFar << best;
  }
  median_->setData(numbers, medians, true);
  fastest_->setData(numbers, fastest, true);
  bestSoFar_->setData(numbers, bestSoFar, true);
  bestMarker_->data()->clear();
  emptyHint_->setVisible(variants.empty());
  bestLabel_->setVisible(bestIndex >= 0);
  legend->setVisible(!variants.empty());
  if (bestIndex >= 0) {
    double x = numbers[bestIndex];
    bestMarker_->addData(x, best);
    bestLabel_->position->setCoords(x, best);
    bestLabel_->setText(tr("best %1 ms (#%2)").arg(best, 0, 'g', 4).arg(variants[size_t(bestIndex)].number));
  }

  // Whole variants on x with half a step of margin; y from 0 so latencies compare honestly,
  // with room above the highest point for the best label.
  double lastNumber = numbers.isEmpty() ? 1 : numbers.back();
  double firstNumber = numbers.isEmpty() ? 1 : numbers.front();
  xAxis->setRange(firstNumber - 0.5, std::max(lastNumber, firstNumber + 4) + 0.5);
  double highest = 0;
  for (double v : medians) highest = std::max(highest, v);
  for (double v : fastest) highest = std::max(highest, v);
  yAxis->setRange(0, highest > 0 ? highest * 1.2 : 1);
  replot(QCustomPlot::rpQueuedReplot);
}

void MeasurePlot::changeEvent(QEvent* event) {
  QCustomPlot::changeEvent(event);
  if (event->type() == QEvent::PaletteChange) {
    applyPalette();
    replot(QCustomPlot::rpQueuedReplot);
  }
}

void MeasurePlot::applyPalette() {
  QPalette p = palette();
  setBackground(p.brush(QPalette::Base));
  for (QCPAxis* axis : {xAxis, yAxis}) stylePlotAxis(axis, p);
  QColor fastestColor = p.color(QPalette::PlaceholderText);
  fastest_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, fastestColor, fastestColor, 4));
  stylePlotLegend(legend, p);
  emptyHint_->setColor(p.color(QPalette::PlaceholderText));
}

}  // namespace tessel::views
