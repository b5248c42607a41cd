// The schedule editor's Measure panel: background measurement, headline numbers, history.
#include "views/schedule/MeasurePanel.h"

#include <QFrame>
#include <QHeaderView>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QStyle>
#include <QTableView>
#include <QVBoxLayout>

#include <optional>

#include "compiler/schedule/TraceText.h"
#include "runtime/ThreadPool.h"
#include "views/schedule/MeasureHistoryModel.h"
#include "views/schedule/MeasurePlot.h"

namespace tessel::views {

namespace {

// What a measuring job hands back to the GUI thread.
struct MeasureOutcome {
  QString traceText;  // canonical text of what was measured
  std::optional<driver::Measurement> measurement;
  QString error;
};

const QColor kFaster(0x3f, 0xa8, 0x5a);
const QColor kSlower(0xd9, 0x53, 0x4f);

QString humanFlops(double flops) {
  const char* units[] = {"FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP"};
  int unit = 0;
  while (flops >= 1000 && unit < 4) {
    flops /= 1000;
    ++unit;
  }
  return QStringLiteral("%1 %2").arg(flops, 0, 'g', 3).arg(units[unit]);
}

QString humanMilliseconds(double ms) {
  if (ms < 1) return QStringLiteral("%1 µs").arg(ms * 1e3, 0, 'f', ms < 0.01 ? 2 : 1);
  if (ms < 1000) return QStringLiteral("%1 ms").arg(ms, 0, 'f', ms < 10 ? 3 : 1);
  return QStringLiteral("%1 s").arg(ms / 1e3, 0, 'f', 2);
}

// One headline number: a caption, the value in large type, a line of detail.
QFrame* makeCard(const QString& caption, QLabel*& value, QLabel*& detail, QWidget* extra = nullptr) {
  auto* card = new QFrame;
  card->setFrameShape(QFrame::StyledPanel);
  card->setObjectName(QStringLiteral("measureCard"));
  auto* layout = new QVBoxLayout(card);
  layout->setContentsMargins(10, 6, 10, 8);
  layout->setSpacing(2);
  auto* captionLabel = new QLabel(caption.toUpper());
  QFont small = captionLabel->font();
  small.setPointSizeF(small.pointSizeF() * 0.8);
  small.setBold(true);
  captionLabel->setFont(small);
  captionLabel->setForegroundRole(QPalette::PlaceholderText);
  value = new QLabel(QStringLiteral("—"));
  QFont big = value->font();
  big.setPointSizeF(big.pointSizeF() * 1.9);
  big.setBold(true);
  value->setFont(big);
  value->setTextInteractionFlags(Qt::TextSelectableByMouse);
  detail = new QLabel(QStringLiteral(" "));
  detail->setForegroundRole(QPalette::PlaceholderText);
  detail->setTextFormat(Qt::RichText);
  layout->addWidget(captionLabel);
  layout->addWidget(value);
  if (extra) layout->addWidget(extra);
  layout->addWidget(detail);
  return card;
}

}  // namespace

MeasurePanel::MeasurePanel(QWidget* parent) : QWidget(parent) {
  ownJobs_ = new JobRunner(this);
  ownHistory_ = new MeasureHistory(this);
  model_ = new MeasureHistoryModel(this);
  buildUi();
  setJobRunner(ownJobs_);
  setHistory(ownHistory_);
  options_.minSeconds = 0.3;
  refreshForTask();
}

MeasurePanel::~MeasurePanel() {
  // A measurement in flight on a shared runner must not deliver into a destroyed panel; the
  // runner drops results of cancelled jobs.
  if (jobs_ && !task_.isEmpty()) jobs_->cancel(channel());
}

void MeasurePanel::buildUi() {
  title_ = new QLabel(tr("No task"));
  QFont titleFont = title_->font();
  titleFont.setBold(true);
  titleFont.setPointSizeF(titleFont.pointSizeF() * 1.15);
  title_->setFont(titleFont);
  subtitle_ = new QLabel;
  subtitle_->setForegroundRole(QPalette::PlaceholderText);
  measureButton_ = new QPushButton(style()->standardIcon(QStyle::SP_MediaPlay), tr("Measure"));
  measureButton_->setToolTip(tr("Build the operator under the current schedule and time it on random inputs"));
  measureButton_->setDefault(true);
  cancelButton_ = new QPushButton(style()->standardIcon(QStyle::SP_MediaStop), tr("Cancel"));
  cancelButton_->setToolTip(tr("Stop the measurement; nothing is recorded"));
  connect(measureButton_, &QPushButton::clicked, this, &MeasurePanel::measure);
  connect(cancelButton_, &QPushButton::clicked, this, &MeasurePanel::cancel);

  auto* titles = new QVBoxLayout;
  titles->setSpacing(0);
  titles->addWidget(title_);
  titles->addWidget(subtitle_);
  auto* header = new QHBoxLayout;
  header->addLayout(titles, 1);
  header->addWidget(cancelButton_);
  header->addWidget(measureButton_);

  progress_ = new QProgressBar;
  progress_->setRange(0, 100);
  progress_->setTextVisible(false);
  progress_->setMaximumHeight(6);
  status_ = new QLabel;
  status_->setForegroundRole(QPalette::PlaceholderText);
  auto* progressRow = new QHBoxLayout;
  progressRow->addWidget(status_, 1);
  progressRow->addWidget(progress_, 1);

  peakBar_ = new QProgressBar;
  peakBar_->setRange(0, 1000);
  peakBar_->setTextVisible(false);
  peakBar_->setMaximumHeight(6);
  auto* cards = new QHBoxLayout;
  cards->addWidget(makeCard(tr("Latency"), latency_, latencyDetail_), 1);
  cards->addWidget(makeCard(tr("Throughput"), gflops_, gflopsDetail_), 1);
  cards->addWidget(makeCard(tr("Of machine peak"), peak_, peakDetail_, peakBar_), 1);

  error_ = new QLabel;
  error_->setWordWrap(true);
  error_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  QFont mono(QStringLiteral("monospace"));
  mono.setStyleHint(QFont::Monospace);
  error_->setFont(mono);
  QPalette errorPalette = error_->palette();
  errorPalette.setColor(QPalette::WindowText, kSlower);
  error_->setPalette(errorPalette);
  error_->setVisible(false);

  plot_ = new MeasurePlot;
  table_ = new QTableView;
  table_->setModel(model_);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setAlternatingRowColors(true);
  table_->setWordWrap(false);
  table_->verticalHeader()->setVisible(false);
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setSectionResizeMode(MeasureHistoryModel::ChangeColumn, QHeaderView::Stretch);
  table_->setToolTip(tr("Double-click a variant to bring its schedule back into the editor"));
  connect(table_, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
    const auto& variants = history_ ? history_->variants(task_) : std::vector<MeasuredVariant>{};
    if (index.row() >= 0 && size_t(index.row()) < variants.size())
      emit variantActivated(task_, variants[size_t(index.row())].traceText);
  });

