// Schedule tasks of a compiled model: one per kernel, each lowering its schedule text to the
// same code the compiler built, with schedule mistakes located at their line and column.
#include <QtTest>

#include <memory>

#include "compiler/driver/ScheduleTask.h"
#include "compiler/lower/Lower.h"
#include "compiler/schedule/TraceText.h"
#include "core/ir/IRPrinter.h"

using namespace tessel;
using namespace tessel::driver;

namespace {

const CompiledModel& exampleModel() {
  static std::unique_ptr<CompiledModel> model = [] {
    auto graph = loadModel(TESSEL_SOURCE_DIR "/resources/examples/tiny_resnet.onnx");
    if (!graph) qFatal("%s", graph.error().toString().c_str());
    auto compiled = compileGraph(*graph);
    if (!compiled) qFatal("%s", compiled.error().toString().c_str());
    return std::make_unique<CompiledModel>(std::move(*compiled));
  }();
  return *model;
}

const std::vector<ScheduleTask>& exampleTasks() {
  static std::vector<ScheduleTask> tasks = [] {
    auto extracted = extractTasks(exampleModel());
    if (!extracted) qFatal("%s", extracted.error().toString().c_str());
    return *extracted;
  }();
  return tasks;
}

/// The first task whose output stage has an axis the test can split (every real kernel has).
const ScheduleTask& firstTask() { return exampleTasks().front(); }

const StageLoops* findStage(const std::vector<StageLoops>& stages, const std::string& name) {
  for (auto& stage : stages)
    if (stage.stage == name) return &stage;
  return nullptr;
}

/// The name of the task's output stage and its first axis of at least 4 iterations, which a
/// split by 2 leaves as two loops the simplifier keeps.
std::pair<std::string, std::string> outputStageAndSplittableAxis(const ScheduleTask& task) {
  const te::Operation& op = task.workload.outputs.front().op();
  for (const IterVar& axis : te::asCompute(op)->axes) {
    auto* extent = axis.dom().extent.as<IntImmNode>();
    if (extent && extent->value >= 4) return {op.name(), axis.name()};
  }
  qFatal("no axis of %s has 4 iterations", op.name().c_str());
}

}  // namespace

class TestScheduleTask : public QObject {
  Q_OBJECT
private slots:
  void oneTaskPerKernelOfAnOperation() {
    const CompiledModel& model = exampleModel();
    const auto& tasks = exampleTasks();
    QVERIFY(!tasks.empty());
    size_t operationKernels = 0;
    for (auto& kernel : model.kernels)
      if (kernel.node) ++operationKernels;
    QCOMPARE(tasks.size(), operationKernels);
    bool sawFused = false;
    for (size_t i = 0, k = 0; k < model.kernels.size(); ++k) {
      if (!model.kernels[k].node) continue;
      const ScheduleTask& task = tasks[i++];
      QCOMPARE(task.name, model.kernels[k].name);
      QCOMPARE(task.nodeName, model.kernels[k].node->name);
      QVERIFY(!task.workloadName.empty());
      QCOMPARE(task.flops, model.kernels[k].flops);
      if (model.kernels[k].node->isFused()) {
        sawFused = true;
        QVERIFY2(task.op.rfind("fused(", 0) == 0 && task.op.find('+') != std::string::npos, task.op.c_str());
      }
    }
    // tiny_resnet's convolutions absorb their ReLUs, so the summary form must show up.
    QVERIFY(sawFused);
  }

  void defaultScheduleTextLowersToTheCompiledKernel() {
    const CompiledModel& model = exampleModel();
    for (auto& task : exampleTasks()) {
      auto lowered = lowerTaskSchedule(task, task.defaultTraceText());
      QVERIFY2(lowered.ok(), lowered.ok() ? "" : lowered.error().toString().c_str());
      const CompiledKernel* kernel = nullptr;
      for (auto& k : model.kernels)
        if (k.name == task.name) kernel = &k;
      QVERIFY(kernel);
      QCOMPARE(QString::fromStdString(lowered->loopNest), QString::fromStdString(toString(kernel->function)));
      QCOMPARE(lowered->function->name, task.name);
      QCOMPARE(lowered->trace, task.defaultTrace);
      QCOMPARE(lowered->stagesAfter.size(), task.defaultTrace.primitives.size());
      QCOMPARE(lowered->steps.size(), loweringStepNames().size());
      QCOMPARE(QString::fromStdString(lowered->steps.back().text), QString::fromStdString(lowered->loopNest));
      QVERIFY(!lowered->llvmIR && !lowered->assembly);
    }
  }

