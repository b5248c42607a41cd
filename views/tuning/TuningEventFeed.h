// Feeds a tuning session's event stream into a TuningEventLog without stalling the GUI: bytes
// arrive from a running `tessel tune --events -` (or a saved events file) and are parsed a
// slice at a time on the GUI thread's event loop, so 20,000 events arriving at once cost the
// loop no more than a few milliseconds per turn. Views hear `changed()` at most a few times a
// second, whatever the event rate.
#pragma once

#include <QByteArray>
#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QTimer>

#include "tuner/session/TuningEventLog.h"

namespace tessel::views {

class TuningEventFeed : public QObject {
  Q_OBJECT

public:
  /// Longest the feed parses before giving the event loop back.
  static constexpr int kSliceMilliseconds = 8;
  /// Shortest time between two `changed()` signals while events stream in.
  static constexpr int kChangedIntervalMilliseconds = 250;

  explicit TuningEventFeed(QObject* parent = nullptr);

  /// Bytes of the stream as they arrive (any split: half lines wait for the rest).
  void append(const QByteArray& bytes);
  /// The stream ended: a last line without its newline is read too.
  void finish();
  /// Starts over with an empty log (a new session).
  void clear();
  /// Reads a saved events file (parsed in slices like a live stream); false with `error` set
  /// when it cannot be opened.
  bool loadFile(const QString& path, QString* error);

  const tuner::TuningEventLog& log() const { return log_; }
  /// Lines not parsed yet.
  bool busy() const { return parsed_ < pending_.size() || finishing_; }

signals:
  /// The log changed (coalesced; also sent when everything pending has been read).
  void changed();
  /// A line was not a valid event (its number and why); the feed goes on with the next.
  void problemFound(const QString& text);

private:
  void parseSlice();
  void noteChanged(bool force);

  tuner::TuningEventLog log_;
  QByteArray pending_;
  qsizetype parsed_ = 0;  // bytes of pending_ already read
  int lineNumber_ = 0;
  bool finishing_ = false;
  bool dirty_ = false;
  QTimer slice_;
  QTimer changedTimer_;
  QElapsedTimer sinceChanged_;
};

}  // namespace tessel::views
