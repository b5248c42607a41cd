// The schedule editor's iteration-order view: player controls, legend and background work
// around the IterationOrderCanvas.
#include "views/schedule/IterationOrderView.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QShortcut>
#include <QSlider>
#include <QSpinBox>
#include <QStyle>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "compiler/lower/Lower.h"
#include "compiler/schedule/TraceText.h"
#include "runtime/ThreadPool.h"
#include "views/common/AnimatedPng.h"
#include "views/schedule/IterationOrderCanvas.h"

namespace tessel::views {

namespace {

const double kSpeeds[] = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 5000};
// A new order plays in about this long unless the user picked a speed.
constexpr double kTargetSeconds = 8;
constexpr int kTickMilliseconds = 16;

QString shapeText(const std::vector<int64_t>& shape) {
  QStringList parts;
  for (int64_t d : shape) parts << QString::number(d);
  return parts.isEmpty() ? QStringLiteral("scalar") : parts.join(QStringLiteral(" × "));
}

// A legend swatch: a filled square, optionally faded, ringed or outlined as a vector.
enum class Swatch { Filled, Faded, Latest, Vector, Empty };
QPixmap swatchPixmap(Swatch kind, const QColor& color, const QPalette& palette, qreal ratio) {
  int width = kind == Swatch::Vector ? 42 : 16;
  QPixmap pixmap(QSize(width, 16) * ratio);
  pixmap.setDevicePixelRatio(ratio);
  pixmap.fill(Qt::transparent);
  QPainter painter(&pixmap);
  painter.setRenderHint(QPainter::Antialiasing);
  QColor base = palette.color(QPalette::Base);
  QColor text = palette.color(QPalette::Text);
  QRectF square(1.5, 1.5, 13, 13);
  auto faded = [&](QColor c) {
    return QColor::fromRgbF(float(c.redF() * 0.55 + base.redF() * 0.45), float(c.greenF() * 0.55 + base.greenF() * 0.45),
                            float(c.blueF() * 0.55 + base.blueF() * 0.45));
  };
  switch (kind) {
    case Swatch::Filled: painter.fillRect(square, color); break;
    case Swatch::Faded: painter.fillRect(square, faded(color)); break;
    case Swatch::Latest:
      painter.fillRect(square, color);
      painter.setPen(QPen(text, 2));
      painter.drawRect(square);
      break;
    case Swatch::Empty:
      painter.fillRect(square, base);
      painter.setPen(QPen(palette.color(QPalette::Mid), 1));
      painter.drawRect(square);
      break;
    case Swatch::Vector: {
      QRectF run(1.5, 1.5, 39, 13);
      painter.fillRect(run, faded(color));
      painter.setPen(QPen(faded(color).darker(150), 1));
      for (int i = 1; i < 3; ++i) painter.drawLine(QPointF(1.5 + 13 * i, 1.5), QPointF(1.5 + 13 * i, 14.5));
      painter.setPen(QPen(color.darker(170), 1.5));
      painter.drawRoundedRect(run, 2, 2);
      break;
    }
  }
  return pixmap;
}

}  // namespace

IterationOrderView::IterationOrderView(QWidget* parent) : QWidget(parent) {
  ownJobs_ = new JobRunner(this);
  jobs_ = ownJobs_;
  timer_ = new QTimer(this);
  timer_->setInterval(kTickMilliseconds);
  timer_->setTimerType(Qt::PreciseTimer);
  connect(timer_, &QTimer::timeout, this, &IterationOrderView::advance);
  buildUi();
  updateLegend();
  updateControls();
}

