// Running child processes: output and exit codes come back, a crash names its signal, cancel
// and timeout kill a hanging child (and what it started) promptly, megabytes of output on both
// pipes do not deadlock, and nothing is left behind.
#include <QElapsedTimer>
#include <QtTest>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/support/ChildProcess.h"

using namespace tessel;

namespace {

ChildProcessResult runShell(const std::string& script, const ChildProcessOptions& options = {}) {
  auto result = runChildProcess("/bin/sh", {"-c", script}, options);
  if (!result) qFatal("could not start /bin/sh: %s", result.error().toString().c_str());
  return *result;
}

// A child killed promptly ends well before the 30 s its script would sleep; the bound only
// separates "killed" from "ran to the end" on a loaded machine.
constexpr double kPromptSeconds = 10;

// Whether this process has a child left (a zombie included).
bool hasChildren() {
  siginfo_t info{};
  return ::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid != 0;
}

}  // namespace

class TestChildProcess : public QObject {
  Q_OBJECT
private slots:
  void capturesOutputAndExitCode() {
    std::vector<std::string> outLines, errLines;
    ChildProcessOptions options;
    options.onStdoutLine = [&](std::string_view line) { outLines.emplace_back(line); };
    options.onStderrLine = [&](std::string_view line) { errLines.emplace_back(line); };
    ChildProcessResult result = runShell("echo one; echo two; echo problem >&2; printf tail; exit 3", options);
    QVERIFY(result.exited);
    QCOMPARE(result.exitCode, 3);
    QVERIFY(!result.succeeded());
    QCOMPARE(result.signal, 0);
    QCOMPARE(result.standardOutput, std::string("one\ntwo\ntail"));
    QCOMPARE(result.standardError, std::string("problem\n"));
    QCOMPARE(result.standardOutputDropped, size_t(0));
    QCOMPARE(outLines, (std::vector<std::string>{"one", "two", "tail"}));
    QCOMPARE(errLines, (std::vector<std::string>{"problem"}));
    QCOMPARE(result.describeEnd(), std::string("exited with code 3"));
    QVERIFY(!hasChildren());
  }

  void successIsExitCodeZero() {
    ChildProcessResult result = runShell("true");
    QVERIFY(result.succeeded());
    QVERIFY(result.standardOutput.empty());
  }

  void passesArgumentsEnvironmentAndDirectory() {
    ChildProcessOptions options;
    options.environment.emplace("TESSEL_CHILD_TEST", std::string("a value with spaces"));
    options.workingDirectory = std::string("/");
    auto result = runChildProcess("sh", {"-c", "printf '%s|%s|%s' \"$TESSEL_CHILD_TEST\" \"$(pwd)\" \"$1\"", "sh",
                                         "an argument; not a command"},
                                  options);
    QVERIFY(result);
    QCOMPARE(result->standardOutput, std::string("a value with spaces|/|an argument; not a command"));
  }

  void aMissingProgramIsADiagnostic() {
    auto result = runChildProcess("/nonexistent/tessel-no-such-program", {});
    QVERIFY(!result);
    QVERIFY2(result.error().message.find("/nonexistent/tessel-no-such-program") != std::string::npos,
             result.error().message.c_str());
    QVERIFY(!hasChildren());
  }

  void aCrashNamesItsSignal_data() {
    QTest::addColumn<QString>("signal");
    QTest::addColumn<int>("number");
    QTest::newRow("segmentation fault") << "SEGV" << int(SIGSEGV);
    QTest::newRow("abort") << "ABRT" << int(SIGABRT);
  }
  void aCrashNamesItsSignal() {
    QFETCH(QString, signal);
    QFETCH(int, number);
    ChildProcessResult result = runShell("echo before; kill -" + signal.toStdString() + " $$; echo after");
    QVERIFY(!result.exited);
    QCOMPARE(result.signal, number);
    QCOMPARE(QString::fromStdString(result.signalName), "SIG" + signal);
    QCOMPARE(result.standardOutput, std::string("before\n"));
    QVERIFY(!result.cancelled && !result.timedOut);
    QCOMPARE(QString::fromStdString(result.describeEnd()), "was killed by SIG" + signal);
  }

  void cancelKillsAHangingChildAndWhatItStarted() {
    // The script starts a grandchild and waits for it: both must go.
    std::string grandchild;
    QElapsedTimer sinceStart;
    sinceStart.start();
    ChildProcessOptions options;
    options.onStdoutLine = [&](std::string_view line) { grandchild = std::string(line); };
    options.cancelled = [&] { return !grandchild.empty() && sinceStart.elapsed() > 100; };
    ChildProcessResult result = runShell("sleep 30 & echo $!; wait; echo finished", options);
    QVERIFY(result.cancelled);
    QVERIFY(!result.timedOut);
    QCOMPARE(result.signal, int(SIGKILL));
    QVERIFY2(result.seconds < kPromptSeconds, std::to_string(result.seconds).c_str());
    QVERIFY(result.standardOutput.find("finished") == std::string::npos);
    QCOMPARE(result.describeEnd(), std::string("was cancelled"));
    // The grandchild was killed with it (init reaps it shortly after).
    pid_t sleeper = pid_t(std::stol(grandchild));
    QTRY_VERIFY_WITH_TIMEOUT(::kill(sleeper, 0) != 0, 5000);
    QVERIFY(!hasChildren());
  }

