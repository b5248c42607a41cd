// FMA throughput loops per instruction set, dispatched at run time, timed on the pool.
#include "runtime/PeakFlops.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "runtime/CpuFeatures.h"
#include "runtime/Error.h"
#include "runtime/ThreadPool.h"

#if defined(__x86_64__) || defined(__i386__)
#define TESSEL_X86 1
#include <immintrin.h>
#endif

namespace tessel::runtime {

namespace {

// Each loop keeps many independent accumulators in registers: an FMA has about 4 cycles
// of latency and modern cores issue two per cycle, so at least 8 chains must be in flight;
// more hide scheduling hiccups. acc = acc * a + b with a just below 1 converges to a
// small fixed point, so values never overflow or become denormal (which would be slow).
constexpr float kMultiplier = 0.999999f;
constexpr float kAddend = 1e-7f;

constexpr int kScalarAccumulators = 8;
constexpr int kAVX2Accumulators = 12;   // of 16 ymm registers, leaving room for a and b
constexpr int kAVX512Accumulators = 16;  // of 32 zmm registers

float scalarFmaLoop(int64_t iterations) {
  float accumulators[kScalarAccumulators];
  for (int i = 0; i < kScalarAccumulators; ++i) accumulators[i] = 0.001f * static_cast<float>(i);
  for (int64_t iteration = 0; iteration < iterations; ++iteration) {
#pragma GCC unroll 8
    for (int i = 0; i < kScalarAccumulators; ++i) accumulators[i] = accumulators[i] * kMultiplier + kAddend;
  }
  float sum = 0;
  for (float value : accumulators) sum += value;
  return sum;
}

#if TESSEL_X86
__attribute__((target("avx2,fma"))) float avx2FmaLoop(int64_t iterations) {
  __m256 accumulators[kAVX2Accumulators];
  for (int i = 0; i < kAVX2Accumulators; ++i) accumulators[i] = _mm256_set1_ps(0.001f * static_cast<float>(i));
  const __m256 multiplier = _mm256_set1_ps(kMultiplier), addend = _mm256_set1_ps(kAddend);
  for (int64_t iteration = 0; iteration < iterations; ++iteration) {
#pragma GCC unroll 12
    for (int i = 0; i < kAVX2Accumulators; ++i)
      accumulators[i] = _mm256_fmadd_ps(accumulators[i], multiplier, addend);
  }
  __m256 sum = _mm256_setzero_ps();
  for (const __m256& value : accumulators) sum = _mm256_add_ps(sum, value);
  float lanes[8];
  _mm256_storeu_ps(lanes, sum);
  float total = 0;
  for (float lane : lanes) total += lane;
  return total;
}

__attribute__((target("avx512f"))) float avx512FmaLoop(int64_t iterations) {
  __m512 accumulators[kAVX512Accumulators];
  for (int i = 0; i < kAVX512Accumulators; ++i) accumulators[i] = _mm512_set1_ps(0.001f * static_cast<float>(i));
  const __m512 multiplier = _mm512_set1_ps(kMultiplier), addend = _mm512_set1_ps(kAddend);
  for (int64_t iteration = 0; iteration < iterations; ++iteration) {
#pragma GCC unroll 16
    for (int i = 0; i < kAVX512Accumulators; ++i)
      accumulators[i] = _mm512_fmadd_ps(accumulators[i], multiplier, addend);
  }
  __m512 sum = _mm512_setzero_ps();
  for (const __m512& value : accumulators) sum = _mm512_add_ps(sum, value);
  // Summed through memory: GCC 12's _mm512_reduce_add_ps trips -Wuninitialized.
  float lanes[16];
  _mm512_storeu_ps(lanes, sum);
  float total = 0;
  for (float lane : lanes) total += lane;
  return total;
}

// acc += dot of 4 bytes per lane: 12 independent chains (vpdpbusd has 5 cycles of latency and
// issues up to two per cycle, so 10 keep it busy; an asm statement takes at most 30 operands,
// and each accumulator is two). Written in assembly: GCC 12 copies each accumulator through a
// spare register (and some through the stack) around every vpdpbusd, a third of the rate.
// The operands never change; int32 sums wrap harmlessly.
constexpr int kVnniAccumulators = 12;

__attribute__((target("avx512f,avx512vnni"))) float vnniDotLoop(int64_t iterations) {
  __m512i c0 = _mm512_set1_epi32(0), c1 = _mm512_set1_epi32(1), c2 = _mm512_set1_epi32(2), c3 = _mm512_set1_epi32(3);
  __m512i c4 = c0, c5 = c1, c6 = c2, c7 = c3, c8 = c0, c9 = c1, c10 = c2, c11 = c3;
  const __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-2);
  for (int64_t iteration = 0; iteration < iterations; ++iteration) {
    asm volatile(
        "vpdpbusd %[b], %[a], %[c0]\n\tvpdpbusd %[b], %[a], %[c1]\n\tvpdpbusd %[b], %[a], %[c2]\n\t"
        "vpdpbusd %[b], %[a], %[c3]\n\tvpdpbusd %[b], %[a], %[c4]\n\tvpdpbusd %[b], %[a], %[c5]\n\t"
        "vpdpbusd %[b], %[a], %[c6]\n\tvpdpbusd %[b], %[a], %[c7]\n\tvpdpbusd %[b], %[a], %[c8]\n\t"
        "vpdpbusd %[b], %[a], %[c9]\n\tvpdpbusd %[b], %[a], %[c10]\n\tvpdpbusd %[b], %[a], %[c11]"
        : [c0] "+v"(c0), [c1] "+v"(c1), [c2] "+v"(c2), [c3] "+v"(c3), [c4] "+v"(c4), [c5] "+v"(c5), [c6] "+v"(c6),
          [c7] "+v"(c7), [c8] "+v"(c8), [c9] "+v"(c9), [c10] "+v"(c10), [c11] "+v"(c11)
        : [a] "v"(a), [b] "v"(b));
  }
  __m512i sum = c0;
  for (const __m512i& value : {c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11}) sum = _mm512_add_epi32(sum, value);
  int32_t lanes[16];
  _mm512_storeu_si512(lanes, sum);
  int64_t total = 0;
  for (int32_t lane : lanes) total += lane;
  return float(total);
}

// acc += dot of 2 bfloat16 pairs per lane, the same way: 12 chains of vdpbf16ps. The operands
// (1.0 and a tiny step) keep the sums finite.
constexpr int kBFloat16Accumulators = 12;

__attribute__((target("avx512f,avx512bf16"))) float bfloat16DotLoop(int64_t iterations) {
  __m512 c0 = _mm512_set1_ps(0), c1 = _mm512_set1_ps(1), c2 = _mm512_set1_ps(2), c3 = _mm512_set1_ps(3);
  __m512 c4 = c0, c5 = c1, c6 = c2, c7 = c3, c8 = c0, c9 = c1, c10 = c2, c11 = c3;
  // bfloat16 1.0 (0x3f80) and 2^-20 (0x3580), two per 32-bit lane.
  const __m512i a = _mm512_set1_epi32(0x3f803f80), b = _mm512_set1_epi32(0x35803580);
  for (int64_t iteration = 0; iteration < iterations; ++iteration) {
    asm volatile(
        "vdpbf16ps %[b], %[a], %[c0]\n\tvdpbf16ps %[b], %[a], %[c1]\n\tvdpbf16ps %[b], %[a], %[c2]\n\t"
        "vdpbf16ps %[b], %[a], %[c3]\n\tvdpbf16ps %[b], %[a], %[c4]\n\tvdpbf16ps %[b], %[a], %[c5]\n\t"
        "vdpbf16ps %[b], %[a], %[c6]\n\tvdpbf16ps %[b], %[a], %[c7]\n\tvdpbf16ps %[b], %[a], %[c8]\n\t"
        "vdpbf16ps %[b], %[a], %[c9]\n\tvdpbf16ps %[b], %[a], %[c10]\n\tvdpbf16ps %[b], %[a], %[c11]"
        : [c0] "+v"(c0), [c1] "+v"(c1), [c2] "+v"(c2), [c3] "+v"(c3), [c4] "+v"(c4), [c5] "+v"(c5), [c6] "+v"(c6),
          [c7] "+v"(c7), [c8] "+v"(c8), [c9] "+v"(c9), [c10] "+v"(c10), [c11] "+v"(c11)
        : [a] "v"(a), [b] "v"(b));
  }
  __m512 sum = c0;
  for (const __m512& value : {c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11}) sum = _mm512_add_ps(sum, value);
  float lanes[16];
  _mm512_storeu_ps(lanes, sum);
  float total = 0;
  for (float lane : lanes) total += lane;
  return total;
}
#endif

// acc += A x B on AMX tiles: four independent 16 x 16 int32 accumulators (tdpbusd has a long
// latency and the tile unit takes one every 16 cycles), their operands loaded once. The
// operands vary as real data does (zeros could draw less power); the int32 sums wrap.
constexpr int kTileAccumulators = 4;

__attribute__((target("amx-tile,amx-int8"))) float tileDotLoop(int64_t iterations) {
  struct alignas(64) {
    uint8_t palette = 1, startRow = 0, reserved[14] = {};
    uint16_t bytesPerRow[16] = {};
    uint8_t rows[16] = {};
  } config;
  for (int t = 0; t < 8; ++t) {
    config.bytesPerRow[t] = 64;
    config.rows[t] = 16;
  }
  alignas(64) uint8_t operand[16 * 64];
  for (int i = 0; i < 16 * 64; ++i) operand[i] = uint8_t(i * 37 + 11);
  alignas(64) int32_t result[16 * 16];
  _tile_loadconfig(&config);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_loadd(4, operand, 64);
  _tile_loadd(5, operand, 64);
  _tile_loadd(6, operand, 64);
  _tile_loadd(7, operand, 64);
  for (int64_t iteration = 0; iteration < iterations; ++iteration) {
    _tile_dpbusd(0, 4, 6);
    _tile_dpbusd(1, 4, 7);
    _tile_dpbusd(2, 5, 6);
    _tile_dpbusd(3, 5, 7);
  }
  _tile_stored(0, result, 64);
  _tile_release();
  return float(result[0]);
}

struct KernelInfo {
  float (*loop)(int64_t iterations);
  double flopsPerIteration;
};

KernelInfo kernelInfo(FmaKernel kernel) {
  switch (kernel) {
#if TESSEL_X86
    case FmaKernel::AVX512: return {avx512FmaLoop, 2.0 * 16 * kAVX512Accumulators};
    case FmaKernel::AVX2: return {avx2FmaLoop, 2.0 * 8 * kAVX2Accumulators};
    case FmaKernel::Int8VNNI: return {vnniDotLoop, 2.0 * 64 * kVnniAccumulators};
    case FmaKernel::BFloat16Dot: return {bfloat16DotLoop, 2.0 * 32 * kBFloat16Accumulators};
    case FmaKernel::Int8Tile: return {tileDotLoop, 2.0 * 16 * 16 * 64 * kTileAccumulators};
#else
    case FmaKernel::AVX512:
    case FmaKernel::AVX2:
    case FmaKernel::Int8VNNI:
    case FmaKernel::BFloat16Dot:
    case FmaKernel::Int8Tile: break;
#endif
    case FmaKernel::Scalar: return {scalarFmaLoop, 2.0 * kScalarAccumulators};
  }
  return {scalarFmaLoop, 2.0 * kScalarAccumulators};
}

/// Keeps the loops' results observable so the compiler cannot drop them.
volatile float gSink = 0;

}  // namespace