  auto* splitter = new QSplitter(Qt::Vertical);
  splitter->addWidget(plot_);
  splitter->addWidget(table_);
  splitter->setStretchFactor(0, 3);
  splitter->setStretchFactor(1, 2);
  splitter->setChildrenCollapsible(false);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(8, 8, 8, 8);
  layout->setSpacing(6);
  layout->addLayout(header);
  layout->addLayout(progressRow);
  layout->addLayout(cards);
  layout->addWidget(error_);
  layout->addWidget(splitter, 1);
}

void MeasurePanel::setJobRunner(JobRunner* jobs) {
  if (!jobs) jobs = ownJobs_;
  if (jobs_ == jobs) return;
  if (jobs_) disconnect(jobs_, nullptr, this, nullptr);
  jobs_ = jobs;
  connect(jobs_, &JobRunner::jobProgress, this, &MeasurePanel::onProgress);
  connect(jobs_, &JobRunner::jobStarted, this, [this](const QString& channel, const QString&) {
    if (channel == this->channel()) updateRunningState();
  });
  connect(jobs_, &JobRunner::jobFinished, this, [this](const QString& channel, bool) {
    if (channel == this->channel()) updateRunningState();
  });
  updateRunningState();
}

void MeasurePanel::setHistory(MeasureHistory* history) {
  if (!history) history = ownHistory_;
  if (history_ == history) return;
  if (history_) disconnect(history_, nullptr, this, nullptr);
  history_ = history;
  model_->setHistory(history_);
  auto refreshIfCurrent = [this](const QString& task) {
    if (task == task_) showLatest();
  };
  connect(history_, &MeasureHistory::variantAdded, this, refreshIfCurrent);
  connect(history_, &MeasureHistory::historyReset, this, refreshIfCurrent);
  showLatest();
}

void MeasurePanel::setTask(const QString& name, const Workload& workload, double flops) {
  workload_ = workload;
  if (flops >= 0) workload_.flops = flops;
  if (name != task_) {
    task_ = name;
    model_->setTask(task_);
    error_->setVisible(false);
  }
  refreshForTask();
}

