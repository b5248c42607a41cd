// The runtime thread pool: exact coverage of every range, nesting, concurrency, thread counts.
#include <QtTest>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "runtime/Error.h"
#include "runtime/ThreadPool.h"

using namespace tessel::runtime;

namespace {

struct Chunk {
  int64_t begin, end;
  std::thread::id thread;
};

/// Runs one loop and returns its chunks sorted by begin.
std::vector<Chunk> recordChunks(ThreadPool& pool, int64_t extent) {
  std::mutex mutex;
  std::vector<Chunk> chunks;
  pool.parallelFor(extent, [&](int64_t begin, int64_t end) {
    std::lock_guard lock(mutex);
    chunks.push_back({begin, end, std::this_thread::get_id()});
  });
  std::sort(chunks.begin(), chunks.end(), [](const Chunk& a, const Chunk& b) { return a.begin < b.begin; });
  return chunks;
}

/// Sum of 0..extent-1 computed through the pool.
int64_t parallelSum(ThreadPool& pool, int64_t extent) {
  std::atomic<int64_t> sum{0};
  pool.parallelFor(extent, [&](int64_t begin, int64_t end) {
    int64_t partial = 0;
    for (int64_t i = begin; i < end; ++i) partial += i;
    sum.fetch_add(partial);
  });
  return sum.load();
}

/// Sets an environment variable for one scope and restores the previous value.
class ScopedEnvironment {
public:
  ScopedEnvironment(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) previous_ = old, hadValue_ = true;
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~ScopedEnvironment() {
    if (hadValue_) setenv(name_, previous_.c_str(), 1);
    else unsetenv(name_);
  }

private:
  const char* name_;
  std::string previous_;
  bool hadValue_ = false;
};

}  // namespace

