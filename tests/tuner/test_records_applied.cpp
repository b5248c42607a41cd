// Tuning records applied to a compile: the fastest valid record of each workload on exactly the
// compile's target is replayed; records of other targets, unknown workloads and unreadable lines
// are skipped and reported; a record that no longer replays falls back to the default schedule.
#include <QTemporaryDir>
#include <QtTest>

#include "RecordsTestSupport.h"
#include "compiler/driver/Driver.h"
#include "compiler/driver/ScheduleTask.h"
#include "compiler/driver/WorkloadKey.h"
#include "compiler/ops/Matmul.h"
#include "compiler/schedule/TraceText.h"
#include "core/ir/IRPrinter.h"
#include "runtime/ThreadPool.h"
#include "tuner/records/AppliedRecords.h"
#include "tuner/records/RecordFile.h"

using namespace tessel;
using namespace tessel::tuner;

namespace {

const std::string kTinyResNet = TESSEL_SOURCE_DIR "/resources/examples/tiny_resnet.onnx";
// The 3x3 convolution of tiny_resnet's block (one kernel of its own workload).
const std::string kConvTask = "ConvPrepacked__block_block_3_Conv";

driver::CompiledModel compileTinyResNet(std::shared_ptr<const driver::TunedSchedules> tuned = nullptr) {
  auto graph = driver::loadModel(kTinyResNet);
  if (!graph) qFatal("%s", graph.error().toString().c_str());
  driver::CompileOptions options;
  options.tunedSchedules = std::move(tuned);
  auto model = driver::compileGraph(*graph, options);
  if (!model) qFatal("%s", model.error().toString().c_str());
  return std::move(*model);
}

const driver::CompiledKernel& kernelNamed(const driver::CompiledModel& model, const std::string& name) {
  for (const auto& kernel : model.kernels)
    if (kernel.name == name) return kernel;
  qFatal("no kernel %s", name.c_str());
}


}  // namespace

class TestRecordsApplied : public QObject {
  Q_OBJECT

  QTemporaryDir directory_;
  std::string target_;
  driver::ScheduleTask conv_;

  std::string file(const char* name) const { return directory_.filePath(name).toStdString(); }

  // Writes `records` with the writer a tuning session uses.
  std::string writeRecords(const char* name, const std::vector<TuningRecord>& records) {
    std::string path = file(name);
    auto writer = RecordWriter::open(path);
    if (!writer) qFatal("%s", writer.error().toString().c_str());
    for (const TuningRecord& record : records)
      if (Status written = writer->append(record); !written) qFatal("%s", written.error().toString().c_str());
    return path;
  }

  TuningRecord convRecord(double medianMs, const std::string& trace, const std::string& target = "") const {
    TuningRecord record = testing::measured(conv_.workloadKey, medianMs, target.empty() ? target_ : target,
                                            RecordOrigin::Search, trace);
    record.task = conv_.name;
    return record;
  }

  AppliedRecords load(const std::string& path) {
    auto applied = loadTuningRecords(path, hostTarget());
    if (!applied) qFatal("%s", applied.error().toString().c_str());
    return std::move(*applied);
  }

  static QString report(const AppliedRecords& applied) {
    QStringList lines;
    for (const std::string& line : describeAppliedRecords(applied)) lines << QString::fromStdString(line);
    return lines.join('\n');
  }

private slots:
  void initTestCase() {
    QVERIFY(directory_.isValid());
    // The target string carries the thread count: fix it, as a command's --threads does.
    runtime::ThreadPool::global().setNumThreads(2);
    target_ = hostTarget().toString();
    auto tasks = driver::extractTasks(compileTinyResNet());
    QVERIFY(tasks);
    for (const auto& task : *tasks)
      if (task.name == kConvTask) conv_ = task;
    QVERIFY2(!conv_.workloadKey.empty(), "tiny_resnet has no block convolution kernel");
  }