const char* toString(FmaKernel kernel) {
  switch (kernel) {
    case FmaKernel::Scalar: return "scalar";
    case FmaKernel::AVX2: return "avx2";
    case FmaKernel::AVX512: return "avx512";
    case FmaKernel::Int8VNNI: return "int8-vnni";
    case FmaKernel::BFloat16Dot: return "bf16-dot";
    case FmaKernel::Int8Tile: return "int8-amx";
  }
  return "unknown";
}

bool supportsFmaKernel(FmaKernel kernel) {
  switch (kernel) {
    case FmaKernel::Scalar: return true;
#if TESSEL_X86
    case FmaKernel::AVX2:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case FmaKernel::AVX512:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx512f");
    case FmaKernel::Int8VNNI:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vnni");
    case FmaKernel::BFloat16Dot:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16");
    case FmaKernel::Int8Tile:
      // Also asks the kernel for the tile registers; false where it refuses.
      return hostHasCpuFeature("amx-tile") && hostHasCpuFeature("amx-int8");
#else
    case FmaKernel::AVX2:
    case FmaKernel::AVX512:
    case FmaKernel::Int8VNNI:
    case FmaKernel::BFloat16Dot:
    case FmaKernel::Int8Tile: return false;
#endif
  }
  return false;
}

FmaKernel bestFmaKernel() {
  for (FmaKernel kernel : {FmaKernel::AVX512, FmaKernel::AVX2})
    if (supportsFmaKernel(kernel)) return kernel;
  return FmaKernel::Scalar;
}

