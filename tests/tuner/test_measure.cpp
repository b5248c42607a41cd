// The tuner's persistent measuring worker: a real `tessel measure-worker` measures and checks
// candidates and keeps serving after schedule errors; stand-in workers (shell scripts) crash,
// hang and lie on purpose, and the tuner's side turns each into a result and carries on, with
// no process or zombie left behind.
#include <sys/wait.h>
#include <unistd.h>

#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QtTest>

#include <cerrno>
#include <csignal>
#include <limits>

#include "../ShellScripts.h"
#include "compiler/ops/GpuSchedules.h"
#include "compiler/ops/Matmul.h"
#include "compiler/schedule/TraceText.h"
#include "core/support/InteractiveChildProcess.h"
#include "tuner/measure/MeasureServer.h"
#include "tuner/measure/MeasureWorker.h"
#include "../GpuTestSupport.h"

using namespace tessel;
using namespace tessel::tuner;

namespace {

const std::string kTessel = TESSEL_BINARY_DIR "/bin/tessel";
constexpr int64_t kSize = 64;
const std::string kTask = "matmul_64x64x64";

// A valid schedule other than the default (rows split, the reduction moved outside them).
const std::string kVariant = "io, ii = split(C, i, factor=16)\nreorder(C, io, k, ii, j)\nvectorize(C, j)\n";
// The same sums added in another order: k's halves swap places with the rows.
const std::string kReorderedReduction = "ko, ki = split(C, k, factor=16)\nreorder(C, ki, i, ko, j)\n";

// Short timing: these tests check what is reported, not how fast.
MeasureRequest quickRequest(const std::string& task, const std::string& trace) {
  MeasureRequest request;
  request.task = task;
  request.trace = trace;
  request.minSeconds = 0.01;
  request.minRepeats = 2;
  request.maxRepeats = 20;
  return request;
}

Workload matmulWorkload() { return matmul(kSize, kSize, kSize); }

std::string defaultTraceText() {
  auto schedule = defaultMatmulSchedule(matmulWorkload(), hostTarget());
  if (!schedule) qFatal("%s", schedule.error().toString().c_str());
  return printTraceText(schedule->trace());
}

MeasureWorkerOptions matmulWorker() {
  MeasureWorkerOptions options;
  options.source = driver::OperatorSource{"matmul", {{"m", "64"}, {"n", "64"}, {"k", "64"}}};
  options.threads = 1;
  options.tesselPath = kTessel;
  return options;
}

// A stand-in for `tessel measure-worker` serving one task "k": a request for which the shell
// condition `when` holds ($n: the request's number in this process, from 1; $line: the
// request) runs `action` instead of answering; every other request is answered with a fixed
// time.
QString standInWorker(const QTemporaryDir& dir, const QString& name, const QString& when, const QString& action) {
  return testing::writeShellScript(
      dir.path(), name,
      QString("echo '{\"ready\": true, \"threads\": 1, \"tasks\": [{\"name\": \"k\", \"workload\": \"w\", "
              "\"flops\": 2}]}'\n"
              "n=0\n"
              "while IFS= read -r line; do\n"
              "  n=$((n+1))\n"
              "  id=$(printf '%s' \"$line\" | sed 's/.*\"id\":\\([0-9]*\\).*/\\1/')\n"
              "  if %1; then\n"
              "    %2\n"
              "  else\n"
              "    echo \"{\\\"id\\\": $id, \\\"ok\\\": true, \\\"median_ms\\\": 1.5, \\\"min_ms\\\": 1, "
              "\\\"max_ms\\\": 2, \\\"samples\\\": 5, \\\"gflops\\\": 1, \\\"checked\\\": true, "
              "\\\"max_abs_error\\\": 0, \\\"build_ms\\\": 3, \\\"check_ms\\\": 1, \\\"time_ms\\\": 8}\"\n"
              "  fi\n"
              "done\n")
          .arg(when)
          .arg(action));
}

MeasureWorkerOptions standInOptions(const QString& script) {
  MeasureWorkerOptions options;
  options.source = driver::OperatorSource{"matmul", {}};
  options.tesselPath = script.toStdString();
  return options;
}

QString describe(const CandidateMeasurement& m) {
  if (m.ok()) return QString("ok: median %1 ms").arg(m.medianMilliseconds);
  return QString("%1: %2 (%3)")
      .arg(QString::fromStdString(std::string(candidateErrorKindName(m.failure->kind))),
           QString::fromStdString(m.failure->diagnostic.toString()),
           QString::fromStdString(m.failure->diagnostic.hint));
}

// Gone and reaped: a zombie would still answer kill(pid, 0).
bool processIsGone(int pid) { return pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH; }

// Gone, or a zombie waiting for whoever reaps orphans (a grandchild is not ours to reap).
bool processIsDead(int pid) {
  QFile stat(QString("/proc/%1/stat").arg(pid));
  if (pid <= 0 || !stat.open(QIODevice::ReadOnly)) return pid > 0;
  QByteArray text = stat.readAll();
  return text.mid(text.lastIndexOf(')') + 2, 1) == "Z";
}

std::vector<runtime::NDArray> oneArray(std::vector<float> values) {
  auto array = runtime::NDArray::empty({int64_t(values.size())}, runtime::DataType::float32());
  array.copyFrom(values);
  return {array};
}

}  // namespace

