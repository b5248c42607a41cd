// The tuning dashboard's plots that explain the session: how well the cost model ranks, where
// each kernel stands against the roofline, and why the scheduler chose each round's task.
#include "views/tuning/TuningPlots.h"

#include <QToolTip>

#include <algorithm>
#include <cmath>
#include <map>

#include "views/common/PlotStyle.h"
#include "views/tuning/TuningPlotSupport.h"

namespace tessel::views {

using namespace plots;

// --- CostModelPlot ------------------------------------------------------------------------

CostModelPlot::CostModelPlot(QWidget* parent)
    : TuningPlot(tr("The cost model's predictions appear here\nonce it has been trained."), parent) {
  // Three rows, each the panel's full width: the latest round's figures, the two plots side by
  // side, and the history's legend (in a narrow window, text inside either plot covered it).
  plotLayout()->clear();
  figures_ = new QCPTextElement(this);
  plotLayout()->addElement(0, 0, figures_);
  auto* plots = new QCPLayoutGrid;
  plotLayout()->addElement(1, 0, plots);
  scatterRect_ = new QCPAxisRect(this);
  historyRect_ = new QCPAxisRect(this);
  plots->addElement(0, 0, scatterRect_);
  plots->addElement(0, 1, historyRect_);
  plots->setColumnStretchFactors({1, 1});
  for (QCPAxisRect* rect : {scatterRect_, historyRect_})
    for (QCPAxis* axis : rect->axes()) axis->grid()->setVisible(true);

  QCPAxis* measuredAxis = scatterRect_->axis(QCPAxis::atBottom);
  QCPAxis* predictedAxis = scatterRect_->axis(QCPAxis::atLeft);
  measuredAxis->setLabel(tr("measured GFLOP/s (latest round)"));
  predictedAxis->setLabel(tr("predicted score"));
  latest_ = addGraph(measuredAxis, predictedAxis);
  latest_->setLineStyle(QCPGraph::lsNone);
  latest_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, kEstimateColor, kEstimateColor, 7));

  QCPAxis* roundAxis = historyRect_->axis(QCPAxis::atBottom);
  QCPAxis* figureAxis = historyRect_->axis(QCPAxis::atLeft);
  roundAxis->setLabel(tr("round"));
  figureAxis->setLabel(tr("ranking quality"));
  figureAxis->setRange(-1, 1);
  auto addFigure = [&](const QString& name, QColor color) {
    QCPGraph* graph = addGraph(roundAxis, figureAxis);
    graph->setName(name);
    graph->setLineStyle(QCPGraph::lsLine);
    graph->setPen(QPen(color, 1.5));
    graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, color, color, 3));
    return graph;
  };
  accuracy_ = addFigure(tr("pairwise accuracy"), kAccuracyColor.lighter(140));
  accuracyTrend_ = addFigure(tr("accuracy, mean of 10 rounds"), kAccuracyColor);
  accuracyTrend_->setPen(QPen(kAccuracyColor.darker(120), 2.5));
  accuracyTrend_->setScatterStyle(QCPScatterStyle());
  rho_ = addFigure(tr("Spearman's rho"), kRhoColor);
  tau_ = addFigure(tr("Kendall's tau"), kTauColor);

  // The default legend went with the default axes: the figures get one of their own, under
  // their plot in two columns rather than over it (in a narrow window it covered the curves).
  historyLegend_ = new QCPLegend;
  plotLayout()->addElement(2, 0, historyLegend_);
  plotLayout()->setRowStretchFactors({0.001, 1, 0.001});
  historyLegend_->setLayer(QStringLiteral("legend"));
  historyLegend_->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  historyLegend_->setWrap(2);
  historyLegend_->setIconSize(18, 10);
  historyLegend_->setRowSpacing(0);
  historyLegend_->setMargins(QMargins(6, 0, 6, 2));
  for (QCPGraph* graph : {accuracyTrend_, accuracy_, rho_, tau_}) graph->addToLegend(historyLegend_);
  historyLegend_->setVisible(true);

  applyPalette();
}

void CostModelPlot::applyPalette() {
  TuningPlot::applyPalette();
  if (figures_) figures_->setTextColor(palette().color(QPalette::Text));
}

