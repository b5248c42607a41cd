// CPU feature checks with the compiler's __builtin_cpu_supports (x86 only; elsewhere nothing is
// checkable and every module is accepted).
#include "runtime/CpuFeatures.h"

#include <map>

#if defined(__linux__) && defined(__x86_64__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace tessel::runtime {

namespace {

#if defined(__x86_64__) || defined(__i386__)
// Bit `bit` of register `reg` (0 EAX .. 3 EDX) of CPUID leaf `leaf`, subleaf `subleaf`. For the
// features clang's __builtin_cpu_supports does not name (clang 14 knows neither f16c nor
// avx512fp16 nor AMX); GCC's builtin checks the same bits.
[[maybe_unused]] bool cpuidBit(unsigned leaf, unsigned subleaf, int reg, int bit) {
  unsigned registers[4] = {0, 0, 0, 0};
  if (!__get_cpuid_count(leaf, subleaf, &registers[0], &registers[1], &registers[2], &registers[3])) return false;
  return (registers[reg] >> bit) & 1u;
}
#endif

#if defined(__clang__)
#define TESSEL_CPU_HAS_F16C() cpuidBit(1, 0, 2, 29)
#define TESSEL_CPU_HAS_AVX512FP16() cpuidBit(7, 0, 3, 23)
#define TESSEL_CPU_HAS_AMX_BF16() cpuidBit(7, 0, 3, 22)
#define TESSEL_CPU_HAS_AMX_TILE() cpuidBit(7, 0, 3, 24)
#define TESSEL_CPU_HAS_AMX_INT8() cpuidBit(7, 0, 3, 25)
#else
#define TESSEL_CPU_HAS_F16C() __builtin_cpu_supports("f16c")
#define TESSEL_CPU_HAS_AVX512FP16() __builtin_cpu_supports("avx512fp16")
#define TESSEL_CPU_HAS_AMX_BF16() __builtin_cpu_supports("amx-bf16")
#define TESSEL_CPU_HAS_AMX_TILE() __builtin_cpu_supports("amx-tile")
#define TESSEL_CPU_HAS_AMX_INT8() __builtin_cpu_supports("amx-int8")
#endif

// AMX's tile registers are 8 KiB of state that Linux (5.16 and later) only saves for a process
// that asked for them; the first tile instruction of any other dies as illegal. The request is
// process-wide and made once; a kernel without AMX support refuses it, and then the CPU's AMX
// counts as absent.
bool tileRegistersGranted() {
#if defined(__linux__) && defined(__x86_64__)
  static const bool granted = [] {
    constexpr long kRequestPermission = 0x1023;  // ARCH_REQ_XCOMP_PERM
    constexpr long kTileData = 18;               // XFEATURE_XTILEDATA
    return TESSEL_CPU_HAS_AMX_TILE() && syscall(SYS_arch_prctl, kRequestPermission, kTileData) == 0;
  }();
  return granted;
#else
  return false;
#endif
}

// LLVM feature name -> run-time check. __builtin_cpu_supports needs a literal, hence a table of
// lambdas. Intel-only and AMD-only extensions are both listed, so any x86 machine lacks some.
const std::map<std::string, bool (*)()>& featureChecks() {
#if defined(__x86_64__) || defined(__i386__)
#define TESSEL_CPU_FEATURE(llvmName, gccName) {llvmName, [] { return bool(__builtin_cpu_supports(gccName)); }}
  static const std::map<std::string, bool (*)()> checks = {
      TESSEL_CPU_FEATURE("sse4.1", "sse4.1"),
      TESSEL_CPU_FEATURE("sse4.2", "sse4.2"),
      TESSEL_CPU_FEATURE("sse4a", "sse4a"),
      TESSEL_CPU_FEATURE("avx", "avx"),
      TESSEL_CPU_FEATURE("avx2", "avx2"),
      TESSEL_CPU_FEATURE("fma", "fma"),
      TESSEL_CPU_FEATURE("fma4", "fma4"),
      {"f16c", [] { return bool(TESSEL_CPU_HAS_F16C()); }},
      TESSEL_CPU_FEATURE("avx512f", "avx512f"),
      TESSEL_CPU_FEATURE("avx512bw", "avx512bw"),
      TESSEL_CPU_FEATURE("avx512dq", "avx512dq"),
      TESSEL_CPU_FEATURE("avx512vl", "avx512vl"),
      TESSEL_CPU_FEATURE("avx512cd", "avx512cd"),
      TESSEL_CPU_FEATURE("avx512vnni", "avx512vnni"),
      TESSEL_CPU_FEATURE("avx512bf16", "avx512bf16"),
      {"avx512fp16", [] { return bool(TESSEL_CPU_HAS_AVX512FP16()); }},
      TESSEL_CPU_FEATURE("avx512vp2intersect", "avx512vp2intersect"),
      {"amx-tile", tileRegistersGranted},
      {"amx-int8", [] { return tileRegistersGranted() && bool(TESSEL_CPU_HAS_AMX_INT8()); }},
      {"amx-bf16", [] { return tileRegistersGranted() && bool(TESSEL_CPU_HAS_AMX_BF16()); }},
  };
#undef TESSEL_CPU_FEATURE
#else
  static const std::map<std::string, bool (*)()> checks;
#endif
  return checks;
}

}  // namespace

#if defined(__x86_64__)
static void tileRelease() { asm volatile("tilerelease" ::: "memory"); }
#endif

void releaseTileRegisters() {
#if defined(__x86_64__)
  if (tileRegistersGranted()) tileRelease();
#endif
}

bool isCheckableCpuFeature(const std::string& feature) { return featureChecks().count(feature) != 0; }

std::vector<std::string> checkableCpuFeatures() {
  std::vector<std::string> names;
  for (const auto& entry : featureChecks()) names.push_back(entry.first);
  return names;
}

bool hostHasCpuFeature(const std::string& feature) {
  auto it = featureChecks().find(feature);
  return it == featureChecks().end() || it->second();
}

std::vector<std::string> missingCpuFeatures(const std::vector<std::string>& required,
                                            const std::function<bool(const std::string&)>& hasFeature) {
  std::vector<std::string> missing;
  for (const std::string& feature : required)
    if (isCheckableCpuFeature(feature) && !hasFeature(feature)) missing.push_back(feature);
  return missing;
}

}  // namespace tessel::runtime
