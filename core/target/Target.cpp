// The Target value: its string form, parsing and the features LLVM is given.
#include "core/target/Target.h"

#include <algorithm>
#include <charconv>
#include <sstream>

namespace tessel {

namespace {

// x86 extensions that are switched off explicitly when a target does not list them. These
// are the ones a CPU name implies and a virtual machine may hide; generating them on a
// machine without them is a SIGILL.
const char* const kExplicitlyDisabledX86Features[] = {
    "sse3", "ssse3", "sse4.1", "sse4.2", "sse4a", "popcnt", "avx", "avx2", "fma", "fma4", "f16c", "xop",
    "bmi", "bmi2", "lzcnt", "movbe", "avxvnni", "avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl",
    "avx512vnni", "avx512bf16", "avx512fp16", "avx512ifma", "avx512vbmi", "avx512vbmi2", "avx512bitalg",
    "avx512vpopcntdq", "avx512vp2intersect", "amx-tile", "amx-int8", "amx-bf16", "vaes", "vpclmulqdq", "gfni",
    "sha", "aes", "pclmul",
};

std::vector<std::string> splitCommas(std::string_view text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    if (comma > start) out.emplace_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

Diagnostic targetError(std::string message, std::string_view text) {
  return Diagnostic{std::move(message), "target '" + std::string(text) + "'", 0, 0,
                    "write it as: llvm -mtriple=TRIPLE -mcpu=CPU -mattr=+f1,+f2 -vector-bits=N -cores=N "
                    "-l1=BYTES -l2=BYTES -l3=BYTES (cuda or opencl with -arch=NAME)"};
}

template <class Integer>
bool parseInteger(std::string_view text, Integer& value) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size() && value >= 0;
}

}  // namespace

const char* targetKindName(TargetKind kind) {
  switch (kind) {
    case TargetKind::Cpu: return "llvm";
    case TargetKind::Cuda: return "cuda";
    case TargetKind::OpenCL: return "opencl";
  }
  return "llvm";
}

int Target::vectorLanes(int elementBits) const { return std::max(4, vectorBits / std::max(1, elementBits)); }

bool Target::hasFeature(std::string_view name) const {
  return std::binary_search(features.begin(), features.end(), name);
}

int Target::vectorBitsForFeatures(const std::vector<std::string>& features) {
  auto has = [&](const char* name) { return std::find(features.begin(), features.end(), name) != features.end(); };
  if (has("avx512f")) return 512;
  if (has("avx")) return 256;
  return 128;
}

std::string Target::toString() const {
  std::ostringstream out;
  out << targetKindName(kind);
  if (!triple.empty()) out << " -mtriple=" << triple;
  if (!cpu.empty()) out << " -mcpu=" << cpu;
  if (!gpuArch.empty()) out << " -arch=" << gpuArch;
  if (!features.empty()) {
    out << " -mattr=";
    for (size_t i = 0; i < features.size(); ++i) out << (i ? ",+" : "+") << features[i];
  }
  // A GPU is described by its architecture; the CPU's vectors, cores and caches say nothing about it.
  if (kind != TargetKind::Cpu) return out.str();
  out << " -vector-bits=" << vectorBits << " -cores=" << cores;
  if (l1CacheBytes > 0) out << " -l1=" << l1CacheBytes;
  if (l2CacheBytes > 0) out << " -l2=" << l2CacheBytes;
  if (l3CacheBytes > 0) out << " -l3=" << l3CacheBytes;
  return out.str();
}

Expected<Target> Target::parse(std::string_view text) {
  std::istringstream words{std::string(text)};
  std::string word;
  if (!(words >> word)) return targetError("the target is empty", text);
  Target target;
  if (word == "llvm" || word == "cpu") target.kind = TargetKind::Cpu;
  else if (word == "cuda") target.kind = TargetKind::Cuda;
  else if (word == "opencl") target.kind = TargetKind::OpenCL;
  else return targetError("unknown target kind '" + word + "' (expected llvm, cuda or opencl)", text);
  bool vectorBitsGiven = false;
  while (words >> word) {
    size_t equals = word.find('=');
    if (word.size() < 2 || word[0] != '-' || equals == std::string::npos || equals + 1 == word.size())
      return targetError("'" + word + "' is not an option of the form -name=value", text);
    std::string name = word.substr(1, equals - 1);
    std::string value = word.substr(equals + 1);
    auto integer = [&](auto& field) -> Status {
      if (!parseInteger(value, field))
        return targetError("-" + name + " needs a whole number, not '" + value + "'", text);
      return Status::success();
    };
    Status status = Status::success();
    if (name == "mtriple") target.triple = value;
    else if (name == "mcpu") target.cpu = value;
    else if (name == "arch") target.gpuArch = value;
    else if (name == "mattr") {
      for (std::string& feature : splitCommas(value)) {
        if (feature[0] == '-') continue;  // a disabled feature is simply not enabled
        if (feature[0] == '+') feature.erase(0, 1);
        if (feature.empty()) return targetError("-mattr has an empty feature", text);
        target.features.push_back(feature);
      }
    } else if (name == "vector-bits") {
      status = integer(target.vectorBits);
      vectorBitsGiven = true;
    } else if (name == "cores") status = integer(target.cores);
    else if (name == "l1") status = integer(target.l1CacheBytes);
    else if (name == "l2") status = integer(target.l2CacheBytes);
    else if (name == "l3") status = integer(target.l3CacheBytes);
    else
      return targetError("unknown target option '-" + name +
                             "' (known: -mtriple, -mcpu, -arch, -mattr, -vector-bits, -cores, -l1, -l2, -l3)",
                         text);
    if (!status) return status.error();
  }
  std::sort(target.features.begin(), target.features.end());
  target.features.erase(std::unique(target.features.begin(), target.features.end()), target.features.end());
  if (!vectorBitsGiven) target.vectorBits = vectorBitsForFeatures(target.features);
  if (target.cores < 1) return targetError("-cores must be at least 1", text);
  return target;
}

std::string Target::llvmFeatureString() const {
  std::string out;
  auto append = [&](char sign, const std::string& feature) {
    if (!out.empty()) out.push_back(',');
    out.push_back(sign);
    out.append(feature);
  };
  // LLVM applies the list in order, the last word winning, and switching a feature on also
  // switches on what it implies ("+avx2" brings "sse4.2"), switching one off also switches off
  // what depends on it ("-sse3" takes "avx2" with it). So the exclusions come first and the
  // enabled features after them: what is listed wins, with everything it needs.
  bool x86 = triple.empty() || triple.rfind("x86_64", 0) == 0 || triple.rfind("i686", 0) == 0;
  if (x86)
    for (const char* feature : kExplicitlyDisabledX86Features)
      if (!hasFeature(feature)) append('-', feature);
  for (const std::string& feature : features) append('+', feature);
  return out;
}

}  // namespace tessel
