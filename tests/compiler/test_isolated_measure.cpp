// Measuring in a child process: what the parent makes of the child's result, crash, hang,
// failure and progress (against stand-in `tessel` scripts), that cancel kills it at once,
// where the tool is looked for, and (with the real tool built) that the options travel.
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QtTest>

#include <cstdlib>
#include <fstream>

#include "compiler/driver/IsolatedMeasure.h"
#include "compiler/driver/RunModel.h"
#include "compiler/frontend/onnx/OnnxImporter.h"
#include "tests/ShellScripts.h"

using namespace tessel;
using namespace tessel::driver;

namespace {

const QString kTessel = QStringLiteral(TESSEL_BINARY_DIR "/bin/tessel");
const std::string kTinyResNet = TESSEL_SOURCE_DIR "/resources/examples/tiny_resnet.onnx";

// A stand-in for `tessel` that runs `body` (a /bin/sh script) with the measure arguments.
QString writeScript(const QTemporaryDir& directory, const QString& name, const QString& body) {
  return tessel::testing::writeShellScript(directory.path(), name, body);
}

IsolatedMeasureRequest operatorRequest(const QString& tessel) {
  IsolatedMeasureRequest request;
  request.source = OperatorSource{"matmul", {{"m", "32"}, {"n", "32"}, {"k", "32"}}};
  request.tesselPath = tessel.toStdString();
  request.options.minSeconds = 0.02;
  request.options.minRepeats = 3;
  return request;
}

// An environment variable set for one test and put back afterwards.
class ScopedEnvironment {
public:
  ScopedEnvironment(const char* name, const QString& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value.isNull())
      ::unsetenv(name);
    else
      ::setenv(name, value.toUtf8().constData(), 1);
  }
  ~ScopedEnvironment() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace

class TestIsolatedMeasure : public QObject {
  Q_OBJECT
private slots:
  void aCrashingKernelIsADiagnosticNamingTheSignal() {
    QTemporaryDir directory;
    QString crashing = writeScript(directory, "tessel", "echo 'building the kernel' >&2\nkill -SEGV $$");
    IsolatedMeasureRequest request = operatorRequest(crashing);
    request.kernelName = "fused_conv_relu_3";
    auto measured = measureIsolated(request);
    QVERIFY(!measured);
    QString text = QString::fromStdString(measured.error().toString());
    QVERIFY2(text.contains("the kernel 'fused_conv_relu_3' crashed while being measured (SIGSEGV)"), qPrintable(text));
    QVERIFY2(text.contains("building the kernel"), qPrintable(text));  // the child's last words
  }

  void theChildsOwnDiagnosticComesBack() {
    // A schedule error as `tessel measure --json` reports it: located in the file it was given.
    QTemporaryDir directory;
    QString failing = writeScript(directory, "tessel",
                                  "while [ \"$1\" != --schedule ]; do shift; done\n"
                                  "printf '{\"error\":{\"message\":\"unroll: no axis nosuchaxis\",\"location\":\"%s\","
                                  "\"line\":2,\"column\":8,\"hint\":\"axes: i, j\"}}\\n' \"$2\"\n"
                                  "echo \"$2:2:8: error: unroll: no axis nosuchaxis\" >&2\nexit 2");
    IsolatedMeasureRequest request = operatorRequest(failing);
    request.scheduleText = "vectorize(C, j)\nunroll(C, nosuchaxis)\n";
    request.scheduleName = "matmul_32 schedule";
    auto measured = measureIsolated(request);
    QVERIFY(!measured);
    QCOMPARE(measured.error().line, 2);
    QCOMPARE(measured.error().column, 8);
    QCOMPARE(measured.error().location, std::string("matmul_32 schedule"));
    QCOMPARE(measured.error().hint, std::string("axes: i, j"));
  }

  void aFailureWithoutJsonCarriesTheChildsStderr() {
    QTemporaryDir directory;
    QString failing =
        writeScript(directory, "tessel", "echo progress 10 >&2\necho 'internal compiler error: boom' >&2\nexit 70");
    auto measured = measureIsolated(operatorRequest(failing));
    QVERIFY(!measured);
    QString text = QString::fromStdString(measured.error().toString());
    QVERIFY2(text.contains("exited with code 70") && text.contains("internal compiler error: boom"), qPrintable(text));
    QVERIFY2(!text.contains("progress"), qPrintable(text));
  }

