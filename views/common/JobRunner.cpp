// JobRunner: channels of background jobs whose latest result wins.
#include "views/common/JobRunner.h"

#include <QThread>

namespace tessel::views {

JobRunner::JobRunner(QObject* parent) : QObject(parent) {
  // Leave one core to the GUI thread on small machines, but always allow two jobs (a layout
  // and a lowering) to run side by side.
  pool_.setMaxThreadCount(std::max(2, QThread::idealThreadCount() - 1));
}

JobRunner::~JobRunner() {
  cancelAll();
  pool_.waitForDone();
}

std::shared_ptr<JobRunner::Job> JobRunner::begin(const QString& channel, const QString& title) {
  cancel(channel);
  auto job = std::make_shared<Job>();
  job->title = title;
  QPointer<JobRunner> self(this);
  std::weak_ptr<Job> weak = job;
  job->context.progress_ = [self, channel, weak](int percent, const QString& message) {
    QMetaObject::invokeMethod(
        self.data(),
        [self, channel, weak, percent, message]() {
          auto job = weak.lock();
          if (!self || !job || job->context.cancelled()) return;
          emit self->jobProgress(channel, percent, message);
        },
        Qt::QueuedConnection);
  };
  current_[channel] = job;
  ++active_;
  emit jobStarted(channel, title);
  return job;
}

bool JobRunner::finish(const QString& channel, const std::shared_ptr<Job>& job) {
  --active_;
  auto it = current_.find(channel);
  bool isCurrent = it != current_.end() && it->second == job;
  if (isCurrent) current_.erase(it);
  // A cancelled or superseded job already reported its end when it was cancelled.
  if (!isCurrent) return false;
  bool delivered = !job->context.cancelled();
  emit jobFinished(channel, !delivered);
  return delivered;
}

void JobRunner::cancel(const QString& channel) {
  auto it = current_.find(channel);
  if (it == current_.end()) return;
  it->second->context.cancelled_ = true;
  current_.erase(it);
  emit jobFinished(channel, true);
}

void JobRunner::cancelAll() {
  auto jobs = std::move(current_);
  current_.clear();
  for (auto& [channel, job] : jobs) {
    job->context.cancelled_ = true;
    emit jobFinished(channel, true);
  }
}

bool JobRunner::isRunning(const QString& channel) const { return current_.count(channel) != 0; }

int JobRunner::activeJobCount() const { return active_; }

void JobRunner::waitForAll() { pool_.waitForDone(); }

}  // namespace tessel::views
