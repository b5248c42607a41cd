// A STREAM triad over arrays well above the last-level cache, timed on the thread pool.
#include "runtime/PeakBandwidth.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "runtime/Error.h"
#include "runtime/ThreadPool.h"

namespace tessel::runtime {

namespace {

constexpr size_t kMinimumFootprint = size_t(64) << 20;
// At least this many passes, and more until this long is spent: the fastest pass counts.
constexpr int kMinimumPasses = 5;
constexpr double kMinimumSeconds = 0.1;
constexpr float kScale = 0.5f;

/// Eight floats: GCC's generic vectors become the widest moves the baseline target has, so the
/// loop is vectorized without an instruction-set dispatch (memory, not arithmetic, is timed).
typedef float Floats8 __attribute__((vector_size(32)));
constexpr size_t kVectorFloats = 8;

std::string readWord(const std::filesystem::path& path) {
  std::ifstream file(path);
  std::string word;
  file >> word;
  return word;
}

/// "32768K", "1M", "512" -> bytes.
size_t parseCacheSize(const std::string& text) {
  if (text.empty()) return 0;
  size_t value = std::strtoull(text.c_str(), nullptr, 10);
  if (text.back() == 'K') value <<= 10;
  if (text.back() == 'M') value <<= 20;
  if (text.back() == 'G') value <<= 30;
  return value;
}

struct FreeDeleter {
  void operator()(float* pointer) const { std::free(pointer); }
};
using FloatArray = std::unique_ptr<float[], FreeDeleter>;

FloatArray allocateFloats(size_t count) {
  size_t bytes = (count * sizeof(float) + 63) / 64 * 64;
  auto* pointer = static_cast<float*>(std::aligned_alloc(64, bytes));
  if (!pointer) throw Error("cannot allocate " + std::to_string(bytes >> 20) + " MiB for the memory bandwidth probe");
  return FloatArray(pointer);
}

void triad(float* __restrict a, const float* __restrict b, const float* __restrict c, size_t first, size_t last) {
  const Floats8 scale = {kScale, kScale, kScale, kScale, kScale, kScale, kScale, kScale};
  size_t i = first;
  for (; i + kVectorFloats <= last; i += kVectorFloats) {
    Floats8 x, y;
    std::memcpy(&x, b + i, sizeof x);
    std::memcpy(&y, c + i, sizeof y);
    Floats8 sum = x + scale * y;
    std::memcpy(a + i, &sum, sizeof sum);
  }
  for (; i < last; ++i) a[i] = b[i] + kScale * c[i];
}

/// Keeps the arrays' contents observable so the compiler cannot drop the passes.
volatile float gSink = 0;

}  // namespace

LastLevelCache lastLevelCache() {
  // Each CPU lists its caches; one instance of a level is shared by the CPUs of its
  // shared_cpu_list, so distinct lists count the instances.
  std::map<int, std::map<std::string, size_t>> instancesByLevel;
  std::error_code error;
  for (const auto& cpu : std::filesystem::directory_iterator("/sys/devices/system/cpu", error)) {
    std::string name = cpu.path().filename().string();
    if (name.size() < 4 || name.compare(0, 3, "cpu") != 0 || name.find_first_not_of("0123456789", 3) != std::string::npos)
      continue;
    for (int index = 0; index < 16; ++index) {
      std::filesystem::path cache = cpu.path() / "cache" / ("index" + std::to_string(index));
      std::string type = readWord(cache / "type");
      if (type.empty()) break;
      if (type == "Instruction") continue;
      int level = std::atoi(readWord(cache / "level").c_str());
      size_t size = parseCacheSize(readWord(cache / "size"));
      if (level <= 0 || size == 0) continue;
      instancesByLevel[level][readWord(cache / "shared_cpu_list")] = size;
    }
  }
  if (!instancesByLevel.empty()) {
    const auto& instances = instancesByLevel.rbegin()->second;
    size_t bytes = 0;
    for (const auto& [cpus, size] : instances) bytes = std::max(bytes, size);
    return {bytes, int(instances.size())};
  }
  for (int name : {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE}) {
    long size = sysconf(name);
    if (size > 0) return {size_t(size), 1};
  }
  return {};
}

double measureMemoryBandwidthGBps(int threads) {
  ThreadPool pool(threads);
  const int64_t chunks = pool.numThreads();
  // The threads may run on as many separate last-level caches as there are threads.
  LastLevelCache cache = lastLevelCache();
  size_t cached = cache.bytes * size_t(std::max(1, std::min<int>(int(chunks), cache.instances)));
  size_t footprint = std::max(kMinimumFootprint, 4 * cached);
  size_t count = footprint / (3 * sizeof(float));
  FloatArray a = allocateFloats(count), b = allocateFloats(count), c = allocateFloats(count);
  // Chunk boundaries on whole cache lines, so no two threads write the same line.
  auto bounds = [&](int64_t chunk) {
    size_t line = 64 / sizeof(float);
    return std::pair{count * size_t(chunk) / size_t(chunks) / line * line,
                     chunk + 1 == chunks ? count : count * size_t(chunk + 1) / size_t(chunks) / line * line};
  };
  // Each thread first touches the part it will stream (on a NUMA machine its pages land on
  // its own node), and no page fault is timed.
  pool.parallelFor(chunks, [&](int64_t begin, int64_t end) {
    for (int64_t chunk = begin; chunk < end; ++chunk) {
      auto [first, last] = bounds(chunk);
      for (size_t i = first; i < last; ++i) {
        a[i] = 0;
        b[i] = 1;
        c[i] = 2;
      }
    }
  });
  const double bytesPerPass = 3.0 * sizeof(float) * double(count);
  double best = 0, spent = 0;
  for (int pass = 0; pass < kMinimumPasses || spent < kMinimumSeconds; ++pass) {
    auto start = std::chrono::steady_clock::now();
    pool.parallelFor(chunks, [&](int64_t begin, int64_t end) {
      for (int64_t chunk = begin; chunk < end; ++chunk) {
        auto [first, last] = bounds(chunk);
        triad(a.get(), b.get(), c.get(), first, last);
      }
    });
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    spent += seconds;
    if (seconds > 0) best = std::max(best, bytesPerPass / seconds / 1e9);
  }
  gSink = a[count / 2] + a[count - 1];
  return best;
}

}  // namespace tessel::runtime
