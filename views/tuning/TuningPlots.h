// The tuning dashboard's live plots, each drawn from a TuningEventLog: the model's estimated
// latency over time, each task's best throughput over its trials, every trial as a point, and
// the cost model's predictions against what was measured, round by round.
#pragma once

#include <qcustomplot.h>

#include <set>

#include "tuner/session/TuningEventLog.h"

namespace tessel::views {

/// A colour per task that reads on light and dark canvases (golden-angle hues).
QColor taskColor(int task);

/// What every tuning plot shares: theme colours, a hint while there is nothing to show, and
/// its data as CSV (the PNG/SVG come from ImageExport, like every view).
class TuningPlot : public QCustomPlot {
  Q_OBJECT

public:
  explicit TuningPlot(const QString& emptyText, QWidget* parent = nullptr);
  ~TuningPlot() override;

  /// Redraws from the log (cheap enough to call a few times a second with 20,000 trials).
  virtual void showLog(const tuner::TuningEventLog& log) = 0;
  /// The plotted data, a header line and one line per point.
  virtual QString csv() const = 0;
  /// The task whose mark is within a few pixels of `pixel` (-1 when none): a click there
  /// selects the task everywhere (taskClicked).
  virtual int taskAt(const QPointF& pixel) const { return -1; }

signals:
  void taskClicked(int task);

protected:
  void mouseReleaseEvent(QMouseEvent* event) override;
  void changeEvent(QEvent* event) override;
  virtual void applyPalette();
  void setEmpty(bool empty);
  /// The plot's legends: the default one (when it still has it) and any inside its axes.
  std::vector<QCPLegend*> legends() const;
  /// A legend in a row above the axes, so it never covers the newest points.
  void putLegendAbove();
  /// Shows the legend putLegendAbove() placed, or takes it out of the layout.
  void setLegendAboveShown(bool shown);

  QCPItemText* emptyHint_ = nullptr;
};

/// Estimated model latency (Σ weight × best time) against wall time (or trials), with the default
/// schedules' latency as a dashed reference and the end-of-session measurement as points.
class LatencyPlot : public TuningPlot {
  Q_OBJECT

public:
  explicit LatencyPlot(QWidget* parent = nullptr);
  void showLog(const tuner::TuningEventLog& log) override;
  QString csv() const override;
  /// The horizontal axis: the session's trials instead of wall time.
  void setAgainstTrials(bool againstTrials);
  bool againstTrials() const { return againstTrials_; }

  QCPGraph* estimateGraph() const { return estimate_; }
  QCPGraph* defaultGraph() const { return default_; }
  QCPGraph* measuredGraph() const { return measured_; }

private:
  QCPGraph* estimate_ = nullptr;
  QCPGraph* default_ = nullptr;
  QCPGraph* measured_ = nullptr;
  bool againstTrials_ = false;
  const tuner::TuningEventLog* log_ = nullptr;
};

/// Best GFLOP/s against the task's trials, one staircase per selected task (all tasks when
/// none is selected), in the task's colour; tasks without floating-point work are left out.
class TaskProgressPlot : public TuningPlot {
  Q_OBJECT

public:
  explicit TaskProgressPlot(QWidget* parent = nullptr);
  void setSelectedTasks(const std::set<int>& tasks);
  void showLog(const tuner::TuningEventLog& log) override;
  QString csv() const override;
  int taskAt(const QPointF& pixel) const override;

private:
  std::set<int> selected_;
  std::vector<int> graphTasks_;  // the task of each graph
  const tuner::TuningEventLog* log_ = nullptr;
};

/// Every measured candidate: its speed relative to its task's default schedule against the
/// session's trial number, coloured by task;
/// failed candidates (crash, hang, wrong result, failed build) as red crosses on the axis.
/// Hovering a point says what it was; clicking it emits trialClicked with its index in
/// TuningEventLog::trials().
class TrialScatterPlot : public TuningPlot {
  Q_OBJECT

public:
  explicit TrialScatterPlot(QWidget* parent = nullptr);
  void setSelectedTasks(const std::set<int>& tasks);
  void showLog(const tuner::TuningEventLog& log) override;
  QString csv() const override;

