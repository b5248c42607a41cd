// The iteration-order animation: stepping shows one more step's cells on screen, a new
// schedule restarts it, playing runs to the end, and a bad schedule shows its line.
#include <QtTest>

#include "compiler/lower/Lower.h"
#include "compiler/ops/Matmul.h"
#include "compiler/schedule/TraceText.h"
#include "views/schedule/IterationOrderCanvas.h"
#include "views/schedule/IterationOrderView.h"

using namespace tessel;
using namespace tessel::views;

namespace {

const char* kTiledVectorParallel =
    "io, jo, ii, ji = tile(C, i, j, 8, 8)\n"
    "reorder(C, io, jo, ii, k, ji)\n"
    "vectorize(C, ji)\n"
    "parallel(C, io)\n";

IterationOrder orderOf(const Workload& workload, const std::string& traceText, int threads) {
  auto trace = parseTraceText(traceText);
  TESSEL_ICHECK(trace.ok()) << trace.error().toString();
  auto schedule = Schedule::replay(workload.outputs, *trace);
  TESSEL_ICHECK(schedule.ok()) << schedule.error().toString();
  auto lowered = lower(*schedule, workload.args(), workload.name);
  TESSEL_ICHECK(lowered.ok()) << lowered.error().toString();
  IterationOrderOptions options;
  options.threads = threads;
  return *iterationOrder(lowered->func, options);
}

// Cells that look produced on screen: their colour is not the empty canvas colour.
int paintedCells(IterationOrderCanvas* canvas, const IterationOrder& order) {
  QImage image = canvas->grab().toImage();
  QColor empty = canvas->palette().color(QPalette::Base);
  int painted = 0;
  for (int row = 0; row < order.rows; ++row)
    for (int column = 0; column < order.columns; ++column) {
      QRectF r = canvas->cellRect(row, column);
      // Off the centre, where a step number may be drawn, and off the edges, where outlines are.
      QPointF probe = r.topLeft() + QPointF(r.width() * 0.22, r.height() * 0.22);
      if (image.pixelColor(probe.toPoint()) != empty) ++painted;
    }
  return painted;
}

void saveScreenshot(QWidget& widget, const char* name) {
  widget.grab().save(QStringLiteral(TESSEL_BINARY_DIR "/") + name);
}

}  // namespace

class TestIterationOrderView : public QObject {
  Q_OBJECT
private slots:
  void eachStepShowsItsCells() {
    IterationOrderView view;
    view.setAutoPlay(false);
    view.resize(560, 620);
    view.show();
    IterationOrder order = orderOf(matmul(8, 8, 4), "", 1);
    view.setOrder(order);
    QCOMPARE(view.stepCount(), int64_t(64));
    QCOMPARE(view.currentStep(), int64_t(0));
    QVERIFY(!view.isPlaying());
    QCOMPARE(paintedCells(view.canvas(), order), 0);
    for (int i = 0; i < 5; ++i) view.stepForward();
    QCOMPARE(view.currentStep(), int64_t(5));
    QCOMPARE(view.producedCellCount(), int64_t(5));
    QCOMPARE(paintedCells(view.canvas(), order), 5);
    view.stepBackward();
    QCOMPARE(paintedCells(view.canvas(), order), 4);
    view.setCurrentStep(1000);
    QCOMPARE(view.currentStep(), int64_t(64));
    QCOMPARE(paintedCells(view.canvas(), order), 64);
  }

  void vectorAndParallelStepsProduceManyCells() {
    IterationOrderView view;
    view.setAutoPlay(false);
    view.resize(620, 680);
    view.show();
    IterationOrder order = orderOf(matmul(32, 16, 8), kTiledVectorParallel, 4);
    view.setOrder(order);
    QCOMPARE(view.stepCount(), int64_t(16));
    view.stepForward();
    // Four threads each wrote one 8-lane vector in the first step.
    QCOMPARE(view.producedCellCount(), int64_t(32));
    QCOMPARE(paintedCells(view.canvas(), order), 32);
    view.setCurrentStep(6);
    QCOMPARE(paintedCells(view.canvas(), order), 6 * 32);
    QTest::qWait(20);
    saveScreenshot(view, "iteration_order_parallel.png");
  }

