// The tuning dashboard's plots.
#include "views/tuning/TuningPlots.h"

#include <QToolTip>

#include <algorithm>
#include <cmath>
#include <map>

#include "views/common/PlotStyle.h"

namespace tessel::views {

namespace {

const QColor kEstimateColor(0x3d, 0x8b, 0xd9);
const QColor kMeasuredColor(0x3f, 0xa8, 0x5a);
const QColor kErrorColor(0xd9, 0x43, 0x3d);
const QColor kAccuracyColor(0x3d, 0x8b, 0xd9);
const QColor kRhoColor(0xe0, 0x8a, 0x1e);
const QColor kTauColor(0x8e, 0x5c, 0xc9);

// Kernel names can be long (fused chains): legends and axis labels show the start.
QString shortName(const std::string& name) {
  QString text = QString::fromStdString(name);
  return text.size() <= 32 ? text : text.left(31) + QChar(0x2026);
}

QString csvNumber(double value) { return std::isfinite(value) ? QString::number(value, 'g', 8) : QString(); }

QString csvText(const std::string& text) {
  QString quoted = QString::fromStdString(text);
  quoted.replace('"', QStringLiteral("\"\""));
  return '"' + quoted + '"';
}

// Kernels without floating-point work (copies, transposes) have no GFLOP/s: they are
// plotted as calls per millisecond.
double trialGflops(const tuner::LoggedTrial& trial) {
  if (trial.gflops > 0) return trial.gflops;
  return trial.medianMs > 0 ? 1.0 / trial.medianMs : 0;
}

}  // namespace

std::vector<QCPLegend*> TuningPlot::legends() const {
  std::vector<QCPLegend*> found;
  if (legend) found.push_back(legend);
  for (QCPAxisRect* rect : axisRects())
    for (int i = 0; i < rect->insetLayout()->elementCount(); ++i)
      if (auto* inset = qobject_cast<QCPLegend*>(rect->insetLayout()->elementAt(i)); inset && inset != legend)
        found.push_back(inset);
  return found;
}

QColor taskColor(int task) {
  // Golden-angle hue steps keep neighbouring tasks apart however many there are.
  int hue = int(std::fmod(210.0 + 137.508 * task, 360.0));
  return QColor::fromHsv(hue, 170, 205);
}

// --- TuningPlot ---------------------------------------------------------------------------

TuningPlot::TuningPlot(const QString& emptyText, QWidget* parent) : QCustomPlot(parent) {
  setMinimumHeight(160);
  setAntialiasedElements(QCP::aePlottables | QCP::aeItems);
  emptyHint_ = new QCPItemText(this);
  emptyHint_->position->setType(QCPItemPosition::ptViewportRatio);
  emptyHint_->position->setCoords(0.5, 0.5);
  emptyHint_->setText(emptyText);
  emptyHint_->setClipToAxisRect(false);
}

TuningPlot::~TuningPlot() {
  // A legend taken out of the layout (setLegendAboveShown) goes back, so the layout deletes it.
  if (legend && !legend->layout()) plotLayout()->addElement(plotLayout()->rowCount(), 0, legend);
}

void TuningPlot::mouseReleaseEvent(QMouseEvent* event) {
  QCustomPlot::mouseReleaseEvent(event);
  if (event->button() != Qt::LeftButton) return;
  int task = taskAt(event->position());
  if (task >= 0) emit taskClicked(task);
}

void TuningPlot::changeEvent(QEvent* event) {
  QCustomPlot::changeEvent(event);
  if (event->type() == QEvent::PaletteChange) {
    applyPalette();
    replot(QCustomPlot::rpQueuedReplot);
  }
}

void TuningPlot::applyPalette() {
  QPalette p = palette();
  setBackground(p.brush(QPalette::Base));
  for (QCPAxisRect* rect : axisRects())
    for (QCPAxis* axis : rect->axes()) stylePlotAxis(axis, p);
  for (QCPLegend* each : legends()) stylePlotLegend(each, p);
  emptyHint_->setColor(p.color(QPalette::PlaceholderText));
}

void TuningPlot::setEmpty(bool empty) { emptyHint_->setVisible(empty); }

void TuningPlot::putLegendAbove() {
  legend->setVisible(true);
  legend->setIconSize(18, 10);
  legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  legend->setRowSpacing(0);
  legend->setColumnSpacing(12);
  legend->setWrap(3);  // a few names a row, so the legend never widens the plot
  plotLayout()->insertRow(0);
  plotLayout()->addElement(0, 0, legend);
  plotLayout()->setRowStretchFactor(0, 0.001);
  legend->setMargins(QMargins(6, 4, 6, 0));
}

void TuningPlot::setLegendAboveShown(bool shown) {
  // A layout column is no wider than its narrowest element's largest size, and an empty
  // legend's is its margins: hidden or not, it would squeeze the plot into a sliver, so the
  // legend leaves the layout while it has nothing to list.
  bool inLayout = plotLayout()->hasElement(0, 0) && plotLayout()->element(0, 0) == legend;
  legend->setVisible(shown);
  if (shown && !inLayout) {
    plotLayout()->insertRow(0);
    plotLayout()->addElement(0, 0, legend);
    plotLayout()->setRowStretchFactor(0, 0.001);
  } else if (!shown && inLayout) {
    plotLayout()->take(legend);
    plotLayout()->simplify();
  }
}

// --- LatencyPlot --------------------------------------------------------------------------

LatencyPlot::LatencyPlot(QWidget* parent)
    : TuningPlot(tr("The model's estimated latency appears here\nas soon as the defaults are measured."), parent) {
  default_ = addGraph();
  default_->setName(tr("default"));
  default_->setPen(QPen(QColor(0x88, 0x88, 0x88), 1.5, Qt::DashLine));
  estimate_ = addGraph();
  estimate_->setName(tr("estimated (Σ kernels)"));
  estimate_->setLineStyle(QCPGraph::lsStepLeft);
  estimate_->setPen(QPen(kEstimateColor, 2));
  measured_ = addGraph();
  measured_->setName(tr("measured"));
  measured_->setLineStyle(QCPGraph::lsNone);
  measured_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDiamond, QPen(kMeasuredColor, 2), kMeasuredColor, 9));
  xAxis->setLabel(tr("wall time (min)"));
  yAxis->setLabel(tr("model latency (ms)"));
  putLegendAbove();
  applyPalette();
}

