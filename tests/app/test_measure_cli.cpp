// `tessel measure`, the command the Studio runs in a child process to time one kernel: its
// task names are the compiler's, --json gives numbers a tool can read, a bad schedule names
// its line, an unknown task lists the real ones.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "CliTestSupport.h"

#include "compiler/driver/Driver.h"
#include "compiler/driver/ScheduleTask.h"
#include "compiler/frontend/onnx/OnnxImporter.h"
#include "tests/GpuTestSupport.h"

namespace {

using testing::describe;
using testing::keyValues;
using testing::Run;
using testing::kTessel;
using testing::runTessel;

const QString kTinyResNet = QStringLiteral(TESSEL_SOURCE_DIR "/resources/examples/tiny_resnet.onnx");
// Short timing: these tests check what is reported, not how fast.
const QStringList kQuick = {"--min-seconds", "0.02", "--min-repeats", "3"};

// The tasks of the example model compiled in this process with `passes`.
std::vector<tessel::driver::ScheduleTask> tasksCompiledHere(const tessel::graph::PassOptions& passes = {}) {
  auto graph = tessel::driver::loadModel(kTinyResNet.toStdString());
  if (!graph) qFatal("%s", graph.error().toString().c_str());
  tessel::driver::CompileOptions options;
  options.passes = passes;
  auto model = tessel::driver::compileGraph(*graph, options);
  if (!model) qFatal("%s", model.error().toString().c_str());
  auto tasks = tessel::driver::extractTasks(*model);
  if (!tasks) qFatal("%s", tasks.error().toString().c_str());
  return *tasks;
}

QStringList namesOf(const std::vector<tessel::driver::ScheduleTask>& tasks) {
  QStringList names;
  for (auto& task : tasks) names << QString::fromStdString(task.name);
  return names;
}

// The one JSON object --json prints on stdout.
QJsonObject jsonOf(const Run& run) {
  QJsonParseError error;
  QJsonDocument document = QJsonDocument::fromJson(run.out.toUtf8(), &error);
  if (error.error != QJsonParseError::NoError || !document.isObject()) return {};
  return document.object();
}

}  // namespace

