// Measuring a kernel: a matmul gets a positive latency and a rate below the machine's peak, a
// bfloat16 dot kernel is held to the bfloat16 ceiling, bad schedules report their line, and a
// cancelled measurement stops.
#include <QtTest>

#include "compiler/driver/Driver.h"
#include "compiler/driver/MeasureKernel.h"
#include "compiler/driver/ScheduleTask.h"
#include "compiler/ops/Matmul.h"
#include "compiler/schedule/TraceText.h"
#include "LoweringWorkloads.h"
#include "runtime/PeakFlops.h"

using namespace tessel;
using namespace tessel::driver;

class TestMeasureKernel : public QObject {
  Q_OBJECT
private slots:
  void matmulHasPositiveLatencyBelowPeak() {
    Workload workload = matmul(64, 64, 64);
    auto schedule = defaultMatmulSchedule(workload);
    QVERIFY(schedule.ok());
    MeasureOptions options;
    options.minSeconds = 0.05;
    int lastPercent = -1;
    options.progress = [&](int percent) { lastPercent = percent; };
    auto measured = measureKernel(workload, *schedule, options);
    QVERIFY2(measured.ok(), measured.ok() ? "" : measured.error().toString().c_str());
    QCOMPARE(measured->kernelName, workload.name);
    QVERIFY(measured->samples >= options.minRepeats);
    QVERIFY(measured->minMilliseconds > 0);
    QVERIFY(measured->minMilliseconds <= measured->medianMilliseconds);
    QCOMPARE(measured->flops, 2.0 * 64 * 64 * 64);
    QVERIFY(measured->gflops > 0);
    QVERIFY(measured->peakGflops > 0);
    QVERIFY2(measured->gflops <= measured->peakGflops,
             qPrintable(QString("%1 GFLOP/s above a peak of %2").arg(measured->gflops).arg(measured->peakGflops)));
    QVERIFY(measured->fractionOfPeak > 0 && measured->fractionOfPeak <= 1);
    QCOMPARE(lastPercent, 100);
  }

  void measuresEveryTaskOfTheExampleModel() {
    auto graph = driver::loadModel(TESSEL_SOURCE_DIR "/resources/examples/tiny_resnet.onnx");
    QVERIFY2(graph.ok(), graph.ok() ? "" : graph.error().toString().c_str());
    auto model = driver::compileGraph(*graph);
    QVERIFY2(model.ok(), model.ok() ? "" : model.error().toString().c_str());
    auto tasks = extractTasks(*model);
    QVERIFY2(tasks.ok(), tasks.ok() ? "" : tasks.error().toString().c_str());
    QVERIFY(!tasks->empty());
    MeasureOptions options;
    options.minSeconds = 0.005;
    options.minRepeats = 2;
    for (const ScheduleTask& task : *tasks) {
      auto measured = measureKernel(task.workload, task.defaultTrace, options);
      QVERIFY2(measured.ok(), measured.ok() ? "" : measured.error().toString().c_str());
      QVERIFY2(measured->medianMilliseconds > 0, task.name.c_str());
      QVERIFY(measured->gflops <= measured->peakGflops);
    }
  }

  // A kernel of tensorized bfloat16 dot products is held to the vdpbf16ps ceiling where the
  // CPU has one (twice the FMA rate), else to the float32 one its fallback runs at.
  void bfloat16DotKernelIsHeldToTheBFloat16Peak() {
    auto lowering = testing::bfloat16MatmulWorkload(8, 64, 256);
    Workload workload;
    workload.name = "bf16_matmul";
    workload.inputs = lowering.inputs;
    workload.outputs = lowering.outputs;
    workload.flops = 2.0 * 8 * 64 * 256;
    auto trace = parseTraceText("jo, ji = split(C, j, factor=16)\nko, ki = split(C, k, factor=2)\n"
                                "reorder(C, jo, i, ko, ji, ki)\ntensorize(C, ji, dot_16x2_bf16)\n");
    QVERIFY(trace.ok());
    MeasureOptions options;
    options.minSeconds = 0.01;
    auto measured = measureKernel(workload, *trace, options);
    QVERIFY2(measured.ok(), measured.ok() ? "" : measured.error().toString().c_str());
    QVERIFY(measured->gflops > 0);
    double bfloat16Peak = machineBFloat16PeakGflops(measured->threads);
    if (runtime::supportsFmaKernel(runtime::FmaKernel::BFloat16Dot)) {
      QVERIFY(bfloat16Peak > 0);
      QCOMPARE(measured->peakGflops, std::max(bfloat16Peak, measured->gflops));
    } else {
      QCOMPARE(bfloat16Peak, 0.0);
      QVERIFY(measured->peakGflops >= machinePeakGflops(measured->threads));
    }
  }

  void peakIsCachedPerThreadCount() {
    double first = machinePeakGflops(1);
    QVERIFY(first > 0);
    QCOMPARE(machinePeakGflops(1), first);
  }

  void measuresAnEditedTrace() {
    Workload workload = matmul(32, 32, 16);
    auto trace = parseTraceText("io, jo, ii, ji = tile(C, i, j, 8, 8)\nvectorize(C, ji)\n");
    QVERIFY(trace.ok());
    MeasureOptions options;
    options.minSeconds = 0.01;
    auto measured = measureKernel(workload, *trace, options);
    QVERIFY2(measured.ok(), measured.ok() ? "" : measured.error().toString().c_str());
    QVERIFY(measured->medianMilliseconds > 0);
  }

  void badTraceNamesItsLine() {
    Workload workload = matmul(16, 16, 16);
    auto trace = parseTraceText("vectorize(C, j)\nunroll(C, nosuchaxis)\n");
    QVERIFY(trace.ok());
    auto measured = measureKernel(workload, *trace);
    QVERIFY(!measured.ok());
    QCOMPARE(measured.error().line, 2);
    QVERIFY2(QString::fromStdString(measured.error().message).contains("nosuchaxis"),
             measured.error().message.c_str());
  }

  void cancellingStopsTheMeasurement() {
    Workload workload = matmul(32, 32, 32);
    auto schedule = defaultMatmulSchedule(workload);
    QVERIFY(schedule.ok());
    MeasureOptions options;
    options.minSeconds = 60;  // would take a minute if cancelling did not work
    int asked = 0;
    options.cancelled = [&] { return ++asked > 3; };
    auto measured = measureKernel(workload, *schedule, options);
    QVERIFY(!measured.ok());
    QVERIFY(QString::fromStdString(measured.error().message).contains("cancelled"));
  }
};

QTEST_GUILESS_MAIN(TestMeasureKernel)
#include "test_measure_kernel.moc"
