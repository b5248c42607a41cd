// Measures the machine's float32 FMA throughput, the roofline ceiling for generated kernels.
#pragma once

#include <memory>
#include <string>

namespace tessel::runtime {

class ThreadPool;

/// The built-in multiply-add loops, one per instruction set. Int8VNNI is the int8 ceiling:
/// vpdpbusd, 64 uint8 x int8 multiply-adds per instruction, counted as two operations each
/// like an FMA, so its GOP/s compare with an int8 kernel's as FLOP/s do with a float one's.
/// BFloat16Dot is the bfloat16 ceiling the same way: vdpbf16ps, 32 bfloat16 multiply-adds
/// into float32 per instruction. Int8Tile is the AMX int8 ceiling: tdpbusd, 16 x 16 x 64
/// multiply-adds per instruction on tile registers. bestFmaKernel() picks none of these.
enum class FmaKernel { Scalar, AVX2, AVX512, Int8VNNI, BFloat16Dot, Int8Tile };

/// "scalar", "avx2", "avx512", "int8-vnni", "bf16-dot", "int8-amx".
const char* toString(FmaKernel kernel);

/// True when this CPU can run `kernel` (checked at run time, not at compile time).
bool supportsFmaKernel(FmaKernel kernel);

/// The widest kernel this CPU supports.
FmaKernel bestFmaKernel();

/// Timed samples of float32 FMA throughput on every thread of a pool. A kernel's fraction
/// of peak is best measured by alternating its samples with these: the speed of a shared
/// or virtual machine drifts by tens of percent over seconds, so a peak taken at another
/// moment is not comparable.
class PeakProbe {
public:
  /// Calibrates one sample to last about `sampleSeconds` (also warming the vector units).
  explicit PeakProbe(ThreadPool& pool, FmaKernel kernel, double sampleSeconds = 0.005);
  ~PeakProbe();
  /// GFLOP/s (an FMA counts as two operations) of one timed launch on all threads.
  double sampleGflops();
  /// GFLOP/s over launches run back to back for at least `seconds` (a sustained rate,
  /// for machines whose speed is throttled in periods).
  double sustainedGflops(double seconds);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Peak float32 GFLOP/s with `threads` threads each running bestFmaKernel() on registers
/// only; 0 or less means the default thread count. The fastest of many short samples
/// (interference only ever slows a sample down); takes about 0.2 s.
double measurePeakGflops(int threads);

/// The same with a chosen kernel; throws Error when the CPU does not support it.
double measurePeakGflops(int threads, FmaKernel kernel);

/// The vector features this CPU reports, space separated: "sse4.2 avx avx2 fma avx512f ...".
/// "none" when it reports none of them (or is not x86).
std::string cpuFeatureSummary();

}  // namespace tessel::runtime