double measurePeakGflops(int threads) { return measurePeakGflops(threads, bestFmaKernel()); }

struct PeakProbe::Impl {
  ThreadPool& pool;
  KernelInfo info;
  int64_t iterations = 1 << 12;
  std::vector<float> results;

  // One launch: every thread runs the loop once (extent = thread count).
  double launchSeconds() {
    auto start = std::chrono::steady_clock::now();
    pool.parallelFor(int64_t(results.size()), [&](int64_t begin, int64_t end) {
      for (int64_t thread = begin; thread < end; ++thread) results[thread] = info.loop(iterations);
    });
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    float sink = 0;
    for (float result : results) sink += result;
    gSink = sink;
    return seconds;
  }
};

PeakProbe::PeakProbe(ThreadPool& pool, FmaKernel kernel, double sampleSeconds)
    : impl_(new Impl{pool, kernelInfo(kernel), 1 << 12, std::vector<float>(pool.numThreads())}) {
  if (!supportsFmaKernel(kernel))
    throw Error(std::string("this CPU cannot run the ") + toString(kernel) + " FMA kernel (it has: " +
                cpuFeatureSummary() + ")");
  // Grow the loop until one launch takes about sampleSeconds, so launch overhead and clock
  // resolution vanish; this also warms the vector units up to their steady frequency.
  for (;;) {
    double seconds = impl_->launchSeconds();
    if (seconds >= sampleSeconds / 2 || impl_->iterations >= (int64_t{1} << 40)) {
      impl_->iterations = std::max<int64_t>(
          1, static_cast<int64_t>(static_cast<double>(impl_->iterations) * sampleSeconds / std::max(seconds, 1e-9)));
      break;
    }
    impl_->iterations *= 4;
  }
}

