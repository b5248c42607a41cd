// Runs long work (import, compile, layout, lowering, measuring) off the GUI thread, with
// progress, cancellation and "latest request wins" per channel.
#pragma once

#include <QObject>
#include <QPointer>
#include <QString>
#include <QThreadPool>

#include <atomic>
#include <functional>
#include <map>
#include <memory>

namespace tessel::views {

/// What a running job sees: whether it should stop, and where to report progress. Work checks
/// cancelled() between steps and returns early; its result is then dropped.
class JobContext {
public:
  bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }
  /// `percent` 0-100, or -1 for "busy, unknown how long". Thread-safe; delivered queued.
  void reportProgress(int percent, const QString& message = {}) const {
    if (progress_) progress_(percent, message);
  }

private:
  friend class JobRunner;
  std::atomic<bool> cancelled_{false};
  std::function<void(int, const QString&)> progress_;
};

/// Owns the jobs of one window or view. Each job belongs to a channel ("compile", "layout",
/// "lower:conv0"); starting a job cancels the channel's previous one, whose result is then
/// never delivered, so a view only ever sees the answer to its latest request.
class JobRunner : public QObject {
  Q_OBJECT

public:
  explicit JobRunner(QObject* parent = nullptr);
  ~JobRunner() override;

  /// Runs `work` on a worker thread. `done` runs later on this object's thread with the
  /// result, unless the job was cancelled or superseded by then. An exception out of `work`
  /// (an internal compiler error) would end the process from a worker thread: it is caught
  /// there and reported as jobFailed instead, and `done` does not run.
  template <class Result>
  void start(const QString& channel, const QString& title, std::function<Result(JobContext&)> work,
             std::function<void(Result)> done) {
    auto job = begin(channel, title);
    QPointer<JobRunner> self(this);
    pool_.start([self, job, channel, work = std::move(work), done = std::move(done)]() mutable {
      std::shared_ptr<Result> result;
      QString failure;
      try {
        result = std::make_shared<Result>(work(job->context));
      } catch (const std::exception& error) {
        failure = QString::fromUtf8(error.what());
      } catch (...) {
        failure = QStringLiteral("an unknown exception");
      }
      if (!self) return;
      QMetaObject::invokeMethod(
          self.data(),
          [self, job, channel, result, failure, done = std::move(done)]() {
            if (!self) return;
            bool delivered = self->finish(channel, job);
            if (!delivered) return;
            if (result) done(std::move(*result));
            else emit self->jobFailed(channel, job->title, failure);
          },
          Qt::QueuedConnection);
    });
  }

  /// Asks the channel's running job to stop; its result will not be delivered.
  void cancel(const QString& channel);
  void cancelAll();
  bool isRunning(const QString& channel) const;
  /// Number of jobs still running (cancelled ones included until they return).
  int activeJobCount() const;
  /// Blocks until every job has returned (for tests and shutdown).
  void waitForAll();

signals:
  void jobStarted(const QString& channel, const QString& title);
  void jobProgress(const QString& channel, int percent, const QString& message);
  /// Once per job: when it delivered its result (`cancelled` false), or when it was cancelled
  /// or superseded by a newer job on its channel (`cancelled` true, at that moment).
  void jobFinished(const QString& channel, bool cancelled);
  /// The job titled `title` threw instead of returning (after its jobFinished): `message` is
  /// the exception's text. A bug to report, not a user mistake.
  void jobFailed(const QString& channel, const QString& title, const QString& message);

private:
  struct Job {
    JobContext context;
    QString title;
  };
  std::shared_ptr<Job> begin(const QString& channel, const QString& title);
  bool finish(const QString& channel, const std::shared_ptr<Job>& job);

  QThreadPool pool_;
  std::map<QString, std::shared_ptr<Job>> current_;
  int active_ = 0;
};

}  // namespace tessel::views
