// The child `tessel tune` process behind the Studio's tuning view.
#include "views/tuning/TuningRunner.h"

#include <QFile>
#include <QFileInfo>

#include <csignal>
#include <utility>

#include "compiler/driver/IsolatedMeasure.h"

namespace tessel::views {

namespace {
constexpr int kOutputLinesKept = 200;
}

TuningRunner::TuningRunner(QObject* parent) : QObject(parent) {
  connect(&process_, &QProcess::readyReadStandardOutput, this, &TuningRunner::readEvents);
  connect(&process_, &QProcess::readyReadStandardError, this, &TuningRunner::readOutput);
  connect(&process_, &QProcess::finished, this, &TuningRunner::processFinished);
  connect(&process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
    if (error != QProcess::FailedToStart) return;
    setState(State::Failed);
    emit finished(false, tr("tessel tune could not be started: %1").arg(process_.errorString()));
  });
}

TuningRunner::~TuningRunner() {
  // The records keep every finished trial; a session left running would outlive the window.
  for (QProcess* child : {&process_, &history_})
    if (child->state() != QProcess::NotRunning) {
      child->kill();
      child->waitForFinished(3000);
    }
}

QString TuningRunner::eventsPathFor(const QString& recordsPath) { return recordsPath + QStringLiteral(".events"); }

QString TuningRunner::problemWith(const TuningRunRequest& request) const {
  if (isActive()) return tr("a tuning session is running already");
  if (request.modelPath.isEmpty()) return tr("open a model to tune first");
  if (request.recordsPath.isEmpty()) return tr("choose a records file for the session's trials");
  if (request.budgetMinutes <= 0 && request.trials <= 0)
    return tr("give the session a time budget or a number of trials");
  auto tessel = driver::findTesselExecutable(request.tesselPath.toStdString());
  if (!tessel) return QString::fromStdString(tessel.error().toString());
  return {};
}

bool TuningRunner::start(const TuningRunRequest& request, QString* error) {
  if (QString problem = problemWith(request); !problem.isEmpty()) {
    if (error) *error = problem;
    return false;
  }
  auto tessel = driver::findTesselExecutable(request.tesselPath.toStdString());

  QStringList arguments{QStringLiteral("tune"), request.modelPath, QStringLiteral("--records"), request.recordsPath,
                        QStringLiteral("--events"), QStringLiteral("-")};
  if (request.budgetMinutes > 0)
    arguments << QStringLiteral("--time-budget") << QStringLiteral("%1s").arg(qRound(request.budgetMinutes * 60));
  if (request.trials > 0) arguments << QStringLiteral("--trials") << QString::number(request.trials);
  if (request.threads > 0) arguments << QStringLiteral("--threads") << QString::number(request.threads);
  if (request.resume) arguments << QStringLiteral("--resume");
  if (!request.tasks.isEmpty()) arguments << QStringLiteral("--tasks") << request.tasks;
  arguments << request.extraArguments;

  feed_.clear();
  output_.clear();
  partialOutput_.clear();
  eventsPath_ = eventsPathFor(request.recordsPath);
  modelPath_ = request.modelPath;
  // A fresh session starts a fresh stream, a resumed one adds to it (the log starts over at
  // each session_start, so the history shows the latest session). The old stream is replaced
  // only when the new session's first event arrives: a session refused before it starts
  // (its records hold trials already) leaves it as it was.
  replaceEvents_ = !request.resume;
  arguments_ = QStringList{QString::fromStdString(*tessel)} + arguments;
  process_.setProgram(QString::fromStdString(*tessel));
  process_.setArguments(arguments);
  process_.setProcessChannelMode(QProcess::SeparateChannels);
  setState(State::Running);
  process_.start();
  return true;
}

