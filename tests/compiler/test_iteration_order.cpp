// The production order of a matmul's output under different schedules: row-major by default,
// tile by tile when tiled, vector lanes together, parallel chunks on distinct threads.
#include <QtTest>

#include <set>

#include "compiler/driver/Driver.h"
#include "compiler/lower/IterationOrder.h"
#include "compiler/lower/Lower.h"
#include "compiler/ops/Matmul.h"
#include "compiler/schedule/TraceText.h"

using namespace tessel;

namespace {

// The final loop IR of `workload` under the schedule written as `traceText`.
PrimFunc lowerWith(const Workload& workload, const std::string& traceText) {
  auto trace = parseTraceText(traceText);
  TESSEL_ICHECK(trace.ok()) << trace.error().toString();
  auto schedule = Schedule::replay(workload.outputs, *trace);
  TESSEL_ICHECK(schedule.ok()) << schedule.error().toString();
  auto lowered = lower(*schedule, workload.args(), workload.name);
  TESSEL_ICHECK(lowered.ok()) << lowered.error().toString();
  return lowered->func;
}

IterationOrder orderOf(const PrimFunc& func, IterationOrderOptions options = {}) {
  auto order = iterationOrder(func, options);
  TESSEL_ICHECK(order.ok()) << order.error().toString();
  return *order;
}

IterationOrderOptions withThreads(int threads) {
  IterationOrderOptions options;
  options.threads = threads;
  return options;
}

}  // namespace

class TestIterationOrder : public QObject {
  Q_OBJECT
private slots:
  void defaultScheduleIsRowMajorOneElementPerStep() {
    Workload workload = matmul(16, 16, 8);
    IterationOrder order = orderOf(lowerWith(workload, ""));
    QCOMPARE(order.bufferName, std::string("C"));
    QCOMPARE(order.rows, 16);
    QCOMPARE(order.columns, 16);
    QCOMPARE(order.cells.size(), size_t(256));
    QCOMPARE(order.stepCount, int64_t(256));
    QCOMPARE(order.threads, 1);
    QCOMPARE(order.widestVector, 1);
    QVERIFY(!order.truncated);
    for (size_t i = 0; i < order.cells.size(); ++i) {
      const ProducedCell& cell = order.cells[i];
      QCOMPARE(cell.step, int64_t(i));
      QCOMPARE(cell.row, int(i / 16));
      QCOMPARE(cell.column, int(i % 16));
      QCOMPARE(cell.thread, -1);
      QCOMPARE(cell.vectorInstruction, int64_t(-1));
    }
  }

  void tiledScheduleFinishesOneTileBeforeTheNext() {
    Workload workload = matmul(16, 16, 8);
    IterationOrder order = orderOf(lowerWith(workload, "io, jo, ii, ji = tile(C, i, j, 8, 8)\n"));
    QCOMPARE(order.cells.size(), size_t(256));
    // The first 64 elements produced are exactly the top-left 8x8 tile, the next 64 the tile
    // to its right: loops io, jo, ii, ji from outer to inner.
    for (size_t i = 0; i < order.cells.size(); ++i) {
      int io = int(i / 128), jo = int(i / 64 % 2), ii = int(i / 8 % 8), ji = int(i % 8);
      QCOMPARE(order.cells[i].row, io * 8 + ii);
      QCOMPARE(order.cells[i].column, jo * 8 + ji);
    }
    // Different from the default schedule's row-major order.
    IterationOrder rowMajor = orderOf(lowerWith(workload, ""));
    QVERIFY(order.cells[8].row != rowMajor.cells[8].row);
  }