void CostModelPlot::showLog(const tuner::TuningEventLog& log) {
  log_ = &log;
  QVector<double> rounds, accuracy, rho, tau;
  const tuner::LoggedRound* latest = nullptr;
  for (const tuner::LoggedRound& round : log.rounds()) {
    if (!round.pairwiseAccuracy) continue;
    latest = &round;
    rounds << round.round;
    accuracy << *round.pairwiseAccuracy;
    rho << (round.spearmanRho ? *round.spearmanRho : NAN);
    tau << (round.kendallTau ? *round.kendallTau : NAN);
  }
  accuracy_->setData(rounds, accuracy, true);
  // The trend: a round's figure is one batch of a few candidates, noisy on its own.
  QVector<double> trend;
  double windowSum = 0;
  for (int i = 0; i < accuracy.size(); ++i) {
    windowSum += accuracy[i];
    if (i >= 10) windowSum -= accuracy[i - 10];
    trend << windowSum / std::min(i + 1, 10);
  }
  accuracyTrend_->setData(rounds, trend, true);
  rho_->setData(rounds, rho, true);
  tau_->setData(rounds, tau, true);
  historyRect_->axis(QCPAxis::atBottom)->setRange(0, std::max(4.0, rounds.isEmpty() ? 0.0 : rounds.back()) + 1);

  QVector<double> measured, predicted;
  shownRound_ = latest ? latest->round : 0;
  if (latest) {
    // The round's searched candidates with predictions (controls and defaults have none).
    for (auto it = log.trials().rbegin(); it != log.trials().rend(); ++it) {
      if (it->round < latest->round) break;
      if (it->round != latest->round || !it->prediction) continue;
      measured << (it->ok ? trialGflops(*it) : 0);
      predicted << *it->prediction;
    }
  }
  latest_->setData(measured, predicted);
  bool hasFlops = latest && log.tasks()[size_t(latest->task)].flops > 0;
  scatterRect_->axis(QCPAxis::atBottom)
      ->setLabel(hasFlops ? tr("measured GFLOP/s (latest round)") : tr("measured runs per ms (latest round)"));
  if (!measured.isEmpty()) {
    auto [lowX, highX] = std::minmax_element(measured.begin(), measured.end());
    auto [lowY, highY] = std::minmax_element(predicted.begin(), predicted.end());
    double spanX = std::max(*highX - *lowX, 1e-9), spanY = std::max(*highY - *lowY, 1e-9);
    scatterRect_->axis(QCPAxis::atBottom)->setRange(*lowX - 0.08 * spanX, *highX + 0.08 * spanX);
    scatterRect_->axis(QCPAxis::atLeft)->setRange(*lowY - 0.1 * spanY, *highY + 0.35 * spanY);
    auto figure = [](std::optional<double> value) {
      return value ? QString::number(*value, 'f', 2) : QStringLiteral("–");
    };
    // Kernel names are long, and the panel may be narrow.
    QString kernel = QString::fromStdString(log.tasks()[size_t(latest->task)].name);
    if (kernel.size() > 30) kernel = kernel.left(14) + QChar(0x2026) + kernel.right(15);
    figures_->setText(tr("round %1, %2\npairwise accuracy %3 \u00b7 rho %4 \u00b7 tau %5")
                          .arg(latest->round)
                          .arg(kernel)
                          .arg(figure(latest->pairwiseAccuracy), figure(latest->spearmanRho),
                               figure(latest->kendallTau)));
  } else {
    figures_->setText({});
  }
  setEmpty(rounds.isEmpty());
  replot(QCustomPlot::rpQueuedReplot);
}

QString CostModelPlot::csv() const {
  QString out = QStringLiteral("round,pairwise_accuracy,spearman_rho,kendall_tau\n");
  auto rhoData = rho_->data(), tauData = tau_->data();
  auto rhoIt = rhoData->constBegin(), tauIt = tauData->constBegin();
  for (auto it = accuracy_->data()->constBegin(); it != accuracy_->data()->constEnd(); ++it, ++rhoIt, ++tauIt)
    out += csvNumber(it->key) + ',' + csvNumber(it->value) + ',' + csvNumber(rhoIt->value) + ',' +
           csvNumber(tauIt->value) + '\n';
  return out;
}