  void progressAndResultAreRead() {
    // What the child printed is what the parent reports, scheduled text and flags included.
    QTemporaryDir directory;
    QString arguments = directory.filePath("arguments.txt");
    QString schedule = directory.filePath("schedule-seen.txt");
    QString fake = writeScript(directory, "tessel",
                               QString("echo \"$@\" > %1\n"
                                       "while [ \"$1\" != --schedule ]; do shift; done\ncat \"$2\" > %2\n"
                                       "echo progress 0 >&2; echo progress 50 >&2; echo progress 100 >&2\n"
                                       "echo '{\"kernel\":\"matmul_32x32x32\",\"median_ms\":0.5,\"min_ms\":0.25,"
                                       "\"samples\":7,\"flops\":65536,\"gflops\":0.131072,\"peak_gflops\":100,"
                                       "\"fraction_of_peak\":0.00131072,\"threads\":3}'")
                                   .arg(arguments, schedule));
    IsolatedMeasureRequest request = operatorRequest(fake);
    request.scheduleText = "parallel(C, i)\n";
    request.threads = 3;
    std::vector<int> progress;
    request.options.progress = [&](int percent) { progress.push_back(percent); };
    auto measured = measureIsolated(request);
    QVERIFY2(measured, measured ? "" : measured.error().toString().c_str());
    QCOMPARE(measured->kernelName, std::string("matmul_32x32x32"));
    QCOMPARE(measured->medianMilliseconds, 0.5);
    QCOMPARE(measured->minMilliseconds, 0.25);
    QCOMPARE(measured->samples, 7);
    QCOMPARE(measured->threads, 3);
    QCOMPARE(measured->peakGflops, 100.0);
    QCOMPARE(progress, (std::vector<int>{0, 50, 100}));
    QFile seen(schedule);
    QVERIFY(seen.open(QIODevice::ReadOnly));
    QCOMPARE(seen.readAll(), QByteArray("parallel(C, i)\n"));
    QFile args(arguments);
    QVERIFY(args.open(QIODevice::ReadOnly));
    QString line = QString::fromUtf8(args.readAll());
    for (const char* expected : {"measure --operator matmul --k 32 --m 32 --n 32 ", "--threads 3", "--min-seconds 0.02",
                                 "--min-repeats 3", "--json"})
      QVERIFY2(line.contains(expected), qPrintable(line));
    // The temporary files are gone once the measurement is.
    QVERIFY(!QFileInfo::exists(line.section("--schedule ", 1).section(' ', 0, 0)));
  }

  void cancelKillsTheChildAtOnce() {
    QTemporaryDir directory;
    QString hanging = writeScript(directory, "tessel", "echo progress 1 >&2\nsleep 60\necho '{}'");
    IsolatedMeasureRequest request = operatorRequest(hanging);
    QElapsedTimer clock;
    clock.start();
    bool started = false;
    request.options.progress = [&](int) { started = true; };
    request.options.cancelled = [&] { return started && clock.elapsed() > 100; };
    auto measured = measureIsolated(request);
    QVERIFY(!measured);
    QVERIFY2(measured.error().message.find("cancelled") != std::string::npos, measured.error().message.c_str());
    // Far below the minute the child would sleep: it was killed, not waited for.
    QVERIFY2(clock.elapsed() < 10000, qPrintable(QString::number(clock.elapsed())));
  }

  void aHangingChildTimesOut() {
    QTemporaryDir directory;
    IsolatedMeasureRequest request = operatorRequest(writeScript(directory, "tessel", "sleep 60"));
    request.timeoutSeconds = 0.3;
    auto measured = measureIsolated(request);
    QVERIFY(!measured);
    QVERIFY2(measured.error().message.find("timed out") != std::string::npos, measured.error().message.c_str());
  }

