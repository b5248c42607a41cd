// Peak FMA measurement, CPU feature detection and the benchmark timer.
#include <QtTest>

#include <cmath>
#include <thread>

#include "runtime/Error.h"
#include "runtime/PeakFlops.h"
#include "runtime/ThreadPool.h"
#include "runtime/Timer.h"

using namespace tessel::runtime;

class TestPeakFlops : public QObject {
  Q_OBJECT
private slots:
  void probeSamplesAreFiniteAndPositive() {
    ThreadPool pool(2);
    PeakProbe probe(pool, bestFmaKernel(), 0.002);
    for (int i = 0; i < 5; ++i) {
      double rate = probe.sampleGflops();
      QVERIFY2(std::isfinite(rate) && rate > 0, qPrintable(QString::number(rate)));
    }
    // A sustained block runs whole launches back to back until its time is up.
    QElapsedTimer timer;
    timer.start();
    double sustained = probe.sustainedGflops(0.05);
    QVERIFY(timer.elapsed() >= 50);
    QVERIFY(std::isfinite(sustained) && sustained > 0);
  }

  void probeRefusesKernelsTheCpuLacks() {
    for (FmaKernel kernel :
         {FmaKernel::AVX2, FmaKernel::AVX512, FmaKernel::Int8VNNI, FmaKernel::BFloat16Dot, FmaKernel::Int8Tile}) {
      if (supportsFmaKernel(kernel)) continue;
      ThreadPool pool(1);
      QVERIFY_THROWS_EXCEPTION(Error, PeakProbe(pool, kernel));
    }
  }

  void reportsCpuFeatures() {
    QString summary = QString::fromStdString(cpuFeatureSummary());
    QVERIFY(!summary.isEmpty());
    // The feature list must agree with the kernel chosen for this CPU.
    if (bestFmaKernel() == FmaKernel::AVX512) QVERIFY2(summary.contains("avx512f"), qPrintable(summary));
    if (supportsFmaKernel(FmaKernel::AVX2)) QVERIFY2(summary.contains("avx2") && summary.contains("fma"), qPrintable(summary));
  }

  void everySupportedKernelMeasuresAFinitePositiveRate_data() {
    QTest::addColumn<int>("kernel");
    QTest::addColumn<int>("threads");
    for (FmaKernel kernel : {FmaKernel::Scalar, FmaKernel::AVX2, FmaKernel::AVX512, FmaKernel::Int8VNNI,
                              FmaKernel::BFloat16Dot, FmaKernel::Int8Tile}) {
      QTest::addRow("%s, 1 thread", toString(kernel)) << int(kernel) << 1;
      QTest::addRow("%s, 2 threads", toString(kernel)) << int(kernel) << 2;
    }
  }
  void everySupportedKernelMeasuresAFinitePositiveRate() {
    QFETCH(int, kernel);
    QFETCH(int, threads);
    auto chosen = static_cast<FmaKernel>(kernel);
    if (!supportsFmaKernel(chosen)) {
      QVERIFY_THROWS_EXCEPTION(Error, measurePeakGflops(threads, chosen));
      return;
    }
    double gflops = measurePeakGflops(threads, chosen);
    QVERIFY2(std::isfinite(gflops) && gflops > 0, qPrintable(QString::number(gflops)));
  }

  void defaultMeasurementUsesTheBestKernel() {
    double gflops = measurePeakGflops(0);
    QVERIFY2(std::isfinite(gflops) && gflops > 0, qPrintable(QString::number(gflops)));
  }

  void timerReportsTheMedianOfASleepingCall() {
    TimerOptions options;
    options.minSamples = 3;
    options.minTotalSeconds = 0;
    int calls = 0;
    double seconds = medianSecondsPerCall(
        [&] {
          ++calls;
          std::this_thread::sleep_for(std::chrono::milliseconds(2));
        },
        options);
    QVERIFY2(seconds >= 0.002, qPrintable(QString::number(seconds)));
    QCOMPARE(calls, 1 + 1 + 2);  // one warm-up, the sizing call (a sample), two more samples
  }

  void timerBatchesVeryShortCalls() {
    TimerOptions options;
    options.minSamples = 4;
    options.minTotalSeconds = 0;
    options.minSampleSeconds = 1e-3;
    long calls = 0;
    std::vector<double> samples = sampleSecondsPerCall([&] { ++calls; }, options);
    QCOMPARE(int(samples.size()), 4);
    QVERIFY(calls > 100);  // each sample is a batch of many calls
    for (double sample : samples) QVERIFY(sample >= 0 && sample < 1e-4);
  }

  void medianIsTheMiddleValue() {
    QCOMPARE(median({5, 1, 3}), 3.0);
    QCOMPARE(median({4, 1, 3, 2}), 2.5);
    QCOMPARE(median({}), 0.0);
  }
};

QTEST_GUILESS_MAIN(TestPeakFlops)
#include "test_peak_flops.moc"