  void theFastestValidRecordIsApplied() {
    std::string defaultTrace = conv_.defaultTraceText();
    std::string faster = testing::withFactor(defaultTrace, testing::kConvPixelSplit, "2");
    TuningRecord crashed = convRecord(0, testing::withFactor(defaultTrace, testing::kConvPixelSplit, "8"));
    crashed.outcome = MeasureFailure{MeasureErrorKind::Crash, "signal 11 (segmentation fault)"};
    std::string path = writeRecords("best.jsonl", {crashed, convRecord(2.0, defaultTrace), convRecord(1.0, faster),
                                                   convRecord(1.5, testing::withFactor(defaultTrace, testing::kConvPixelSplit, "1"))});
    AppliedRecords applied = load(path);
    QCOMPARE(applied.recordsRead, 4);
    QCOMPARE(applied.workloadCount(), 1);
    QCOMPARE(applied.schedules->traces.at(conv_.workloadKey), faster);

    driver::CompiledModel model = compileTinyResNet(applied.schedules);
    const driver::CompiledKernel& kernel = kernelNamed(model, kConvTask);
    QVERIFY(kernel.tuned);
    // The kernel runs the fastest record's schedule: its loops are those of that trace.
    auto expected = driver::lowerTaskSchedule(conv_, faster);
    QVERIFY(expected);
    QCOMPARE(toString(kernel.function), expected->loopNest);
    QVERIFY(toString(kernel.function) != toString(kernelNamed(compileTinyResNet(), kConvTask).function));

    noteCompiledModel(applied, model);
    QCOMPARE(applied.outcome->tunedKernels, 1);
    QCOMPARE(applied.outcome->kernels, 8);
    QVERIFY(applied.outcome->notes.empty());
    QString text = report(applied);
    QVERIFY2(text.startsWith(QString::fromStdString("tuning records " + path + ": 1 of 8 kernels tuned")), qPrintable(text));
  }

  void recordsOfAnotherTargetAreIgnoredAndCounted() {
    Target other = hostTarget();
    other.cores += 2;  // the same machine with more threads is another target
    std::string otherTarget = other.toString();
    std::string path = writeRecords("other.jsonl", {convRecord(0.5, conv_.defaultTraceText(), otherTarget),
                                                    convRecord(0.4, conv_.defaultTraceText(), otherTarget)});
    AppliedRecords applied = load(path);
    QCOMPARE(applied.workloadCount(), 0);
    QCOMPARE(applied.otherTargetRecords, 2);
    QCOMPARE(applied.otherTargets, std::vector<std::string>{otherTarget});
    driver::CompiledModel model = compileTinyResNet(applied.schedules);
    QVERIFY(!kernelNamed(model, kConvTask).tuned);
    noteCompiledModel(applied, model);
    QCOMPARE(applied.outcome->tunedKernels, 0);
    QString text = report(applied);
    QVERIFY2(text.contains("0 of 8 kernels tuned"), qPrintable(text));
    // What differs is named, not two long target strings to compare by eye.
    QString differs = QString("-cores=%1 instead of -cores=%2").arg(other.cores).arg(hostTarget().cores);
    QVERIFY2(text.contains("2 records for another target ignored (it has " + differs + ")"), qPrintable(text));
  }

  // A record of a machine with another instruction set names the features that differ.
  void anotherInstructionSetIsNamed() {
    Target other = hostTarget();
    std::string feature = other.hasFeature("avx512vnni") ? "no_such_feature" : "avx512vnni";
    other.features.push_back(feature);
    std::sort(other.features.begin(), other.features.end());
    std::string path = writeRecords("features.jsonl", {convRecord(0.5, conv_.defaultTraceText(), other.toString())});
    QString text = report(load(path));
    QVERIFY2(text.contains(QString::fromStdString("(it has features +" + feature + " this target lacks)")),
             qPrintable(text));
  }

