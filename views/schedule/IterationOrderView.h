// The schedule editor's iteration-order view: an animation of the order in which a schedule
// produces its output's elements, on a 2-D tile, threads and vector lanes told apart.
#pragma once

#include <QElapsedTimer>
#include <QPointer>
#include <QWidget>

#include <memory>

#include "compiler/lower/IterationOrder.h"
#include "compiler/ops/Workload.h"
#include "views/common/JobRunner.h"

class QComboBox;
class QSpinBox;
class QLabel;
class QSlider;
class QTimer;
class QToolButton;

namespace tessel::views {

class IterationOrderCanvas;

/// A grid of the output tile (IterationOrderCanvas) with player controls: restart, step back,
/// play/pause, step forward, a progress slider over the steps, a speed in steps per second;
/// a legend (one colour per thread, outlines for vector instructions) and a summary line.
///
/// Feed it whichever is at hand; each new order restarts the animation from step 0 (and plays
/// it when autoPlay() is on):
///   view->setSchedule(task.workload, editorText);     // lowers and interprets on a worker
///   view->setLoweredFunction(lowered.func);           // interprets on a worker
///   view->setOrder(order);                            // shows it now
/// Work runs on the job channel jobChannel() ("iteration-order" unless set) of the view's
/// JobRunner (setJobRunner to share the window's); the latest request wins.
class IterationOrderView : public QWidget {
  Q_OBJECT

public:
  explicit IterationOrderView(QWidget* parent = nullptr);

  void setJobRunner(JobRunner* jobs);
  void setJobChannel(const QString& channel) { channel_ = channel; }
  QString jobChannel() const { return channel_; }
  /// Threads parallel loops are split over in the picture (0: the runtime's thread count; the
  /// threads box of the view changes it too). Recomputes the order shown when it came from
  /// setSchedule or setLoweredFunction.
  void setThreads(int threads);
  int threads() const;
  /// Play from the start whenever a new order arrives (on by default).
  void setAutoPlay(bool autoPlay) { autoPlay_ = autoPlay; }
  bool autoPlay() const { return autoPlay_; }

  /// Lowers `traceText` on `workload` and shows the order of its first output. A schedule
  /// error is shown in the view (and emitted by failed()) with its line and column.
  void setSchedule(const Workload& workload, const QString& traceText);
  /// Shows the order of `output` (default: the last parameter) of a lowered function.
  void setLoweredFunction(const PrimFunc& func, const Buffer& output = Buffer());
  /// Shows `order` now.
  void setOrder(const IterationOrder& order);

  /// The order shown (null before the first one).
  std::shared_ptr<const IterationOrder> order() const { return order_; }
  /// Steps completed so far: cells of steps 0 .. currentStep()-1 are drawn as produced.
  int64_t currentStep() const { return step_; }
  int64_t stepCount() const { return order_ ? order_->stepCount : 0; }
  /// Cells drawn as produced at the current step.
  int64_t producedCellCount() const;
  bool isPlaying() const;
  double stepsPerSecond() const { return stepsPerSecond_; }
  IterationOrderCanvas* canvas() const { return canvas_; }

  /// Writes the whole animation of the order shown as an animated PNG (views/common/AnimatedPng.h)
  /// for slides: `size` pixels, at most `maxFrames` frames spread evenly over the steps (the
  /// last shows the finished tile), in the canvas's colours. A Diagnostic when there is no order
  /// yet or the file cannot be written.
  Status exportAnimation(const QString& path, QSize size = QSize(480, 480), int maxFrames = 120) const;

public slots:
  void play();
  void pause();
  void togglePlaying();
  void stepForward();
  void stepBackward();
  void restart();
  void setCurrentStep(int64_t step);
  /// Animation speed (clamped to 0.5 .. 5000 steps per second). Until it is set (here or in
  /// the speed box), each new order picks a speed that plays it in about 8 seconds.
  void setStepsPerSecond(double stepsPerSecond);

signals:
  /// A new order is shown (the animation restarted).
  void orderChanged();
  void stepChanged(int64_t step);
  void playingChanged(bool playing);
  /// Lowering or interpreting failed; `message` is the compiler's diagnostic.
  void failed(const QString& message);

private:
  void buildUi();
  /// Computes an order with the given options (on a worker thread).
  using OrderSource = std::function<Expected<IterationOrder>(const IterationOrderOptions&)>;
  void startJob(OrderSource source);
  void showOrder(std::shared_ptr<const IterationOrder> order);
  void advance();
  void updateControls();
  void updateLegend();
  void chooseSpeedFor(int64_t steps);

  QPointer<JobRunner> jobs_;  // a shared runner may go away first
  JobRunner* ownJobs_ = nullptr;
  QString channel_ = QStringLiteral("iteration-order");
  IterationOrderOptions options_;
  OrderSource source_;  // where the order shown came from, to recompute it for other thread counts
  bool autoPlay_ = true;

  std::shared_ptr<const IterationOrder> order_;
  int64_t step_ = 0;
  double stepsPerSecond_ = 20;
  bool userChoseSpeed_ = false;  // then new orders keep the user's speed
  double pendingSteps_ = 0;  // fractional steps owed by the timer at slow speeds
  QTimer* timer_ = nullptr;
  QElapsedTimer sinceTick_;

  IterationOrderCanvas* canvas_ = nullptr;
  QToolButton* restartButton_ = nullptr;
  QToolButton* backButton_ = nullptr;
  QToolButton* playButton_ = nullptr;
  QToolButton* forwardButton_ = nullptr;
  QSlider* slider_ = nullptr;
  QLabel* stepLabel_ = nullptr;
  QComboBox* speed_ = nullptr;
  QSpinBox* threadsBox_ = nullptr;
  QLabel* summary_ = nullptr;
  QWidget* legend_ = nullptr;
  QLabel* message_ = nullptr;
};

}  // namespace tessel::views