  void splitShowsUpInTheLoopNestAndTheLoopsAfterIt() {
    const ScheduleTask& task = firstTask();
    auto [stage, axis] = outputStageAndSplittableAxis(task);
    std::string text = "# split the outermost loop\nouter_part, inner_part = split(" + stage + ", " + axis + ", factor=2)\n";
    auto lowered = lowerTaskSchedule(task, text);
    QVERIFY2(lowered.ok(), lowered.ok() ? "" : lowered.error().toString().c_str());
    QCOMPARE(lowered->trace.primitives.size(), size_t(1));
    QCOMPARE(lowered->trace.primitives[0].location.line, 2);
    const StageLoops* before = findStage(lowered->initialStages, stage);
    const StageLoops* after = findStage(lowered->stagesAfter[0], stage);
    QVERIFY(before && after);
    // The split axis is replaced where it was by its two parts; the other loops stay.
    std::vector<std::string> expected;
    for (auto& loop : before->loops) {
      if (loop != axis) {
        expected.push_back(loop);
        continue;
      }
      expected.push_back("outer_part");
      expected.push_back("inner_part");
    }
    QCOMPARE(after->loops, expected);
    QVERIFY2(QString::fromStdString(lowered->loopNest).contains("for (inner_part, 0, 2)"), lowered->loopNest.c_str());
    QVERIFY(QString::fromStdString(lowered->loopNest).contains("for (outer_part, 0, "));
  }

  void unknownAxisIsReportedAtItsLineAndColumn() {
    const ScheduleTask& task = firstTask();
    auto [stage, axis] = outputStageAndSplittableAxis(task);
    std::string text = "\n  xo, xi = split(" + stage + ", no_such_axis, factor=4)\n";
    auto lowered = lowerTaskSchedule(task, text);
    QVERIFY(!lowered.ok());
    QCOMPARE(lowered.error().line, 2);
    // Schedule errors point at the primitive's name ("split" starts in column 12).
    QCOMPARE(lowered.error().column, 12);
    QVERIFY2(QString::fromStdString(lowered.error().message).contains("no_such_axis"),
             lowered.error().toString().c_str());
  }

  void parseErrorIsReportedAtItsColumn() {
    auto lowered = lowerTaskSchedule(firstTask(), "vectorize(C, i\n");
    QVERIFY(!lowered.ok());
    QCOMPARE(lowered.error().line, 1);
    QCOMPARE(lowered.error().column, 15);
  }

  void mistakesComeBackAsDiagnostics_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<int>("line");
    // Each is something a person might type mid-edit; none may throw or crash.
    QTest::newRow("zero factor") << "a, b = split(conv, y, factor=0)" << 1;
    QTest::newRow("negative parts") << "a, b = split(conv, y, nparts=-3)" << 1;
    QTest::newRow("unknown stage") << "vectorize(nothing, y)" << 1;
    QTest::newRow("duplicate names") << "y, x = split(conv, y, factor=2)" << 1;
    QTest::newRow("reorder missing a loop") << "\nreorder(conv, y)" << 2;
    QTest::newRow("fuse out of order") << "f = fuse(conv, x, y)" << 1;
    QTest::newRow("attach to itself") << "compute_at(conv, conv, y)" << 1;
    QTest::newRow("unterminated") << "split(conv, y, factor=2" << 1;
    QTest::newRow("stray text") << "split(conv, y, factor=2) extra" << 1;
    QTest::newRow("bad character") << "a, b = split(conv, y, factor=2) $" << 1;
  }
  void mistakesComeBackAsDiagnostics() {
    QFETCH(QString, text);
    QFETCH(int, line);
    const ScheduleTask& task = firstTask();
    Expected<TaskLowering> lowered = Diagnostic{};
    try {
      lowered = lowerTaskSchedule(task, text.toStdString());
    } catch (const std::exception& error) {
      QFAIL(error.what());
    }
    QVERIFY(!lowered.ok());
    QCOMPARE(lowered.error().line, line);
    QVERIFY(lowered.error().column >= 1);
    QVERIFY(!lowered.error().message.empty());
  }

  void emitsCodeOnlyWhenAsked() {
    const ScheduleTask& task = firstTask();
    TaskLoweringOptions options;
    options.llvmIR = true;
    options.assembly = true;
    auto lowered = lowerTaskSchedule(task, task.defaultTraceText(), options);
    QVERIFY(lowered.ok());
    QVERIFY(lowered->llvmIR && lowered->assembly);
    QVERIFY(QString::fromStdString(*lowered->llvmIR).contains(QString::fromStdString("@" + task.name + "(")));
    QVERIFY(QString::fromStdString(*lowered->assembly).contains(QString::fromStdString(task.name + ":")));
  }
};

QTEST_GUILESS_MAIN(TestScheduleTask)
#include "test_schedule_task.moc"