  void vectorLanesAreProducedTogether() {
    Workload workload = matmul(16, 16, 8);
    IterationOrder order = orderOf(lowerWith(workload,
                                             "io, jo, ii, ji = tile(C, i, j, 8, 8)\n"
                                             "reorder(C, io, jo, ii, k, ji)\n"
                                             "vectorize(C, ji)\n"),
                                   withThreads(1));
    QCOMPARE(order.cells.size(), size_t(256));
    QCOMPARE(order.widestVector, 8);
    QCOMPARE(order.stepCount, int64_t(256 / 8));
    // Each step is one vector instruction writing 8 neighbouring elements of one row.
    for (int64_t step = 0; step < order.stepCount; ++step) {
      int64_t begin = order.cellsProducedBefore(step), end = order.cellsProducedBefore(step + 1);
      QCOMPARE(end - begin, int64_t(8));
      const ProducedCell& first = order.cells[size_t(begin)];
      QVERIFY(first.vectorInstruction >= 0);
      QCOMPARE(first.column % 8, 0);
      for (int64_t i = begin; i < end; ++i) {
        QCOMPARE(order.cells[size_t(i)].vectorInstruction, first.vectorInstruction);
        QCOMPARE(order.cells[size_t(i)].row, first.row);
        QCOMPARE(order.cells[size_t(i)].column, first.column + int(i - begin));
        QCOMPARE(order.cells[size_t(i)].lane, int(i - begin));
      }
    }
  }

  void parallelChunksRunOnDistinctThreadsAtTheSameTime() {
    Workload workload = matmul(32, 16, 8);
    IterationOrder order = orderOf(lowerWith(workload,
                                             "io, jo, ii, ji = tile(C, i, j, 8, 8)\n"
                                             "reorder(C, io, jo, ii, k, ji)\n"
                                             "vectorize(C, ji)\n"
                                             "parallel(C, io)\n"),
                                   withThreads(4));
    QCOMPARE(order.cells.size(), size_t(32 * 16));
    QCOMPARE(order.threads, 4);
    QCOMPARE(order.parallelLoop, std::string("io"));
    QCOMPARE(order.parallelLoopExtent, int64_t(4));
    // Four threads each own a block of 8 rows and work through it at the same pace: every
    // step produces one vector of each thread, 4 x 8 elements.
    QCOMPARE(order.stepCount, int64_t(2 * 8));
    for (const ProducedCell& cell : order.cells) {
      QCOMPARE(cell.thread, cell.row / 8);
      QCOMPARE(cell.parallelIteration, int64_t(cell.row / 8));
    }
    for (int64_t step = 0; step < order.stepCount; ++step) {
      std::set<int> threads;
      for (int64_t i = order.cellsProducedBefore(step); i < order.cellsProducedBefore(step + 1); ++i)
        threads.insert(order.cells[size_t(i)].thread);
      QCOMPARE(threads.size(), size_t(4));
    }
    // With two threads, two chunks of two row blocks each take twice as many steps.
    IterationOrder twoThreads = orderOf(lowerWith(workload,
                                                  "io, jo, ii, ji = tile(C, i, j, 8, 8)\n"
                                                  "reorder(C, io, jo, ii, k, ji)\n"
                                                  "vectorize(C, ji)\n"
                                                  "parallel(C, io)\n"),
                                        withThreads(2));
    QCOMPARE(twoThreads.threads, 2);
    QCOMPARE(twoThreads.stepCount, int64_t(2 * 2 * 8));
    for (const ProducedCell& cell : twoThreads.cells) QCOMPARE(cell.thread, cell.row / 16);
  }

  void reductionOutermostFinishesElementsInItsLastPass() {
    // With k outside i and j every element is updated once per k; its final value comes in
    // the last pass, which runs row-major.
    Workload workload = matmul(8, 8, 64);
    IterationOrder order = orderOf(lowerWith(workload, "reorder(C, k, i, j)\n"));
    QCOMPARE(order.cells.size(), size_t(64));
    QCOMPARE(order.stepCount, int64_t(64));
    for (size_t i = 0; i < order.cells.size(); ++i) {
      QCOMPARE(order.cells[i].row, int(i / 8));
      QCOMPARE(order.cells[i].column, int(i % 8));
    }
  }