void IterationOrderView::buildUi() {
  summary_ = new QLabel(tr("The order in which the schedule produces the output appears here."));
  summary_->setTextFormat(Qt::RichText);
  summary_->setWordWrap(true);
  canvas_ = new IterationOrderCanvas;

  auto makeButton = [this](QStyle::StandardPixmap icon, const QString& tip) {
    auto* button = new QToolButton;
    button->setIcon(style()->standardIcon(icon));
    button->setToolTip(tip);
    button->setAutoRaise(true);
    return button;
  };
  restartButton_ = makeButton(QStyle::SP_MediaSkipBackward, tr("Back to the start (Home)"));
  backButton_ = makeButton(QStyle::SP_MediaSeekBackward, tr("One step back (Left)"));
  playButton_ = makeButton(QStyle::SP_MediaPlay, tr("Play / pause (Space)"));
  forwardButton_ = makeButton(QStyle::SP_MediaSeekForward, tr("One step forward (Right)"));
  connect(restartButton_, &QToolButton::clicked, this, &IterationOrderView::restart);
  connect(backButton_, &QToolButton::clicked, this, &IterationOrderView::stepBackward);
  connect(playButton_, &QToolButton::clicked, this, &IterationOrderView::togglePlaying);
  connect(forwardButton_, &QToolButton::clicked, this, &IterationOrderView::stepForward);

  slider_ = new QSlider(Qt::Horizontal);
  slider_->setToolTip(tr("Drag to any step"));
  connect(slider_, &QSlider::valueChanged, this, [this](int value) {
    if (value != step_) setCurrentStep(value);
  });
  stepLabel_ = new QLabel;
  stepLabel_->setMinimumWidth(stepLabel_->fontMetrics().horizontalAdvance(QStringLiteral("step 00000/00000 · 0000/0000 cells")));
  speed_ = new QComboBox;
  speed_->setToolTip(tr("Animation speed"));
  for (double speed : kSpeeds) speed_->addItem(tr("%1 steps/s").arg(speed), speed);
  connect(speed_, &QComboBox::activated, this, [this](int index) {
    setStepsPerSecond(speed_->itemData(index).toDouble());
  });

  threadsBox_ = new QSpinBox;
  threadsBox_->setRange(1, 64);
  threadsBox_->setValue(threads());
  threadsBox_->setSuffix(tr(" threads"));
  threadsBox_->setToolTip(tr("How many threads parallel loops are split over in this picture "
                             "(the runtime here uses %1)").arg(runtime::ThreadPool::global().numThreads()));
  connect(threadsBox_, &QSpinBox::valueChanged, this, [this](int value) { setThreads(value); });

  auto* controls = new QHBoxLayout;
  controls->setSpacing(2);
  controls->addWidget(restartButton_);
  controls->addWidget(backButton_);
  controls->addWidget(playButton_);
  controls->addWidget(forwardButton_);
  controls->addSpacing(6);
  controls->addWidget(slider_, 1);
  controls->addSpacing(6);
  controls->addWidget(stepLabel_);

  auto* header = new QHBoxLayout;
  header->addWidget(summary_, 1);
  header->addWidget(speed_, 0, Qt::AlignTop);
  header->addWidget(threadsBox_, 0, Qt::AlignTop);

  legend_ = new QWidget;
  auto* legendLayout = new QHBoxLayout(legend_);
  legendLayout->setContentsMargins(0, 0, 0, 0);
  legendLayout->setSpacing(4);

  message_ = new QLabel;
  message_->setWordWrap(true);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  message_->setVisible(false);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(8, 8, 8, 8);
  layout->setSpacing(6);
  layout->addLayout(header);
  layout->addWidget(canvas_, 1);
  layout->addWidget(legend_);
  layout->addLayout(controls);
  layout->addWidget(message_);

  auto shortcut = [this](QKeySequence key, auto slot) {
    auto* s = new QShortcut(key, this, slot);
    s->setContext(Qt::WidgetWithChildrenShortcut);
  };
  shortcut(QKeySequence(Qt::Key_Space), [this] { togglePlaying(); });
  shortcut(QKeySequence(Qt::Key_Right), [this] { stepForward(); });
  shortcut(QKeySequence(Qt::Key_Left), [this] { stepBackward(); });
  shortcut(QKeySequence(Qt::Key_Home), [this] { restart(); });
  setFocusPolicy(Qt::StrongFocus);
}

void IterationOrderView::setThreads(int threads) {
  options_.threads = threads;
  threadsBox_->blockSignals(true);
  threadsBox_->setValue(this->threads());
  threadsBox_->blockSignals(false);
  if (source_) startJob(source_);
}

