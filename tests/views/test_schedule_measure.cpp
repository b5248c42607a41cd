// The Measure panel: its history table passes the model tester, a measured matmul appears in
// the table and the plot, the change against the previous schedule is named, and a bad
// schedule shows its line.
#include <QAbstractItemModelTester>
#include <QJsonObject>
#include <QLabel>
#include <QTableView>
#include <QtTest>

#include "compiler/ops/Matmul.h"
#include "views/schedule/MeasureHistory.h"
#include "views/schedule/MeasureHistoryModel.h"
#include "views/schedule/MeasurePanel.h"
#include "views/schedule/MeasurePlot.h"

using namespace tessel;
using namespace tessel::views;

namespace {

driver::Measurement measurementOf(double medianMs) {
  driver::Measurement m;
  m.kernelName = "k";
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

void saveScreenshot(QWidget& widget, const char* name) {
  widget.grab().save(QStringLiteral(TESSEL_BINARY_DIR "/") + name);
}

}  // namespace

class TestScheduleMeasure : public QObject {
  Q_OBJECT
private slots:
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
    panel.setTask("matmul_16", matmul(16, 16, 16));
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
    panel.setTask("matmul_32", matmul(32, 32, 32));
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
};

QTEST_MAIN(TestScheduleMeasure)
#include "test_schedule_measure.moc"
