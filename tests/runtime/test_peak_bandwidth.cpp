// The memory bandwidth probe (the roofline's slanted ceiling) and the cache sizes it sizes its arrays by.
#include <QtTest>

#include <cmath>

#include "runtime/PeakBandwidth.h"
#include "runtime/PeakFlops.h"

using namespace tessel::runtime;

class TestPeakBandwidth : public QObject {
  Q_OBJECT
private slots:
  void lastLevelCacheIsPlausible() {
    // Every machine the tests run on reports its caches; none has a last level under 64 KiB
    // or over 4 GiB per instance.
    LastLevelCache cache = lastLevelCache();
    qInfo("last-level cache: %zu KiB x %d", cache.bytes >> 10, cache.instances);
    QVERIFY2(cache.bytes >= (size_t(64) << 10) && cache.bytes <= (size_t(4) << 30), qPrintable(QString::number(cache.bytes)));
    QVERIFY(cache.instances >= 1);
  }

  void memoryBandwidthIsBelowTheCachesAndAboveZero() {
    // Memory is slower than the registers: a byte per flop of peak at the very most (real
    // machines: 0.05-0.3), and any machine streams more than 1 GB/s.
    QElapsedTimer timer;
    timer.start();
    double bandwidth = measureMemoryBandwidthGBps(0);
    qint64 elapsed = timer.elapsed();
    double peak = measurePeakGflops(0);
    qInfo("memory bandwidth %.1f GB/s in %lld ms, FMA peak %.0f GFLOP/s", bandwidth, elapsed, peak);
    QVERIFY2(std::isfinite(bandwidth) && bandwidth > 1, qPrintable(QString::number(bandwidth)));
    QVERIFY2(bandwidth < peak, qPrintable(QString("%1 GB/s against %2 GFLOP/s").arg(bandwidth).arg(peak)));
  }

  void oneThreadIsMeasuredToo() {
    double bandwidth = measureMemoryBandwidthGBps(1);
    QVERIFY2(std::isfinite(bandwidth) && bandwidth > 1, qPrintable(QString::number(bandwidth)));
  }
};

QTEST_GUILESS_MAIN(TestPeakBandwidth)
#include "test_peak_bandwidth.moc"
