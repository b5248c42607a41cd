// The Tuning view.
#include "views/tuning/TuningDashboard.h"

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFile>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSaveFile>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QThread>
#include <QToolButton>
#include <QVBoxLayout>

#include "views/common/ImageExport.h"
#include "views/tuning/TuningPlots.h"
#include "tuner/session/SessionPreview.h"
#include "views/tuning/TuningTaskModel.h"

namespace tessel::views {

namespace {

QString minutesText(double seconds) {
  int whole = int(seconds + 0.5);
  if (whole >= 3600) return QStringLiteral("%1h%2m").arg(whole / 3600).arg((whole % 3600) / 60, 2, 10, QLatin1Char('0'));
  if (whole >= 60) return QStringLiteral("%1m%2s").arg(whole / 60).arg(whole % 60, 2, 10, QLatin1Char('0'));
  return QStringLiteral("%1s").arg(whole);
}

}  // namespace

TuningDashboard::TuningDashboard(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("TuningDashboard"));
  existingRecordsPrompt_ = [this](const QString& records) {
    QMessageBox box(QMessageBox::Question, tr("Tuning records"),
                    tr("%1 already holds the trials of an earlier session.").arg(records), QMessageBox::Cancel, this);
    box.setInformativeText(tr("Resume that session (its trials and cost model are kept and built on), or start over "
                              "(the file is moved aside, nothing is deleted)?"));
    QPushButton* resume = box.addButton(tr("Resume"), QMessageBox::AcceptRole);
    QPushButton* over = box.addButton(tr("Start Over"), QMessageBox::DestructiveRole);
    box.setDefaultButton(resume);
    box.exec();
    if (box.clickedButton() == resume) return ExistingRecords::Resume;
    if (box.clickedButton() == over) return ExistingRecords::StartOver;
    return ExistingRecords::Cancel;
  };
  buildLayout();
  connect(runner_.feed(), &TuningEventFeed::changed, this, &TuningDashboard::refresh);
  connect(runner_.feed(), &TuningEventFeed::problemFound, this, [this](const QString& text) {
    output_->appendPlainText(text);
  });
  connect(&runner_, &TuningRunner::stateChanged, this, &TuningDashboard::updateControls);
  connect(&runner_, &TuningRunner::outputLine, output_, &QPlainTextEdit::appendPlainText);
  connect(&runner_, &TuningRunner::finished, this, [this](bool, const QString& text) {
    output_->appendPlainText(text);
    emit message(text);
    updateControls();
  });
  connect(&runner_, &TuningRunner::historyLoaded, this, [this](bool ok, const QString& text) {
    output_->appendPlainText(text);
    emit message(text);
    if (ok) {
      showingPreview_ = false;
    } else {
      historyShown_ = false;
      showPreviewIfIdle();
    }
  });
  // Double-clicking a task opens the schedule it is best with (the confirmed one, else the
  // fastest trial) in the schedule editor.
  connect(table_, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
    int task = index.data(TuningTaskModel::TaskRole).toInt();
    const tuner::TuningEventLog& log = feed()->log();
    if (task < 0 || size_t(task) >= log.tasks().size()) return;
    const tuner::LoggedTaskState& state = log.taskStates()[size_t(task)];
    if (state.bestTrial < 0) return;
    const tuner::LoggedTrial& best = log.trials()[size_t(state.bestTrial)];
    std::string point = state.chosenPoint && !state.chosenPoint->empty() ? *state.chosenPoint : best.point;
    emit trialActivated(QString::fromStdString(log.tasks()[size_t(task)].name), QString::fromStdString(point),
                        best.sessionTrials);
  });
  // A click on a task's mark in the other plots selects it everywhere.
  for (TuningPlot* plot : std::initializer_list<TuningPlot*>{progress_, roofline_, allocation_})
    connect(plot, &TuningPlot::taskClicked, this, &TuningDashboard::selectTask);
  connect(trialsPlot_, &TrialScatterPlot::trialClicked, this, [this](int index) {
    const tuner::TuningEventLog& log = feed()->log();
    if (index < 0 || size_t(index) >= log.trials().size()) return;
    const tuner::LoggedTrial& trial = log.trials()[size_t(index)];
    selectTask(trial.task);
    emit trialActivated(QString::fromStdString(log.tasks()[size_t(trial.task)].name),
                        QString::fromStdString(trial.point), trial.sessionTrials);
  });
  updateControls();
  refresh();
}

TuningDashboard::~TuningDashboard() = default;

