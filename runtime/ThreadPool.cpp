// Persistent worker pool: ticket publication, spinning-then-sleeping workers, chunking.
#include "runtime/ThreadPool.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>

#include "runtime/CpuFeatures.h"
#include "runtime/Error.h"

#if defined(__linux__)
#include <sched.h>
#endif

namespace tessel::runtime {

namespace {

/// Bits of a ticket that carry the number of active chunks; the rest is the generation.
constexpr int kActiveChunkBits = 16;
constexpr uint64_t kActiveChunkMask = (uint64_t{1} << kActiveChunkBits) - 1;
/// More threads than this is a configuration mistake, not a machine.
constexpr int kMaxThreads = 4096;

/// How long an idle worker keeps polling for the next loop before it sleeps, and how long
/// a launcher polls for its workers before it sleeps. Kernels launch one loop per call, so
/// back-to-back calls should find the workers awake; idle programs should not burn a core.
constexpr auto kWorkerSpinTime = std::chrono::microseconds(1000);
constexpr auto kLauncherSpinTime = std::chrono::microseconds(2000);
/// Polls with a CPU pause this many times before yielding the core between polls, so a
/// waiting thread does not starve the thread it waits for on an oversubscribed machine.
constexpr int kPausePollsBeforeYield = 100;

thread_local bool tInsideParallelBody = false;

/// Marks the current thread as running a parallel body for the guard's lifetime.
class ParallelBodyScope {
public:
  ParallelBodyScope() : previous_(tInsideParallelBody) { tInsideParallelBody = true; }
  ~ParallelBodyScope() { tInsideParallelBody = previous_; }

private:
  bool previous_;
};

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

/// Polls `done` with pauses, then with yields, until it holds or `budget` runs out.
template <class Predicate>
bool pollFor(std::chrono::microseconds budget, Predicate done) {
  auto deadline = std::chrono::steady_clock::now() + budget;
  for (int poll = 0;; ++poll) {
    if (done()) return true;
    if (poll < kPausePollsBeforeYield) {
      cpuRelax();
      continue;
    }
    // Reading the clock costs more than a pause, so only check it once yielding.
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::yield();
  }
}

/// The CPUs this process may run on: the affinity mask where there is one (containers and
/// taskset shrink it), else the hardware concurrency.
int availableCpuCount() {
#if defined(__linux__)
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int count = CPU_COUNT(&set);
    if (count > 0) return count;
  }
#endif
  return std::max(1u, std::thread::hardware_concurrency());
}

int clampThreadCount(int numThreads) {
  return std::clamp(numThreads <= 0 ? ThreadPool::defaultNumThreads() : numThreads, 1, kMaxThreads);
}

}  // namespace

ThreadPool::ThreadPool(int numThreads) : numThreads_(clampThreadCount(numThreads)) {}

ThreadPool::~ThreadPool() { stopWorkers(); }

ThreadPool& ThreadPool::global() {
  // Deliberately never destroyed: kernels in other shared objects, or static destructors
  // that run late at exit, may still launch loops; sleeping workers end with the process.
  static ThreadPool* pool = new ThreadPool();
  return *pool;
}

int ThreadPool::defaultNumThreads() {
  if (const char* text = std::getenv("TESSEL_NUM_THREADS")) {
    char* end = nullptr;
    long value = std::strtol(text, &end, 10);
    if (end != text && *end == '\0' && value > 0) return static_cast<int>(std::min<long>(value, kMaxThreads));
  }
  return availableCpuCount();
}

int ThreadPool::numThreads() const { return numThreads_; }

void ThreadPool::setNumThreads(int numThreads) {
  if (tInsideParallelBody)
    throw Error("ThreadPool::setNumThreads cannot be called from inside a parallel loop body");
  std::lock_guard launch(launchMutex_);
  stopWorkers();
  numThreads_ = clampThreadCount(numThreads);
}

bool ThreadPool::insideParallelBody() { return tInsideParallelBody; }

void ThreadPool::startWorkers() {
  outcomes_.assign(numThreads_, ChunkOutcome{});
  // Each worker starts from the current ticket, read here before any new loop is
  // published, so it cannot mistake the next loop for one it has already seen.
  uint64_t currentTicket = ticket_.load(std::memory_order_relaxed);
  workers_.reserve(numThreads_ - 1);
  for (int worker = 1; worker < numThreads_; ++worker)
    workers_.emplace_back([this, worker, currentTicket] { workerLoop(worker, currentTicket); });
}