  void bigOutputsShowTheirTopLeftTile() {
    Workload workload = matmul(100, 80, 4);
    IterationOrder order = orderOf(lowerWith(workload, ""));
    QCOMPARE(order.rows, 64);
    QCOMPARE(order.columns, 64);
    QCOMPARE(order.cells.size(), size_t(64 * 64));
    QCOMPARE(order.bufferShape, (std::vector<int64_t>{100, 80}));
    // Row 0's 64 shown elements come first, then row 1's: the 16 columns past the tile leave
    // no steps behind.
    QCOMPARE(order.cells[64].row, 1);
    QCOMPARE(order.cells[64].column, 0);
  }

  void aSmallBudgetTruncatesAndSaysSo() {
    Workload workload = matmul(32, 32, 8);
    IterationOrderOptions options;
    options.maxExecutedStatements = 200;
    IterationOrder order = orderOf(lowerWith(workload, ""), options);
    QVERIFY(order.truncated);
    QVERIFY(!order.cells.empty());
    QVERIFY(order.cells.size() < size_t(32 * 32));
    QVERIFY(!order.notes.empty());
  }

  void everyKernelOfTheExampleModelHasAnOrder() {
    // Real kernels: fused convolutions over blocked layouts, pools, elementwise epilogues.
    auto graph = driver::loadModel(TESSEL_SOURCE_DIR "/resources/examples/tiny_resnet.onnx");
    QVERIFY2(graph.ok(), graph.ok() ? "" : graph.error().toString().c_str());
    auto model = driver::compileGraph(*graph);
    QVERIFY2(model.ok(), model.ok() ? "" : model.error().toString().c_str());
    QVERIFY(!model->kernels.empty());
    for (const driver::CompiledKernel& kernel : model->kernels) {
      auto order = iterationOrder(kernel.function, withThreads(4));
      QVERIFY2(order.ok(), order.ok() ? "" : order.error().toString().c_str());
      QVERIFY2(!order->cells.empty(), kernel.name.c_str());
      QVERIFY(order->cells.size() <= size_t(order->rows) * size_t(order->columns));
      QCOMPARE(order->cellsProducedBefore(order->stepCount), int64_t(order->cells.size()));
      QCOMPARE(order->cells.back().step, order->stepCount - 1);
      // Images (NCHW, and NCHW<b>c with its channel block last) show height x width.
      if (order->bufferShape.size() >= 4) {
        QCOMPARE(order->rowDimension, 2);
        QCOMPARE(order->columnDimension, 3);
      }
      if (order->bufferShape.size() == 5 && order->bufferShape[4] > 1)
        QVERIFY(order->widestVectorInstruction > order->widestVector);
    }
  }

  void chosenDimensionsAreShown() {
    // A matmul's output seen as one row of its columns: column j of row 0 for each cell.
    Workload workload = matmul(16, 8, 4);
    IterationOrderOptions options;
    options.rowDimension = -1;
    options.columnDimension = 0;
    IterationOrder rowsAsColumns = orderOf(lowerWith(workload, ""), options);
    QCOMPARE(rowsAsColumns.rows, 1);
    QCOMPARE(rowsAsColumns.columns, 16);
    // Rows are produced one after another, 8 elements apart in the row-major order.
    for (size_t i = 0; i < rowsAsColumns.cells.size(); ++i) QCOMPARE(rowsAsColumns.cells[i].column, int(i));
    options.rowDimension = 1;
    options.columnDimension = 1;
    QVERIFY(!iterationOrder(lowerWith(workload, ""), options).ok());
  }

  void aBufferThatIsNoParameterIsADiagnostic() {
    Workload workload = matmul(8, 8, 8);
    PrimFunc func = lowerWith(workload, "");
    Buffer stranger("D", DataType::float32(), {Expr(8), Expr(8)});
    auto order = iterationOrder(func, stranger);
    QVERIFY(!order.ok());
    QVERIFY(QString::fromStdString(order.error().message).contains("'D'"));
  }
};

QTEST_GUILESS_MAIN(TestIterationOrder)
#include "test_iteration_order.moc"