void LatencyPlot::setAgainstTrials(bool againstTrials) {
  againstTrials_ = againstTrials;
  xAxis->setLabel(againstTrials ? tr("trials") : tr("wall time (min)"));
  if (log_) showLog(*log_);
}

void LatencyPlot::showLog(const tuner::TuningEventLog& log) {
  log_ = &log;
  QVector<double> keys, estimates;
  double defaultLatency = log.defaultLatencyMs();
  for (const tuner::LoggedRound& round : log.rounds()) {
    keys << (againstTrials_ ? double(round.trials) : round.t / 60);
    estimates << round.estimatedLatencyMs;
    if (round.defaultLatencyMs > 0) defaultLatency = round.defaultLatencyMs;
  }
  double now = againstTrials_ ? double(log.trials().size()) : log.lastTime() / 60;
  double end = std::max({now, keys.isEmpty() ? 0.0 : keys.back(),
                         againstTrials_ ? double(log.budgetTrials()) : log.budgetSeconds() / 60});
  if (!estimates.isEmpty()) {
    // The estimate holds until the next round: carry the last one to now.
    keys << now;
    estimates << estimates.back();
  }
  estimate_->setData(keys, estimates, true);
  default_->data()->clear();
  if (defaultLatency > 0) default_->setData({0.0, std::max(end, 1e-3)}, {defaultLatency, defaultLatency}, true);
  measured_->data()->clear();
  if (log.measuredTunedMs()) measured_->addData(now, *log.measuredTunedMs());
  setEmpty(estimates.isEmpty() && defaultLatency <= 0);

  double highest = defaultLatency;
  for (double value : estimates) highest = std::max(highest, value);
  if (log.measuredTunedMs()) highest = std::max(highest, *log.measuredTunedMs());
  xAxis->setRange(0, std::max(end, againstTrials_ ? 16.0 : 0.5));
  yAxis->setRange(0, highest > 0 ? highest * 1.15 : 1);
  replot(QCustomPlot::rpQueuedReplot);
}

