// JobListModel: running jobs of several JobRunners as rows.
#include "views/common/JobListModel.h"

namespace tessel::views {

JobListModel::JobListModel(QObject* parent) : QAbstractListModel(parent) {}

void JobListModel::watch(JobRunner* runner, const QString& owner) {
  if (!runner) return;
  for (const auto& watched : runners_)
    if (watched == runner) return;
  runners_.emplace_back(runner);
  connect(runner, &JobRunner::jobStarted, this, [this, runner, owner](const QString& channel, const QString& title) {
    started(runner, owner, channel, title);
  });
  connect(runner, &JobRunner::jobProgress, this,
          [this, runner](const QString& channel, int percent, const QString& message) {
            progressed(runner, channel, percent, message);
          });
  connect(runner, &JobRunner::jobFinished, this,
          [this, runner](const QString& channel, bool) { finished(runner, channel); });
  connect(runner, &JobRunner::jobFailed, this, [this, owner](const QString&, const QString& title, const QString& message) {
    emit jobFailed(owner, title, message);
  });
  connect(runner, &QObject::destroyed, this, [this](QObject* gone) { forget(gone); });
}

bool JobListModel::allIdle() const {
  for (const auto& runner : runners_)
    if (runner && runner->activeJobCount() > 0) return false;
  return true;
}

void JobListModel::cancel(int row) {
  if (row < 0 || row >= static_cast<int>(rows_.size())) return;
  // Copy: cancelling emits jobFinished, which removes the row while we still read it.
  Row job = rows_[row];
  if (job.runner) job.runner->cancel(job.channel);
}

void JobListModel::cancelAll() {
  while (!rows_.empty()) {
    int before = static_cast<int>(rows_.size());
    cancel(before - 1);
    // A runner already destroyed cannot report back; drop its row here.
    if (static_cast<int>(rows_.size()) == before) {
      beginRemoveRows({}, before - 1, before - 1);
      rows_.pop_back();
      endRemoveRows();
    }
  }
}

int JobListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

QVariant JobListModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const Row& row = rows_[index.row()];
  switch (role) {
    case Qt::DisplayRole:
    case TitleRole:
      return row.title;
    case Qt::ToolTipRole:
      return row.owner.isEmpty() ? row.title : QStringLiteral("%1: %2").arg(row.owner, row.title);
    case PercentRole:
      return row.percent;
    case MessageRole:
      return row.message;
    case ChannelRole:
      return row.channel;
    default:
      return {};
  }
}

QHash<int, QByteArray> JobListModel::roleNames() const {
  auto names = QAbstractListModel::roleNames();
  names[TitleRole] = "title";
  names[PercentRole] = "percent";
  names[MessageRole] = "message";
  names[ChannelRole] = "channel";
  return names;
}

int JobListModel::find(const JobRunner* runner, const QString& channel) const {
  for (size_t i = 0; i < rows_.size(); ++i)
    if (rows_[i].runner == runner && rows_[i].channel == channel) return static_cast<int>(i);
  return -1;
}

void JobListModel::started(JobRunner* runner, const QString& owner, const QString& channel, const QString& title) {
  // A runner reports the superseded job's end before the new one starts, but be robust to a
  // channel restarted without it.
  if (int existing = find(runner, channel); existing >= 0) {
    Row& row = rows_[existing];
    row.title = title;
    row.message.clear();
    row.percent = -1;
    emit dataChanged(index(existing), index(existing));
    return;
  }
  int at = static_cast<int>(rows_.size());
  beginInsertRows({}, at, at);
  rows_.push_back(Row{runner, owner, channel, title, {}, -1});
  endInsertRows();
}

void JobListModel::progressed(const JobRunner* runner, const QString& channel, int percent, const QString& message) {
  int at = find(runner, channel);
  if (at < 0) return;
  Row& row = rows_[at];
  row.percent = percent;
  if (!message.isEmpty()) row.message = message;
  emit dataChanged(index(at), index(at), {PercentRole, MessageRole});
}

void JobListModel::finished(const JobRunner* runner, const QString& channel) {
  int at = find(runner, channel);
  if (at < 0) return;
  beginRemoveRows({}, at, at);
  rows_.erase(rows_.begin() + at);
  endRemoveRows();
}

void JobListModel::forget(const QObject*) {
  for (int at = static_cast<int>(rows_.size()) - 1; at >= 0; --at) {
    // By QObject::destroyed the runner's QPointers are already null.
    if (rows_[at].runner) continue;
    beginRemoveRows({}, at, at);
    rows_.erase(rows_.begin() + at);
    endRemoveRows();
  }
  std::erase_if(runners_, [](const QPointer<JobRunner>& r) { return r.isNull(); });
}

}  // namespace tessel::views