class TestThreadPool : public QObject {
  Q_OBJECT
private slots:
  void visitsEveryIterationExactlyOnce_data() {
    QTest::addColumn<int>("threads");
    QTest::addColumn<qlonglong>("extent");
    for (int threads : {1, 2, 3, 4, 8})
      for (qlonglong extent : {0LL, 1LL, 2LL, 3LL, 5LL, 7LL, 8LL, 9LL, 100LL, 1001LL, 65537LL})
        QTest::addRow("%d threads, extent %lld", threads, extent) << threads << extent;
  }
  void visitsEveryIterationExactlyOnce() {
    QFETCH(int, threads);
    QFETCH(qlonglong, extent);
    ThreadPool pool(threads);
    std::vector<std::atomic<int>> visits(extent);
    for (int launch = 0; launch < 20; ++launch) {
      pool.parallelFor(extent, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) visits[i].fetch_add(1);
      });
    }
    for (qlonglong i = 0; i < extent; ++i) QCOMPARE(visits[i].load(), 20);
  }

  void sumsExactlyOverThousandsOfLaunches() {
    ThreadPool pool(4);
    for (int launch = 0; launch < 5000; ++launch) {
      int64_t extent = 1 + launch % 257;
      int64_t sum = parallelSum(pool, extent);
      if (sum != extent * (extent - 1) / 2)
        QFAIL(qPrintable(QString("launch %1, extent %2: sum %3").arg(launch).arg(extent).arg(sum)));
    }
  }

  void wakesSleepingWorkersAfterIdlePauses() {
    // Pauses longer than the workers' spinning put them to sleep before each launch.
    ThreadPool pool(3);
    for (int launch = 0; launch < 40; ++launch) {
      std::this_thread::sleep_for(std::chrono::milliseconds(launch % 2 ? 5 : 0));
      QCOMPARE(int(recordChunks(pool, 30).size()), 3);
      QCOMPARE(parallelSum(pool, 1000 + launch), int64_t(1000 + launch) * (999 + launch) / 2);
    }
  }

  void waitsForALongRunningChunk() {
    // The caller finishes its chunk long before the others, so it must sleep, then wake.
    ThreadPool pool(3);
    for (int launch = 0; launch < 5; ++launch) {
      std::atomic<int> finished{0};
      pool.parallelFor(3, [&](int64_t begin, int64_t) {
        if (begin == 2) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        finished.fetch_add(1);
      });
      QCOMPARE(finished.load(), 3);
    }
  }

  void splitsIntoOneContiguousBalancedChunkPerThread_data() {
    QTest::addColumn<int>("threads");
    QTest::addColumn<qlonglong>("extent");
    QTest::addColumn<int>("expectedChunks");
    QTest::newRow("more iterations than threads") << 4 << 103LL << 4;
    QTest::newRow("fewer iterations than threads") << 4 << 3LL << 3;
    QTest::newRow("exactly one per thread") << 3 << 3LL << 3;
    QTest::newRow("single thread") << 1 << 50LL << 1;
  }
  void splitsIntoOneContiguousBalancedChunkPerThread() {
    QFETCH(int, threads);
    QFETCH(qlonglong, extent);
    QFETCH(int, expectedChunks);
    ThreadPool pool(threads);
    std::vector<Chunk> chunks = recordChunks(pool, extent);
    QCOMPARE(int(chunks.size()), expectedChunks);
    int64_t next = 0, smallest = extent, largest = 0;
    std::set<std::thread::id> threadsUsed;
    for (const Chunk& chunk : chunks) {
      QCOMPARE(chunk.begin, next);
      next = chunk.end;
      smallest = std::min(smallest, chunk.end - chunk.begin);
      largest = std::max(largest, chunk.end - chunk.begin);
      threadsUsed.insert(chunk.thread);
    }
    QCOMPARE(next, int64_t(extent));
    QVERIFY(largest - smallest <= 1);
    QCOMPARE(int(threadsUsed.size()), expectedChunks);
    QVERIFY(threadsUsed.count(std::this_thread::get_id()) == 1);  // the caller takes part
  }

  void nestedLoopRunsInlineOnTheCallingThread() {
    ThreadPool pool(4);
    std::atomic<int> innerCalls{0}, wholeRangeOnSameThread{0};
    std::atomic<int64_t> sum{0};
    pool.parallelFor(8, [&](int64_t begin, int64_t end) {
      for (int64_t outer = begin; outer < end; ++outer) {
        std::thread::id outerThread = std::this_thread::get_id();
        pool.parallelFor(100, [&](int64_t innerBegin, int64_t innerEnd) {
          innerCalls.fetch_add(1);
          if (innerBegin == 0 && innerEnd == 100 && std::this_thread::get_id() == outerThread)
            wholeRangeOnSameThread.fetch_add(1);
          for (int64_t i = innerBegin; i < innerEnd; ++i) sum.fetch_add(outer * 100 + i);
        });
      }
    });
    QCOMPARE(innerCalls.load(), 8);
    QCOMPARE(wholeRangeOnSameThread.load(), 8);
    QCOMPARE(sum.load(), int64_t(800 * 799 / 2));
    QVERIFY(!ThreadPool::insideParallelBody());
  }

  void concurrentCallsFromApplicationThreadsStayExact() {
    ThreadPool pool(3);
    std::atomic<int> wrongSums{0};
    std::vector<std::thread> applicationThreads;
    for (int t = 0; t < 4; ++t) {
      applicationThreads.emplace_back([&, t] {
        for (int launch = 0; launch < 500; ++launch) {
          int64_t extent = 10 + (launch * 7 + t) % 300;
          if (parallelSum(pool, extent) != extent * (extent - 1) / 2) wrongSums.fetch_add(1);
        }
      });
    }
    for (std::thread& thread : applicationThreads) thread.join();
    QCOMPARE(wrongSums.load(), 0);
  }

  void threadCountComesFromTheApi() {
    ThreadPool pool(2);
    QCOMPARE(pool.numThreads(), 2);
    QCOMPARE(int(recordChunks(pool, 1000).size()), 2);
    pool.setNumThreads(5);
    QCOMPARE(pool.numThreads(), 5);
    QCOMPARE(int(recordChunks(pool, 1000).size()), 5);
    QCOMPARE(parallelSum(pool, 12345), int64_t(12345) * 12344 / 2);
    pool.setNumThreads(1);
    QCOMPARE(int(recordChunks(pool, 1000).size()), 1);
    pool.setNumThreads(0);
    QCOMPARE(pool.numThreads(), ThreadPool::defaultNumThreads());
  }

  void threadCountComesFromTheEnvironment() {
    int withoutVariable;
    {
      ScopedEnvironment unset("TESSEL_NUM_THREADS", nullptr);
      withoutVariable = ThreadPool::defaultNumThreads();
      QVERIFY(withoutVariable >= 1);
    }
    {
      ScopedEnvironment three("TESSEL_NUM_THREADS", "3");
      QCOMPARE(ThreadPool::defaultNumThreads(), 3);
      ThreadPool pool;
      QCOMPARE(pool.numThreads(), 3);
      QCOMPARE(int(recordChunks(pool, 99).size()), 3);
    }
    for (const char* invalid : {"abc", "0", "-2", "4x", ""}) {
      ScopedEnvironment bad("TESSEL_NUM_THREADS", invalid);
      QCOMPARE(ThreadPool::defaultNumThreads(), withoutVariable);
    }
  }

  void exceptionInAWorkerReachesTheCaller() {
    ThreadPool pool(4);
    bool caught = false;
    try {
      pool.parallelFor(100, [&](int64_t begin, int64_t end) {
        if (begin <= 60 && 60 < end) throw std::runtime_error("iteration 60 failed");
      });
    } catch (const std::runtime_error& error) {
      caught = QString(error.what()) == "iteration 60 failed";
    }
    QVERIFY(caught);
    // The pool keeps working after a failed loop.
    QCOMPARE(parallelSum(pool, 1000), int64_t(1000 * 999 / 2));
  }

  void firstNonZeroStatusReachesTheCaller() {
    ThreadPool pool(4);
    int32_t status = pool.parallelFor(100, [](int64_t begin, int64_t end) -> int {
      if (begin >= 50) return 9;
      if (begin >= 25) return 7;
      return 0;
    });
    QCOMPARE(status, 7);
    QCOMPARE(pool.parallelFor(100, [](int64_t, int64_t) { return 0; }), 0);
  }

  void changingThreadCountInsideABodyIsAnError() {
    ThreadPool pool(2);
    std::atomic<int> errors{0};
    pool.parallelFor(2, [&](int64_t, int64_t) {
      try {
        pool.setNumThreads(3);
      } catch (const Error&) {
        errors.fetch_add(1);
      }
    });
    QCOMPARE(errors.load(), 2);
    QCOMPARE(pool.numThreads(), 2);
  }

  void globalPoolRunsLoops() {
    ThreadPool& pool = ThreadPool::global();
    QVERIFY(pool.numThreads() >= 1);
    QCOMPARE(parallelSum(pool, 100000), int64_t(100000) * 99999 / 2);
  }
};

QTEST_GUILESS_MAIN(TestThreadPool)
#include "test_thread_pool.moc"
