// The project runner as the Studio calls it: the report carries the compiled model with the
// project's schedules in it, progress names each stage, a cancelled run stops, and each
// expectation is judged against the measured latency.
#include <QtTest>

#include "app/project/Project.h"
#include "app/project/ProjectRunner.h"
#include "core/ir/IRPrinter.h"

namespace {

using namespace tessel;

const std::string kExampleProject = TESSEL_SOURCE_DIR "/resources/examples/tiny_resnet.tessel";

project::Project exampleProject() {
  auto loaded = project::loadProject(kExampleProject);
  if (!loaded) qFatal("%s", loaded.error().toString().c_str());
  loaded->benchmark.repeats = 3;
  return *loaded;
}

QString kernelText(const driver::CompiledModel& model, const std::string& task) {
  for (auto& kernel : model.kernels)
    if (kernel.name == task) return QString::fromStdString(toString(kernel.function));
  return {};
}

}  // namespace

class TestProjectRunner : public QObject {
  Q_OBJECT
private slots:
  void reportHoldsTheEditedKernels() {
    project::Project project = exampleProject();
    QVERIFY(!project.tasks.empty());
    auto edited = project::runProject(project);
    QVERIFY2(edited.ok(), edited.ok() ? "" : edited.error().toString().c_str());
    QVERIFY(edited->compiled);
    QCOMPARE(edited->tasksEdited, int(project.tasks.size()));
    QVERIFY(edited->outputsMatch() && !edited->comparisons.empty());
    QVERIFY(edited->benchmarked && edited->latencyMs > 0 && edited->minMs <= edited->latencyMs);

    std::string task = project.tasks[0].task;
    project.tasks.clear();
    auto plain = project::runProject(project);
    QVERIFY2(plain.ok(), plain.ok() ? "" : plain.error().toString().c_str());
    QCOMPARE(plain->tasksEdited, 0);
    QString withEdit = kernelText(*edited->compiled, task), withoutEdit = kernelText(*plain->compiled, task);
    QVERIFY(!withEdit.isEmpty() && !withoutEdit.isEmpty());
    QVERIFY2(withEdit != withoutEdit, qPrintable(withEdit));
  }

  void progressNamesEachStageAndCancelStops() {
    project::Project project = exampleProject();
    QStringList stages;
    project::ProjectRunOptions options;
    options.progress = [&](const std::string& stage) { stages << QString::fromStdString(stage); };
    QVERIFY(project::runProject(project, options).ok());
    for (const char* expected : {"importing", "compiling", "verifying", "benchmarking"})
      QVERIFY2(!stages.filter(expected).isEmpty(), qPrintable(stages.join(" | ")));

    // Cancelled once compiling is reached: nothing after it runs.
    QStringList started;
    options.progress = [&](const std::string& stage) { started << QString::fromStdString(stage); };
    options.cancelled = [&] { return !started.filter("compiling").isEmpty(); };
    auto cancelled = project::runProject(project, options);
    QVERIFY(!cancelled.ok());
    QVERIFY2(QString::fromStdString(cancelled.error().message).contains("cancelled"),
             cancelled.error().toString().c_str());
    QVERIFY2(started.filter("benchmarking").isEmpty(), qPrintable(started.join(" | ")));
  }

  void expectationsAreJudgedAgainstTheMedian() {
    project::Project project = exampleProject();
    project.benchmark.maxLatencyMs = 1e6;
    project.benchmark.baselineMs = 1e-6;
    project.benchmark.maxRatio = 2;
    auto report = project::runProject(project);
    QVERIFY2(report.ok(), report.ok() ? "" : report.error().toString().c_str());
    QCOMPARE(int(report->expectations.size()), 2);
    const auto& latency = report->expectations[0];
    const auto& ratio = report->expectations[1];
    QVERIFY(latency.passed && latency.measured == report->latencyMs);
    QVERIFY(!ratio.passed && !report->expectationsMet());
    QCOMPARE(ratio.measured, report->latencyMs / 1e-6);
    QVERIFY2(QString::fromStdString(ratio.describe()).endsWith("FAIL"), ratio.describe().c_str());
    QVERIFY2(QString::fromStdString(latency.describe()).endsWith("PASS"), latency.describe().c_str());
  }

  void exportWritesAModule() {
    QTemporaryDir directory;
    project::Project project = exampleProject();
    project.exportSettings = {true, directory.filePath("module").toStdString()};
    auto report = project::runProject(project);
    QVERIFY2(report.ok(), report.ok() ? "" : report.error().toString().c_str());
    QCOMPARE(QString::fromStdString(report->exportedTo), directory.filePath("module"));
    QVERIFY(QFileInfo(directory.filePath("module/graph.json")).exists());
  }
};

QTEST_GUILESS_MAIN(TestProjectRunner)
#include "test_project_runner.moc"
