// Measures the machine's float32 FMA throughput, the roofline ceiling for generated kernels.
#pragma once

#include <string>

namespace tessel::runtime {

/// The built-in FMA loops, one per instruction set.
enum class FmaKernel { Scalar, AVX2, AVX512 };

/// "scalar", "avx2", "avx512".
const char* toString(FmaKernel kernel);

/// True when this CPU can run `kernel` (checked at run time, not at compile time).
bool supportsFmaKernel(FmaKernel kernel);

/// The widest kernel this CPU supports.
FmaKernel bestFmaKernel();

/// Peak float32 GFLOP/s (an FMA counts as two operations) with `threads` threads of the
/// runtime pool each running bestFmaKernel() on registers only; 0 or less means the default
/// thread count. The median of several repetitions after a warm-up; takes a few hundred
/// milliseconds.
double measurePeakGflops(int threads);

/// The same with a chosen kernel; throws Error when the CPU does not support it.
double measurePeakGflops(int threads, FmaKernel kernel);

/// The vector features this CPU reports, space separated: "sse4.2 avx avx2 fma avx512f ...".
/// "none" when it reports none of them (or is not x86).
std::string cpuFeatureSummary();

}  // namespace tessel::runtime