void MeasurePanel::setModelSource(const QString& modelPath, const driver::LoadOptions& load,
                                  const driver::CompileOptions& compile) {
  operatorSource_.reset();
  modelSource_.reset();
  if (modelPath.isEmpty()) return;
  driver::ModelTaskSource source;
  source.modelPath = modelPath.toStdString();
  source.load = load;
  // The options travel to the child; the compile's callbacks belong to this process's jobs.
  source.compile.passes = compile.passes;
  source.compile.target = compile.target;
  source.compile.target = compile.target;
  modelSource_ = std::move(source);
}

void MeasurePanel::setOperatorSource(const driver::OperatorSource& source) {
  modelSource_.reset();
  operatorSource_ = source;
}

void MeasurePanel::setTrace(const Trace& trace) { setTraceText(QString::fromStdString(printTraceText(trace))); }

void MeasurePanel::setTraceText(const QString& text) { traceText_ = text; }

QString MeasurePanel::channel() const { return QStringLiteral("measure:") + task_; }

bool MeasurePanel::isMeasuring() const { return jobs_ && !task_.isEmpty() && jobs_->isRunning(channel()); }

void MeasurePanel::measure() {
  if (task_.isEmpty() || workload_.outputs.empty()) return;
  if (!jobs_) setJobRunner(ownJobs_);
  error_->setVisible(false);
  QString task = task_;
  if (!hasSource()) {
    QString message = tr("%1: error: cannot measure: the Measure panel was not told which model the task comes "
                         "from (a compiled model must be open)")
                          .arg(task);
    showError(message);
    emit measureFailed(task, message);
    return;
  }
  driver::IsolatedMeasureRequest request;
  if (modelSource_) {
    driver::ModelTaskSource source = *modelSource_;
    source.taskName = task.toStdString();
    request.source = std::move(source);
  } else {
    request.source = *operatorSource_;
  }
  request.kernelName = task.toStdString();
  // The editor's text as typed, so a schedule error's line and column are the editor's.
  request.scheduleText = traceText_.toStdString();
  request.options = options_;
  // The thread count this process's kernels run with (a project may have set it), as when
  // measuring happened in process.
  request.threads = runtime::ThreadPool::global().numThreads();
  QPointer<MeasurePanel> self(this);
  QPointer<MeasureHistory> history(history_);
  jobs_->start<MeasureOutcome>(
      channel(), tr("Measuring %1").arg(task),
      [request](JobContext& job) mutable {
        MeasureOutcome outcome;
        // A text that does not parse needs no process to say so.
        auto trace = parseTraceText(*request.scheduleText);
        if (!trace) {
          outcome.error = QString::fromStdString(trace.error().toString());
          return outcome;
        }
        outcome.traceText = QString::fromStdString(printTraceText(*trace));
        // Polled by the child's runner every few tens of ms: Cancel kills the child at once.
        request.options.cancelled = [&job] { return job.cancelled(); };
        // One report per percent: a fast kernel takes thousands of samples.
        request.options.progress = [&job, last = -1](int percent) mutable {
          if (percent == last) return;
          last = percent;
          job.reportProgress(percent, QObject::tr("timing"));
        };
        // Every variant is stated against this process's peak (measured once, then cached),
        // not against a peak each child measures anew with its own noise.
        job.reportProgress(-1, QObject::tr("measuring the machine's peak"));
        request.options.peakGflops = driver::machinePeakGflops(request.threads);
        job.reportProgress(-1, QObject::tr("building"));
        auto measured = driver::measureIsolated(request);
        if (measured && measured->gflops >= request.options.peakGflops) {
          // Faster than the peak: that was taken at a busy moment. Measure it again here (the
          // next variants use the new one too) and restate this one.
          measured->peakGflops = std::max(driver::machinePeakGflopsReaching(request.threads, measured->gflops), measured->gflops);
          measured->fractionOfPeak = measured->gflops / measured->peakGflops;
        }
        if (measured)
          outcome.measurement = *measured;
        else
          outcome.error = QString::fromStdString(measured.error().toString());
        return outcome;
      },
      [self, history, task](MeasureOutcome outcome) {
        if (!self) return;
        if (!outcome.measurement) {
          if (task == self->task_) self->showError(outcome.error);
          emit self->measureFailed(task, outcome.error);
          return;
        }
        if (!history) return;
        MeasuredVariant variant = history->add(task, outcome.traceText, *outcome.measurement);
        emit self->measured(task, variant);
      });
  updateRunningState();
  status_->setText(tr("Building…"));
}