// --- RooflinePlot -------------------------------------------------------------------------

RooflinePlot::RooflinePlot(QWidget* parent)
    : TuningPlot(tr("Each kernel against the machine's roofline\nappears here once its default is measured."), parent) {
  roof_ = addGraph();
  roof_->setName(tr("roof"));
  roof_->setPen(QPen(QColor(0x88, 0x88, 0x88), 2));
  defaults_ = addGraph();
  defaults_->setName(tr("default"));
  defaults_->setLineStyle(QCPGraph::lsNone);
  defaults_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(kEstimateColor, 1.5), Qt::NoBrush, 7));
  best_ = addGraph();
  best_->setName(tr("best"));
  best_->setLineStyle(QCPGraph::lsNone);
  best_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, kMeasuredColor, kMeasuredColor, 7));
  for (QCPAxis* axis : {xAxis, yAxis}) {
    axis->setScaleType(QCPAxis::stLogarithmic);
    axis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    axis->setNumberFormat(QStringLiteral("gb"));
  }
  xAxis->setLabel(tr("flops per byte of inputs and outputs"));
  yAxis->setLabel(tr("GFLOP/s"));
  putLegendAbove();
  applyPalette();
}

void RooflinePlot::showLog(const tuner::TuningEventLog& log) {
  log_ = &log;
  for (QCPItemLine* arrow : arrows_) removeItem(arrow);
  arrows_.clear();
  QVector<double> defaultX, defaultY, bestX, bestY;
  double lowX = 1e9, highX = 0, lowY = 1e9, highY = 0;
  for (size_t task = 0; task < log.tasks().size(); ++task) {
    const tuner::LoggedTask& info = log.tasks()[task];
    const tuner::LoggedTaskState& state = log.taskStates()[task];
    if (info.flops <= 0 || info.bytes <= 0 || !state.defaultMs) continue;
    double intensity = info.flops / info.bytes;
    double before = info.flops / (*state.defaultMs * 1e6);
    double after = state.bestMs ? info.flops / (*state.bestMs * 1e6) : before;
    defaultX << intensity;
    defaultY << before;
    bestX << intensity;
    bestY << after;
    lowX = std::min(lowX, intensity);
    highX = std::max(highX, intensity);
    lowY = std::min({lowY, before, after});
    highY = std::max({highY, before, after});
    if (after > before * 1.02) {
      auto* arrow = new QCPItemLine(this);
      arrow->start->setCoords(intensity, before);
      arrow->end->setCoords(intensity, after);
      arrow->setPen(QPen(taskColor(int(task)), 1));
      arrow->setHead(QCPLineEnding::esSpikeArrow);
      arrows_.push_back(arrow);
    }
  }
  defaults_->setData(defaultX, defaultY);
  best_->setData(bestX, bestY);
  setEmpty(defaultX.isEmpty());
  if (defaultX.isEmpty()) {
    roof_->data()->clear();
    replot(QCustomPlot::rpQueuedReplot);
    return;
  }
  // The roof over the intensities shown, with a decade of margin.
  double fromX = lowX / 10, toX = highX * 10;
  double peak = log.peakGflops(), bandwidth = log.bandwidthGBps();
  QVector<double> roofX, roofY;
  if (peak > 0) {
    double ridge = bandwidth > 0 ? peak / bandwidth : fromX;
    for (double x : {fromX, std::clamp(ridge, fromX, toX), toX}) {
      roofX << x;
      roofY << (bandwidth > 0 ? std::min(peak, bandwidth * x) : peak);
    }
    highY = std::max(highY, peak);
    lowY = std::min(lowY, roofY.front());
  }
  roof_->setData(roofX, roofY, true);
  if (peak <= 0) roof_->setName(tr("roof: unknown"));
  else if (bandwidth > 0) roof_->setName(tr("roof: %1 GFLOP/s, %2 GB/s").arg(peak, 0, 'f', 0).arg(bandwidth, 0, 'f', 1));
  else roof_->setName(tr("roof: %1 GFLOP/s").arg(peak, 0, 'f', 0));
  xAxis->setRange(fromX, toX);
  yAxis->setRange(std::max(lowY / 3, 1e-3), highY * 2);
  replot(QCustomPlot::rpQueuedReplot);
}

