// Runs a tuning session in a child process (`tessel tune MODEL --events -`), so a crash there
// never takes the Studio down, and feeds its event stream to a TuningEventFeed as it comes.
// Pause and Resume signal the child (SIGUSR1, SIGUSR2: it pauses between rounds and its
// budget stands still); Stop interrupts it (SIGINT: it stops after the current candidate, with
// every trial in the records file). The stream is also appended to RECORDS.events, so the
// session's history can be shown again after the Studio is closed.
#pragma once

#include <QObject>
#include <QProcess>
#include <QStringList>

#include "views/tuning/TuningEventFeed.h"

namespace tessel::views {

struct TuningRunRequest {
  QString modelPath;
  QString recordsPath;
  double budgetMinutes = 10;  ///< 0: no time budget (then trials must be set).
  int trials = 0;             ///< 0: no trial budget.
  int threads = 0;            ///< 0: the tool's default.
  bool resume = false;        ///< --resume: continue the records file's session.
  QStringList tasks;          ///< --tasks: only these kernels (empty: all).
  QStringList extraArguments; ///< Flags for loading the model (--input-shape ...).
  QString tesselPath;         ///< The tessel tool; empty: found as the Studio finds it to measure.
};

class TuningRunner : public QObject {
  Q_OBJECT

public:
  enum class State { Idle, Running, Paused, Stopping, Finished, Failed };
  Q_ENUM(State)

  explicit TuningRunner(QObject* parent = nullptr);
  ~TuningRunner() override;

  /// Why `request` cannot start (already running, no model or records, no budget, no tool);
  /// empty when it can.
  QString problemWith(const TuningRunRequest& request) const;
  /// Starts the session; false with `error` set when it cannot (problemWith).
  bool start(const TuningRunRequest& request, QString* error);
  void pause();
  void resume();
  /// Asks the session to stop after the current candidate (it keeps every trial).
  void stop();
  /// Ends the child at once (the records hold every finished trial).
  void kill();

  State state() const { return state_; }
  bool isActive() const { return state_ == State::Running || state_ == State::Paused || state_ == State::Stopping; }
  TuningEventFeed* feed() { return &feed_; }
  /// The command line the session runs with, for the log and bug reports.
  QStringList arguments() const { return arguments_; }
  QString eventsPath() const { return eventsPath_; }
  /// The model the last session started on tunes.
  QString modelPath() const { return modelPath_; }
  /// The last lines the tool wrote to stderr (its table and messages).
  QStringList recentOutput() const { return output_; }

  /// Where a records file's event stream is kept: FILE.events beside it.
  static QString eventsPathFor(const QString& recordsPath);

  /// Shows the history of a records file that has no kept stream: `tessel records events FILE
  /// [--model MODEL ...]` rebuilds it from the records in a child process (a large file takes a
  /// moment) and the feed reads it when it is done (historyLoaded). Not while a session runs.
  bool loadHistoryFromRecords(const QString& recordsPath, const QString& modelPath, const QStringList& loadArguments,
                              QString* error, const QString& tesselPath = {});
  bool isLoadingHistory() const { return history_.state() != QProcess::NotRunning; }

signals:
  void stateChanged(tessel::views::TuningRunner::State state);
  /// A line the tool wrote to stderr (its progress table and messages).
  void outputLine(const QString& line);
  /// The child ended; `message` says how, for the status bar.
  void finished(bool succeeded, const QString& message);
  /// A history rebuilt from records is in the feed (or why not).
  void historyLoaded(bool succeeded, const QString& message);

private:
  void setState(State state);
  void readEvents();
  void readOutput();
  void processFinished(int exitCode, QProcess::ExitStatus status);
  void signalChild(int signal);

  QProcess process_;
  QProcess history_;
  TuningEventFeed feed_;
  State state_ = State::Idle;
  QStringList arguments_;
  QString eventsPath_;
  QString modelPath_;
  bool replaceEvents_ = false;
  QByteArray partialOutput_;
  QStringList output_;
};

}  // namespace tessel::views