int IterationOrderView::threads() const {
  return options_.threads > 0 ? options_.threads : runtime::ThreadPool::global().numThreads();
}

void IterationOrderView::setJobRunner(JobRunner* jobs) { jobs_ = jobs ? jobs : ownJobs_; }

void IterationOrderView::startJob(OrderSource source) {
  source_ = std::move(source);
  if (!jobs_) jobs_ = ownJobs_;
  QPointer<IterationOrderView> self(this);
  IterationOrderOptions options = options_;
  jobs_->start<Expected<IterationOrder>>(
      channel_, tr("Following the loop nest"), [source = source_, options](JobContext&) { return source(options); },
      [self](Expected<IterationOrder> order) {
        if (!self) return;
        if (!order) {
          QString message = QString::fromStdString(order.error().toString());
          self->message_->setText(QStringLiteral("<span style='color:#d9534f'>%1</span>").arg(message.toHtmlEscaped()));
          self->message_->setVisible(true);
          emit self->failed(message);
          return;
        }
        self->showOrder(std::make_shared<const IterationOrder>(std::move(*order)));
      });
}

void IterationOrderView::setSchedule(const Workload& workload, const QString& traceText) {
  std::string text = traceText.toStdString();
  startJob([workload, text](const IterationOrderOptions& options) -> Expected<IterationOrder> {
    auto trace = parseTraceText(text);
    if (!trace) return trace.error();
    auto schedule = Schedule::replay(workload.outputs, *trace);
    if (!schedule) return schedule.error();
    auto lowered = tessel::lower(*schedule, workload.args(), workload.name);
    if (!lowered) return lowered.error();
    const PrimFunc& func = lowered->func;
    size_t firstOutput = workload.inputs.size();
    if (firstOutput >= func->params.size()) return iterationOrder(func, options);
    return iterationOrder(func, func->params[firstOutput], options);
  });
}

void IterationOrderView::setLoweredFunction(const PrimFunc& func, const Buffer& output) {
  startJob([func, output](const IterationOrderOptions& options) -> Expected<IterationOrder> {
    return output.defined() ? iterationOrder(func, output, options) : iterationOrder(func, options);
  });
}

void IterationOrderView::setOrder(const IterationOrder& order) {
  if (jobs_) jobs_->cancel(channel_);  // a slower request in flight must not replace this order
  source_ = nullptr;
  showOrder(std::make_shared<const IterationOrder>(order));
}

void IterationOrderView::showOrder(std::shared_ptr<const IterationOrder> order) {
  order_ = std::move(order);
  canvas_->setOrder(order_);
  step_ = 0;
  pendingSteps_ = 0;
  if (!userChoseSpeed_) chooseSpeedFor(order_->stepCount);

  QString tile = IterationOrderCanvas::tileText(*order_);
  QStringList facts;
  facts << tr("<b>%1</b> of %2").arg(tile, shapeText(order_->bufferShape));
  facts << (order_->stepCount == 1 ? tr("1 step") : tr("%1 steps").arg(order_->stepCount));
  if (order_->threads > 1)
    facts << tr("%1 threads share parallel loop <i>%2</i> (%3 iterations)")
                 .arg(order_->threads)
                 .arg(QString::fromStdString(order_->parallelLoop).toHtmlEscaped())
                 .arg(order_->parallelLoopExtent);
  else
    facts << tr("one thread");
  if (order_->widestVector > 1) facts << tr("vector instructions of %1 lanes").arg(order_->widestVector);
  if (order_->widestVectorInstruction > order_->widestVector)
    facts << tr("each cell is one lane of a %1-lane vector along a dimension not shown")
                 .arg(order_->widestVectorInstruction);
  int64_t cells = int64_t(order_->rows) * order_->columns;
  if (order_->stepCount > 0)
    facts << tr("%1 cells per step on average").arg(double(order_->cells.size()) / double(order_->stepCount), 0, 'g', 3);
  if (int64_t(order_->cells.size()) < cells) facts << tr("%1 of %2 cells written").arg(order_->cells.size()).arg(cells);
  summary_->setText(facts.join(QStringLiteral(" · ")));

  QStringList notes;
  for (const std::string& note : order_->notes) notes << QString::fromStdString(note).toHtmlEscaped();
  message_->setText(notes.join(QStringLiteral("<br>")));
  message_->setVisible(!notes.isEmpty());

  slider_->blockSignals(true);
  slider_->setRange(0, int(std::min<int64_t>(order_->stepCount, INT32_MAX)));
  slider_->setValue(0);
  slider_->blockSignals(false);
  updateLegend();
  updateControls();
  emit orderChanged();
  emit stepChanged(step_);
  if (autoPlay_ && order_->stepCount > 0)
    play();
  else
    pause();
}

