// Parsing a tuning event stream in slices on the GUI thread.
#include "views/tuning/TuningEventFeed.h"

#include <QFile>

namespace tessel::views {

TuningEventFeed::TuningEventFeed(QObject* parent) : QObject(parent) {
  slice_.setSingleShot(true);
  slice_.setInterval(0);
  connect(&slice_, &QTimer::timeout, this, &TuningEventFeed::parseSlice);
  changedTimer_.setSingleShot(true);
  connect(&changedTimer_, &QTimer::timeout, this, [this] { noteChanged(true); });
  sinceChanged_.start();
}

void TuningEventFeed::append(const QByteArray& bytes) {
  if (bytes.isEmpty()) return;
  // Drop what was read already before the buffer grows, so a long session's stream does not
  // keep every byte twice (in the buffer and in the log).
  if (parsed_ > 0 && parsed_ > pending_.size() / 2) {
    pending_.remove(0, parsed_);
    parsed_ = 0;
  }
  pending_.append(bytes);
  if (!slice_.isActive()) slice_.start();
}

void TuningEventFeed::finish() {
  finishing_ = true;
  if (!slice_.isActive()) slice_.start();
}

void TuningEventFeed::clear() {
  slice_.stop();
  changedTimer_.stop();
  log_ = tuner::TuningEventLog();
  pending_.clear();
  parsed_ = 0;
  lineNumber_ = 0;
  finishing_ = false;
  dirty_ = false;
  emit changed();
}

bool TuningEventFeed::loadFile(const QString& path, QString* error) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) {
    if (error) *error = tr("cannot read the tuning events %1: %2").arg(path, file.errorString());
    return false;
  }
  clear();
  append(file.readAll());
  finish();
  return true;
}

void TuningEventFeed::parseSlice() {
  QElapsedTimer clock;
  clock.start();
  bool added = false;
  while (parsed_ < pending_.size()) {
    qsizetype end = pending_.indexOf('\n', parsed_);
    if (end < 0) {
      if (!finishing_) break;  // half a line: wait for the rest
      end = pending_.size();
    }
    ++lineNumber_;
    std::string_view line(pending_.constData() + parsed_, size_t(end - parsed_));
    size_t problemsBefore = log_.problems().size();
    log_.addLine(line, lineNumber_);
    added = true;
    if (log_.problems().size() > problemsBefore) {
      const tuner::LoggedProblem& problem = log_.problems().back();
      emit problemFound(tr("tuning events, line %1: %2").arg(problem.line).arg(QString::fromStdString(problem.message)));
    }
    parsed_ = std::min(end + 1, pending_.size());
    if (clock.elapsed() >= kSliceMilliseconds) break;
  }
  if (added) dirty_ = true;
  bool more = parsed_ < pending_.size() && (finishing_ || pending_.indexOf('\n', parsed_) >= 0);
  if (more) {
    slice_.start();
    noteChanged(false);
    return;
  }
  // Caught up. Live events keep the rate limit (the timer brings the last of them); the end
  // of a stream or file is shown at once.
  bool ended = finishing_;
  finishing_ = false;
  noteChanged(ended);
}

void TuningEventFeed::noteChanged(bool force) {
  if (!dirty_) return;
  if (force || sinceChanged_.elapsed() >= kChangedIntervalMilliseconds) {
    changedTimer_.stop();
    dirty_ = false;
    sinceChanged_.restart();
    emit changed();
  } else if (!changedTimer_.isActive()) {
    changedTimer_.start(int(kChangedIntervalMilliseconds - sinceChanged_.elapsed()));
  }
}

}  // namespace tessel::views