class TestMeasure : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() {
    QVERIFY2(QFileInfo(QString::fromStdString(kTessel)).isExecutable(), "the tessel binary is not built");
  }

  // The default schedule and a variant are built, checked against the default's outputs
  // and timed, by one worker started once.
  void realWorkerMeasuresAndChecksCandidates() {
    MeasureWorker worker(matmulWorker());
    QVERIFY2(worker.start().ok(), worker.start().error().toString().c_str());
    QCOMPARE(worker.tasks().size(), size_t(1));
    QCOMPARE(worker.tasks()[0].name, kTask);
    QCOMPARE(worker.tasks()[0].flops, 2.0 * kSize * kSize * kSize);
    for (const std::string& trace : {defaultTraceText(), kVariant}) {
      CandidateMeasurement m = worker.measure(quickRequest(kTask, trace));
      QVERIFY2(m.ok(), qPrintable(describe(m)));
      QVERIFY(m.checked);
      QVERIFY2(m.maxAbsError <= 1e-4, qPrintable(QString::number(m.maxAbsError)));
      QVERIFY(m.samples >= 2);
      QVERIFY(m.minMilliseconds > 0 && m.minMilliseconds <= m.medianMilliseconds);
      QVERIFY(m.medianMilliseconds <= m.maxMilliseconds);
      QVERIFY(m.gflops > 0);
      QVERIFY(m.buildMilliseconds > 0 && m.timingMilliseconds > 0);
    }
    QCOMPARE(worker.statistics().starts, 1);
    QCOMPARE(worker.statistics().candidates, 2);
    QVERIFY(worker.statistics().startSeconds > 0 && worker.statistics().buildSeconds > 0);
  }

  // A GPU target (OpenCL, run by PoCL here): the worker exports each candidate as a GPU
  // module, checks it against the default GPU schedule's outputs and times it on the device;
  // a batch asked in turns is timed one candidate after the other. A schedule with a loop
  // outside its bound loops is the candidate's lowering error, and the worker goes on.
  void realWorkerMeasuresGpuCandidatesOnTheDevice() {
    SKIP_WITHOUT_OPENCL();
    MeasureWorkerOptions options = matmulWorker();
    std::get<driver::OperatorSource>(options.source).parameters["target"] = "opencl";
    MeasureWorker worker(options);
    QVERIFY2(worker.start().ok(), worker.start().error().toString().c_str());
    Target target = *Target::parse("opencl");
    auto gpuDefault = defaultMatmulSchedule(matmul(kSize, kSize, kSize, DataType::float32(), target), target);
    QVERIFY2(gpuDefault, gpuDefault ? "" : gpuDefault.error().toString().c_str());
    const std::string oneOutputPerThread = "io, ii = split(C, i, factor=4)\n"
                                           "bind(C, io, blockIdx.x)\n"
                                           "bind(C, ii, threadIdx.y)\n"
                                           "bind(C, j, threadIdx.x)\n";
    std::vector<MeasureRequest> batch;
    const std::string outerLoopUnbound = "io, ii = split(C, i, factor=16)\nbind(C, ii, threadIdx.x)\n";
    for (const std::string& trace : {printTraceText(gpuDefault->trace()), oneOutputPerThread, outerLoopUnbound}) {
      batch.push_back(quickRequest(kTask, trace));
      batch.back().turns = 5;
    }
    std::vector<CandidateMeasurement> results(batch.size());
    worker.measureBatch(batch, [&](size_t i, const CandidateMeasurement& m) { results[i] = m; });
    for (size_t i = 0; i < 2; ++i) {
      QVERIFY2(results[i].ok(), qPrintable(describe(results[i])));
      QVERIFY(results[i].checked);
      QVERIFY2(results[i].maxAbsError <= 1e-4, qPrintable(QString::number(results[i].maxAbsError)));
      QVERIFY(results[i].samples >= 2 && results[i].medianMilliseconds > 0 && results[i].gflops > 0);
    }
    // A loop outside the bound ones would run in every thread.
    QVERIFY(!results[2].ok());
    QCOMPARE(results[2].failure->kind, CandidateErrorKind::Lower);
    QVERIFY2(results[2].failure->diagnostic.message.find("not bound to a GPU block or thread") != std::string::npos,
             qPrintable(describe(results[2])));
    QCOMPARE(worker.statistics().starts, 1);
  }

  // Timing with the weights evicted before every call (what tuning asks for) works and
  // crosses the protocol; each sample is one call.
  void coldWeightsAreTimedCallByCall() {
    MeasureRequest request = quickRequest(kTask, kVariant);
    request.flushCaches = true;
    QVERIFY(requestLine(1, request).find("\"flush_caches\":true") != std::string::npos);
    ParsedRequest parsed = parseRequestLine(requestLine(1, request));
    QVERIFY(!parsed.failure && parsed.request.flushCaches);
    MeasureWorker worker(matmulWorker());
    CandidateMeasurement m = worker.measure(request);
    QVERIFY2(m.ok() && m.checked, qPrintable(describe(m)));
    QVERIFY(m.samples >= request.minRepeats && m.samples <= request.maxRepeats);
    QVERIFY(m.minMilliseconds > 0 && m.minMilliseconds <= m.medianMilliseconds);
  }

  // A batch is built in parallel and answered in order, each candidate with its own outcome.
  void realWorkerAnswersABatchInOrder() {
    MeasureWorker worker(matmulWorker());
    std::vector<MeasureRequest> batch = {quickRequest(kTask, defaultTraceText()), quickRequest(kTask, "split(C"),
                                         quickRequest(kTask, kVariant),
                                         quickRequest(kTask, "io, ii = split(C, nope, factor=4)\n")};
    std::vector<size_t> order;
    std::vector<CandidateMeasurement> results(batch.size());
    worker.measureBatch(batch, [&](size_t i, const CandidateMeasurement& m) {
      order.push_back(i);
      results[i] = m;
    });
    QCOMPARE(order, (std::vector<size_t>{0, 1, 2, 3}));
    QVERIFY2(results[0].ok() && results[0].checked, qPrintable(describe(results[0])));
    QVERIFY2(!results[1].ok() && results[1].failure->kind == CandidateErrorKind::Parse, qPrintable(describe(results[1])));
    QVERIFY2(results[2].ok() && results[2].checked, qPrintable(describe(results[2])));
    QVERIFY2(!results[3].ok() && results[3].failure->kind == CandidateErrorKind::Lower, qPrintable(describe(results[3])));
    QCOMPARE(worker.statistics().starts, 1);
    QCOMPARE(worker.statistics().candidates, 4);
  }

  // Timed in turns (what tuning rounds ask for): the request says so, every candidate is
  // checked first, each sample count adds up over the turns, the replies come in order.
  void realWorkerTimesABatchInTurns() {
    MeasureWorker worker(matmulWorker());
    std::vector<MeasureRequest> batch = {quickRequest(kTask, defaultTraceText()), quickRequest(kTask, "split(C"),
                                         quickRequest(kTask, kVariant),
                                         quickRequest(kTask, "io, ii = split(C, nope, factor=4)\n"),
                                         quickRequest(kTask, kReorderedReduction)};
    for (MeasureRequest& request : batch) {
      request.turns = 3;
      request.minRepeats = 6;
    }
    MeasureRequest first = batch[0];
    first.batch = int(batch.size());
    ParsedRequest parsed = parseRequestLine(requestLine(1, first));
    QVERIFY(!parsed.failure);
    QCOMPARE(parsed.request.turns, 3);
    std::vector<size_t> order;
    std::vector<CandidateMeasurement> results(batch.size());
    worker.measureBatch(batch, [&](size_t i, const CandidateMeasurement& m) {
      order.push_back(i);
      results[i] = m;
    });
    QCOMPARE(order, (std::vector<size_t>{0, 1, 2, 3, 4}));
    for (size_t i : {0, 2, 4}) {
      QVERIFY2(results[i].ok() && results[i].checked, qPrintable(describe(results[i])));
      // Two samples a turn at least: a candidate is timed in every turn, not once.
      QVERIFY2(results[i].samples >= 6, qPrintable(QString::number(results[i].samples)));
      QVERIFY(results[i].minMilliseconds > 0 && results[i].minMilliseconds <= results[i].medianMilliseconds);
      QVERIFY(results[i].timingMilliseconds > 0);
    }
    QVERIFY2(!results[1].ok() && results[1].failure->kind == CandidateErrorKind::Parse, qPrintable(describe(results[1])));
    QVERIFY2(!results[3].ok() && results[3].failure->kind == CandidateErrorKind::Lower, qPrintable(describe(results[3])));
    QCOMPARE(worker.statistics().starts, 1);
    QCOMPARE(worker.statistics().candidates, 5);
  }

  // A batch timed in turns that hangs after it was built cannot be pinned on one candidate
  // either: each is measured again alone, and only the guilty one is a timeout.
  void aHangWhileABatchIsTimedInTurnsIsPinnedOnTheGuiltyCandidate() {
    QTemporaryDir dir;
    QString script = standInWorker(
        dir, "hang-turns.sh", "printf '%s' \"$line\" | grep -q -e '\"turns\"' -e guilty",
        "printf '%s' \"$line\" | grep -q '\"turns\"' && echo '{\"built\": 3, \"build_ms\": 1}'; sleep 30");
    MeasureWorker worker(standInOptions(script));
    std::vector<MeasureRequest> batch = {quickRequest("k", "a"), quickRequest("k", "guilty"), quickRequest("k", "c")};
    for (MeasureRequest& request : batch) {
      request.turns = 4;
      request.timeoutSeconds = 1;
    }
    QElapsedTimer clock;
    clock.start();
    std::vector<CandidateMeasurement> results(batch.size());
    worker.measureBatch(batch, [&](size_t i, const CandidateMeasurement& m) { results[i] = m; });
    QVERIFY2(results[0].ok(), qPrintable(describe(results[0])));
    QVERIFY2(!results[1].ok() && results[1].failure->kind == CandidateErrorKind::Timeout,
             qPrintable(describe(results[1])));
    QVERIFY2(results[2].ok(), qPrintable(describe(results[2])));
    QCOMPARE(worker.statistics().timeouts, 1);  // the batch's loss blames nobody
    QVERIFY2(clock.elapsed() < 20000, qPrintable(QString::number(clock.elapsed())));
  }

  // A worker that dies while building a batch cannot say which candidate did it: the batch is
  // measured again one by one, and only the guilty candidate is blamed.
  void aCrashWhileABatchIsBuiltIsPinnedOnTheGuiltyCandidate() {
    QTemporaryDir dir;
    QString script = standInWorker(dir, "crash-batch.sh", "printf '%s' \"$line\" | grep -q -e '\"batch\"' -e guilty",
                                   "kill -SEGV $$");
    MeasureWorker worker(standInOptions(script));
    std::vector<MeasureRequest> batch = {quickRequest("k", "a"), quickRequest("k", "guilty"), quickRequest("k", "c")};
    std::vector<CandidateMeasurement> results(batch.size());
    worker.measureBatch(batch, [&](size_t i, const CandidateMeasurement& m) { results[i] = m; });
    QVERIFY2(results[0].ok(), qPrintable(describe(results[0])));
    QVERIFY2(!results[1].ok() && results[1].failure->kind == CandidateErrorKind::Crash, qPrintable(describe(results[1])));
    QVERIFY2(results[2].ok(), qPrintable(describe(results[2])));
    QCOMPARE(worker.statistics().crashes, 1);  // the build-phase loss blames nobody
  }

  // Schedule errors are the candidate's, with their place in the text; the same worker
  // serves the next candidate.
  void scheduleErrorsKeepTheWorkerServing_data() {
    QTest::addColumn<QString>("trace");
    QTest::addColumn<QString>("kind");
    QTest::addColumn<int>("line");
    QTest::addColumn<int>("column");
    QTest::newRow("unknown axis") << "reorder(C, i, j, k)\nio, ii = split(C, q, factor=16)\n" << "lower" << 2 << 10;
    QTest::newRow("syntax") << "split((" << "parse" << 1 << 7;
    QTest::newRow("reduction vectorized") << "vectorize(C, k)\n" << "lower" << 1 << 1;
  }
  void scheduleErrorsKeepTheWorkerServing() {
    QFETCH(QString, trace);
    QFETCH(QString, kind);
    QFETCH(int, line);
    QFETCH(int, column);
    MeasureWorker worker(matmulWorker());
    CandidateMeasurement bad = worker.measure(quickRequest(kTask, trace.toStdString()));
    QVERIFY2(!bad.ok(), qPrintable(describe(bad)));
    QCOMPARE(QString::fromStdString(std::string(candidateErrorKindName(bad.failure->kind))), kind);
    QCOMPARE(bad.failure->diagnostic.line, line);
    QCOMPARE(bad.failure->diagnostic.column, column);
    int pid = worker.processId();
    CandidateMeasurement good = worker.measure(quickRequest(kTask, kVariant));
    QVERIFY2(good.ok(), qPrintable(describe(good)));
    QCOMPARE(worker.processId(), pid);
    QCOMPARE(worker.statistics().starts, 1);
  }

  // The protocol as the worker speaks it: a line that is not JSON gets an error reply with a
  // null id and the worker goes on; an unknown task lists the real one; end of input ends it
  // with exit code 0.
  void workerAnswersEveryLineAndEndsAtEndOfInput() {
    auto started = InteractiveChildProcess::start(
        kTessel, {"measure-worker", "--operator", "matmul", "--m", "8", "--n", "8", "--k", "8", "--threads", "1"});
    QVERIFY2(started.ok(), started.ok() ? "" : started.error().toString().c_str());
    InteractiveChildProcess& child = **started;
    ChildLine ready = child.readLine(120);
    QVERIFY2(ready.outcome == ChildLine::Outcome::Line, child.standardErrorTail().c_str());
    auto parsedReady = parseReadyLine(ready.text);
    QVERIFY(parsedReady.ok() && parsedReady->ready);
    QCOMPARE(parsedReady->tasks.at(0).name, std::string("matmul_8x8x8"));

    QVERIFY(child.writeLine("this is not json"));
    ChildLine reply = child.readLine(60);
    QCOMPARE(int(reply.outcome), int(ChildLine::Outcome::Line));
    QVERIFY2(reply.text.find("\"id\":null") != std::string::npos, reply.text.c_str());
    CandidateMeasurement notJson = parseReplyLine(reply.text);
    QVERIFY(!notJson.ok() && notJson.failure->kind == CandidateErrorKind::Request);

    QVERIFY(child.writeLine(requestLine(5, quickRequest("nope", kVariant))));
    reply = child.readLine(60);
    QCOMPARE(replyId(reply.text), std::optional<int64_t>(5));
    CandidateMeasurement unknown = parseReplyLine(reply.text);
    QVERIFY(!unknown.ok() && unknown.failure->kind == CandidateErrorKind::Request);
    QVERIFY2(unknown.failure->diagnostic.hint.find("matmul_8x8x8") != std::string::npos,
             unknown.failure->diagnostic.hint.c_str());

    QVERIFY(child.writeLine(requestLine(6, quickRequest("matmul_8x8x8", "vectorize(C, j)\n"))));
    reply = child.readLine(60);
    QCOMPARE(replyId(reply.text), std::optional<int64_t>(6));
    QVERIFY2(parseReplyLine(reply.text).ok(), reply.text.c_str());

    child.finish(30);
    QVERIFY(child.end().exited);
    QCOMPARE(child.end().exitCode, 0);
  }

  // The comparison behind the check: float rounding passes, a real difference is reported
  // at its element with both values, NaN only matches NaN.
  void outputComparisonAllowsRoundingOnly_data() {
    QTest::addColumn<std::vector<float>>("actual");
    QTest::addColumn<std::vector<float>>("expected");
    QTest::addColumn<bool>("matches");
    QTest::addColumn<int>("worstIndex");
    float nan = std::numeric_limits<float>::quiet_NaN();
    QTest::newRow("identical") << std::vector<float>{1, 2, 3} << std::vector<float>{1, 2, 3} << true << -1;
    QTest::newRow("rounding") << std::vector<float>{1.0f, 1000.0005f, 0.00005f} << std::vector<float>{1, 1000, 0}
                              << true << -1;
    QTest::newRow("one element off") << std::vector<float>{1, 2.5f, 3} << std::vector<float>{1, 2, 3} << false << 1;
    QTest::newRow("worst of two") << std::vector<float>{1.01f, 2, 30} << std::vector<float>{1, 2, 3} << false << 2;
    QTest::newRow("both NaN") << std::vector<float>{nan, 1} << std::vector<float>{nan, 1} << true << -1;
    QTest::newRow("NaN against a number") << std::vector<float>{1, nan} << std::vector<float>{1, 0} << false << 1;
  }
  void outputComparisonAllowsRoundingOnly() {
    QFETCH(std::vector<float>, actual);
    QFETCH(std::vector<float>, expected);
    QFETCH(bool, matches);
    QFETCH(int, worstIndex);
    OutputComparison comparison = compareOutputs(oneArray(actual), oneArray(expected));
    QCOMPARE(!comparison.mismatch.has_value(), matches);
    if (matches) return;
    QCOMPARE(comparison.mismatch->index, int64_t(worstIndex));
    QCOMPARE(comparison.mismatch->actual, double(actual[size_t(worstIndex)]));
    QCOMPARE(comparison.mismatch->expected, double(expected[size_t(worstIndex)]));
    QVERIFY2(comparison.mismatch->describe().find("element [" + std::to_string(worstIndex) + "]") != std::string::npos,
             comparison.mismatch->describe().c_str());
  }

  // The check end to end in the worker's code: with no tolerance at all, summing a reduction
  // in another order already counts as wrong (rounding), so the reordered candidate is
  // reported as a wrong result at an element, with nothing timed; the default tolerance
  // accepts the same candidate.
  void serverReportsAWrongResultWithoutTimingIt() {
    Workload workload = matmulWorkload();
    workload.flops = 2.0 * kSize * kSize * kSize;
    auto schedule = defaultMatmulSchedule(workload, hostTarget());
    QVERIFY(schedule.ok());
    ServedTask task{kTask, workload, schedule->trace()};

    MeasureServer exact({task}, OutputTolerance{0, 0});
    CandidateMeasurement wrong = exact.measure(quickRequest(kTask, kReorderedReduction));
    QVERIFY2(!wrong.ok() && wrong.failure->kind == CandidateErrorKind::WrongResult, qPrintable(describe(wrong)));
    QVERIFY2(wrong.failure->diagnostic.message.find("element [") != std::string::npos,
             wrong.failure->diagnostic.message.c_str());
    QCOMPARE(wrong.timingMilliseconds, 0.0);
    QVERIFY(wrong.checkMilliseconds > 0);

    MeasureServer usual({task});
    CandidateMeasurement right = usual.measure(quickRequest(kTask, kReorderedReduction));
    QVERIFY2(right.ok() && right.checked, qPrintable(describe(right)));
    QVERIFY(right.maxAbsError > 0 && right.maxAbsError < 1e-4);
  }

  // A wrong_result reply reaches the tuner as such, and the worker is kept.
  void wrongResultReplyIsTheCandidatesFailure() {
    QTemporaryDir dir;
    QString script = standInWorker(
        dir, "wrong.sh", "[ $n -eq 1 ]",
        "echo \"{\\\"id\\\": $id, \\\"ok\\\": false, \\\"error\\\": {\\\"kind\\\": \\\"wrong_result\\\", "
        "\\\"message\\\": \\\"k computes a wrong result: output 0 element [3] is 2 where the default gives 1\\\"}, "
        "\\\"build_ms\\\": 4, \\\"check_ms\\\": 2}\"");
    MeasureWorker worker(standInOptions(script));
    CandidateMeasurement wrong = worker.measure(quickRequest("k", "any"));
    QVERIFY2(!wrong.ok() && wrong.failure->kind == CandidateErrorKind::WrongResult, qPrintable(describe(wrong)));
    QVERIFY(wrong.failure->diagnostic.message.find("element [3]") != std::string::npos);
    QCOMPARE(wrong.buildMilliseconds, 4.0);
    CandidateMeasurement next = worker.measure(quickRequest("k", "any"));
    QVERIFY2(next.ok(), qPrintable(describe(next)));
    QCOMPARE(next.medianMilliseconds, 1.5);
    QCOMPARE(worker.statistics().starts, 1);
  }

  // A worker killed by a signal on the second candidate: that candidate is a crash naming
  // the signal and the worker's last words; the next starts a new worker and succeeds.
  void crashIsReportedAndTheWorkerRestarted() {
    QTemporaryDir dir;
    QString script = standInWorker(dir, "crash.sh", "[ $n -eq 2 ]", "echo 'about to fault' >&2; kill -SEGV $$");
    MeasureWorker worker(standInOptions(script));
    QVERIFY2(worker.measure(quickRequest("k", "first")).ok(), "the first candidate should pass");
    int crashedPid = worker.processId();
    CandidateMeasurement crashed = worker.measure(quickRequest("k", "second"));
    QVERIFY2(!crashed.ok() && crashed.failure->kind == CandidateErrorKind::Crash, qPrintable(describe(crashed)));
    QVERIFY2(crashed.failure->diagnostic.message.find("SIGSEGV") != std::string::npos,
             crashed.failure->diagnostic.message.c_str());
    QVERIFY2(crashed.failure->diagnostic.hint.find("about to fault") != std::string::npos,
             crashed.failure->diagnostic.hint.c_str());
    QVERIFY(processIsGone(crashedPid));

    CandidateMeasurement next = worker.measure(quickRequest("k", "third"));
    QVERIFY2(next.ok(), qPrintable(describe(next)));
    QVERIFY(worker.processId() != crashedPid);
    QCOMPARE(worker.statistics().starts, 2);
    QCOMPARE(worker.statistics().restarts, 1);
    QCOMPARE(worker.statistics().crashes, 1);
  }

  // A worker that never answers is killed at the limit (with what it started: the group),
  // the candidate is a timeout naming the limit, and the next candidate gets a new worker.
  void hangIsKilledAtTheLimit() {
    QTemporaryDir dir;
    QString sleepPidFile = dir.filePath("sleep.pid");
    QString script = standInWorker(dir, "hang.sh", "printf '%s' \"$line\" | grep -q hangs",
                                   "sleep 600 & echo $! > " + sleepPidFile + "; wait");
    MeasureWorker worker(standInOptions(script));
    MeasureRequest request = quickRequest("k", "hangs");
    request.timeoutSeconds = 0.5;
    CandidateMeasurement hung = worker.measure(request);
    QVERIFY2(!hung.ok() && hung.failure->kind == CandidateErrorKind::Timeout, qPrintable(describe(hung)));
    QVERIFY2(hung.failure->diagnostic.message.find("0.5 s") != std::string::npos,
             hung.failure->diagnostic.message.c_str());
    QCOMPARE(worker.processId(), -1);
    // What the worker started died with it (its process group was killed).
    QFile pidFile(sleepPidFile);
    QVERIFY(pidFile.open(QIODevice::ReadOnly));
    int sleepPid = pidFile.readAll().trimmed().toInt();
    QTRY_VERIFY_WITH_TIMEOUT(processIsDead(sleepPid), 10000);
    CandidateMeasurement next = worker.measure(quickRequest("k", "next"));
    QVERIFY2(next.ok(), qPrintable(describe(next)));
    QCOMPARE(worker.statistics().timeouts, 1);
    QCOMPARE(worker.statistics().restarts, 1);
  }

  // Cancelling kills the busy worker at once; the session can still measure afterwards.
  void cancelKillsTheWorker() {
    QTemporaryDir dir;
    QString script = standInWorker(dir, "slow.sh", "printf '%s' \"$line\" | grep -q slow", "sleep 600");
    MeasureWorkerOptions options = standInOptions(script);
    QElapsedTimer sinceSent;  // the user presses Cancel a moment after the candidate went out
    options.cancelled = [&] { return sinceSent.isValid() && sinceSent.elapsed() > 200; };
    MeasureWorker worker(options);
    QVERIFY(worker.start().ok());
    int pid = worker.processId();
    sinceSent.start();
    CandidateMeasurement cancelled = worker.measure(quickRequest("k", "slow"));
    QVERIFY2(!cancelled.ok() && cancelled.failure->kind == CandidateErrorKind::Cancelled,
             qPrintable(describe(cancelled)));
    QVERIFY(processIsGone(pid));
    sinceSent.invalidate();
    CandidateMeasurement next = worker.measure(quickRequest("k", "next"));
    QVERIFY2(next.ok(), qPrintable(describe(next)));
  }

  // A worker that cannot load its model: a clear Diagnostic naming the model, given again
  // for every candidate without starting another worker each time.
  void badModelIsAClearStartFailure() {
    MeasureWorkerOptions options;
    WorkerModelSource model;
    model.modelPath = "/nonexistent/model.onnx";
    options.source = model;
    options.tesselPath = kTessel;
    MeasureWorker worker(options);
    Status started = worker.start();
    QVERIFY(!started.ok());
    QVERIFY2(started.error().toString().find("/nonexistent/model.onnx") != std::string::npos,
             started.error().toString().c_str());
    CandidateMeasurement m = worker.measure(quickRequest("any", "any"));
    QVERIFY(!m.ok() && m.failure->kind == CandidateErrorKind::Start);
    QCOMPARE(m.failure->diagnostic.message, started.error().message);
    QCOMPARE(worker.statistics().starts, 1);
  }

  // A worker that dies while compiling: a start failure with its last words, tried once more
  // on the next candidate, then given up.
  void workerDyingBeforeReadyIsAStartFailure() {
    QTemporaryDir dir;
    QString script = testing::writeShellScript(dir.path(), "dies.sh", "echo 'cannot compile layer 3' >&2; exit 70");
    MeasureWorker worker(standInOptions(script));
    for (int attempt = 0; attempt < 3; ++attempt) {
      CandidateMeasurement m = worker.measure(quickRequest("k", "any"));
      QVERIFY2(!m.ok() && m.failure->kind == CandidateErrorKind::Start, qPrintable(describe(m)));
      QVERIFY2(m.failure->diagnostic.message.find("exited with code 70") != std::string::npos,
               m.failure->diagnostic.message.c_str());
      QVERIFY(m.failure->diagnostic.hint.find("cannot compile layer 3") != std::string::npos);
    }
    QCOMPARE(worker.statistics().starts, 2);
  }

  // Every worker above was reaped: no child of this process is left, zombie or running.
  void noChildProcessIsLeft() {
    errno = 0;
    QCOMPARE(::waitpid(-1, nullptr, WNOHANG), -1);
    QCOMPARE(errno, ECHILD);
  }
};

QTEST_GUILESS_MAIN(TestMeasure)
#include "test_measure.moc"
