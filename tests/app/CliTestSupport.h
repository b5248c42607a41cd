// Running the built tessel binary from tests and reading what it printed.
#pragma once

#include <QFile>
#include <QMap>
#include <QProcess>
#include <QString>
#include <QStringList>

namespace testing {

inline const QString kTessel = QStringLiteral(TESSEL_BINARY_DIR "/bin/tessel");

/// What one run of the tool showed.
struct Run {
  bool finished = false;
  int exitCode = -1;
  QString out;
  QString err;
};

/// Runs tessel with `arguments`. The limit is generous: compiling on a loaded shared machine
/// may be slow, and a hang must still end the test.
inline Run runTessel(const QStringList& arguments, int timeoutMs = 120000) {
  QProcess process;
  process.start(kTessel, arguments);
  Run run;
  run.finished = process.waitForFinished(timeoutMs);
  if (!run.finished) process.kill();
  run.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
  run.out = QString::fromUtf8(process.readAllStandardOutput());
  run.err = QString::fromUtf8(process.readAllStandardError());
  return run;
}

/// The command and everything it printed, for failure messages.
inline QString describe(const QStringList& arguments, const Run& run) {
  return QString("tessel %1\nexit %2\nstdout:\n%3\nstderr:\n%4")
      .arg(arguments.join(' '))
      .arg(run.exitCode)
      .arg(run.out.left(4000), run.err.left(4000));
}

/// The key=value lines the commands print (a key has no spaces).
inline QMap<QString, QString> keyValues(const QString& text) {
  QMap<QString, QString> values;
  for (const QString& line : text.split('\n', Qt::SkipEmptyParts)) {
    qsizetype eq = line.indexOf('=');
    if (eq > 0 && !line.left(eq).contains(' ')) values[line.left(eq)] = line.mid(eq + 1);
  }
  return values;
}

/// Writes `text` to `path` (a file the command under test reads); false when it cannot.
inline bool writeTextFile(const QString& path, const QByteArray& text) {
  QFile file(path);
  return file.open(QIODevice::WriteOnly | QIODevice::Truncate) && file.write(text) == text.size();
}

}  // namespace testing