int RooflinePlot::taskAt(const QPointF& pixel) const {
  if (!log_) return -1;
  double bestDistance = 36;  // within 6 pixels
  int found = -1;
  for (size_t task = 0; task < log_->tasks().size(); ++task) {
    const tuner::LoggedTask& info = log_->tasks()[task];
    const tuner::LoggedTaskState& state = log_->taskStates()[task];
    if (info.flops <= 0 || info.bytes <= 0 || !state.defaultMs) continue;
    double x = xAxis->coordToPixel(info.flops / info.bytes);
    for (std::optional<double> milliseconds : {state.defaultMs, state.bestMs}) {
      if (!milliseconds || *milliseconds <= 0) continue;
      double y = yAxis->coordToPixel(info.flops / (*milliseconds * 1e6));
      double distance = (x - pixel.x()) * (x - pixel.x()) + (y - pixel.y()) * (y - pixel.y());
      if (distance <= bestDistance) {
        bestDistance = distance;
        found = int(task);
      }
    }
  }
  return found;
}

void RooflinePlot::mouseMoveEvent(QMouseEvent* event) {
  QCustomPlot::mouseMoveEvent(event);
  int task = taskAt(event->position());
  if (task < 0) {
    QToolTip::hideText();
    return;
  }
  const tuner::LoggedTask& info = log_->tasks()[size_t(task)];
  const tuner::LoggedTaskState& state = log_->taskStates()[size_t(task)];
  double before = info.flops / (*state.defaultMs * 1e6);
  QString text = tr("%1\n%2 flops per byte; default %3 GFLOP/s").arg(QString::fromStdString(info.name))
                     .arg(info.flops / info.bytes, 0, 'g', 3)
                     .arg(before, 0, 'f', 1);
  if (state.bestMs && *state.bestMs > 0) text += tr(", best %1 GFLOP/s").arg(info.flops / (*state.bestMs * 1e6), 0, 'f', 1);
  text += tr("\nclick to select the task");
  QToolTip::showText(event->globalPosition().toPoint(), text, this);
}

QString RooflinePlot::csv() const {
  QString out = QStringLiteral("task,flops_per_byte,default_gflops,best_gflops\n");
  if (!log_) return out;
  for (size_t task = 0; task < log_->tasks().size(); ++task) {
    const tuner::LoggedTask& info = log_->tasks()[task];
    const tuner::LoggedTaskState& state = log_->taskStates()[task];
    if (info.flops <= 0 || info.bytes <= 0 || !state.defaultMs) continue;
    out += csvText(info.name) + ',' + csvNumber(info.flops / info.bytes) + ',' +
           csvNumber(info.flops / (*state.defaultMs * 1e6)) + ',' +
           csvNumber(state.bestMs ? info.flops / (*state.bestMs * 1e6) : NAN) + '\n';
  }
  return out;
}

// --- AllocationPlot ------------------------------------------------------------------------

AllocationPlot::AllocationPlot(QWidget* parent)
    : TuningPlot(tr("Which task each round went to, and why,\nappears here as the session runs."), parent) {
  const std::pair<const char*, QColor> reasons[] = {
      {"warm-up", QColor(0x88, 0x88, 0x88)}, {"gradient", kEstimateColor}, {"random", kRhoColor},
      {"", QColor(0x6a, 0x9a, 0x6a)}};  // streams older than chosen_by do not say
  for (const auto& [reason, color] : reasons) {
    QCPGraph* graph = addGraph();
    graph->setName(*reason ? QString::fromLatin1(reason) : tr("reason not recorded"));
    graph->setLineStyle(QCPGraph::lsNone);
    graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, color, color, 6));
    if (!*reason) graph->removeFromLegend();
    reasons_.emplace_back(QString::fromLatin1(reason), graph);
  }
  xAxis->setLabel(tr("round"));
  yAxis->setLabel(tr("task"));
  yAxis->setRangeReversed(true);
  setMouseTracking(true);
  putLegendAbove();
  applyPalette();
}

QCPGraph* AllocationPlot::reasonGraph(const QString& reason) const {
  for (const auto& [name, graph] : reasons_)
    if (name == reason) return graph;
  return nullptr;
}