class TestMeasureCli : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() { QVERIFY2(QFileInfo(kTessel).isExecutable(), qPrintable(kTessel + " is not built")); }

  void helpNamesTheCommandAndItsFlags() {
    Run overview = runTessel({"--help"});
    QVERIFY2(overview.out.contains("measure MODEL --task KERNEL"), qPrintable(overview.out));
    Run run = runTessel({"measure", "--help"});
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe({"measure", "--help"}, run)));
    for (const char* flag : {"--task", "--list-tasks", "--operator", "--schedule", "--json", "--min-seconds",
                                "--min-repeats", "--seed", "--threads", "--input-shape", "--opt-level",
                                "--disable-pass", "--pass-config", "--input", "--inputs-dir"})
      QVERIFY2(run.out.contains(flag), qPrintable(QString(flag) + " missing from\n" + run.out));
  }

  // The same flags give the same kernel names as compiling in process (what the Studio shows).
  void listTasksPrintsTheCompilersKernelNames_data() {
    QTest::addColumn<QStringList>("flags");
    QTest::addColumn<int>("optLevel");
    QTest::newRow("default") << QStringList{} << 3;
    QTest::newRow("opt level 1") << QStringList{"--opt-level", "1"} << 1;
  }
  void listTasksPrintsTheCompilersKernelNames() {
    QFETCH(QStringList, flags);
    QFETCH(int, optLevel);
    QStringList arguments = QStringList{"measure", "--list-tasks", kTinyResNet} + flags;
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(arguments, run)));
    tessel::graph::PassOptions passes;
    passes.optLevel = optLevel;
    QCOMPARE(run.out.split('\n', Qt::SkipEmptyParts), namesOf(tasksCompiledHere(passes)));
  }

  void jsonReportsAModelTasksSpeed() {
    auto tasks = tasksCompiledHere();
    QVERIFY(!tasks.empty());
    const auto& task = tasks.front();
    QStringList arguments =
        QStringList{"measure", kTinyResNet, "--task", QString::fromStdString(task.name), "--json"} + kQuick;
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(arguments, run)));
    QJsonObject json = jsonOf(run);
    QVERIFY2(!json.isEmpty(), qPrintable(describe(arguments, run)));
    QCOMPARE(json["kernel"].toString(), QString::fromStdString(task.name));
    QCOMPARE(json["flops"].toDouble(), task.flops);
    QVERIFY(json["samples"].toInt() >= 3);
    QVERIFY(json["median_ms"].toDouble() > 0);
    QVERIFY(json["min_ms"].toDouble() > 0 && json["min_ms"].toDouble() <= json["median_ms"].toDouble());
    QVERIFY(json["gflops"].toDouble() > 0);
    QVERIFY(json["peak_gflops"].toDouble() > 0);
    QVERIFY(json["threads"].toInt() >= 1);
    QVERIFY(qAbs(json["fraction_of_peak"].toDouble() - json["gflops"].toDouble() / json["peak_gflops"].toDouble()) <
            1e-9);
    // Progress while sampling, for the Studio's progress bar: it ends at 100 %.
    QStringList progress = run.err.split('\n', Qt::SkipEmptyParts).filter(QRegularExpression("^progress \\d+$"));
    QVERIFY2(!progress.isEmpty(), qPrintable(run.err));
    QCOMPARE(progress.last(), QString("progress 100"));

    // A peak given by the caller (the Studio's, shared by all its variants) is used as it is.
    arguments << "--peak-gflops" << "1000000";
    run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(arguments, run)));
    json = jsonOf(run);
    QCOMPARE(json["peak_gflops"].toDouble(), 1e6);
    QCOMPARE(json["fraction_of_peak"].toDouble(), json["gflops"].toDouble() / 1e6);
  }

  // Input values known before compiling (the Studio hands them over as files) are accepted
  // by position and by name.
  void inputValuesAreAccepted_data() {
    QTest::addColumn<QStringList>("flags");
    QString dataSet = QStringLiteral(TESSEL_SOURCE_DIR "/resources/examples/tiny_resnet/test_data_set_0");
    QTest::newRow("--inputs-dir") << QStringList{"--inputs-dir", dataSet};
    auto inputs = tessel::frontend::readOnnxInputs(kTinyResNet.toStdString());
    QVERIFY(inputs && !inputs->empty());
    QString input = QString::fromStdString(inputs->front().name);
    QTest::newRow("--input") << QStringList{"--input", input + "=" + dataSet + "/input_0.pb"};
  }
  void inputValuesAreAccepted() {
    QFETCH(QStringList, flags);
    QString task = namesOf(tasksCompiledHere()).first();
    QStringList arguments = QStringList{"measure", kTinyResNet, "--task", task} + flags + kQuick;
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(arguments, run)));
    QCOMPARE(keyValues(run.out).value("kernel"), task);
  }

  void measuresABareOperator() {
    QStringList arguments = QStringList{"measure", "--operator", "matmul", "--m", "32", "--n", "48", "--k", "16"} + kQuick;
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(arguments, run)));
    auto values = keyValues(run.out);
    QCOMPARE(values.value("flops").toDouble(), 2.0 * 32 * 48 * 16);
    QVERIFY2(values.value("gflops").toDouble() > 0, qPrintable(run.out));
    QVERIFY2(values.value("kernel").contains("matmul"), qPrintable(run.out));
    // Without --json nothing but the summary: no progress lines.
    QVERIFY2(!run.err.contains("progress"), qPrintable(run.err));
  }

  // --target opencl: the operator's GPU schedule, timed on the OpenCL device (PoCL here).
  void measuresAnOperatorOnAnOpenCLDevice() {
    SKIP_WITHOUT_OPENCL();
    QStringList arguments =
        QStringList{"measure", "--operator", "matmul", "--m", "64", "--n", "64", "--k", "32", "--target", "opencl", "--json"} +
        kQuick;
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(arguments, run)));
    QJsonObject json = jsonOf(run);
    QVERIFY2(!json["device"].toString().isEmpty(), qPrintable(run.out));
    QCOMPARE(json["flops"].toDouble(), 2.0 * 64 * 64 * 32);
    QVERIFY(json["samples"].toInt() >= 3);
    QVERIFY(json["min_ms"].toDouble() > 0 && json["min_ms"].toDouble() <= json["median_ms"].toDouble());
    QVERIFY(qAbs(json["gflops"].toDouble() - json["flops"].toDouble() / json["median_ms"].toDouble() * 1e-6) <
            1e-6 * json["gflops"].toDouble());
    // No measured peak for a device: said as 0, not made up.
    QCOMPARE(json["peak_gflops"].toDouble(), 0.0);

    // A schedule error on a GPU target names its file and line, as on the CPU.
    QTemporaryDir directory;
    QString schedule = directory.filePath("gpu.txt");
    QVERIFY(testing::writeTextFile(schedule, "reorder(C, i, k, j)\nunroll(C, nosuchaxis)\n"));
    arguments = QStringList{"measure", "--operator", "matmul", "--target", "opencl", "--schedule", schedule} + kQuick;
    run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 2, qPrintable(describe(arguments, run)));
    QVERIFY2(run.err.contains(schedule + ":2:") && run.err.contains("nosuchaxis"), qPrintable(describe(arguments, run)));
  }

  void aBadScheduleExitsNonZeroNamingItsLine() {
    auto tasks = tasksCompiledHere();
    const auto& task = tasks.front();
    // The task's own default schedule, then one line that names no axis.
    std::string text = task.defaultTraceText();
    if (!text.empty() && text.back() != '\n') text += '\n';
    int badLine = int(std::count(text.begin(), text.end(), '\n')) + 1;
    text += "unroll(" + task.workload.outputs[0].name() + ", nosuchaxis)\n";
    QTemporaryDir directory;
    QString schedule = directory.filePath("edited.txt");
    QVERIFY(testing::writeTextFile(schedule, QByteArray::fromStdString(text)));

    QStringList arguments = QStringList{"measure", kTinyResNet, "--task", QString::fromStdString(task.name),
                                        "--schedule", schedule} + kQuick;
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode != 0, qPrintable(describe(arguments, run)));
    QString where = QString("%1:%2:").arg(schedule).arg(badLine);
    QVERIFY2(run.err.contains(where) && run.err.contains("nosuchaxis"), qPrintable(describe(arguments, run)));
    QVERIFY(run.out.isEmpty());

    // With --json the same diagnostic, structured, for the Studio to show.
    Run json = runTessel(arguments + QStringList{"--json"});
    QVERIFY(json.finished && json.exitCode != 0);
    QJsonObject error = jsonOf(json)["error"].toObject();
    QVERIFY2(!error.isEmpty(), qPrintable(describe(arguments, json)));
    QCOMPARE(error["line"].toInt(), badLine);
    QVERIFY(error["column"].toInt() > 0);
    QCOMPARE(error["location"].toString(), schedule);
    QVERIFY(error["message"].toString().contains("nosuchaxis"));
  }

  void anUnknownTaskListsTheRealOnes() {
    QStringList arguments = QStringList{"measure", kTinyResNet, "--task", "no_such_kernel"} + kQuick;
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode != 0, qPrintable(describe(arguments, run)));
    QVERIFY2(run.err.contains("no_such_kernel"), qPrintable(run.err));
    for (const QString& name : namesOf(tasksCompiledHere()))
      QVERIFY2(run.err.contains(name), qPrintable(name + " not listed in\n" + run.err));
  }

  void usageMistakesSayWhatIsMissing_data() {
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("mention");
    QTest::newRow("no task") << QStringList{"measure", kTinyResNet} << "--task";
    QTest::newRow("model and operator") << QStringList{"measure", kTinyResNet, "--operator", "matmul"} << "not both";
    QTest::newRow("unknown operator") << QStringList{"measure", "--operator", "softmax"} << "unknown operator";
    QTest::newRow("bad number") << QStringList{"measure", "--operator", "matmul", "--min-seconds", "soon"}
                                << "--min-seconds";
    QTest::newRow("a model's task on a GPU") << QStringList{"measure", kTinyResNet, "--task", "k", "--target", "opencl"}
                                             << "--target measures an --operator";
    QTest::newRow("missing model") << QStringList{"measure", "no-such-model.onnx", "--task", "k"}
                                   << "no-such-model.onnx";
    QTest::newRow("unknown input") << QStringList{"measure", kTinyResNet, "--task", "k", "--input",
                                                  "no_such_input=" TESSEL_SOURCE_DIR
                                                  "/resources/examples/tiny_resnet/test_data_set_0/input_0.pb"}
                                   << "no input named 'no_such_input'";
  }
  void usageMistakesSayWhatIsMissing() {
    QFETCH(QStringList, arguments);
    QFETCH(QString, mention);
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 2, qPrintable(describe(arguments, run)));
    QVERIFY2(run.err.contains(mention), qPrintable(describe(arguments, run)));
  }
};

QTEST_GUILESS_MAIN(TestMeasureCli)
#include "test_measure_cli.moc"