void ThreadPool::stopWorkers() {
  if (workers_.empty()) return;
  stopping_.store(true, std::memory_order_seq_cst);
  {
    std::lock_guard sleep(sleepMutex_);
  }
  wakeWorkers_.notify_all();
  for (std::thread& worker : workers_) worker.join();
  workers_.clear();
  stopping_.store(false, std::memory_order_relaxed);
}

void ThreadPool::workerLoop(int workerIndex, uint64_t seenTicket) {
  for (;;) {
    auto hasNews = [&] {
      return ticket_.load(std::memory_order_seq_cst) != seenTicket || stopping_.load(std::memory_order_seq_cst);
    };
    if (!pollFor(kWorkerSpinTime, hasNews)) {
      std::unique_lock sleep(sleepMutex_);
      sleepingWorkers_.fetch_add(1, std::memory_order_seq_cst);
      wakeWorkers_.wait(sleep, hasNews);
      sleepingWorkers_.fetch_sub(1, std::memory_order_relaxed);
    }
    if (stopping_.load(std::memory_order_acquire)) return;
    seenTicket = ticket_.load(std::memory_order_acquire);
    int activeChunks = static_cast<int>(seenTicket & kActiveChunkMask);
    // An inactive worker never reads the loop description: the launcher may already be
    // writing the next one.
    if (workerIndex >= activeChunks) continue;
    runChunk(workerIndex);
    if (pendingWorkers_.fetch_sub(1, std::memory_order_seq_cst) == 1 &&
        launcherSleeping_.load(std::memory_order_seq_cst)) {
      {
        std::lock_guard sleep(sleepMutex_);
      }
      loopFinished_.notify_one();
    }
  }
}

void ThreadPool::runChunk(int chunkIndex) {
  // Balanced contiguous split: the first (extent % chunks) chunks get one extra iteration.
  int64_t chunks = activeChunks_;
  int64_t base = extent_ / chunks, remainder = extent_ % chunks;
  int64_t begin = chunkIndex * base + std::min<int64_t>(chunkIndex, remainder);
  int64_t end = begin + base + (chunkIndex < remainder ? 1 : 0);
  ChunkOutcome& outcome = outcomes_[chunkIndex];
  ParallelBodyScope scope;
  try {
    outcome.status = chunk_(begin, end, context_);
  } catch (...) {
    outcome.exception = std::current_exception();
  }
  releaseTileRegisters();
}

int32_t ThreadPool::runInline(int64_t extent, ChunkFunction chunk, void* context) {
  ParallelBodyScope scope;
  int32_t status = chunk(0, extent, context);
  releaseTileRegisters();
  return status;
}

int32_t ThreadPool::parallelForChunks(int64_t extent, ChunkFunction chunk, void* context) {
  if (extent <= 0) return 0;
  if (tInsideParallelBody || extent == 1 || numThreads_ == 1) return runInline(extent, chunk, context);
  std::unique_lock launch(launchMutex_, std::try_to_lock);
  // Another application thread owns the workers: running inline is always correct and
  // never waits behind an unrelated loop.
  if (!launch.owns_lock()) return runInline(extent, chunk, context);
  if (workers_.empty()) startWorkers();

  int activeChunks = static_cast<int>(std::min<int64_t>(numThreads_, extent));
  chunk_ = chunk;
  context_ = context;
  extent_ = extent;
  activeChunks_ = activeChunks;
  for (int index = 0; index < activeChunks; ++index) outcomes_[index] = ChunkOutcome{};
  pendingWorkers_.store(activeChunks - 1, std::memory_order_relaxed);
  uint64_t generation = (ticket_.load(std::memory_order_relaxed) >> kActiveChunkBits) + 1;
  ticket_.store((generation << kActiveChunkBits) | static_cast<uint64_t>(activeChunks), std::memory_order_seq_cst);
  if (sleepingWorkers_.load(std::memory_order_seq_cst) > 0) {
    {
      std::lock_guard sleep(sleepMutex_);
    }
    wakeWorkers_.notify_all();
  }

  runChunk(0);

  auto allFinished = [this] { return pendingWorkers_.load(std::memory_order_seq_cst) == 0; };
  if (!pollFor(kLauncherSpinTime, allFinished)) {
    std::unique_lock sleep(sleepMutex_);
    launcherSleeping_.store(true, std::memory_order_seq_cst);
    loopFinished_.wait(sleep, allFinished);
    launcherSleeping_.store(false, std::memory_order_relaxed);
  }

  for (int index = 0; index < activeChunks; ++index)
    if (outcomes_[index].exception) std::rethrow_exception(outcomes_[index].exception);
  for (int index = 0; index < activeChunks; ++index)
    if (outcomes_[index].status != 0) return outcomes_[index].status;
  return 0;
}

}  // namespace tessel::runtime
