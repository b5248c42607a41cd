// The tuning dashboard's task table.
#include "views/tuning/TuningTaskModel.h"

#include <cmath>
#include <limits>

namespace tessel::views {

namespace {

constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

double gflopsAt(double flops, std::optional<double> milliseconds) {
  if (!milliseconds || *milliseconds <= 0 || flops <= 0) return kUnknown;
  return flops / (*milliseconds * 1e6);
}

QString formatted(double value, int decimals, const QString& suffix = {}) {
  if (!std::isfinite(value)) return QStringLiteral("–");
  return QString::number(value, 'f', decimals) + suffix;
}

}  // namespace

TuningTaskModel::TuningTaskModel(QObject* parent) : QAbstractTableModel(parent) {}

void TuningTaskModel::setFeed(TuningEventFeed* feed) {
  if (feed_) disconnect(feed_, nullptr, this, nullptr);
  feed_ = feed;
  if (feed_) connect(feed_, &TuningEventFeed::changed, this, &TuningTaskModel::refresh);
  refresh();
}

void TuningTaskModel::setProfile(std::shared_ptr<const driver::ModelProfile> profile) {
  profile_ = std::move(profile);
  profiledKernelMs_ = profile_ ? profile_->millisecondsByKernel() : std::unordered_map<std::string, double>();
  profiledTotalMs_ = profile_ ? profile_->nodeSumMs() : 0;
  refresh();
  emit headerDataChanged(Qt::Horizontal, ShareColumn, ShareColumn);
}

void TuningTaskModel::refresh() {
  int rows = feed_ ? int(feed_->log().tasks().size()) : 0;
  if (rows != rows_) {
    beginResetModel();
    rows_ = rows;
    endResetModel();
    return;
  }
  if (rows_ > 0) emit dataChanged(index(0, 0), index(rows_ - 1, ColumnCount - 1));
}

int TuningTaskModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : rows_; }
int TuningTaskModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QString TuningTaskModel::stateText(const tuner::LoggedTaskState& state, bool sessionEnded) {
  if (state.chosenPoint) return state.chosenPoint->empty() ? tr("default kept") : tr("tuned");
  if (state.exhausted) return tr("exhausted");
  if (state.stopped) return tr("stopped");
  if (state.rounds == 0) return sessionEnded ? tr("not searched") : tr("not started");
  return sessionEnded ? tr("searched") : tr("searching");
}

QVariant TuningTaskModel::value(int task, int column) const {
  const tuner::TuningEventLog& log = feed_->log();
  const tuner::LoggedTask& info = log.tasks()[size_t(task)];
  const tuner::LoggedTaskState& state = log.taskStates()[size_t(task)];
  double peak = log.peakGflops();
  switch (column) {
    case KernelColumn: return QString::fromStdString(info.name);
    case OpColumn: return QString::fromStdString(info.op);
    case OccurrencesColumn: return info.weight;
    case MflopColumn: return info.flops > 0 ? info.flops / 1e6 : kUnknown;
    case ShareColumn: {
      if (profile_) {
        // Measured: the task's kernels as they ran in the whole model (every occurrence has
        // its own kernel and node). A task none of whose kernels were profiled stays unknown.
        double taskMs = 0;
        bool found = false;
        for (const std::string& kernel : info.kernels)
          if (auto profiled = profiledKernelMs_.find(kernel); profiled != profiledKernelMs_.end()) {
            taskMs += profiled->second;
            found = true;
          }
        return found && profiledTotalMs_ > 0 ? 100.0 * taskMs / profiledTotalMs_ : kUnknown;
      }
      double total = log.defaultLatencyMs();
      return state.defaultMs && total > 0 ? 100.0 * info.weight * *state.defaultMs / total : kUnknown;
    }
    case DefaultGflopsColumn: return gflopsAt(info.flops, state.defaultMs);
    case DefaultPeakColumn: return peak > 0 ? 100.0 * gflopsAt(info.flops, state.defaultMs) / peak : kUnknown;
    case TrialsColumn: return state.trials;
    case BestGflopsColumn: return gflopsAt(info.flops, state.bestMs);
    case BestPeakColumn: return peak > 0 ? 100.0 * gflopsAt(info.flops, state.bestMs) / peak : kUnknown;
    case SpeedupColumn:
      if (state.confirmedSpeedup) return *state.confirmedSpeedup;
      return state.defaultMs && state.bestMs && *state.bestMs > 0 ? *state.defaultMs / *state.bestMs : kUnknown;
    case StateColumn: return stateText(state, log.ended());
  }
  return {};
}

QVariant TuningTaskModel::data(const QModelIndex& index, int role) const {
  if (!feed_ || !index.isValid() || index.row() >= rows_) return {};
  int task = index.row();
  if (role == TaskRole) return task;
  QVariant raw = value(task, index.column());
  if (role == SortRole) return raw;
  if (role == Qt::TextAlignmentRole)
    return index.column() == KernelColumn || index.column() == OpColumn || index.column() == StateColumn
               ? QVariant(int(Qt::AlignLeft | Qt::AlignVCenter))
               : QVariant(int(Qt::AlignRight | Qt::AlignVCenter));
  if (role == Qt::ToolTipRole && index.column() == KernelColumn) {
    const tuner::LoggedTask& info = feed_->log().tasks()[size_t(task)];
    QStringList kernels;
    for (const std::string& kernel : info.kernels) kernels << QString::fromStdString(kernel);
    return tr("%1\nworkload %2\nkernels: %3").arg(QString::fromStdString(info.op),
                                                  QString::fromStdString(info.workloadHash), kernels.join(", "));
  }
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case MflopColumn: return formatted(raw.toDouble(), raw.toDouble() < 10 ? 2 : 0);
    case ShareColumn:
    case DefaultPeakColumn:
    case BestPeakColumn: return formatted(raw.toDouble(), 0, QStringLiteral(" %"));
    case DefaultGflopsColumn:
    case BestGflopsColumn: return formatted(raw.toDouble(), 1);
    case SpeedupColumn: return formatted(raw.toDouble(), 2, QStringLiteral("x"));
    default: return raw;
  }
}

QVariant TuningTaskModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return {};
  if (role == Qt::ToolTipRole && section == ShareColumn) {
    if (!profile_)
      return tr("Share of the model's time, estimated from the default schedules' isolated times and the "
                "task's occurrences.\nProfile the model (Build > Profile Model, F6) for measured shares.");
    return tr("Share of the model's time measured in the profile of %1: %2 runs on %3 threads, median %4 ms, "
              "%5 tuned kernels")
        .arg(QString::fromStdString(profile_->createdAt))
        .arg(profile_->runs)
        .arg(profile_->threads)
        .arg(profile_->latencyMs, 0, 'f', 3)
        .arg(profile_->tunedKernels);
  }
  if (role != Qt::DisplayRole) return {};
  switch (section) {
    case KernelColumn: return tr("Kernel");
    case OpColumn: return tr("Op pattern");
    case OccurrencesColumn: return tr("Occurs");
    case MflopColumn: return tr("MFLOP");
    case ShareColumn: return profile_ ? tr("Share (profiled)") : tr("Share (est.)");
    case DefaultGflopsColumn: return tr("Default GFLOP/s");
    case DefaultPeakColumn: return tr("Default % peak");
    case TrialsColumn: return tr("Trials");
    case BestGflopsColumn: return tr("Best GFLOP/s");
    case BestPeakColumn: return tr("Best % peak");
    case SpeedupColumn: return tr("Speedup");
    case StateColumn: return tr("State");
  }
  return {};
}

}  // namespace tessel::views
