// The background jobs running right now, gathered from any number of JobRunners (the model
// session's and each view's), as an item model for the status bar and its job list.
#pragma once

#include <QAbstractListModel>
#include <QPointer>

#include <vector>

#include "views/common/JobRunner.h"

namespace tessel::views {

/// One row per running job, newest last. Rows appear on JobRunner::jobStarted and disappear
/// on jobFinished; progress updates the row. Cancelling a row cancels that job's channel on
/// its own runner.
class JobListModel : public QAbstractListModel {
  Q_OBJECT

public:
  enum Role {
    TitleRole = Qt::UserRole + 1,  ///< QString, also Qt::DisplayRole.
    PercentRole,                   ///< int 0-100, or -1 while the job's length is unknown.
    MessageRole,                   ///< QString: the job's last progress message.
    ChannelRole,                   ///< QString: the runner's channel ("compile", "layout", ...).
  };

  explicit JobListModel(QObject* parent = nullptr);

  /// Follows `runner`'s jobs until it is destroyed. `owner` names it in tool tips ("Graph").
  void watch(JobRunner* runner, const QString& owner = {});
  /// Whether every watched runner is idle: nothing running, cancelled jobs returned too.
  bool allIdle() const;
  /// Cancels the job in `row` (no-op for an invalid row).
  void cancel(int row);
  void cancelAll();

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QHash<int, QByteArray> roleNames() const override;

signals:
  /// A watched runner's job threw instead of returning (JobRunner::jobFailed); `owner` is the
  /// name it was watched under.
  void jobFailed(const QString& owner, const QString& title, const QString& message);

private:
  struct Row {
    QPointer<JobRunner> runner;
    QString owner;
    QString channel;
    QString title;
    QString message;
    int percent = -1;
  };
  int find(const JobRunner* runner, const QString& channel) const;
  void started(JobRunner* runner, const QString& owner, const QString& channel, const QString& title);
  void progressed(const JobRunner* runner, const QString& channel, int percent, const QString& message);
  void finished(const JobRunner* runner, const QString& channel);
  void forget(const QObject* runner);

  std::vector<Row> rows_;
  std::vector<QPointer<JobRunner>> runners_;
};

}  // namespace tessel::views