  void aCorruptLineIsReportedAndTheRestApplied() {
    std::string path = file("corrupt.jsonl");
    TuningRecord unknown = convRecord(0.3, "vectorize(y, x)");
    unknown.workload = "Conv{made up}";  // a workload tiny_resnet does not have
    testing::writeText(QString::fromStdString(path), toJsonLine(unknown) + "\n{\"version\": 1, \"workload\": \n" +
                                                         toJsonLine(convRecord(1.0, conv_.defaultTraceText())) + "\n");
    AppliedRecords applied = load(path);
    QCOMPARE(applied.recordsRead, 2);
    QCOMPARE(applied.problems.size(), size_t(1));
    QCOMPARE(applied.problems[0].lineNumber, 2);
    QCOMPARE(applied.workloadCount(), 2);
    driver::CompiledModel model = compileTinyResNet(applied.schedules);
    QVERIFY(kernelNamed(model, kConvTask).tuned);
    noteCompiledModel(applied, model);
    QCOMPARE(applied.outcome->unknownWorkloadRecords, 1);
    QString text = report(applied);
    QVERIFY2(text.contains("1 of 8 kernels tuned"), qPrintable(text));
    QVERIFY2(text.contains(QString::fromStdString("tuning records " + path + ": skipped line 2: ")), qPrintable(text));
    QVERIFY2(text.contains("1 record for workloads not compiled here"), qPrintable(text));
  }

  void aRecordThatNoLongerReplaysFallsBackWithANote() {
    std::string path = writeRecords("stale.jsonl", {convRecord(0.1, "xo, xi = split(no_such_stage, x, factor=4)\n")});
    AppliedRecords applied = load(path);
    QCOMPARE(applied.workloadCount(), 1);
    driver::CompiledModel model = compileTinyResNet(applied.schedules);
    const driver::CompiledKernel& kernel = kernelNamed(model, kConvTask);
    QVERIFY(!kernel.tuned);
    QCOMPARE(toString(kernel.function), toString(kernelNamed(compileTinyResNet(), kConvTask).function));
    noteCompiledModel(applied, model);
    QCOMPARE(applied.outcome->tunedKernels, 0);
    QCOMPARE(applied.outcome->notes.size(), size_t(1));
    QString text = report(applied);
    QVERIFY2(text.contains(QString::fromStdString(kConvTask)) && text.contains("the default was") &&
                 text.contains("no_such_stage"),
             qPrintable(text));
  }

  void aFileThatCannotBeReadIsADiagnosticNamingIt() {
    std::string path = file("no-such-records.jsonl");
    auto applied = loadTuningRecords(path, hostTarget());
    QVERIFY(!applied);
    QCOMPARE(applied.error().location, path);
    QVERIFY2(!applied.error().hint.empty(), applied.error().toString().c_str());
  }

  // A bare operator (`tessel bench matmul ...`) takes its record by the operator's key.
  void anOperatorReplaysItsRecord() {
    Workload workload = matmul(64, 64, 64, DataType::float32(), hostTarget());
    auto defaultSchedule = defaultMatmulSchedule(workload, hostTarget());
    QVERIFY(defaultSchedule);
    std::string defaultTrace = printTraceText(defaultSchedule->trace());
    std::string tunedTrace = testing::withFactor(defaultTrace, testing::kMatmulReductionSplit, "2");
    TuningRecord record = testing::measured(driver::operatorWorkloadKey(workload, hostTarget()).text, 0.01, target_,
                                            RecordOrigin::Search, tunedTrace);
    AppliedRecords applied = load(writeRecords("matmul.jsonl", {record}));
    auto schedule = tunedOperatorSchedule(applied, workload);
    QVERIFY(schedule);
    QCOMPARE(printTraceText(schedule->trace()), tunedTrace);
    QCOMPARE(applied.outcome->tunedKernels, 1);
    QVERIFY2(report(applied).contains("1 of 1 kernel tuned"), qPrintable(report(applied)));

    Workload other = matmul(32, 64, 64, DataType::float32(), hostTarget());
    QVERIFY(!tunedOperatorSchedule(applied, other));
    QCOMPARE(applied.outcome->tunedKernels, 0);
    QCOMPARE(applied.outcome->unknownWorkloadRecords, 1);
  }
};

QTEST_GUILESS_MAIN(TestRecordsApplied)
#include "test_records_applied.moc"