void TuningDashboard::buildLayout() {
  // Set-up: budget, trials, threads, records, resume; Start, Pause/Resume, Stop.
  records_ = new QLineEdit(this);
  records_->setObjectName(QStringLiteral("TuningRecordsPath"));
  records_->setPlaceholderText(tr("records file (.jsonl) the session appends every trial to"));
  records_->setMinimumWidth(120);
  auto* browse = new QToolButton(this);
  browse->setText(tr("…"));
  browse->setToolTip(tr("Choose the records file"));
  connect(browse, &QToolButton::clicked, this, [this] {
    QString path = QFileDialog::getSaveFileName(this, tr("Tuning records"), records_->text(),
                                                tr("Tuning records (*.jsonl)"), nullptr,
                                                QFileDialog::DontConfirmOverwrite);
    if (!path.isEmpty()) setRecordsPath(path);
  });
  budget_ = new QDoubleSpinBox(this);
  budget_->setObjectName(QStringLiteral("TuningBudget"));
  budget_->setRange(0, 24 * 60);
  budget_->setDecimals(1);
  budget_->setValue(10);
  budget_->setSuffix(tr(" min"));
  budget_->setSpecialValueText(tr("no time limit"));
  budget_->setToolTip(tr("How long the search runs (confirmation and the final measurement follow)"));
  trials_ = new QSpinBox(this);
  trials_->setObjectName(QStringLiteral("TuningTrials"));
  trials_->setRange(0, 1000000);
  trials_->setSpecialValueText(tr("no trial limit"));
  trials_->setToolTip(tr("Stop after this many trials (0: only the time budget counts)"));
  threads_ = new QSpinBox(this);
  threads_->setRange(0, 1024);
  threads_->setSpecialValueText(tr("default"));
  threads_->setValue(QThread::idealThreadCount());
  threads_->setToolTip(tr("Threads the candidates run with (as the model will run)"));
  resume_ = new QCheckBox(tr("Resume"), this);
  resume_->setToolTip(tr("Continue the records file's session: its trials and cost model are kept"));
  start_ = new QPushButton(tr("Start"), this);
  start_->setObjectName(QStringLiteral("TuningStart"));
  pause_ = new QPushButton(tr("Pause"), this);
  pause_->setObjectName(QStringLiteral("TuningPause"));
  stop_ = new QPushButton(tr("Stop"), this);
  stop_->setObjectName(QStringLiteral("TuningStop"));
  connect(start_, &QPushButton::clicked, this, &TuningDashboard::startSession);
  connect(pause_, &QPushButton::clicked, this, &TuningDashboard::pauseOrResume);
  connect(stop_, &QPushButton::clicked, this, &TuningDashboard::stopSession);

  auto* setup = new QHBoxLayout;
  setup->addWidget(new QLabel(tr("Budget"), this));
  setup->addWidget(budget_);
  setup->addWidget(new QLabel(tr("Trials"), this));
  setup->addWidget(trials_);
  setup->addWidget(new QLabel(tr("Threads"), this));
  setup->addWidget(threads_);
  setup->addWidget(new QLabel(tr("Records"), this));
  setup->addWidget(records_, 1);
  setup->addWidget(browse);
  setup->addWidget(resume_);
  setup->addWidget(start_);
  setup->addWidget(pause_);
  setup->addWidget(stop_);

  status_ = new QLabel(this);
  status_->setObjectName(QStringLiteral("TuningStatus"));
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  tasks_ = new TuningTaskModel(this);
  tasks_->setFeed(runner_.feed());
  sorted_ = new QSortFilterProxyModel(this);
  sorted_->setSourceModel(tasks_);
  sorted_->setSortRole(TuningTaskModel::SortRole);
  table_ = new QTableView(this);
  table_->setObjectName(QStringLiteral("TuningTaskTable"));
  table_->setModel(sorted_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(TuningTaskModel::ShareColumn, Qt::DescendingOrder);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this, &TuningDashboard::selectionChanged);

  latency_ = new LatencyPlot(this);
  progress_ = new TaskProgressPlot(this);
  trialsPlot_ = new TrialScatterPlot(this);
  costModel_ = new CostModelPlot(this);
  allocation_ = new AllocationPlot(this);
  roofline_ = new RooflinePlot(this);
  for (TuningPlot* plot :
       std::initializer_list<TuningPlot*>{latency_, progress_, trialsPlot_, costModel_, allocation_, roofline_}) {
    plot->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(plot, &QWidget::customContextMenuRequested, this,
            [this, plot](const QPoint& position) { showPlotMenu(plot, position); });
  }

  output_ = new QPlainTextEdit(this);
  output_->setObjectName(QStringLiteral("TuningOutput"));
  output_->setReadOnly(true);
  output_->setMaximumBlockCount(2000);
  output_->setLineWrapMode(QPlainTextEdit::NoWrap);
  output_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));

  // Three rows of plots: the model and each task; every trial and the scheduler's choices;
  // the cost model (two panels of its own).
  auto row = [this](std::initializer_list<QWidget*> widgets) {
    auto* splitter = new QSplitter(Qt::Horizontal, this);
    for (QWidget* widget : widgets) {
      widget->setMinimumSize(220, 150);
      splitter->addWidget(widget);
      splitter->setStretchFactor(splitter->count() - 1, 1);
    }
    splitter->setSizes(QList<int>(splitter->count(), 1000));  // equal shares to start with
    return splitter;
  };
  auto* plots = new QSplitter(Qt::Vertical, this);
  plots->addWidget(row({latency_, progress_}));
  plots->addWidget(row({trialsPlot_, allocation_}));
  plots->addWidget(row({costModel_, roofline_}));
  auto* left = new QSplitter(Qt::Vertical, this);
  left->addWidget(table_);
  left->addWidget(output_);
  left->setStretchFactor(0, 3);
  left->setStretchFactor(1, 1);
  auto* main = new QSplitter(Qt::Horizontal, this);
  main->addWidget(left);
  main->addWidget(plots);
  main->setStretchFactor(0, 2);
  main->setStretchFactor(1, 3);
  main->setSizes({560, 840});

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(setup);
  layout->addWidget(status_);
  layout->addWidget(main, 1);
}