QString LatencyPlot::csv() const {
  QString out = againstTrials_ ? QStringLiteral("trials,estimated_latency_ms,default_latency_ms\n")
                               : QStringLiteral("minutes,estimated_latency_ms,default_latency_ms\n");
  double defaultLatency = default_->data()->isEmpty() ? NAN : default_->data()->begin()->value;
  for (auto it = estimate_->data()->constBegin(); it != estimate_->data()->constEnd(); ++it)
    out += csvNumber(it->key) + ',' + csvNumber(it->value) + ',' + csvNumber(defaultLatency) + '\n';
  return out;
}

// --- TaskProgressPlot ---------------------------------------------------------------------

TaskProgressPlot::TaskProgressPlot(QWidget* parent)
    : TuningPlot(tr("Each task's best throughput appears here\nafter its first round."), parent) {
  xAxis->setLabel(tr("trials of the task"));
  yAxis->setLabel(tr("best GFLOP/s"));
  putLegendAbove();
  applyPalette();
}

void TaskProgressPlot::setSelectedTasks(const std::set<int>& tasks) {
  selected_ = tasks;
  if (log_) showLog(*log_);
}

void TaskProgressPlot::showLog(const tuner::TuningEventLog& log) {
  log_ = &log;
  clearGraphs();
  graphTasks_.clear();
  double highest = 0, longest = 0;
  const int maxLines = 12;  // more lines than this is a tangle: the table selects
  int shown = 0;
  for (size_t task = 0; task < log.tasks().size() && shown < maxLines; ++task) {
    if (!selected_.empty() && !selected_.count(int(task))) continue;
    const tuner::LoggedTask& info = log.tasks()[task];
    const tuner::LoggedTaskState& state = log.taskStates()[task];
    // Copies and layout changes have no floating-point work, so no GFLOP/s: the trial plot
    // shows their speedup.
    if (state.bestHistory.empty() || info.flops <= 0) continue;
    QVector<double> trials, gflops;
    auto rate = [&](double ms) { return info.flops / (ms * 1e6); };
    if (state.defaultMs) {
      trials << 0;
      gflops << rate(*state.defaultMs);
    }
    for (auto [taskTrials, best] : state.bestHistory) {
      trials << taskTrials;
      gflops << rate(best);
      highest = std::max(highest, gflops.back());
      longest = std::max(longest, double(taskTrials));
    }
    QCPGraph* graph = addGraph();
    graph->setName(shortName(info.name));
    graph->setLineStyle(QCPGraph::lsStepLeft);
    QColor color = taskColor(int(task));
    graph->setPen(QPen(color, selected_.count(int(task)) ? 2.5 : 1.5));
    graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, color, color, 4));
    graph->setData(trials, gflops, true);
    graphTasks_.push_back(int(task));
    ++shown;
  }
  setLegendAboveShown(shown > 0 && shown <= 6);
  setEmpty(shown == 0);
  xAxis->setRange(0, std::max(longest, 16.0) * 1.03);
  yAxis->setRange(0, highest > 0 ? highest * 1.15 : 1);
  replot(QCustomPlot::rpQueuedReplot);
}

int TaskProgressPlot::taskAt(const QPointF& pixel) const {
  // The nearest point of any staircase, within 6 pixels.
  double bestDistance = 36;
  int found = -1;
  for (int i = 0; i < graphCount() && size_t(i) < graphTasks_.size(); ++i)
    for (auto it = graph(i)->data()->constBegin(); it != graph(i)->data()->constEnd(); ++it) {
      double dx = xAxis->coordToPixel(it->key) - pixel.x(), dy = yAxis->coordToPixel(it->value) - pixel.y();
      if (dx * dx + dy * dy <= bestDistance) {
        bestDistance = dx * dx + dy * dy;
        found = graphTasks_[size_t(i)];
      }
    }
  return found;
}

