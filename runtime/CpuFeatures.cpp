// CPU feature checks with the compiler's __builtin_cpu_supports (x86 only; elsewhere nothing is
// checkable and every module is accepted).
#include "runtime/CpuFeatures.h"

#include <map>

namespace tessel::runtime {

namespace {

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
      TESSEL_CPU_FEATURE("f16c", "f16c"),
      TESSEL_CPU_FEATURE("avx512f", "avx512f"),
      TESSEL_CPU_FEATURE("avx512bw", "avx512bw"),
      TESSEL_CPU_FEATURE("avx512dq", "avx512dq"),
      TESSEL_CPU_FEATURE("avx512vl", "avx512vl"),
      TESSEL_CPU_FEATURE("avx512cd", "avx512cd"),
      TESSEL_CPU_FEATURE("avx512vnni", "avx512vnni"),
      TESSEL_CPU_FEATURE("avx512bf16", "avx512bf16"),
      TESSEL_CPU_FEATURE("avx512fp16", "avx512fp16"),
      TESSEL_CPU_FEATURE("avx512vp2intersect", "avx512vp2intersect"),
      TESSEL_CPU_FEATURE("amx-tile", "amx-tile"),
  };
#undef TESSEL_CPU_FEATURE
#else
  static const std::map<std::string, bool (*)()> checks;
#endif
  return checks;
}

}  // namespace

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