void TuningDashboard::setModel(const QString& modelPath, const QStringList& loadArguments) {
  if (modelPath != modelPath_) previewTasks_.clear();  // the next model's tasks are on their way
  modelPath_ = modelPath;
  loadArguments_ = loadArguments;
  updateControls();
}

void TuningDashboard::setRecordsPath(const QString& path) {
  records_->setText(path);
  // A records file with a kept event stream shows its last session.
  QString events = TuningRunner::eventsPathFor(path);
  if (!runner_.isActive() && QFileInfo::exists(events)) {
    loadEvents(events, nullptr);
  } else if (!runner_.isActive() && QFileInfo(path).size() > 0) {
    // Without a kept stream (older sessions, merged files) the records still tell the story.
    QString error;
    historyShown_ = runner_.loadHistoryFromRecords(path, modelPath_, loadArguments_, &error);
    if (!historyShown_) emit message(error);
  } else if (!runner_.isActive()) {
    // Nothing tuned into this file yet: the previous file's session is not this one's.
    historyShown_ = false;
    showPreviewIfIdle();
  }
  updateControls();
}

void TuningDashboard::setPreviewTasks(const std::vector<tuner::TuningTask>& tasks) {
  previewTasks_ = tasks;
  showPreviewIfIdle();
}

void TuningDashboard::showPreviewIfIdle() {
  if (runner_.isActive() || historyShown_) return;
  if (!showingPreview_ && feed()->log().started()) return;  // a session that ran here stays
  tuner::SessionPreviewOptions options;
  options.source = modelPath_.toStdString();
  options.records = records_->text().toStdString();
  options.threads = threads_->value();
  feed()->clear();
  showingPreview_ = !previewTasks_.empty();
  if (showingPreview_) {
    feed()->append(QByteArray::fromStdString(tuner::previewSessionStart(previewTasks_, options).dump() + "\n"));
    feed()->finish();
  }
  refresh();
}

QString TuningDashboard::recordsPath() const { return records_->text(); }

bool TuningDashboard::loadEvents(const QString& path, QString* error) {
  if (runner_.isActive()) {
    if (error) *error = tr("a tuning session is running");
    return false;
  }
  if (!runner_.feed()->loadFile(path, error)) return false;
  historyShown_ = true;
  showingPreview_ = false;
  return true;
}

TuningRunRequest TuningDashboard::request() const {
  TuningRunRequest request;
  request.modelPath = modelPath_;
  request.recordsPath = records_->text();
  request.budgetMinutes = budget_->value();
  request.trials = trials_->value();
  request.threads = threads_->value();
  request.resume = resume_->isChecked();
  request.extraArguments = loadArguments_;
  return request;
}