  void newScheduleRestartsTheAnimation() {
    IterationOrderView view;
    view.setAutoPlay(false);
    view.setThreads(2);
    view.resize(560, 620);
    view.show();
    QSignalSpy changed(&view, &IterationOrderView::orderChanged);
    Workload workload = matmul(16, 16, 8);
    view.setSchedule(workload, "");
    QVERIFY(changed.wait(30000));
    QCOMPARE(view.stepCount(), int64_t(256));
    view.setCurrentStep(100);
    QCOMPARE(view.currentStep(), int64_t(100));
    auto rowMajor = view.order();
    view.setSchedule(workload, kTiledVectorParallel);
    QVERIFY(changed.wait(30000));
    QCOMPARE(view.currentStep(), int64_t(0));
    QVERIFY(view.stepCount() < int64_t(256));
    QVERIFY(view.order() != rowMajor);
    QCOMPARE(view.order()->threads, 2);
    view.setCurrentStep(view.stepCount() / 2);
    QTest::qWait(20);
    saveScreenshot(view, "iteration_order_schedule.png");
  }

  void moreThreadsSplitTheParallelLoopFurther() {
    IterationOrderView view;
    view.setAutoPlay(false);
    view.setThreads(2);
    QSignalSpy changed(&view, &IterationOrderView::orderChanged);
    view.setSchedule(matmul(32, 16, 8), kTiledVectorParallel);
    QVERIFY(changed.wait(30000));
    QCOMPARE(view.order()->threads, 2);
    int64_t twoThreadSteps = view.stepCount();
    view.setThreads(4);
    QVERIFY(changed.wait(30000));
    QCOMPARE(view.order()->threads, 4);
    QCOMPARE(view.stepCount() * 2, twoThreadSteps);
  }

  void playingRunsToTheEnd() {
    IterationOrderView view;
    view.resize(400, 440);
    view.show();
    QSignalSpy playing(&view, &IterationOrderView::playingChanged);
    view.setStepsPerSecond(5000);
    view.setOrder(orderOf(matmul(8, 8, 4), "", 1));
    QVERIFY(view.isPlaying());
    QTRY_COMPARE_WITH_TIMEOUT(view.currentStep(), int64_t(64), 10000);
    QTRY_VERIFY(!view.isPlaying());
    QCOMPARE(playing.count(), 2);
    // Playing again from the end starts over.
    view.play();
    QVERIFY(view.isPlaying());
    QVERIFY(view.currentStep() < int64_t(64));
  }

  void badScheduleShowsItsLine() {
    IterationOrderView view;
    QSignalSpy failed(&view, &IterationOrderView::failed);
    view.setSchedule(matmul(8, 8, 8), "vectorize(C, j)\nsplit(C, nosuch, factor=2)\n");
    QVERIFY(failed.wait(30000));
    QVERIFY2(failed.at(0).at(0).toString().contains(":2:"), qPrintable(failed.at(0).at(0).toString()));
  }

  void screenshotOfTheDefaultMatmulSchedule() {
    IterationOrderView view;
    view.setAutoPlay(false);
    view.resize(720, 760);
    view.show();
    Workload workload = matmul(64, 64, 64);
    auto schedule = defaultMatmulSchedule(workload);
    QVERIFY(schedule.ok());
    auto lowered = lower(*schedule, workload.args(), workload.name);
    QVERIFY(lowered.ok());
    QSignalSpy changed(&view, &IterationOrderView::orderChanged);
    view.setLoweredFunction(lowered->func);
    QVERIFY(changed.wait(30000));
    QVERIFY(view.stepCount() > 0);
    QCOMPARE(view.order()->cells.size(), size_t(64 * 64));
    view.setCurrentStep(view.stepCount() / 3);
    QTest::qWait(20);
    saveScreenshot(view, "iteration_order_default_matmul.png");
  }
};

QTEST_MAIN(TestIterationOrderView)
#include "test_iteration_order_view.moc"