bool TuningRunner::loadHistoryFromRecords(const QString& recordsPath, const QString& modelPath,
                                          const QStringList& loadArguments, QString* error, const QString& tesselPath) {
  auto fail = [&](const QString& why) {
    if (error) *error = why;
    return false;
  };
  if (isActive()) return fail(tr("a tuning session is running"));
  auto tessel = driver::findTesselExecutable(tesselPath.toStdString());
  if (!tessel) return fail(QString::fromStdString(tessel.error().toString()));
  if (history_.state() != QProcess::NotRunning) {
    history_.disconnect(this);
    history_.kill();
    history_.waitForFinished(3000);
  }
  QStringList arguments{QStringLiteral("records"), QStringLiteral("events"), recordsPath};
  if (!modelPath.isEmpty()) arguments << QStringLiteral("--model") << modelPath << loadArguments;
  history_.setProgram(QString::fromStdString(*tessel));
  history_.setArguments(arguments);
  history_.setProcessChannelMode(QProcess::SeparateChannels);
  connect(&history_, &QProcess::finished, this, [this](int exitCode, QProcess::ExitStatus status) {
    history_.disconnect(this);
    QByteArray stream = history_.readAllStandardOutput();
    QString problem = QString::fromUtf8(history_.readAllStandardError()).trimmed();
    if (status != QProcess::NormalExit || exitCode != 0 || isActive()) {
      emit historyLoaded(false, tr("the records' history could not be rebuilt: %1")
                                    .arg(problem.isEmpty() ? tr("exit code %1").arg(exitCode) : problem.section('\n', 0, 0)));
      return;
    }
    feed_.clear();
    feed_.append(stream);
    feed_.finish();
    emit historyLoaded(true, tr("the session's history was rebuilt from its records (no events file was kept)"));
  });
  history_.start();
  return true;
}

void TuningRunner::signalChild(int signal) {
  qint64 pid = process_.processId();
  if (pid > 0) ::kill(pid_t(pid), signal);
}

void TuningRunner::pause() {
  if (state_ != State::Running) return;
  signalChild(SIGUSR1);
  setState(State::Paused);
}

void TuningRunner::resume() {
  if (state_ != State::Paused) return;
  signalChild(SIGUSR2);
  setState(State::Running);
}

void TuningRunner::stop() {
  if (state_ != State::Running && state_ != State::Paused) return;
  // A paused session must wake up to notice the interrupt.
  if (state_ == State::Paused) signalChild(SIGUSR2);
  signalChild(SIGINT);
  setState(State::Stopping);
}

void TuningRunner::kill() {
  if (process_.state() == QProcess::NotRunning) return;
  process_.kill();
}

void TuningRunner::setState(State state) {
  if (state_ == state) return;
  state_ = state;
  emit stateChanged(state);
}

void TuningRunner::readEvents() {
  QByteArray bytes = process_.readAllStandardOutput();
  if (bytes.isEmpty()) return;
  QFile file(eventsPath_);
  QIODevice::OpenMode mode = std::exchange(replaceEvents_, false) ? QIODevice::WriteOnly | QIODevice::Truncate
                                                                    : QIODevice::Append;
  if (file.open(mode)) file.write(bytes);
  feed_.append(bytes);
}

void TuningRunner::readOutput() {
  partialOutput_ += process_.readAllStandardError();
  for (qsizetype end; (end = partialOutput_.indexOf('\n')) >= 0;) {
    QString line = QString::fromUtf8(partialOutput_.left(end));
    partialOutput_.remove(0, end + 1);
    // The tool draws a progress bar with carriage returns when it thinks it is on a terminal;
    // keep the last state of such a line.
    if (qsizetype cr = line.lastIndexOf('\r'); cr >= 0) line = line.mid(cr + 1);
    output_ << line;
    if (output_.size() > kOutputLinesKept) output_.removeFirst();
    emit outputLine(line);
  }
}

void TuningRunner::processFinished(int exitCode, QProcess::ExitStatus status) {
  readEvents();
  readOutput();
  feed_.finish();
  bool stopping = state_ == State::Stopping;
  QString message;
  bool succeeded = false;
  if (status == QProcess::CrashExit) {
    message = stopping ? tr("the tuning session was stopped; its trials are in the records file")
                       : tr("the tuning session ended unexpectedly (%1); its trials are in the records file")
                             .arg(process_.errorString());
    succeeded = stopping;
  } else if (exitCode == 0) {
    message = tr("the tuning session finished");
    succeeded = true;
  } else if (exitCode == 130) {
    message = tr("the tuning session was stopped; every trial is in the records file (Resume continues it)");
    succeeded = true;
  } else {
    QString last = output_.isEmpty() ? QString() : output_.back();
    message = tr("the tuning session failed: %1").arg(last.isEmpty() ? tr("exit code %1").arg(exitCode) : last);
  }
  setState(succeeded ? State::Finished : State::Failed);
  emit finished(succeeded, message);
}

}  // namespace tessel::views