PeakProbe::~PeakProbe() = default;

double PeakProbe::sampleGflops() {
  double seconds = impl_->launchSeconds();
  double flops = impl_->info.flopsPerIteration * static_cast<double>(impl_->iterations) * double(impl_->results.size());
  return flops / std::max(seconds, 1e-12) / 1e9;
}

double PeakProbe::sustainedGflops(double seconds) {
  double elapsed = 0;
  int64_t launches = 0;
  while (elapsed < seconds || launches == 0) {
    elapsed += impl_->launchSeconds();
    ++launches;
  }
  double flops = impl_->info.flopsPerIteration * static_cast<double>(impl_->iterations) *
                 double(impl_->results.size()) * double(launches);
  return flops / std::max(elapsed, 1e-12) / 1e9;
}

double measurePeakGflops(int threads, FmaKernel kernel) {
  ThreadPool pool(threads);
  PeakProbe probe(pool, kernel);
  // A peak is what the machine can do, and interference (other processes, interrupts)
  // only ever slows a sample down: keep the fastest of many short samples rather than
  // the median, so that a busy machine still reports its real capability.
  double best = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(150);
  for (int sample = 0; sample < 20 || std::chrono::steady_clock::now() < deadline; ++sample)
    best = std::max(best, probe.sampleGflops());
  return best;
}

std::string cpuFeatureSummary() {
  std::string summary;
#if TESSEL_X86
  __builtin_cpu_init();
  auto add = [&](bool supported, const char* name) {
    if (!supported) return;
    if (!summary.empty()) summary += ' ';
    summary += name;
  };
  // __builtin_cpu_supports needs literal names, hence one line per feature.
  add(__builtin_cpu_supports("sse4.2"), "sse4.2");
  add(__builtin_cpu_supports("avx"), "avx");
  add(__builtin_cpu_supports("avx2"), "avx2");
  add(__builtin_cpu_supports("fma"), "fma");
  add(__builtin_cpu_supports("avx512f"), "avx512f");
  add(__builtin_cpu_supports("avx512bw"), "avx512bw");
  add(__builtin_cpu_supports("avx512vl"), "avx512vl");
  add(__builtin_cpu_supports("avx512vnni"), "avx512vnni");
  add(__builtin_cpu_supports("avx512bf16"), "avx512bf16");
#endif
  return summary.empty() ? "none" : summary;
}

}  // namespace tessel::runtime