QString TaskProgressPlot::csv() const {
  QString out = QStringLiteral("task,trials,best_gflops\n");
  for (int i = 0; i < graphCount(); ++i)
    for (auto it = graph(i)->data()->constBegin(); it != graph(i)->data()->constEnd(); ++it)
      out += csvText(graph(i)->name().toStdString()) + ',' + csvNumber(it->key) + ',' + csvNumber(it->value) + '\n';
  return out;
}

// --- TrialScatterPlot ---------------------------------------------------------------------

TrialScatterPlot::TrialScatterPlot(QWidget* parent)
    : TuningPlot(tr("Every measured candidate appears here as a point."), parent) {
  addLayer(QStringLiteral("selected"), layer(QStringLiteral("main")), QCustomPlot::limAbove);
  errors_ = addGraph();
  errors_->setName(tr("failed"));
  errors_->setLineStyle(QCPGraph::lsNone);
  errors_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCross, QPen(kErrorColor, 1.5), Qt::NoBrush, 7));
  // Failures stay visible over every task's points.
  errors_->setLayer(QStringLiteral("selected"));
  xAxis->setLabel(tr("trial"));
  yAxis->setLabel(tr("speed / the task's default"));
  setMouseTracking(true);
  applyPalette();
}

void TrialScatterPlot::setSelectedTasks(const std::set<int>& tasks) {
  selected_ = tasks;
  if (log_) showLog(*log_);
}

QCPGraph* TrialScatterPlot::taskGraph(int task) const {
  return task >= 0 && size_t(task) < taskGraphs_.size() ? taskGraphs_[size_t(task)] : nullptr;
}

void TrialScatterPlot::showLog(const tuner::TuningEventLog& log) {
  log_ = &log;
  const auto& trials = log.trials();
  size_t taskCount = log.tasks().size();
  while (taskGraphs_.size() < taskCount) {
    QCPGraph* graph = addGraph();
    int task = int(taskGraphs_.size());
    graph->setName(shortName(log.tasks()[size_t(task)].name));
    graph->setLineStyle(QCPGraph::lsNone);
    taskGraphs_.push_back(graph);
  }
  std::vector<QVector<double>> keys(taskCount), values(taskCount);
  QVector<double> errorKeys, errorValues;
  double highest = 0;
  for (const tuner::LoggedTrial& trial : trials) {
    if (trial.task < 0 || size_t(trial.task) >= taskCount) continue;
    if (!trial.ok) {
      errorKeys << trial.sessionTrials;
      errorValues << 0;
      continue;
    }
    double speed = relativeThroughput(log, trial);
    keys[size_t(trial.task)] << trial.sessionTrials;
    values[size_t(trial.task)] << speed;
    if (selected_.empty() || selected_.count(trial.task)) highest = std::max(highest, speed);
  }
  for (size_t task = 0; task < taskCount; ++task) {
    QCPGraph* graph = taskGraphs_[task];
    QColor color = taskColor(int(task));
    bool dimmed = !selected_.empty() && !selected_.count(int(task));
    if (dimmed) color.setAlpha(45);
    graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, color, color, dimmed ? 3 : 5));
    graph->setData(keys[task], values[task], true);
  }
  // Selected tasks are drawn over the others.
  for (size_t task = 0; task < taskCount; ++task)
    taskGraphs_[task]->setLayer(selected_.count(int(task)) ? QStringLiteral("selected") : QStringLiteral("main"));
  errors_->setData(errorKeys, errorValues, true);
  setEmpty(trials.empty());
  xAxis->setRange(0, std::max(16.0, double(trials.empty() ? 0 : trials.back().sessionTrials)) * 1.02);
  yAxis->setRange(highest > 0 ? -highest * 0.04 : -0.04, highest > 0 ? highest * 1.1 : 1);
  replot(QCustomPlot::rpQueuedReplot);
}