  /// How many times faster than its task's default schedule a trial ran (0 when it failed):
  /// the scatter's value, comparable across tasks, with or without floating-point work.
  static double relativeThroughput(const tuner::TuningEventLog& log, const tuner::LoggedTrial& trial);
  /// The trial nearest to a pixel position (within a few pixels), or -1.
  int trialAt(const QPointF& pixel) const;
  /// Graph of a task's valid trials (nullptr before the task's first), and of the failures.
  QCPGraph* taskGraph(int task) const;
  QCPGraph* errorGraph() const { return errors_; }

signals:
  void trialClicked(int trial);

protected:
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;

private:
  std::vector<QCPGraph*> taskGraphs_;
  QCPGraph* errors_ = nullptr;
  std::set<int> selected_;
  const tuner::TuningEventLog* log_ = nullptr;
  QPoint pressPosition_;
};

/// The cost model's quality: left, predicted score against measured GFLOP/s for the latest
/// round with predictions (with its pairwise accuracy, Spearman's rho and Kendall's tau);
/// right, those three figures over the rounds, so a person sees the model learn.
class CostModelPlot : public TuningPlot {
  Q_OBJECT

public:
  explicit CostModelPlot(QWidget* parent = nullptr);
  void showLog(const tuner::TuningEventLog& log) override;
  QString csv() const override;

  QCPGraph* latestRoundGraph() const { return latest_; }
  QCPGraph* accuracyGraph() const { return accuracy_; }
  QCPGraph* rhoGraph() const { return rho_; }
  QCPGraph* tauGraph() const { return tau_; }
  /// The round the left plot shows (0 before any round had predictions).
  int shownRound() const { return shownRound_; }

protected:
  void applyPalette() override;

private:
  QCPAxisRect* scatterRect_ = nullptr;
  QCPAxisRect* historyRect_ = nullptr;
  QCPGraph* latest_ = nullptr;
  QCPGraph* accuracy_ = nullptr;
  QCPGraph* accuracyTrend_ = nullptr;
  QCPGraph* rho_ = nullptr;
  QCPGraph* tau_ = nullptr;
  QCPTextElement* figures_ = nullptr;
  QCPLegend* historyLegend_ = nullptr;
  int shownRound_ = 0;
  const tuner::TuningEventLog* log_ = nullptr;
};

/// The roofline: GFLOP/s against arithmetic intensity (flops per byte of the kernel's inputs
/// and outputs), both logarithmic, under the machine's ceilings (measured FMA peak, and
/// memory bandwidth × intensity); each task with floating-point work as its default (hollow)
/// and its best (filled) schedule, joined, so a person sees which kernels are compute-bound,
/// which memory-bound, and how far each is from its roof.
class RooflinePlot : public TuningPlot {
  Q_OBJECT

public:
  explicit RooflinePlot(QWidget* parent = nullptr);
  void showLog(const tuner::TuningEventLog& log) override;
  QString csv() const override;

  QCPGraph* roofGraph() const { return roof_; }
  QCPGraph* defaultGraph() const { return defaults_; }
  QCPGraph* bestGraph() const { return best_; }
  int taskAt(const QPointF& pixel) const override;

protected:
  void mouseMoveEvent(QMouseEvent* event) override;

private:
  QCPGraph* roof_ = nullptr;
  QCPGraph* defaults_ = nullptr;
  QCPGraph* best_ = nullptr;
  std::vector<QCPItemLine*> arrows_;
  const tuner::TuningEventLog* log_ = nullptr;
};

/// The task scheduler's decisions: a point per round at its task's row, sized by the trials
/// it measured and coloured by why the task was chosen (warm-up, gradient, random); hovering
/// says the expected gain. Shows where the budget went and why.
class AllocationPlot : public TuningPlot {
  Q_OBJECT

public:
  explicit AllocationPlot(QWidget* parent = nullptr);
  void showLog(const tuner::TuningEventLog& log) override;
  QString csv() const override;

  /// Graph of the rounds chosen for `reason`.
  QCPGraph* reasonGraph(const QString& reason) const;
  int taskAt(const QPointF& pixel) const override;

protected:
  void mouseMoveEvent(QMouseEvent* event) override;

private:
  std::vector<std::pair<QString, QCPGraph*>> reasons_;
  const tuner::TuningEventLog* log_ = nullptr;
};

}  // namespace tessel::views
