// --tuning-records as a user meets it: `tessel compile/run/bench/inspect` on a small model say
// how many kernels the records tuned (on stderr, with the lines skipped and the records of other
// targets), bench OP and lower OP replay the operator's record, a project's tuning_records apply
// in `project run` (a flag overrides them), and a records file that cannot be read stops the
// command with its name.
#include <QTemporaryDir>
#include <fstream>
#include <sstream>
#include <QtTest>

#include "CliTestSupport.h"
#include "tests/GpuTestSupport.h"
#include "tests/tuner/RecordsTestSupport.h"
#include "compiler/driver/Driver.h"
#include "compiler/driver/ScheduleTask.h"
#include "compiler/driver/WorkloadKey.h"
#include "compiler/ops/Matmul.h"
#include "compiler/schedule/TraceText.h"
#include "runtime/ThreadPool.h"
#include "tuner/records/RecordFile.h"

using namespace tessel;
using ::testing::describe;
using ::testing::keyValues;
using ::testing::Run;
using ::testing::runTessel;

namespace {

const QString kTinyResNet = QStringLiteral(TESSEL_SOURCE_DIR "/resources/examples/tiny_resnet.onnx");
const QString kTinyResNetData = QStringLiteral(TESSEL_SOURCE_DIR "/resources/examples/tiny_resnet/test_data_set_0");
// The 3x3 convolution of tiny_resnet's block: one kernel of its own workload.
const std::string kConvTask = "ConvPrepacked__block_block_3_Conv";
// The tool runs with this many threads, and the records are written for the target that gives.
const QString kThreads = QStringLiteral("2");


void writeText(const QString& path, const std::string& text) {
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) qFatal("cannot write %s", qPrintable(path));
  file.write(text.data(), qint64(text.size()));
}

tuner::TuningRecord record(const std::string& workload, const std::string& trace, double medianMs,
                           const std::string& target) {
  tuner::TuningRecord record;
  record.workload = workload;
  record.workloadHash = "0123456789abcdef";
  record.target = target;
  record.trace = trace;
  record.origin = tuner::RecordOrigin::Search;
  record.outcome = tuner::MeasuredTime{medianMs, medianMs, medianMs, 10, std::nullopt};
  record.time = "2026-11-25T12:34:56Z";
  return record;
}

}  // namespace

class TestTuningRecordsCli : public QObject {
  Q_OBJECT

  QTemporaryDir directory_;
  std::string target_;
  std::string otherTarget_;
  QString records_;      // tiny_resnet's convolution tuned, a corrupt line, a record for another target
  QString matmulRecords_;
  std::string matmulTrace_;  // the matmul record's schedule (not the default)
  std::string convWorkload_, convKey_, convDefaultTrace_;

  QString file(const QString& name) const { return directory_.filePath(name); }

  void writeRecords(const QString& path, const std::vector<tuner::TuningRecord>& records) {
    auto writer = tuner::RecordWriter::open(path.toStdString());
    if (!writer) qFatal("%s", writer.error().toString().c_str());
    for (const auto& each : records)
      if (Status written = writer->append(each); !written) qFatal("%s", written.error().toString().c_str());
  }

  static void appendLine(const QString& path, const QByteArray& line) {
    QFile file(path);
    if (!file.open(QIODevice::Append)) qFatal("cannot append to %s", qPrintable(path));
    file.write(line + "\n");
  }

private slots:
  void initTestCase() {
    QVERIFY2(QFileInfo(::testing::kTessel).isExecutable(), qPrintable(::testing::kTessel + " is not built"));
    QVERIFY(directory_.isValid());
    // The target string counts the threads: the same count here as in the tool (--threads).
    runtime::ThreadPool::global().setNumThreads(kThreads.toInt());
    target_ = hostTarget().toString();
    Target other = hostTarget();
    other.cores += 2;
    otherTarget_ = other.toString();

    auto graph = driver::loadModel(kTinyResNet.toStdString());
    QVERIFY(graph);
    driver::CompileOptions options;
    auto model = driver::compileGraph(*graph, options);
    QVERIFY(model);
    auto tasks = driver::extractTasks(*model);
    QVERIFY(tasks);
    const driver::ScheduleTask* conv = nullptr;
    for (const auto& task : *tasks)
      if (task.name == kConvTask) conv = &task;
    QVERIFY(conv);
    convWorkload_ = conv->workloadName;
    convKey_ = conv->workloadKey;
    convDefaultTrace_ = conv->defaultTraceText();
    std::string convTrace = ::testing::withFactor(conv->defaultTraceText(), ::testing::kConvPixelSplit, "2");
    records_ = file("tiny_resnet.jsonl");
    writeRecords(records_, {record(conv->workloadKey, conv->defaultTraceText(), 2.0, target_),
                            record(conv->workloadKey, convTrace, 1.0, target_)});
    appendLine(records_, "{\"version\": 1, \"workload\": ");  // line 3: cut short, then more records
    writeRecords(records_, {record(conv->workloadKey, convTrace, 0.5, otherTarget_)});

    Workload matmul64 = matmul(64, 64, 64, DataType::float32(), hostTarget());
    auto schedule = defaultMatmulSchedule(matmul64, hostTarget());
    QVERIFY(schedule);
    matmulTrace_ = ::testing::withFactor(printTraceText(schedule->trace()), ::testing::kMatmulReductionSplit, "2");
    matmulRecords_ = file("matmul.jsonl");
    writeRecords(matmulRecords_,
                 {record(driver::operatorWorkloadKey(matmul64, hostTarget()).text, matmulTrace_, 0.01, target_)});
  }