void IterationOrderView::chooseSpeedFor(int64_t steps) {
  double wanted = double(steps) / kTargetSeconds;
  int chosen = 0;
  for (int i = 0; i < int(std::size(kSpeeds)); ++i)
    if (kSpeeds[i] <= std::max(wanted, 1.0)) chosen = i;
  speed_->setCurrentIndex(chosen);
  stepsPerSecond_ = kSpeeds[chosen];
}

int64_t IterationOrderView::producedCellCount() const { return order_ ? order_->cellsProducedBefore(step_) : 0; }

bool IterationOrderView::isPlaying() const { return timer_->isActive(); }

void IterationOrderView::play() {
  if (!order_ || order_->stepCount == 0) return;
  if (step_ >= order_->stepCount) setCurrentStep(0);
  pendingSteps_ = 0;
  sinceTick_.start();
  if (!timer_->isActive()) {
    timer_->start();
    emit playingChanged(true);
  }
  updateControls();
}

void IterationOrderView::pause() {
  if (timer_->isActive()) {
    timer_->stop();
    emit playingChanged(false);
  }
  updateControls();
}

void IterationOrderView::togglePlaying() {
  if (isPlaying())
    pause();
  else
    play();
}

void IterationOrderView::stepForward() {
  pause();
  setCurrentStep(step_ + 1);
}

void IterationOrderView::stepBackward() {
  pause();
  setCurrentStep(step_ - 1);
}

void IterationOrderView::restart() {
  setCurrentStep(0);
}

void IterationOrderView::setCurrentStep(int64_t step) {
  int64_t last = order_ ? order_->stepCount : 0;
  step = std::clamp<int64_t>(step, 0, last);
  if (step == step_) return;
  step_ = step;
  canvas_->setCurrentStep(step_);
  slider_->blockSignals(true);
  slider_->setValue(int(step_));
  slider_->blockSignals(false);
  updateControls();
  emit stepChanged(step_);
}

void IterationOrderView::setStepsPerSecond(double stepsPerSecond) {
  userChoseSpeed_ = true;
  stepsPerSecond_ = std::clamp(stepsPerSecond, 0.5, 5000.0);
  int nearest = 0;
  for (int i = 0; i < int(std::size(kSpeeds)); ++i)
    if (std::abs(kSpeeds[i] - stepsPerSecond_) < std::abs(kSpeeds[nearest] - stepsPerSecond_)) nearest = i;
  speed_->setCurrentIndex(nearest);
}

void IterationOrderView::advance() {
  double seconds = double(sinceTick_.restart()) / 1000.0;
  pendingSteps_ += seconds * stepsPerSecond_;
  auto whole = int64_t(std::floor(pendingSteps_));
  if (whole <= 0) return;
  pendingSteps_ -= double(whole);
  setCurrentStep(step_ + whole);
  if (!order_ || step_ >= order_->stepCount) pause();
}