  void findsTheToolWhereItIsPointedTo() {
    QTemporaryDir directory;
    QString tool = writeScript(directory, "tessel", "exit 0");
    QCOMPARE(QString::fromStdString(*findTesselExecutable(tool.toStdString())), tool);
    auto missing = findTesselExecutable(directory.filePath("nothing-here").toStdString());
    QVERIFY(!missing);
    {
      ScopedEnvironment variable("TESSEL_CLI", tool);
      QCOMPARE(QString::fromStdString(*findTesselExecutable()), tool);
    }
    {
      ScopedEnvironment variable("TESSEL_CLI", directory.filePath("nothing-here"));
      auto wrong = findTesselExecutable();
      QVERIFY(!wrong);
      QVERIFY2(wrong.error().message.find("TESSEL_CLI") != std::string::npos, wrong.error().message.c_str());
    }
    {
      // Not beside this test, so PATH decides.
      ScopedEnvironment variable("TESSEL_CLI", QString());
      ScopedEnvironment path("PATH", directory.path());
      QCOMPARE(QString::fromStdString(*findTesselExecutable()), directory.filePath("tessel"));
      ScopedEnvironment empty("PATH", "/nonexistent");
      auto none = findTesselExecutable();
      QVERIFY(!none);
      QVERIFY2(none.error().hint.find("TESSEL_CLI") != std::string::npos, none.error().hint.c_str());
    }
  }

  // With the real tool: the model's pass options and input values reach the child, so a task
  // that exists only at opt level 1 is found and measured.
  void theModelsOptionsTravelToTheRealTool() {
    if (!QFileInfo(kTessel).isExecutable()) QSKIP("bin/tessel is not built (build the target tessel)");
    auto graph = loadModel(kTinyResNet);
    QVERIFY(graph);
    CompileOptions compile;
    compile.passes.optLevel = 1;
    compile.passes.disabledPasses = {"EliminateCommonSubexpr"};
    auto model = compileGraph(*graph, compile);
    QVERIFY(model);
    CompileOptions defaults;
    auto defaultModel = compileGraph(*graph, defaults);
    QVERIFY(defaultModel);
    // A kernel of the opt level 1 compile that the default compile does not have.
    std::string onlyHere;
    for (auto& kernel : model->kernels) {
      bool inDefault = false;
      for (auto& other : defaultModel->kernels) inDefault = inDefault || other.name == kernel.name;
      if (!inDefault && kernel.node) onlyHere = kernel.name;
    }
    QVERIFY(!onlyHere.empty());

    ModelTaskSource source;
    source.modelPath = kTinyResNet;
    source.compile = compile;
    source.taskName = onlyHere;
    auto inputs = frontend::readOnnxInputs(kTinyResNet);
    QVERIFY(inputs && !inputs->empty());
    auto value = readTensorFile(TESSEL_SOURCE_DIR "/resources/examples/tiny_resnet/test_data_set_0/input_0.pb");
    QVERIFY(value);
    source.load.inputValues[inputs->front().name] = *value;
    IsolatedMeasureRequest request = operatorRequest(kTessel);
    request.source = source;
    int lastProgress = -1;
    request.options.progress = [&](int percent) { lastProgress = percent; };
    auto measured = measureIsolated(request);
    QVERIFY2(measured, measured ? "" : measured.error().toString().c_str());
    QCOMPARE(measured->kernelName, onlyHere);
    QVERIFY(measured->gflops > 0);
    QCOMPARE(lastProgress, 100);

    // The same task under the default options does not exist: the child says which do.
    source.compile = CompileOptions();
    source.load = LoadOptions();
    request.source = source;
    auto unknown = measureIsolated(request);
    QVERIFY(!unknown);
    std::string aDefaultTask;
    for (auto& kernel : defaultModel->kernels)
      if (kernel.node && aDefaultTask.empty()) aDefaultTask = kernel.name;
    QVERIFY2(unknown.error().hint.find(aDefaultTask) != std::string::npos,
             unknown.error().toString().c_str());
  }
};

QTEST_GUILESS_MAIN(TestIsolatedMeasure)
#include "test_isolated_measure.moc"