  void aTimeoutKillsAHangingChild() {
    ChildProcessOptions options;
    options.timeoutSeconds = 0.3;
    ChildProcessResult result = runShell("echo started; sleep 30; echo finished", options);
    QVERIFY(result.timedOut);
    QVERIFY(!result.cancelled);
    QVERIFY2(result.seconds >= 0.3 && result.seconds < kPromptSeconds, std::to_string(result.seconds).c_str());
    QCOMPARE(result.standardOutput, std::string("started\n"));
    QVERIFY2(result.describeEnd().rfind("timed out after", 0) == 0, result.describeEnd().c_str());
    QVERIFY(!hasChildren());
  }

  void aChildThatNeverStopsWritingStillTimesOut() {
    ChildProcessOptions options;
    options.timeoutSeconds = 0.3;
    size_t lines = 0;
    options.onStdoutLine = [&](std::string_view) { ++lines; };
    ChildProcessResult result = runShell("while true; do echo more; done", options);
    QVERIFY(result.timedOut);
    QVERIFY2(result.seconds < kPromptSeconds, std::to_string(result.seconds).c_str());
    QVERIFY(lines > 0);
    QVERIFY(!hasChildren());
  }

  void megabytesOnBothPipesDoNotDeadlock() {
    // Several MB on stderr first, then on stdout: a reader that waited for stdout alone would
    // leave the child blocked on a full stderr pipe forever (the timeout ends the test then).
    const std::string errorLine = "a line of error text";
    const size_t errorBytes = 6000000;
    size_t lines = 0;
    ChildProcessOptions options;
    options.timeoutSeconds = 120;
    options.onStderrLine = [&](std::string_view) { ++lines; };
    ChildProcessResult result =
        runShell("yes '" + errorLine + "' | head -c " + std::to_string(errorBytes) +
                 " >&2; yes 'output' | head -c 5000000; echo end",
                 options);
    QVERIFY2(result.succeeded(), result.describeEnd().c_str());
    QCOMPARE(result.standardError.size(), errorBytes);
    QCOMPARE(result.standardOutput.size(), size_t(5000000 + 4));
    // Every line reached the callback, the last one cut short by head included.
    size_t lineBytes = errorLine.size() + 1;
    QCOMPARE(lines, (errorBytes + lineBytes - 1) / lineBytes);
    QVERIFY(result.standardOutput.ends_with("end\n"));
  }

  void keepsTheEndOfALongOutput() {
    size_t lines = 0;
    ChildProcessOptions options;
    options.keepOutputBytes = 1000;
    options.onStdoutLine = [&](std::string_view) { ++lines; };
    ChildProcessResult result = runShell("yes 'output' | head -c 3500000; echo the last words", options);
    QVERIFY(result.succeeded());
    QCOMPARE(result.standardOutput.size(), size_t(1000));
    QVERIFY(result.standardOutput.ends_with("output\nthe last words\n"));
    QCOMPARE(result.standardOutputDropped, size_t(3500000 + 15 - 1000));
    QCOMPARE(lines, size_t(3500000 / 7 + 1));  // every line was still seen
    QCOMPARE(result.standardErrorDropped, size_t(0));
  }

  void inheritsNoOtherFile() {
    // A descriptor the caller opened without close-on-exec must not leak into the child.
    int leaked = ::open("/dev/null", O_RDONLY);
    QVERIFY(leaked > 2);
    auto result = runChildProcess("/bin/sh", {"-c", "ls /proc/self/fd"});
    ::close(leaked);
    QVERIFY(result);
    // ls itself reads /proc/self/fd through one more descriptor (3).
    QCOMPARE(QString::fromStdString(result->standardOutput).split('\n', Qt::SkipEmptyParts),
             QStringList({"0", "1", "2", "3"}));
  }

  void manyShortChildrenLeaveNothingBehind() {
    for (int i = 0; i < 50; ++i) {
      ChildProcessResult result = runShell("echo " + std::to_string(i));
      QCOMPARE(result.standardOutput, std::to_string(i) + "\n");
    }
    QVERIFY(!hasChildren());
  }
};

QTEST_GUILESS_MAIN(TestChildProcess)
#include "test_child_process.moc"
