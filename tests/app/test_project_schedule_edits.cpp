// Schedule edits replayed on a compiled model (what a project's "tasks" do): the edited kernel's
// loop IR changes, the model still computes its reference outputs, and broken edits name the
// task and the trace line.
#include <QtTest>

#include "compiler/driver/Driver.h"
#include "compiler/driver/RunModel.h"
#include "compiler/driver/ScheduleEdits.h"
#include "core/ir/IRPrinter.h"

namespace {

using namespace tessel;

const std::string kModel = TESSEL_SOURCE_DIR "/resources/examples/tiny_resnet.onnx";
const std::string kDataSet = TESSEL_SOURCE_DIR "/resources/examples/tiny_resnet/test_data_set_0";

// The host with 16-lane vectors assumed by the schedules, as on AVX-512: the Softmax row (10
// wide) then stays scalar in the default schedule on every machine, so that vectorizing it is
// an edit the test can see. (The code still uses only the host's instructions.)
const Target kTarget = [] {
  Target target = hostTarget();
  target.vectorBits = 512;
  return target;
}();

driver::CompiledModel compileExample() {
  auto graph = driver::loadModel(kModel);
  if (!graph) qFatal("%s", graph.error().toString().c_str());
  driver::CompileOptions options;
  options.target = kTarget;
  auto compiled = driver::compileGraph(*graph, options);
  if (!compiled) qFatal("%s", compiled.error().toString().c_str());
  return std::move(*compiled);
}

// The task computing the model's Softmax: the library names it, the test only recognises it.
std::string softmaxTask(const driver::CompiledModel& model) {
  for (const std::string& task : driver::schedulableTasks(model))
    if (task.find("Softmax") != std::string::npos) return task;
  return "";
}

QString kernelText(const driver::CompiledModel& model, const std::string& task) {
  for (auto& kernel : model.kernels)
    if (kernel.name == task) return QString::fromStdString(toString(kernel.function));
  return {};
}

// Runs `model` on the example's reference input and compares with its reference output.
std::vector<driver::OutputComparison> runOnReferenceData(const driver::CompiledModel& model) {
  std::vector<driver::OutputComparison> comparisons;
  auto inputs = driver::readNumberedTensors(kDataSet, "input_");
  auto expected = driver::readNumberedTensors(kDataSet, "output_");
  if (!inputs || !expected) return comparisons;
  auto executor = driver::createExecutor(model);
  if (!executor) return comparisons;
  for (size_t i = 0; i < inputs->size(); ++i) (*executor)->setInput((*executor)->inputNames()[i], (*inputs)[i]);
  (*executor)->run();
  for (size_t i = 0; i < expected->size(); ++i) {
    const std::string& name = (*executor)->outputNames()[i];
    comparisons.push_back(driver::compareOutput(name, (*executor)->getOutput(name), (*expected)[i], {1e-3, 1e-5}));
  }
  return comparisons;
}

}  // namespace

class TestProjectScheduleEdits : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() {
    model_ = compileExample();
    task_ = softmaxTask(model_);
    QVERIFY2(!task_.empty(), "the example model has no Softmax kernel");
  }

  // The default edit is what the Studio's editor starts from: replaying it must give the
  // kernel the compiler made, or an unchanged editor would change the code.
  void defaultEditReproducesTheKernel() {
    for (const std::string& task : driver::schedulableTasks(model_)) {
      auto edit = driver::defaultScheduleEdit(model_, task, kTarget);
      QVERIFY2(edit.ok(), edit.ok() ? "" : edit.error().toString().c_str());
      QCOMPARE(edit->task, task);
      auto replayed = driver::applyScheduleEdits(model_, {*edit}, kTarget);
      QVERIFY2(replayed.ok(), replayed.ok() ? "" : replayed.error().toString().c_str());
      QCOMPARE(kernelText(*replayed, task), kernelText(model_, task));
    }
  }

  void editedScheduleChangesTheKernelNotTheResults() {
    auto edit = driver::defaultScheduleEdit(model_, task_, kTarget);
    QVERIFY(edit.ok());
    edit->trace = "vectorize(softmax.exp, ax1)\n";
    auto edited = driver::applyScheduleEdits(model_, {*edit}, kTarget);
    QVERIFY2(edited.ok(), edited.ok() ? "" : edited.error().toString().c_str());

    QString before = kernelText(model_, task_), after = kernelText(*edited, task_);
    QVERIFY(before != after);
    QVERIFY2(!before.contains("ramp(") && after.contains("ramp("), qPrintable(after));
    // Only the edited kernel changes.
    for (size_t i = 0; i < model_.kernels.size(); ++i)
      if (model_.kernels[i].name != task_)
        QCOMPARE(kernelText(*edited, model_.kernels[i].name), kernelText(model_, model_.kernels[i].name));

    auto comparisons = runOnReferenceData(*edited);
    QVERIFY(!comparisons.empty());
    for (auto& comparison : comparisons)
      QVERIFY2(comparison.matches, comparison.describe().c_str());
  }

  void brokenEditsNameTheTaskAndLine_data() {
    QTest::addColumn<QString>("task");
    QTest::addColumn<QString>("workload");
    QTest::addColumn<QString>("trace");
    QTest::addColumn<QStringList>("mentions");
    QTest::addColumn<int>("line");
    QTest::newRow("unknown axis on line 2")
        << "" << "" << "vectorize(softmax.exp, ax1)\nunroll(softmax, no_such_axis)\n"
        << QStringList{"no_such_axis", "ax1"} << 2;
    QTest::newRow("syntax error on line 3")
        << "" << "" << "vectorize(softmax.exp, ax1)\n\nsplit(softmax ax1)\n" << QStringList{} << 3;
    QTest::newRow("unknown primitive") << "" << "" << "swizzle(softmax, ax1)\n" << QStringList{"swizzle"} << 1;
    QTest::newRow("workload changed") << "" << "softmax_1x1000_axis1" << "" << QStringList{"softmax_1x1000_axis1", "model changed"}
                                      << 0;
    QTest::newRow("unknown task") << "no_such_kernel" << "" << "" << QStringList{"no_such_kernel", "tasks"} << 0;
  }
  void brokenEditsNameTheTaskAndLine() {
    QFETCH(QString, task);
    QFETCH(QString, workload);
    QFETCH(QString, trace);
    QFETCH(QStringList, mentions);
    QFETCH(int, line);
    auto edit = driver::defaultScheduleEdit(model_, task_, kTarget);
    QVERIFY(edit.ok());
    if (!task.isEmpty()) edit->task = task.toStdString();
    if (!workload.isEmpty()) edit->workload = workload.toStdString();
    if (!trace.isEmpty()) edit->trace = trace.toStdString();
    auto result = driver::applyScheduleEdits(model_, {*edit}, kTarget);
    QVERIFY(!result.ok());
    QString text = QString::fromStdString(result.error().toString());
    QVERIFY2(text.contains(QString::fromStdString(edit->task)), qPrintable(text));
    QCOMPARE(result.error().line, line);
    if (line > 0) QVERIFY2(result.error().column > 0, qPrintable(text));
    for (const QString& mention : mentions) QVERIFY2(text.contains(mention), qPrintable(text));
  }

private:
  driver::CompiledModel model_;
  std::string task_;
};

QTEST_GUILESS_MAIN(TestProjectScheduleEdits)
#include "test_project_schedule_edits.moc"