void TuningDashboard::setBudgetMinutes(double minutes) { budget_->setValue(minutes); }
void TuningDashboard::setTrialBudget(int trials) { trials_->setValue(trials); }

void TuningDashboard::startSession() {
  QString error;
  TuningRunRequest wanted = request();
  // Whatever would stop the start is said before anything is asked or moved.
  if (QString problem = runner_.problemWith(wanted); !problem.isEmpty()) {
    output_->appendPlainText(problem);
    emit message(problem);
    return;
  }
  QFileInfo records(wanted.recordsPath);
  if (!wanted.resume && records.exists() && records.size() > 0) {
    switch (existingRecordsPrompt_(wanted.recordsPath)) {
      case ExistingRecords::Cancel: return;
      case ExistingRecords::Resume:
        wanted.resume = true;
        resume_->setChecked(true);
        break;
      case ExistingRecords::StartOver: {
        // Nothing measured is lost: the old file (and its model and events) moves aside.
        QString aside = wanted.recordsPath + QStringLiteral(".previous");
        for (int n = 2; QFileInfo::exists(aside); ++n) aside = wanted.recordsPath + QStringLiteral(".previous%1").arg(n);
        if (!QFile::rename(wanted.recordsPath, aside)) {
          emit message(tr("cannot move %1 aside to start over").arg(wanted.recordsPath));
          return;
        }
        for (const QString& companion : {QStringLiteral(".model"), QStringLiteral(".events")})
          QFile::rename(wanted.recordsPath + companion, aside + companion);
        output_->appendPlainText(tr("the earlier session's records are now %1").arg(aside));
        break;
      }
    }
  }
  if (!runner_.start(wanted, &error)) {
    output_->appendPlainText(error);
    emit message(error);
    return;
  }
  output_->appendPlainText(runner_.arguments().join(' '));
  showingPreview_ = false;
  historyShown_ = true;  // the session's own stream, from now on
  selected_.clear();
  updateControls();
}

void TuningDashboard::pauseOrResume() {
  if (runner_.state() == TuningRunner::State::Paused) runner_.resume();
  else runner_.pause();
}

void TuningDashboard::stopSession() { runner_.stop(); }

void TuningDashboard::updateControls() {
  bool active = runner_.isActive();
  bool paused = runner_.state() == TuningRunner::State::Paused;
  start_->setEnabled(!active && !modelPath_.isEmpty() && !records_->text().isEmpty());
  start_->setToolTip(modelPath_.isEmpty() ? tr("Open a model first") : tr("Start tuning %1").arg(modelPath_));
  pause_->setEnabled(runner_.state() == TuningRunner::State::Running || paused);
  pause_->setText(paused ? tr("Resume") : tr("Pause"));
  stop_->setEnabled(active && runner_.state() != TuningRunner::State::Stopping);
  for (QWidget* setting : std::initializer_list<QWidget*>{budget_, trials_, threads_, records_, resume_})
    setting->setEnabled(!active);
  refresh();
}

