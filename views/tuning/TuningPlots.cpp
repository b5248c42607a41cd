// The tuning dashboard's plots of the session's progress: the base of every plot, model latency,
// each task's best throughput, and every trial. TuningSessionPlots.cpp has the plots that explain it.
#include "views/tuning/TuningPlots.h"

#include <QToolTip>

#include <algorithm>
#include <cmath>
#include <map>

#include "views/common/PlotStyle.h"
#include "views/tuning/TuningPlotSupport.h"

namespace tessel::views {

using namespace plots;

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

namespace {
constexpr int kPathScatterLimit = 2000;

/// An antialiased disc of `diameter` pixels on a transparent square, to stamp.
QPixmap discSprite(const QColor& color, double diameter) {
  int side = int(std::ceil(diameter)) + 1;
  QPixmap sprite(side, side);
  sprite.fill(Qt::transparent);
  QPainter painter(&sprite);
  painter.setRenderHint(QPainter::Antialiasing);
  painter.setPen(Qt::NoPen);
  painter.setBrush(color);
  painter.drawEllipse(QPointF(side / 2.0, side / 2.0), diameter / 2, diameter / 2);
  return sprite;
}
}  // namespace

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
    double size = dimmed ? 3 : 5;
    // A smoothed disc is a path QPainter fills point by point: 20,000 of them (a long
    // session) took 40-60 ms to replot, a stall of the GUI thread. Past a few thousand
    // points each disc is a stamp of one pre-drawn pixmap instead, which looks the same.
    if (keys[task].size() < kPathScatterLimit)
      graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, color, color, size));
    else
      graph->setScatterStyle(QCPScatterStyle(discSprite(color, size)));
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

}  // namespace tessel::views