void AllocationPlot::showLog(const tuner::TuningEventLog& log) {
  log_ = &log;
  std::map<QString, std::pair<QVector<double>, QVector<double>>> points;
  for (const tuner::LoggedRound& round : log.rounds()) {
    auto& [rounds, tasks] = points[QString::fromStdString(round.chosenBy)];
    rounds << round.round;
    tasks << round.task;
  }
  for (const auto& [reason, graph] : reasons_) {
    graph->setData(points[reason].first, points[reason].second, true);
    if (reason.isEmpty()) {
      // Shown in the legend only when the stream has such rounds.
      graph->removeFromLegend();
      if (!points[reason].first.isEmpty()) graph->addToLegend();
    }
  }
  // Task names on the vertical axis (every one when they fit).
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  int taskCount = int(log.tasks().size());
  // As many names as fit the axis's height at a line each.
  int fitting = std::max(4, axisRect()->height() / std::max(1, QFontMetrics(yAxis->tickLabelFont()).height()));
  int step = std::max(1, (taskCount + fitting - 1) / fitting);
  // Before the first round the axis stays bare: the placeholder text explains the plot.
  for (int task = 0; task < taskCount && !log.rounds().empty(); task += step)
    ticker->addTick(task, shortName(log.tasks()[size_t(task)].name));
  yAxis->setTicker(ticker);
  yAxis->setRange(-0.7, std::max(1, taskCount) - 0.3);
  xAxis->setRange(0, std::max(8.0, log.rounds().empty() ? 0.0 : double(log.rounds().back().round)) + 1);
  setEmpty(log.rounds().empty());
  replot(QCustomPlot::rpQueuedReplot);
}

int AllocationPlot::taskAt(const QPointF& pixel) const {
  if (!log_) return -1;
  double bestDistance = 36;  // within 6 pixels
  int found = -1;
  for (const tuner::LoggedRound& round : log_->rounds()) {
    double dx = xAxis->coordToPixel(round.round) - pixel.x(), dy = yAxis->coordToPixel(round.task) - pixel.y();
    if (dx * dx + dy * dy <= bestDistance) {
      bestDistance = dx * dx + dy * dy;
      found = round.task;
    }
  }
  return found;
}

void AllocationPlot::mouseMoveEvent(QMouseEvent* event) {
  QCustomPlot::mouseMoveEvent(event);
  if (!log_) return;
  const tuner::LoggedRound* nearest = nullptr;
  double best = 36;  // within 6 pixels
  for (const tuner::LoggedRound& round : log_->rounds()) {
    double dx = xAxis->coordToPixel(round.round) - event->position().x();
    double dy = yAxis->coordToPixel(round.task) - event->position().y();
    if (dx * dx + dy * dy <= best) {
      best = dx * dx + dy * dy;
      nearest = &round;
    }
  }
  if (!nearest) {
    QToolTip::hideText();
    return;
  }
  QString text = tr("round %1: %2\nchosen by %3").arg(nearest->round)
                     .arg(QString::fromStdString(log_->tasks()[size_t(nearest->task)].name),
                          QString::fromStdString(nearest->chosenBy));
  if (nearest->chosenBy != "warm-up")
    text += tr("\nexpected: %1 ms of model latency per trial").arg(nearest->gradientMsPerTrial, 0, 'g', 3);
  text += tr("\n%1 measured, %2 failed").arg(nearest->measured).arg(nearest->errors);
  QToolTip::showText(event->globalPosition().toPoint(), text, this);
}

QString AllocationPlot::csv() const {
  QString out = QStringLiteral("round,task,name,chosen_by,gradient_ms_per_trial,measured,errors\n");
  if (!log_) return out;
  for (const tuner::LoggedRound& round : log_->rounds())
    out += QString::number(round.round) + ',' + QString::number(round.task) + ',' +
           csvText(log_->tasks()[size_t(round.task)].name) + ',' + QString::fromStdString(round.chosenBy) + ',' +
           csvNumber(round.gradientMsPerTrial) + ',' + QString::number(round.measured) + ',' +
           QString::number(round.errors) + '\n';
  return out;
}

}  // namespace tessel::views