  void compileSaysHowManyKernelsWereTuned() {
    QStringList arguments{"compile", kTinyResNet, "-o", file("module"), "--threads", kThreads,
                          "--tuning-records", records_};
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(arguments, run)));
    QCOMPARE(keyValues(run.out).value("tuned_kernels"), QString("1"));
    QVERIFY2(run.err.contains("tuning records " + records_ + ": 1 of 8 kernels tuned"), qPrintable(describe(arguments, run)));
    QVERIFY2(run.err.contains("skipped line 3"), qPrintable(run.err));
    // What differs from this target is named (here the thread count).
    QVERIFY2(run.err.contains("1 record for another target ignored (it has -cores=4 instead of -cores=2)"),
             qPrintable(run.err));
    // Without records nothing is tuned, and nothing is said about records.
    QStringList plain{"compile", kTinyResNet, "-o", file("plain"), "--threads", kThreads};
    Run untuned = runTessel(plain);
    QVERIFY2(untuned.finished && untuned.exitCode == 0, qPrintable(describe(plain, untuned)));
    QCOMPARE(keyValues(untuned.out).value("tuned_kernels"), QString("0"));
    QVERIFY2(!untuned.err.contains("tuning records"), qPrintable(untuned.err));
  }

  void runWithTunedKernelsStillMatchesTheReference() {
    QStringList arguments{"run", kTinyResNet, "--inputs-dir", kTinyResNetData, "--expect-dir", kTinyResNetData,
                          "--threads", kThreads, "--tuning-records", records_};
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(arguments, run)));
    QCOMPARE(keyValues(run.out).value("result"), QString("match"));
    QCOMPARE(keyValues(run.out).value("tuned_kernels"), QString("1"));
  }

  void benchModelMarksTheTunedKernelInItsProfile() {
    QStringList arguments{"bench", kTinyResNet, "--repeat", "2", "--profile", "--threads", kThreads,
                          "--tuning-records", records_};
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(arguments, run)));
    QCOMPARE(keyValues(run.out).value("tuned_kernels"), QString("1"));
    QVERIFY2(run.err.contains("1 of 8 kernels tuned"), qPrintable(run.err));
    QRegularExpression tunedRow(R"(%\s+yes\s+\S+\s+)" + QRegularExpression::escape(QString::fromStdString(kConvTask)) + "$",
                                QRegularExpression::MultilineOption);
    QVERIFY2(tunedRow.match(run.out).hasMatch(), qPrintable(run.out));
    QCOMPARE(run.out.count(QRegularExpression(R"(%\s+yes\s)")), 1);
  }

  void inspectListsTheTunedKernels() {
    QStringList arguments{"inspect", kTinyResNet, "--tuning-records", records_};
    // inspect has no --threads: it compiles for the default thread count, which need not be 2.
    QByteArray threads = qgetenv("TESSEL_NUM_THREADS");
    qputenv("TESSEL_NUM_THREADS", kThreads.toUtf8());
    Run run = runTessel(arguments);
    qputenv("TESSEL_NUM_THREADS", threads);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(arguments, run)));
    QRegularExpression tunedRow("^yes\\s+\\S+\\s+" + QRegularExpression::escape(QString::fromStdString(kConvTask)) + "$",
                                QRegularExpression::MultilineOption);
    QVERIFY2(tunedRow.match(run.out).hasMatch(), qPrintable(run.out));
    QCOMPARE(keyValues(run.out).value("tuned_kernels"), QString("1"));
  }

  // The operator's record is what runs: lowering with the records gives the loops of the
  // record's schedule, and bench times it after checking it against the reference.
  void benchAndLowerOperatorReplayTheRecord() {
    QStringList matmul64{"matmul", "--m", "64", "--n", "64", "--k", "64"};
    QString scheduleFile = file("matmul.sched");
    writeText(scheduleFile, matmulTrace_);
    Run fromSchedule = runTessel(QStringList{"lower"} + matmul64 + QStringList{"--schedule", scheduleFile});
    Run fromDefault = runTessel(QStringList{"lower"} + matmul64);
    QStringList lowerArguments = QStringList{"lower"} + matmul64 + QStringList{"--tuning-records", matmulRecords_};
    qputenv("TESSEL_NUM_THREADS", kThreads.toUtf8());
    Run lowered = runTessel(lowerArguments);
    qunsetenv("TESSEL_NUM_THREADS");
    QVERIFY2(lowered.finished && lowered.exitCode == 0, qPrintable(describe(lowerArguments, lowered)));
    QVERIFY2(fromSchedule.exitCode == 0 && fromSchedule.out != fromDefault.out, qPrintable(fromSchedule.err));
    QCOMPARE(lowered.out, fromSchedule.out);
    QVERIFY2(lowered.err.contains("1 of 1 kernel tuned"), qPrintable(lowered.err));

    QStringList arguments = QStringList{"bench"} + matmul64 +
                            QStringList{"--threads", kThreads, "--seconds", "0.1", "--tuning-records", matmulRecords_};
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(arguments, run)));
    QCOMPARE(keyValues(run.out).value("tuned_kernels"), QString("1"));
    QVERIFY2(keyValues(run.out).value("result").startsWith("matches reference"), qPrintable(run.out));

    // Another shape has no record: the default schedule, and the record is counted as unused.
    QStringList otherShape{"bench", "matmul", "--m", "32", "--n", "64", "--k", "64", "--threads", kThreads,
                           "--seconds", "0.1", "--tuning-records", matmulRecords_};
    Run untuned = runTessel(otherShape);
    QVERIFY2(untuned.finished && untuned.exitCode == 0, qPrintable(describe(otherShape, untuned)));
    QCOMPARE(keyValues(untuned.out).value("tuned_kernels"), QString("0"));
    QVERIFY2(untuned.err.contains("0 of 1 kernel tuned") && untuned.err.contains("1 record for workloads not compiled"),
             qPrintable(untuned.err));
  }

  // A GPU operator as a user tunes it: `tessel tune matmul --target opencl` measures candidates
  // on the device (PoCL here) and files its records under that target; `tessel bench` with the
  // same target replays the best (tuned_kernels=1, results still match), while the CPU's
  // bench finds no record of its own target in the file.
  void gpuOperatorIsTunedAndItsRecordApplied() {
    SKIP_WITHOUT_OPENCL();
    QStringList matmul64{"matmul", "--m", "64", "--n", "64", "--k", "64"};
    QString records = file("gpu_matmul.jsonl");
    QStringList tune = QStringList{"tune"} + matmul64 +
                       QStringList{"--target", "opencl", "--records", records, "--trials", "8", "--seed", "3"};
    Run tuned = runTessel(tune);
    QVERIFY2(tuned.finished && tuned.exitCode == 0, qPrintable(describe(tune, tuned)));
    QVERIFY2(tuned.out.contains("target opencl") && tuned.out.contains("--target \"opencl\""), qPrintable(tuned.out));
    std::ifstream in(records.toStdString());
    int lines = 0;
    for (std::string line; std::getline(in, line);) {
      ++lines;
      QVERIFY2(line.find("\"target\":\"opencl\"") != std::string::npos, line.c_str());
    }
    QVERIFY2(lines >= 8, qPrintable(QString("%1 records").arg(lines)));

    QStringList bench = QStringList{"bench"} + matmul64 + QStringList{"--target", "opencl", "--tuning-records", records};
    Run run = runTessel(bench);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(bench, run)));
    QCOMPARE(keyValues(run.out).value("tuned_kernels"), QString("1"));
    QVERIFY2(keyValues(run.out).value("result").startsWith("matches reference"), qPrintable(run.out));
    QVERIFY2(run.err.contains("1 of 1 kernel tuned"), qPrintable(run.err));

    QStringList onCpu = QStringList{"bench"} + matmul64 + QStringList{"--seconds", "0.1", "--tuning-records", records};
    Run cpu = runTessel(onCpu);
    QVERIFY2(cpu.finished && cpu.exitCode == 0, qPrintable(describe(onCpu, cpu)));
    QCOMPARE(keyValues(cpu.out).value("tuned_kernels"), QString("0"));
    QVERIFY2(cpu.err.contains("for another target ignored"), qPrintable(cpu.err));
  }

  void aMissingRecordsFileStopsTheCommandNamingIt_data() {
    QTest::addColumn<QStringList>("arguments");
    QString missing = QStringLiteral("no-such-records.jsonl");
    QTest::newRow("compile") << QStringList{"compile", kTinyResNet, "-o", file("never"), "--tuning-records", missing};
    QTest::newRow("run") << QStringList{"run", kTinyResNet, "--inputs-dir", kTinyResNetData, "--tuning-records", missing};
    QTest::newRow("bench model") << QStringList{"bench", kTinyResNet, "--tuning-records", missing};
    QTest::newRow("bench op") << QStringList{"bench", "matmul", "--m", "8", "--n", "8", "--k", "8", "--tuning-records",
                                             missing};
    QTest::newRow("inspect") << QStringList{"inspect", kTinyResNet, "--tuning-records", missing};
  }
  void aMissingRecordsFileStopsTheCommandNamingIt() {
    QFETCH(QStringList, arguments);
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 2, qPrintable(describe(arguments, run)));
    QVERIFY2(run.err.contains("no-such-records.jsonl") && run.err.contains("tuning records"),
             qPrintable(describe(arguments, run)));
    QVERIFY2(!run.out.contains("latency_ms") && !run.out.contains("gflops"), qPrintable(describe(arguments, run)));
  }

  // The project names its records relative to itself; `project run` applies them from anywhere,
  // and --tuning-records takes their place.
  void projectRunAppliesTheProjectsRecords() {
    QDir projectDirectory(file("project"));
    QVERIFY(projectDirectory.mkpath("."));
    QVERIFY(QFile::copy(records_, projectDirectory.filePath("tuned.jsonl")));
    QString project = projectDirectory.filePath("tiny.tessel");
    writeText(project, "{\"format\": \"tessel-project\", \"version\": 1, \"model\": \"" +
                                    kTinyResNet.toStdString() + "\", \"reference\": {\"directory\": \"" +
                                    kTinyResNetData.toStdString() +
                                    "\", \"atol\": 1e-06}, \"tuning_records\": \"tuned.jsonl\"}\n");
    QStringList arguments{"project", "run", project, "--threads", kThreads, "--repeat", "2"};
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(arguments, run)));
    QCOMPARE(keyValues(run.out).value("tuned_kernels"), QString("1"));
    QCOMPARE(keyValues(run.out).value("verify"), QString("match"));
    QVERIFY2(run.err.contains("tuned.jsonl: 1 of 8 kernels tuned"), qPrintable(run.err));

    QStringList tasks{"project", "tasks", project};
    qputenv("TESSEL_NUM_THREADS", kThreads.toUtf8());
    Run listed = runTessel(tasks);
    qunsetenv("TESSEL_NUM_THREADS");
    QVERIFY2(listed.finished && listed.exitCode == 0, qPrintable(describe(tasks, listed)));
    QRegularExpression tunedRow("^" + QRegularExpression::escape(QString::fromStdString(kConvTask)) + R"(\s+yes\s)",
                                QRegularExpression::MultilineOption);
    QVERIFY2(tunedRow.match(listed.out).hasMatch(), qPrintable(listed.out));

    QStringList overridden = arguments + QStringList{"--tuning-records", file("no-such-records.jsonl")};
    Run refused = runTessel(overridden);
    QVERIFY2(refused.finished && refused.exitCode == 2 && refused.err.contains("no-such-records.jsonl"),
             qPrintable(describe(overridden, refused)));
    QStringList otherRecords = arguments + QStringList{"--tuning-records", matmulRecords_};
    Run untuned = runTessel(otherRecords);
    QVERIFY2(untuned.finished && untuned.exitCode == 0, qPrintable(describe(otherRecords, untuned)));
    QCOMPARE(keyValues(untuned.out).value("tuned_kernels"), QString("0"));
  }

  // benchmark.max_tuned_ratio: the model with the records is timed in turns with the model
  // without them, and a record that makes it slower fails the expectation (exit 4). The bad
  // record computes the convolution as a naive loop nest (no threads, no vectors, the
  // reduction innermost): about 13 times the model's latency here, far beyond timing noise.
  void projectRunFailsWhenTuningRecordsMakeTheModelSlower() {
    QDir projectDirectory(file("regress"));
    QVERIFY(projectDirectory.mkpath("."));
    const std::string slow = "reorder(conv.blocked, n, ko, y, x, ki, co, ci, r, s)\n";
    Target oneCore = hostTarget();
    oneCore.cores = 1;  // the run below uses one thread, and records apply to their target only
    writeRecords(projectDirectory.filePath("slow.jsonl"), {record(convKey_, slow, 0.001, oneCore.toString())});
    auto projectWith = [&](const std::string& name, const std::string& records, double limit) {
      QString path = projectDirectory.filePath(QString::fromStdString(name));
      writeText(path, "{\"format\": \"tessel-project\", \"version\": 1, \"model\": \"" + kTinyResNet.toStdString() +
                          "\", \"tuning_records\": \"" + records + "\", \"benchmark\": {\"repeats\": 6, "
                          "\"max_tuned_ratio\": " + std::to_string(limit) + "}}\n");
      return path;
    };
    // One thread: on a busy machine a thread pool waiting for a descheduled worker costs more
    // than the kernels, and would hide the difference.
    QStringList regress{"project", "run", projectWith("slow.tessel", "slow.jsonl", 1.0), "--threads", "1"};
    Run run = runTessel(regress);
    QVERIFY2(run.finished && run.exitCode == 4, qPrintable(describe(regress, run)));
    auto values = keyValues(run.out);
    QCOMPARE(values.value("tuned_kernels"), QString("1"));
    double tuned = values.value("latency_ms").toDouble(), untuned = values.value("untuned_latency_ms").toDouble();
    QVERIFY2(untuned > 0 && tuned > untuned, qPrintable(run.out));
    QVERIFY2(run.out.contains("expectation max_tuned_ratio: measured") && run.out.contains("without the tuning records") &&
                 run.out.contains(": FAIL"),
             qPrintable(run.out));
    QVERIFY2(run.err.contains("expectation failed: max_tuned_ratio"), qPrintable(run.err));
    // Without records there is nothing to compare: the expectation fails and says why.
    QStringList none{"project", "run", projectWith("none.tessel", "", 1.0), "--threads", kThreads};
    Run unchecked = runTessel(none);
    QVERIFY2(unchecked.finished && unchecked.exitCode == 4, qPrintable(describe(none, unchecked)));
    QVERIFY2(unchecked.out.contains("max_tuned_ratio: not checked: the project applies no tuning records"),
             qPrintable(unchecked.out));
  }

  // A schedule the project's author wrote for a kernel wins over the kernel's tuning record.
  void aProjectsScheduleEditWinsOverARecord() {
    QDir projectDirectory(file("edited"));
    QVERIFY(projectDirectory.mkpath("."));
    QString project = projectDirectory.filePath("edited.tessel");
    std::string traceLines;
    for (const QString& line : QString::fromStdString(convDefaultTrace_).split('\n', Qt::SkipEmptyParts))
      traceLines += (traceLines.empty() ? "\"" : ", \"") + line.toStdString() + "\"";
    writeText(project, "{\"format\": \"tessel-project\", \"version\": 1, \"model\": \"" + kTinyResNet.toStdString() +
                           "\", \"tuning_records\": \"" + records_.toStdString() + "\", \"tasks\": [{\"name\": \"" +
                           kConvTask + "\", \"workload\": \"" + convWorkload_ + "\", \"trace\": [" + traceLines + "]}]}\n");
    QStringList arguments{"project", "run", project, "--threads", kThreads, "--repeat", "2"};
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(arguments, run)));
    QCOMPARE(keyValues(run.out).value("tasks_edited"), QString("1"));
    QCOMPARE(keyValues(run.out).value("tuned_kernels"), QString("0"));
    QVERIFY2(run.err.contains("0 of 8 kernels tuned"), qPrintable(run.err));
  }
};

QTEST_GUILESS_MAIN(TestTuningRecordsCli)
#include "test_tuning_records_cli.moc"
