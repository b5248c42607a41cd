// The persistent worker pool that runs parallel loops of compiled kernels.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace tessel::runtime {

/// A fixed set of worker threads that stay alive between parallel loops, so a kernel can
/// launch one loop per invocation cheaply. parallelFor splits [0, extent) into contiguous
/// chunks, one per thread, and the calling thread runs the first chunk itself.
///
/// Launch rules that callers rely on:
///  - A parallelFor issued from inside a parallel body (of any pool) runs the whole range
///    inline on the calling thread, so nested parallel loops never deadlock.
///  - Calls from several application threads at once are safe: the first one gets the
///    workers, the others run their range inline on their own thread.
///  - Workers spin for a short while after a loop before going to sleep, so back-to-back
///    launches do not pay for a wake-up.
class ThreadPool {
public:
  /// The function a chunk runs: iterations [begin, end) with `context`. Returns 0 on success.
  using ChunkFunction = int32_t (*)(int64_t begin, int64_t end, void* context);

  /// A pool of `numThreads` threads counting the caller; 0 or less means defaultNumThreads().
  /// Workers start on the first parallel loop, not here.
  explicit ThreadPool(int numThreads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// The process-wide pool that tessel_parallel_for and compiled kernels use.
  static ThreadPool& global();

  /// TESSEL_NUM_THREADS when it holds a positive integer, else the hardware concurrency.
  static int defaultNumThreads();

  /// How many threads (the caller included) a parallel loop uses.
  int numThreads() const;

  /// Changes the thread count; 0 or less restores defaultNumThreads(). Waits for a loop in
  /// flight to finish. Throws Error when called from inside a parallel body.
  void setNumThreads(int numThreads);

  /// Runs `chunk` over [0, extent) split into min(numThreads(), extent) contiguous chunks.
  /// Returns the result of the first chunk (lowest range) that returned non-zero, or 0.
  /// An exception thrown by a chunk is rethrown here after all chunks have finished.
  int32_t parallelForChunks(int64_t extent, ChunkFunction chunk, void* context);

  /// Runs body(begin, end) over [0, extent) as parallelForChunks does. The body may return
  /// void or an integer status (non-zero means failure and is returned).
  template <class Body>
  int32_t parallelFor(int64_t extent, Body&& body) {
    using BodyType = std::remove_reference_t<Body>;
    ChunkFunction trampoline = [](int64_t begin, int64_t end, void* context) -> int32_t {
      BodyType& callable = *static_cast<BodyType*>(context);
      if constexpr (std::is_void_v<decltype(callable(begin, end))>) {
        callable(begin, end);
        return 0;
      } else {
        return static_cast<int32_t>(callable(begin, end));
      }
    };
    return parallelForChunks(extent, trampoline, const_cast<void*>(static_cast<const void*>(&body)));
  }

  /// True while the current thread runs a parallel body (where nested loops run inline).
  static bool insideParallelBody();

private:
  /// One chunk's result, on its own cache line so that chunks finishing at once do not
  /// contend for it.
  struct alignas(64) ChunkOutcome {
    int32_t status = 0;
    std::exception_ptr exception;
  };

  void startWorkers();
  void stopWorkers();
  void workerLoop(int workerIndex, uint64_t seenTicket);
  void runChunk(int chunkIndex);
  int32_t runInline(int64_t extent, ChunkFunction chunk, void* context);

  std::atomic<int> numThreads_;
  std::vector<std::thread> workers_;
  std::vector<ChunkOutcome> outcomes_;
  /// Held by the one application thread that owns the workers for a loop.
  std::mutex launchMutex_;

  // The loop being run; written by the launcher before it publishes a new ticket and read
  // by active workers only, and left alone until every active worker has finished.
  ChunkFunction chunk_ = nullptr;
  void* context_ = nullptr;
  int64_t extent_ = 0;
  int activeChunks_ = 0;

  /// Loop generation in the high bits and the number of active chunks in the low 16 bits,
  /// in one word so an idle worker learns it has nothing to do without reading the loop.
  std::atomic<uint64_t> ticket_{0};
  std::atomic<int> pendingWorkers_{0};
  std::atomic<bool> stopping_{false};

  // Sleeping: workers that ran out of spinning wait on wakeWorkers_, a launcher that ran
  // out of spinning waits on loopFinished_. The counters let the other side skip the
  // notification (and its mutex) when nobody sleeps.
  std::mutex sleepMutex_;
  std::condition_variable wakeWorkers_;
  std::condition_variable loopFinished_;
  std::atomic<int> sleepingWorkers_{0};
  std::atomic<bool> launcherSleeping_{false};
};

}  // namespace tessel::runtime
