// The Measure panel: its history table passes the model tester, a measured matmul appears in
// the table and the plot, the change against the previous schedule is named, and a bad
// schedule shows its line. Measurements run in a child process (bin/tessel, through
// TESSEL_CLI): a model's task is found by name, a crashing child is a failed measurement
// naming the signal and the panel keeps working, and Cancel ends the child at once.
#include <QAbstractItemModelTester>
#include <QElapsedTimer>
#include <QJsonObject>
#include <QLabel>
#include <QTableView>
#include <QtTest>

#include "compiler/driver/ScheduleTask.h"
#include "compiler/ops/Matmul.h"
#include "runtime/ThreadPool.h"
#include "tests/ShellScripts.h"
#include "views/schedule/MeasureHistory.h"
#include "views/schedule/MeasureHistoryModel.h"
#include "views/schedule/MeasurePanel.h"
#include "views/schedule/MeasurePlot.h"
#include "views/schedule/ScheduleWorkbench.h"

using namespace tessel;
using namespace tessel::views;

namespace {

driver::Measurement measurementOf(double medianMs) {
  driver::Measurement m;
  m.kernelName = std::string("k");
  m.medianMilliseconds = medianMs;
  m.minMilliseconds = medianMs * 0.9;
  m.samples = 10;
  m.flops = 1e6;
  m.gflops = m.flops / (medianMs * 1e-3) * 1e-9;
  m.peakGflops = 100;
  m.fractionOfPeak = m.gflops / m.peakGflops;
  m.threads = 2;
  return m;
}

driver::MeasureOptions quickOptions() {
  driver::MeasureOptions options;
  options.minSeconds = 0.02;
  options.minRepeats = 3;
  return options;
}

const QByteArray kTessel = TESSEL_BINARY_DIR "/bin/tessel";
const QString kExampleModel = QStringLiteral(TESSEL_SOURCE_DIR "/resources/examples/tiny_resnet.onnx");

// The child builds the same matmul the panel is told about.
driver::OperatorSource matmulSource(int size) {
  std::string n = std::to_string(size);
  return {"matmul", {{"m", n}, {"n", n}, {"k", n}}};
}

// A panel measuring a size x size x size matmul named "matmul_<size>".
void showMatmul(MeasurePanel& panel, int size) {
  panel.setOperatorSource(matmulSource(size));
  panel.setTask(QStringLiteral("matmul_%1").arg(size), matmul(size, size, size));
}

void saveScreenshot(QWidget& widget, const char* name) {
  widget.grab().save(QStringLiteral(TESSEL_BINARY_DIR "/") + name);
}

}  // namespace