void TuningDashboard::refresh() {
  const tuner::TuningEventLog& log = feed()->log();
  // Columns fit their contents once per session's task list (not at every update: measuring
  // every cell four times a second would cost more than the plots).
  if (int(log.tasks().size()) != fittedRows_) {
    fittedRows_ = int(log.tasks().size());
    table_->resizeColumnsToContents();
    for (int column = 0; column < tasks_->columnCount(); ++column)
      table_->setColumnWidth(column, std::min(table_->columnWidth(column), 200));
  }
  latency_->showLog(log);
  progress_->showLog(log);
  trialsPlot_->showLog(log);
  costModel_->showLog(log);
  allocation_->showLog(log);
  roofline_->showLog(log);

  QString state;
  switch (runner_.state()) {
    case TuningRunner::State::Running: state = tr("running"); break;
    case TuningRunner::State::Paused: state = tr("paused"); break;
    case TuningRunner::State::Stopping: state = tr("stopping after the current candidate"); break;
    case TuningRunner::State::Failed: state = tr("failed"); break;
    default: state = log.ended() ? tr("finished (%1)").arg(QString::fromStdString(*log.endReason()))
                                 : log.started() ? tr("not finished") : QString();
  }
  if (!log.started() || showingPreview_) {
    int kernels = 0;
    for (const tuner::LoggedTask& task : log.tasks()) kernels += task.weight;
    status_->setText(modelPath_.isEmpty() ? tr("Open a model, then start a tuning session here.")
                     : showingPreview_
                         ? tr("Ready to tune %1: %2 tasks for its %3 kernels. Start measures each task's default "
                              "schedule, then searches where the model's time goes.")
                               .arg(QFileInfo(modelPath_).fileName())
                               .arg(log.tasks().size())
                               .arg(kernels)
                         : tr("Ready to tune %1.").arg(QFileInfo(modelPath_).fileName()));
    return;
  }
  QString text = tr("%1 — %2 tasks, %3 trials, %4 rounds")
                     .arg(state)
                     .arg(log.tasks().size())
                     .arg(log.trials().size())
                     .arg(log.rounds().size());
  double defaultMs = log.defaultLatencyMs(), estimated = log.estimatedLatencyMs();
  if (defaultMs > 0)
    text += tr("; model %1 ms estimated, default %2 ms (%3x)")
                .arg(estimated, 0, 'f', 3)
                .arg(defaultMs, 0, 'f', 3)
                .arg(estimated > 0 ? defaultMs / estimated : 0, 0, 'f', 2);
  if (log.measuredTunedMs() && log.measuredDefaultMs())
    text += tr("; measured at the end: %1 ms tuned, %2 ms default")
                .arg(*log.measuredTunedMs(), 0, 'f', 3)
                .arg(*log.measuredDefaultMs(), 0, 'f', 3);
  if (!log.rounds().empty() && log.rounds().back().etaSeconds && !log.ended())
    text += tr("; %1 left").arg(minutesText(*log.rounds().back().etaSeconds));
  if (!log.problems().empty()) text += tr("; %1 unreadable event lines skipped").arg(log.problems().size());
  status_->setText(text);
}

void TuningDashboard::selectTask(int task) {
  QModelIndex source = tasks_->index(task, 0);
  if (!source.isValid()) return;
  QModelIndex row = sorted_->mapFromSource(source);
  table_->selectionModel()->select(row, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  table_->scrollTo(row);
}

bool TuningDashboard::selectKernel(const QString& kernel) {
  const tuner::TuningEventLog& log = feed()->log();
  const std::string name = kernel.toStdString();
  for (size_t task = 0; task < log.tasks().size(); ++task)
    for (const std::string& each : log.tasks()[task].kernels)
      if (each == name) {
        if (selected_ != std::set<int>{int(task)}) selectTask(int(task));
        return true;
      }
  return false;
}

void TuningDashboard::selectionChanged() {
  selected_.clear();
  for (const QModelIndex& row : table_->selectionModel()->selectedRows())
    selected_.insert(row.data(TuningTaskModel::TaskRole).toInt());
  progress_->setSelectedTasks(selected_);
  trialsPlot_->setSelectedTasks(selected_);
  QStringList kernels;
  const tuner::TuningEventLog& log = feed()->log();
  for (int task : selected_)
    if (task >= 0 && size_t(task) < log.tasks().size())
      for (const std::string& kernel : log.tasks()[size_t(task)].kernels) kernels << QString::fromStdString(kernel);
  emit taskSelected(kernels);
}

void TuningDashboard::showPlotMenu(TuningPlot* plot, const QPoint& position) {
  QMenu menu(this);
  QAction* image = menu.addAction(tr("Export Image (PNG or SVG)…"));
  QAction* data = menu.addAction(tr("Export Data (CSV)…"));
  QAction* againstTrials = nullptr;
  if (plot == latency_) {
    menu.addSeparator();
    againstTrials = menu.addAction(tr("Against Trials"));
    againstTrials->setCheckable(true);
    againstTrials->setChecked(latency_->againstTrials());
  }
  QAction* chosen = menu.exec(plot->mapToGlobal(position));
  if (chosen && chosen == againstTrials) {
    latency_->setAgainstTrials(againstTrials->isChecked());
  } else if (chosen == image) {
    QString path = QFileDialog::getSaveFileName(this, tr("Export plot"), QString(), tr("Images (*.png *.svg)"));
    if (path.isEmpty()) return;
    if (Status saved = exportViewImage(plot, path); !saved) emit message(QString::fromStdString(saved.error().toString()));
  } else if (chosen == data) {
    QString path = QFileDialog::getSaveFileName(this, tr("Export plot data"), QString(), tr("CSV (*.csv)"));
    if (path.isEmpty()) return;
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(plot->csv().toUtf8()) < 0 || !file.commit())
      emit message(tr("cannot write %1: %2").arg(path, file.errorString()));
  }
}

}  // namespace tessel::views