double TrialScatterPlot::relativeThroughput(const tuner::TuningEventLog& log, const tuner::LoggedTrial& trial) {
  if (!trial.ok || trial.medianMs <= 0 || trial.task < 0 || size_t(trial.task) >= log.taskStates().size()) return 0;
  std::optional<double> defaultMs = log.taskStates()[size_t(trial.task)].defaultMs;
  return defaultMs ? *defaultMs / trial.medianMs : 0;
}

int TrialScatterPlot::trialAt(const QPointF& pixel) const {
  if (!log_) return -1;
  const double radius = 6;
  double bestDistance = radius * radius;
  int best = -1;
  const auto& trials = log_->trials();
  for (size_t i = 0; i < trials.size(); ++i) {
    const tuner::LoggedTrial& trial = trials[i];
    if (!selected_.empty() && !selected_.count(trial.task) && trial.ok) continue;
    double value = trial.ok ? relativeThroughput(*log_, trial) : 0;
    double x = xAxis->coordToPixel(trial.sessionTrials), y = yAxis->coordToPixel(value);
    double distance = (x - pixel.x()) * (x - pixel.x()) + (y - pixel.y()) * (y - pixel.y());
    if (distance <= bestDistance) {
      bestDistance = distance;
      best = int(i);
    }
  }
  return best;
}

void TrialScatterPlot::mouseMoveEvent(QMouseEvent* event) {
  QCustomPlot::mouseMoveEvent(event);
  int index = trialAt(event->position());
  if (index < 0 || !log_) {
    QToolTip::hideText();
    return;
  }
  const tuner::LoggedTrial& trial = log_->trials()[size_t(index)];
  const std::string& task = log_->tasks()[size_t(trial.task)].name;
  QString text = tr("trial %1 (%2, round %3)\n%4\npoint %5")
                     .arg(trial.sessionTrials)
                     .arg(QString::fromStdString(trial.origin))
                     .arg(trial.round)
                     .arg(QString::fromStdString(task), QString::fromStdString(trial.point));
  if (trial.ok)
    text += tr("\n%1 ms median (%2 – %3), %4 GFLOP/s, %5x the default")
                .arg(trial.medianMs, 0, 'g', 4)
                .arg(trial.minMs, 0, 'g', 4)
                .arg(trial.maxMs, 0, 'g', 4)
                .arg(trial.gflops, 0, 'f', 1)
                .arg(relativeThroughput(*log_, trial), 0, 'f', 2);
  else
    text += tr("\nfailed (%1): %2").arg(QString::fromStdString(trial.errorKind),
                                        QString::fromStdString(trial.errorMessage));
  if (trial.prediction) text += tr("\npredicted score %1").arg(*trial.prediction, 0, 'g', 3);
  text += tr("\nclick to open its schedule");
  QToolTip::showText(event->globalPosition().toPoint(), text, this);
}

void TrialScatterPlot::mouseReleaseEvent(QMouseEvent* event) {
  QCustomPlot::mouseReleaseEvent(event);
  if (event->button() != Qt::LeftButton) return;
  int index = trialAt(event->position());
  if (index >= 0) emit trialClicked(index);
}

QString TrialScatterPlot::csv() const {
  QString out = QStringLiteral("trial,task,round,origin,point,ok,median_ms,gflops,speedup,prediction,error\n");
  if (!log_) return out;
  for (const tuner::LoggedTrial& trial : log_->trials()) {
    out += QString::number(trial.sessionTrials) + ',' + csvText(log_->tasks()[size_t(trial.task)].name) + ',' +
           QString::number(trial.round) + ',' + QString::fromStdString(trial.origin) + ',' + csvText(trial.point) + ',' +
           (trial.ok ? "1" : "0") + ',' + (trial.ok ? csvNumber(trial.medianMs) : QString()) + ',' +
           (trial.ok ? csvNumber(trial.gflops) : QString()) + ',' +
           (trial.ok ? csvNumber(relativeThroughput(*log_, trial)) : QString()) + ',' +
           (trial.prediction ? csvNumber(*trial.prediction) : QString()) + ',' + csvText(trial.errorKind) + '\n';
  }
  return out;
}

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