class TestScheduleMeasure : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() {
    QVERIFY2(QFileInfo(QString(kTessel)).isExecutable(), kTessel + " is not built");
    qputenv("TESSEL_CLI", kTessel);
  }

  void historyModelPassesTheModelTester() {
    MeasureHistory history;
    MeasureHistoryModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setHistory(&history);
    model.setTask("conv");
    history.add("conv", "", measurementOf(2.0));
    history.add("other", "", measurementOf(1.0));
    history.add("conv", "vectorize(C, j)", measurementOf(1.5));
    history.add("conv", "vectorize(C, j)\nparallel(C, i)", measurementOf(3.0));
    QCOMPARE(model.rowCount(), 3);
    QCOMPARE(model.columnCount(), int(MeasureHistoryModel::ColumnCount));
    // The fastest variant (the second) is the one marked best.
    for (int row = 0; row < 3; ++row)
      QCOMPARE(model.index(row, 0).data(MeasureHistoryModel::IsBestRole).toBool(), row == 1);
    QCOMPARE(model.index(2, MeasureHistoryModel::ChangeColumn).data().toString(), QString("+ parallel(C, i)"));
    model.setTask("other");
    QCOMPARE(model.rowCount(), 1);
    model.setTask("conv");
    history.clear("conv");
    QCOMPARE(model.rowCount(), 0);
    std::vector<MeasuredVariant> restored(2);
    restored[0].number = 1;
    restored[0].measurement = measurementOf(1.0);
    restored[1].number = 2;
    restored[1].measurement = measurementOf(0.5);
    history.restore("conv", restored);
    QCOMPARE(model.rowCount(), 2);
    QVERIFY(model.index(1, 0).data(MeasureHistoryModel::IsBestRole).toBool());
    MeasureHistory other;
    model.setHistory(&other);
    QCOMPARE(model.rowCount(), 0);
  }

  void historyRoundTripsThroughJson() {
    MeasureHistory history;
    history.add("conv", "", measurementOf(2.0));
    history.add("conv", "vectorize(C, j)", measurementOf(1.5));
    history.add("dense", "parallel(C, i)", measurementOf(0.25));
    QJsonObject json = history.toJson();
    MeasureHistory restored;
    MeasureHistoryModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setHistory(&restored);
    model.setTask("conv");
    QCOMPARE(restored.restoreFromJson(json), 3);
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(restored.tasks(), history.tasks());
    for (const QString& task : history.tasks()) {
      const auto& before = history.variants(task);
      const auto& after = restored.variants(task);
      QCOMPARE(after.size(), before.size());
      for (size_t i = 0; i < before.size(); ++i) {
        QCOMPARE(after[i].number, before[i].number);
        QCOMPARE(after[i].traceText, before[i].traceText);
        QCOMPARE(after[i].change, before[i].change);
        QCOMPARE(after[i].measuredAt.toString(Qt::ISODate), before[i].measuredAt.toString(Qt::ISODate));
        QCOMPARE(after[i].measurement.medianMilliseconds, before[i].measurement.medianMilliseconds);
        QCOMPARE(after[i].measurement.fractionOfPeak, before[i].measurement.fractionOfPeak);
      }
    }
    // A variant added after restoring continues the numbering.
    QCOMPARE(restored.add("conv", "vectorize(C, j)", measurementOf(1.0)).number, 3);
  }

  void scheduleChangesAreNamed() {
    QCOMPARE(describeScheduleChange(nullptr, ""), QString("default schedule"));
    QCOMPARE(describeScheduleChange(nullptr, "vectorize(C, j)"), QString("first measurement"));
    QString before = "io, ii = split(C, i, factor=8)\nunroll(C, ii)\n";
    QCOMPARE(describeScheduleChange(&before, before + "# a comment\n"), QString("unchanged"));
    QCOMPARE(describeScheduleChange(&before, "io, ii = split(C, i, factor=8)\nparallel(C, io)\n"),
             QString("- unroll(C, ii); + parallel(C, io)"));
    QCOMPARE(describeScheduleChange(&before, "io, ii = split(C, i, factor=16)\nunroll(C, ii)\n"),
             QString("io, ii = split(C, i, factor=8 → 16)"));
    QString many = "io, ii = split(C, i, factor=16)\nvectorize(C, j)\nparallel(C, io)\n";
    QCOMPARE(describeScheduleChange(&before, many), QString("+3 -2 primitives"));
  }

  void measuredMatmulAppearsInTheHistory() {
    MeasurePanel panel;
    panel.resize(760, 560);
    panel.setMeasureOptions(quickOptions());
    QSignalSpy measured(&panel, &MeasurePanel::measured);
    QSignalSpy measuring(&panel, &MeasurePanel::measuringChanged);
    Workload workload = matmul(48, 48, 48);
    panel.setOperatorSource(matmulSource(48));
    panel.setTask("matmul_48", workload);
    panel.setTraceText("");
    panel.measure();
    QVERIFY(panel.isMeasuring());
    QVERIFY(measured.wait(60000));
    QTRY_VERIFY(!panel.isMeasuring());
    QVERIFY(measuring.count() >= 2);
    QCOMPARE(panel.historyModel()->rowCount(), 1);
    QCOMPARE(panel.history()->variants("matmul_48").size(), size_t(1));
    QCOMPARE(panel.plot()->medianGraph()->dataCount(), 1);
    QVERIFY(panel.history()->variants("matmul_48")[0].measurement.medianMilliseconds > 0);

    // A second schedule: its change is named and the plot gains a point.
    panel.setTraceText("io, ii = split(C, i, factor=8)\nparallel(C, io)\n");
    panel.measure();
    QVERIFY(measured.wait(60000));
    QCOMPARE(panel.historyModel()->rowCount(), 2);
    QCOMPARE(panel.plot()->medianGraph()->dataCount(), 2);
    QCOMPARE(panel.plot()->bestMarkerGraph()->dataCount(), 1);
    QString change = panel.historyModel()->index(1, MeasureHistoryModel::ChangeColumn).data().toString();
    QVERIFY2(change.contains("+ parallel(C, io)"), qPrintable(change));
    // Both variants, measured in two child processes, are stated against this process's peak,
    // so their "of peak" figures compare. A kernel faster than that peak (taken during a busy
    // moment) makes it measured again: the peak only rises, and never falls below a kernel.
    const auto& variants = panel.history()->variants("matmul_48");
    for (const MeasuredVariant& variant : variants) QVERIFY(variant.measurement.fractionOfPeak <= 1.0 + 1e-12);
    const driver::Measurement& latest = variants[1].measurement;
    QCOMPARE(latest.peakGflops, std::max(driver::machinePeakGflops(latest.threads), latest.gflops));
    QVERIFY(variants[0].measurement.peakGflops <= latest.peakGflops);
    panel.show();
    QTest::qWait(50);
    saveScreenshot(panel, "measure_panel.png");

    // Each task keeps its own history.
    panel.setTask("matmul_16", matmul(16, 16, 16));
    QCOMPARE(panel.historyModel()->rowCount(), 0);
    QCOMPARE(panel.plot()->medianGraph()->dataCount(), 0);
    panel.setTask("matmul_48", workload);
    QCOMPARE(panel.historyModel()->rowCount(), 2);
  }

  void badScheduleShowsItsLine() {
    MeasurePanel panel;
    panel.setMeasureOptions(quickOptions());
    QSignalSpy failed(&panel, &MeasurePanel::measureFailed);
    showMatmul(panel, 16);
    panel.setTraceText("vectorize(C, j)\nunroll(C, nosuchaxis)\n");
    panel.measure();
    QVERIFY(failed.wait(60000));
    QString message = failed.at(0).at(1).toString();
    QVERIFY2(message.contains(":2:") && message.contains("nosuchaxis"), qPrintable(message));
    QCOMPARE(panel.historyModel()->rowCount(), 0);
  }

  void cancelledMeasurementRecordsNothing() {
    MeasurePanel panel;
    driver::MeasureOptions slow;
    slow.minSeconds = 30;
    slow.maxRepeats = 100000000;  // otherwise the sample cap ends a tiny kernel's run in a blink
    panel.setMeasureOptions(slow);
    QSignalSpy measured(&panel, &MeasurePanel::measured);
    showMatmul(panel, 32);
    panel.measure();
    QVERIFY(panel.isMeasuring());
    QTest::qWait(200);
    panel.cancel();
    QVERIFY(!panel.isMeasuring());
    panel.jobRunner()->waitForAll();
    QCoreApplication::processEvents();
    QCOMPARE(measured.count(), 0);
    QCOMPARE(panel.historyModel()->rowCount(), 0);
  }

  void aModelsTaskIsMeasuredByItsKernelName() {
    auto graph = driver::loadModel(kExampleModel.toStdString());
    QVERIFY(graph);
    driver::CompileOptions compile;
    compile.passes.optLevel = 2;
    auto model = driver::compileGraph(*graph, compile);
    QVERIFY(model);
    auto tasks = driver::extractTasks(*model);
    QVERIFY(tasks && !tasks->empty());
    const driver::ScheduleTask& task = tasks->back();
    MeasurePanel panel;
    panel.setMeasureOptions(quickOptions());
    QSignalSpy measured(&panel, &MeasurePanel::measured);
    QSignalSpy failed(&panel, &MeasurePanel::measureFailed);
    QString name = QString::fromStdString(task.name);
    panel.setTask(name, task.workload, task.flops);
    panel.setTraceText(QString::fromStdString(task.defaultTraceText()));
    // Without knowing the model the panel cannot build the task, and says so.
    panel.measure();
    QCOMPARE(failed.count(), 1);
    QVERIFY2(failed.at(0).at(1).toString().contains("which model"), qPrintable(failed.at(0).at(1).toString()));

    // One thread here (as a project may ask): the child must use as many, not its default.
    auto& pool = runtime::ThreadPool::global();
    int threadsBefore = pool.numThreads();
    pool.setNumThreads(1);
    panel.setModelSource(kExampleModel, {}, compile);
    panel.measure();
    pool.setNumThreads(threadsBefore);
    QVERIFY2(measured.wait(60000), qPrintable(failed.count() > 1 ? failed.last().at(1).toString() : "no result"));
    const driver::Measurement& result = panel.history()->variants(name).back().measurement;
    QCOMPARE(QString::fromStdString(result.kernelName), name);
    QCOMPARE(result.flops, task.flops);
    QCOMPARE(result.threads, 1);
    QVERIFY(result.gflops > 0);
  }

  // The window hands the workbench the session's model file and options; its Measure tab
  // then times the open task, compiled in the child under the same options.
  void theWorkbenchMeasuresItsOpenTaskFromTheModelSource() {
    auto graph = driver::loadModel(kExampleModel.toStdString());
    QVERIFY(graph);
    driver::CompileOptions compile;
    compile.passes.disabledPasses = {"AlterLayout"};
    auto model = driver::compileGraph(*graph, compile);
    QVERIFY(model);
    ScheduleWorkbench workbench;
    QSignalSpy ready(&workbench, &ScheduleWorkbench::tasksReady);
    workbench.setModelSource(kExampleModel, {}, compile);
    workbench.setModel(std::make_shared<const driver::CompiledModel>(std::move(*model)));
    QVERIFY(ready.wait(60000));
    QVERIFY(!workbench.taskNames().isEmpty());
    QString task = workbench.taskNames().first();
    QVERIFY(workbench.openTask(task));
    MeasurePanel* panel = workbench.measurePanel();
    panel->setMeasureOptions(quickOptions());
    QSignalSpy measured(panel, &MeasurePanel::measured);
    QSignalSpy failed(panel, &MeasurePanel::measureFailed);
    panel->measure();
    QVERIFY2(measured.wait(60000), qPrintable(failed.isEmpty() ? "no result" : failed.last().at(1).toString()));
    QCOMPARE(measured.at(0).at(0).toString(), task);
    QCOMPARE(QString::fromStdString(panel->history()->variants(task).back().measurement.kernelName), task);
  }

  void aCrashingChildIsAFailedMeasurementAndThePanelKeepsWorking() {
    // A stand-in for tessel that dies the way a kernel with a wild store would.
    QTemporaryDir directory;
    QString crashing =
        tessel::testing::writeShellScript(directory.path(), "tessel", "echo 'timing the kernel' >&2\nkill -SEGV $$");

    MeasurePanel panel;
    panel.setMeasureOptions(quickOptions());
    QSignalSpy measured(&panel, &MeasurePanel::measured);
    QSignalSpy failed(&panel, &MeasurePanel::measureFailed);
    showMatmul(panel, 24);
    qputenv("TESSEL_CLI", crashing.toUtf8());
    panel.measure();
    bool reported = failed.wait(60000);
    qputenv("TESSEL_CLI", kTessel);
    QVERIFY(reported);
    QString message = failed.at(0).at(1).toString();
    QVERIFY2(message.contains("crashed") && message.contains("SIGSEGV") && message.contains("matmul_24"),
             qPrintable(message));
    QVERIFY(!panel.isMeasuring());
    QCOMPARE(panel.historyModel()->rowCount(), 0);

    // The next measurement (with the real tool) works as if nothing happened.
    panel.measure();
    QVERIFY2(measured.wait(60000), qPrintable(failed.last().at(1).toString()));
    QCOMPARE(failed.count(), 1);
    QCOMPARE(panel.historyModel()->rowCount(), 1);
  }

  void cancelEndsTheChildAtOnce() {
    MeasurePanel panel;
    driver::MeasureOptions endless;
    endless.minSeconds = 600;
    endless.maxRepeats = 1000000000;
    panel.setMeasureOptions(endless);
    showMatmul(panel, 32);
    QSignalSpy progress(panel.jobRunner(), &JobRunner::jobProgress);
    panel.measure();
    // Wait until the child is timing (it reports percentages only then).
    QTRY_VERIFY_WITH_TIMEOUT(
        std::any_of(progress.begin(), progress.end(), [](const QList<QVariant>& report) { return report.at(1).toInt() >= 0; }),
        60000);
    QElapsedTimer sinceCancel;
    sinceCancel.start();
    panel.cancel();
    // The job returns only once its child is gone: with ten minutes of sampling asked for, it
    // ends now only because Cancel killed it (tens of ms; the second leaves room for a loaded
    // machine).
    panel.jobRunner()->waitForAll();
    QVERIFY2(sinceCancel.elapsed() < 1000, qPrintable(QString::number(sinceCancel.elapsed()) + " ms"));
    QVERIFY(!panel.isMeasuring());
    QCOMPARE(panel.historyModel()->rowCount(), 0);
  }
};

QTEST_MAIN(TestScheduleMeasure)
#include "test_schedule_measure.moc"
