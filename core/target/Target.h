// Where generated code runs: one value for the kind of device, the CPU and its instruction
// sets, the vector width, the cores and the caches, with one string form that ops, lowering,
// code generation, export, workload keys and tuning records all share.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/support/Error.h"

namespace tessel {

enum class TargetKind : uint8_t {
  Cpu,     ///< Native code through LLVM ("llvm" in the string form).
  Cuda,    ///< CUDA C compiled by NVRTC ("cuda").
  OpenCL,  ///< OpenCL C ("opencl").
};

/// A machine to generate code for. Two targets are the same machine exactly when their
/// strings are equal: tuning records and exported modules compare targets that way.
///
/// String form (toString / parse), options in this order, each optional except the kind:
///   llvm -mtriple=x86_64-pc-linux-gnu -mcpu=znver4 -mattr=+avx2,+avx512f,+fma
///        -vector-bits=512 -cores=2 -l1=32768 -l2=1048576 -l3=33554432
/// `-mattr` lists the enabled instruction-set features, sorted. A feature not listed is
/// absent, also when the CPU name would imply it: a virtual machine often hides AVX-512 from
/// a CPU that has it, and code for the CPU name alone would then die on SIGILL.
struct Target {
  TargetKind kind = TargetKind::Cpu;
  std::string triple;                 ///< LLVM target triple; empty: the host's.
  std::string cpu;                    ///< LLVM CPU name ("znver4", "sapphirerapids"); empty: generic.
  std::vector<std::string> features;  ///< Enabled features without '+' ("avx2", "fma"), sorted, unique.
  int vectorBits = 128;               ///< Width of the widest vector register.
  int cores = 1;                      ///< Threads the kernels' parallel loops run on.
  int64_t l1CacheBytes = 32 * 1024;   ///< Per-core data caches; 0: unknown.
  int64_t l2CacheBytes = 1024 * 1024;
  int64_t l3CacheBytes = 0;
  std::string gpuArch;                ///< GPU targets: "sm_80"; empty for CPUs.

  /// Lanes of the widest vector for elements of `elementBits` bits (float32 by default), at
  /// least 4: the default schedules' unit of vectorization.
  int vectorLanes(int elementBits = 32) const;
  /// Whether instruction-set feature `name` ("avx512f") is enabled.
  bool hasFeature(std::string_view name) const;

  /// The one-line string form described above.
  std::string toString() const;
  /// Reads the string form. An unknown kind or option, a malformed number or a missing
  /// value is a Diagnostic naming the word and listing what is accepted. Options left out
  /// keep the defaults above, except that `vector-bits` left out follows the features
  /// (512 with avx512f, 256 with avx, else 128).
  static Expected<Target> parse(std::string_view text);

  /// The features as LLVM's feature string: "-f" for each vector or bit-manipulation extension
  /// of x86 that is not enabled (so a CPU name cannot bring back what the machine lacks),
  /// then "+f" for each enabled feature (with what it implies).
  std::string llvmFeatureString() const;

  /// The widest vector width the features allow (512 with avx512f, 256 with avx, else 128).
  static int vectorBitsForFeatures(const std::vector<std::string>& features);

  bool operator==(const Target& other) const = default;
};

/// "llvm", "cuda" or "opencl".
const char* targetKindName(TargetKind kind);

}  // namespace tessel