void IterationOrderView::updateControls() {
  bool hasOrder = order_ && order_->stepCount > 0;
  int64_t steps = stepCount();
  for (QWidget* w : {static_cast<QWidget*>(restartButton_), static_cast<QWidget*>(backButton_),
                     static_cast<QWidget*>(playButton_), static_cast<QWidget*>(forwardButton_),
                     static_cast<QWidget*>(slider_), static_cast<QWidget*>(speed_)})
    w->setEnabled(hasOrder);
  playButton_->setIcon(style()->standardIcon(isPlaying() ? QStyle::SP_MediaPause : QStyle::SP_MediaPlay));
  int64_t cells = order_ ? int64_t(order_->cells.size()) : 0;
  stepLabel_->setText(tr("step %1/%2 · %3/%4 cells").arg(step_).arg(steps).arg(producedCellCount()).arg(cells));
}

void IterationOrderView::updateLegend() {
  auto* layout = static_cast<QHBoxLayout*>(legend_->layout());
  while (QLayoutItem* item = layout->takeAt(0)) {
    delete item->widget();
    delete item;
  }
  qreal ratio = devicePixelRatioF();
  QPalette p = palette();
  auto addItem = [&](const QPixmap& pixmap, const QString& text, const QString& tip = QString()) {
    auto* icon = new QLabel;
    icon->setPixmap(pixmap);
    auto* label = new QLabel(text);
    label->setForegroundRole(QPalette::PlaceholderText);
    icon->setToolTip(tip);
    label->setToolTip(tip);
    layout->addWidget(icon);
    layout->addWidget(label);
    layout->addSpacing(10);
  };
  int threads = order_ ? order_->threads : 1;
  bool parallel = order_ && threads > 1;
  constexpr int kMaxThreadSwatches = 8;
  if (parallel) {
    for (int t = 0; t < std::min(threads, kMaxThreadSwatches); ++t)
      addItem(swatchPixmap(Swatch::Filled, IterationOrderCanvas::threadColor(t), p, ratio), tr("thread %1").arg(t),
              tr("Cells written by thread %1: its contiguous chunk of the parallel loop").arg(t));
    if (threads > kMaxThreadSwatches) addItem(QPixmap(), tr("+%1 more").arg(threads - kMaxThreadSwatches));
  } else {
    addItem(swatchPixmap(Swatch::Filled, IterationOrderCanvas::threadColor(0), p, ratio), tr("one thread"),
            tr("No parallel loop writes this output: one thread produces every cell"));
  }
  QColor first = IterationOrderCanvas::threadColor(0);
  if (order_ && order_->widestVector > 1)
    addItem(swatchPixmap(Swatch::Vector, first, p, ratio), tr("one vector instruction"),
            tr("Outlined cells were written by one vector store, all lanes in the same step"));
  addItem(swatchPixmap(Swatch::Latest, first, p, ratio), tr("this step"));
  addItem(swatchPixmap(Swatch::Faded, first, p, ratio), tr("earlier"));
  addItem(swatchPixmap(Swatch::Empty, first, p, ratio), tr("not yet"));
  layout->addStretch(1);
}

Status IterationOrderView::exportAnimation(const QString& path, QSize size, int maxFrames) const {
  if (!order_ || order_->stepCount == 0)
    return Diagnostic{"there is no iteration order to export yet", path.toStdString(), 0, 0,
                      "open a task whose schedule lowers without error"};
  // A canvas of its own, so the one on screen keeps its size and step.
  IterationOrderCanvas canvas;
  canvas.setPalette(canvas_->palette());
  canvas.setFont(canvas_->font());
  canvas.setOrder(order_);
  canvas.resize(size);
  const int64_t steps = order_->stepCount;
  const int64_t frames = std::max<int64_t>(2, std::min<int64_t>(maxFrames, steps + 1));
  std::vector<QImage> images;
  for (int64_t frame = 0; frame < frames; ++frame) {
    canvas.setCurrentStep(frame * steps / (frames - 1));
    QImage image(size, QImage::Format_ARGB32);
    image.fill(canvas.palette().color(QPalette::Window));
    canvas.render(&image);
    images.push_back(std::move(image));
  }
  // About four seconds for the whole animation, then two on the finished tile.
  int frameMs = int(std::clamp<int64_t>(4000 / frames, 20, 500));
  return writeAnimatedPng(path, images, frameMs, 2000);
}

}  // namespace tessel::views