void MeasurePanel::cancel() {
  if (task_.isEmpty() || !jobs_) return;
  jobs_->cancel(channel());
  updateRunningState();
  status_->setText(tr("Cancelled"));
}

void MeasurePanel::onProgress(const QString& channel, int percent, const QString& message) {
  if (channel != this->channel()) return;
  if (percent < 0) {
    progress_->setRange(0, 0);  // busy: building the kernel
    status_->setText(tr("Building the kernel…"));
  } else {
    progress_->setRange(0, 100);
    progress_->setValue(percent);
    status_->setText(tr("Timing… %1 %").arg(percent));
  }
}

void MeasurePanel::updateRunningState() {
  bool running = isMeasuring();
  bool hasTask = !task_.isEmpty() && !workload_.outputs.empty();
  measureButton_->setEnabled(hasTask);
  measureButton_->setText(running ? tr("Measure again") : tr("Measure"));
  cancelButton_->setVisible(running);
  progress_->setVisible(running);
  if (!running) progress_->setRange(0, 100);
  if (wasMeasuring_ != running) {
    wasMeasuring_ = running;
    emit measuringChanged(running);
  }
}

void MeasurePanel::refreshForTask() {
  if (task_.isEmpty()) {
    title_->setText(tr("No task"));
    subtitle_->setText(tr("Open a task's schedule to measure it"));
  } else {
    title_->setText(task_);
    QString workloadName = QString::fromStdString(workload_.name);
    subtitle_->setText(workloadName == task_ ? tr("%1 per call").arg(humanFlops(workload_.flops))
                                             : tr("%1 · %2 per call").arg(workloadName, humanFlops(workload_.flops)));
  }
  showLatest();
  updateRunningState();
}

void MeasurePanel::showLatest() {
  const std::vector<MeasuredVariant> none;
  const auto& variants = history_ ? history_->variants(task_) : none;
  plot_->setVariants(variants);
  if (variants.empty()) {
    latency_->setText(QStringLiteral("—"));
    gflops_->setText(QStringLiteral("—"));
    peak_->setText(QStringLiteral("—"));
    latencyDetail_->setText(tr("not measured yet"));
    gflopsDetail_->setText(QStringLiteral(" "));
    peakDetail_->setText(QStringLiteral(" "));
    peakBar_->setValue(0);
    if (!isMeasuring()) status_->setText(task_.isEmpty() ? QString() : tr("Ready to measure"));
    return;
  }
  const MeasuredVariant& latest = variants.back();
  const driver::Measurement& m = latest.measurement;
  latency_->setText(humanMilliseconds(m.medianMilliseconds));
  QString detail = tr("fastest %1 · %2 samples").arg(humanMilliseconds(m.minMilliseconds)).arg(m.samples);
  if (variants.size() >= 2) {
    double before = variants[variants.size() - 2].measurement.medianMilliseconds;
    if (before > 0) {
      double change = (m.medianMilliseconds - before) / before * 100;
      QColor color = change <= 0 ? kFaster : kSlower;
      detail += QStringLiteral(" · <span style='color:%1'>%2 %3 % vs #%4</span>")
                    .arg(color.name(), change <= 0 ? QStringLiteral("▼") : QStringLiteral("▲"))
                    .arg(std::abs(change), 0, 'f', 1)
                    .arg(variants[variants.size() - 2].number);
    }
  }
  latencyDetail_->setText(detail);
  gflops_->setText(QStringLiteral("%1 GFLOP/s").arg(m.gflops, 0, 'f', m.gflops >= 100 ? 0 : 2));
  gflopsDetail_->setText(tr("%1 per call").arg(humanFlops(m.flops)));
  peak_->setText(QStringLiteral("%1 %").arg(100 * m.fractionOfPeak, 0, 'f', 1));
  peakBar_->setValue(int(std::min(1.0, m.fractionOfPeak) * 1000));
  peakDetail_->setText(tr("peak %1 GFLOP/s on %2 threads (measured FMA)")
                            .arg(m.peakGflops, 0, 'f', 0)
                            .arg(m.threads));
  if (!isMeasuring())
    status_->setText(tr("Variant %1 measured at %2 · %3")
                         .arg(latest.number)
                         .arg(latest.measuredAt.time().toString(QStringLiteral("HH:mm:ss")), latest.change));
}

void MeasurePanel::showError(const QString& message) {
  error_->setText(message);
  error_->setVisible(true);
  status_->setText(tr("Measuring failed"));
}

}  // namespace tessel::views
