// Profiling a whole model run by run, and the profile's JSON form.
#include "compiler/driver/ModelProfile.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "runtime/Error.h"
#include "runtime/ThreadPool.h"
#include "runtime/Timer.h"

namespace tessel::driver {

namespace {

constexpr int kFormatVersion = 1;

std::string utcNow() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

Diagnostic profileError(const std::string& source, const std::string& message) {
  return Diagnostic{message, source, 0, 0,
                    "profile the model again (Build > Profile Model, or tessel bench MODEL --profile --save-profile FILE)"};
}

/// A node's optional numbers by their JSON field names (const or not, as the node is).
template <class Node>
auto optionalNodeNumbers(Node& node) {
  return std::array{std::pair{"min_ms", &node.minMilliseconds}, std::pair{"flops", &node.flops},
                    std::pair{"bytes", &node.bytes}, std::pair{"roofline_fraction", &node.rooflineFraction}};
}

}  // namespace

double ModelProfile::nodeSumMs() const {
  double sum = 0;
  for (const ProfiledNode& node : nodes) sum += node.milliseconds;
  return sum;
}

std::unordered_map<std::string, double> ModelProfile::millisecondsByKernel() const {
  std::unordered_map<std::string, double> byKernel;
  for (const ProfiledNode& node : nodes) byKernel[node.kernel] += node.milliseconds;
  return byKernel;
}

Expected<ModelProfile> profileExecutor(runtime::GraphExecutor& executor, const ProfileOptions& options) {
  auto cancelled = [&] { return options.cancelled && options.cancelled(); };
  ModelProfile profile;
  profile.threads = runtime::ThreadPool::global().numThreads();
  profile.createdAt = utcNow();
  std::vector<double> latencies;
  std::vector<std::vector<double>> nodeMilliseconds;
  double spent = 0;
  try {
    executor.run();  // untimed: first-touch page faults, the thread pool starting, caches
    while (int(latencies.size()) < options.maxRuns &&
           (int(latencies.size()) < options.minRuns || spent < options.minSeconds)) {
      if (cancelled()) return Diagnostic{kProfileCancelled, "profile", 0, 0, ""};
      auto start = std::chrono::steady_clock::now();
      executor.run();
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      spent += seconds;
      latencies.push_back(seconds * 1e3);
      const auto& timings = executor.nodeTimings();
      nodeMilliseconds.resize(timings.size());
      for (size_t node = 0; node < timings.size(); ++node) nodeMilliseconds[node].push_back(timings[node].milliseconds);
      if (options.progress) {
        // Expected runs: the minimum, or as many as fit the time at this pace.
        int expected = std::max(options.minRuns, int(std::ceil(options.minSeconds / std::max(spent / latencies.size(), 1e-9))));
        options.progress(int(latencies.size()), std::min(expected, options.maxRuns));
      }
    }
  } catch (const runtime::Error& error) {
    return Diagnostic{error.what(), "profile", 0, 0, ""};
  }
  profile.runs = int(latencies.size());
  profile.latencyMs = runtime::median(latencies);
  profile.minMs = latencies.empty() ? 0 : *std::min_element(latencies.begin(), latencies.end());
  const auto& timings = executor.nodeTimings();
  for (size_t node = 0; node < timings.size(); ++node) {
    ProfiledNode& profiled = profile.nodes.emplace_back();
    profiled.node = timings[node].node;
    profiled.kernel = timings[node].kernel;
    profiled.milliseconds = runtime::median(nodeMilliseconds[node]);
    if (!nodeMilliseconds[node].empty())
      profiled.minMilliseconds = *std::min_element(nodeMilliseconds[node].begin(), nodeMilliseconds[node].end());
  }
  return profile;
}

std::string modelProfileJson(const ModelProfile& profile) {
  nlohmann::ordered_json header = {{"format", "tessel-profile"},
                                   {"version", kFormatVersion},
                                   {"model", profile.model},
                                   {"created_at", profile.createdAt},
                                   {"runs", profile.runs},
                                   {"threads", profile.threads},
                                   {"latency_ms", profile.latencyMs},
                                   {"min_ms", profile.minMs},
                                   {"tuned_kernels", profile.tunedKernels}};
  if (profile.roof.known()) {
    header["peak_gflops"] = profile.roof.peakGflops;
    header["bandwidth_gbps"] = profile.roof.bandwidthGBps;
  }
  if (profile.roof.int8PeakGops > 0) header["int8_peak_gops"] = profile.roof.int8PeakGops;
  if (profile.roof.int8TilePeakGops > 0) header["int8_tile_peak_gops"] = profile.roof.int8TilePeakGops;
  // One node per line: a diff of two profiles reads node by node.
  std::string text = header.dump(1);
  text.resize(text.rfind('\n'));  // up to the closing brace
  text += ",\n \"nodes\": [";
  for (size_t index = 0; index < profile.nodes.size(); ++index) {
    const ProfiledNode& node = profile.nodes[index];
    nlohmann::ordered_json line = {{"node", node.node}, {"kernel", node.kernel}, {"ms", node.milliseconds}};
    if (!node.op.empty()) line["op"] = node.op;
    if (node.integerDot) line["int8"] = true;
    if (node.integerTiles) line["int8_tiles"] = true;
    for (auto [field, value] : optionalNodeNumbers(node))
      if (*value) line[field] = **value;
    // Derived, not read back: for scripts, which then need no roofline arithmetic of their own.
    if (auto bound = rooflineBound(node, profile.roof)) line["bound"] = toString(bound->limit);
    text += (index ? ",\n  " : "\n  ") + line.dump();
  }
  text += profile.nodes.empty() ? "]\n}\n" : "\n ]\n}\n";
  return text;
}

Expected<ModelProfile> parseModelProfile(const std::string& text, const std::string& source) {
  nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) return profileError(source, "not a profile: the file is not one JSON object");
  // find, not value(): value() throws when "format" is there but not a string.
  // Compared as a string only once it is one: g++ picks json's implicit conversion to string
  // for `*format != "..."`, which throws on a number.
  if (auto format = json.find("format");
      format == json.end() || !format->is_string() || format->get<std::string>() != "tessel-profile")
    return profileError(source, "not a profile: \"format\" is not \"tessel-profile\"");
  if (!json.contains("version") || !json["version"].is_number_integer() || json["version"].get<int>() > kFormatVersion)
    return profileError(source, "profile format version " + (json.contains("version") ? json["version"].dump() : "missing") +
                                    "; this Tessel reads version " + std::to_string(kFormatVersion));
  ModelProfile profile;
  auto number = [&](const char* field, double* into) -> bool {
    auto found = json.find(field);
    if (found == json.end() || !found->is_number() || !std::isfinite(found->get<double>()) || found->get<double>() < 0)
      return false;
    *into = found->get<double>();
    return true;
  };
  double runs = 0, threads = 0, tuned = 0;
  for (auto [field, into] : {std::pair{"runs", &runs}, {"threads", &threads}, {"latency_ms", &profile.latencyMs},
                             {"min_ms", &profile.minMs}, {"tuned_kernels", &tuned}})
    if (!number(field, into)) return profileError(source, std::string("\"") + field + "\" is missing or not a number >= 0");
  for (auto [field, into] : {std::pair{"peak_gflops", &profile.roof.peakGflops}, {"bandwidth_gbps", &profile.roof.bandwidthGBps},
                             {"int8_peak_gops", &profile.roof.int8PeakGops},
                             {"int8_tile_peak_gops", &profile.roof.int8TilePeakGops}})
    if (json.contains(field) && !number(field, into))
      return profileError(source, std::string("\"") + field + "\" is not a number >= 0");
  // Counts become ints: a larger one (1e300) would overflow the conversion.
  for (auto [field, value] : {std::pair{"runs", runs}, {"threads", threads}, {"tuned_kernels", tuned}})
    if (value > double(std::numeric_limits<int>::max()))
      return profileError(source, std::string("\"") + field + "\" is too large");
  profile.runs = int(runs);
  profile.threads = int(threads);
  profile.tunedKernels = int(tuned);
  for (auto [field, into] : {std::pair{"model", &profile.model}, {"created_at", &profile.createdAt}}) {
    auto found = json.find(field);
    if (found == json.end()) continue;
    if (!found->is_string()) return profileError(source, std::string("\"") + field + "\" is not a string");
    *into = found->get<std::string>();
  }
  auto nodes = json.find("nodes");
  if (nodes == json.end() || !nodes->is_array()) return profileError(source, "\"nodes\" is missing or not an array");
  for (size_t index = 0; index < nodes->size(); ++index) {
    const nlohmann::json& node = (*nodes)[index];
    std::string where = "node " + std::to_string(index + 1);
    if (!node.is_object() || !node.contains("node") || !node["node"].is_string() || !node.contains("kernel") ||
        !node["kernel"].is_string() || !node.contains("ms") || !node["ms"].is_number() ||
        !std::isfinite(node["ms"].get<double>()) || node["ms"].get<double>() < 0)
      return profileError(source, where + " needs \"node\" and \"kernel\" strings and \"ms\", a number >= 0");
    ProfiledNode& read = profile.nodes.emplace_back();
    read.node = node["node"].get<std::string>();
    read.kernel = node["kernel"].get<std::string>();
    read.milliseconds = node["ms"].get<double>();
    if (node.contains("op")) {
      if (!node["op"].is_string()) return profileError(source, where + ": \"op\" is not a string");
      read.op = node["op"].get<std::string>();
    }
    if (node.contains("int8")) {
      if (!node["int8"].is_boolean()) return profileError(source, where + ": \"int8\" is not true or false");
      read.integerDot = node["int8"].get<bool>();
    }
    if (node.contains("int8_tiles")) {
      if (!node["int8_tiles"].is_boolean())
        return profileError(source, where + ": \"int8_tiles\" is not true or false");
      read.integerTiles = node["int8_tiles"].get<bool>();
    }
    for (auto [field, value] : optionalNodeNumbers(read)) {
      auto found = node.find(field);
      if (found == node.end()) continue;
      if (!found->is_number() || !std::isfinite(found->get<double>()) || found->get<double>() < 0)
        return profileError(source, where + ": \"" + field + "\" is not a number >= 0");
      *value = found->get<double>();
    }
  }
  return profile;
}

Status writeModelProfile(const ModelProfile& profile, const std::string& path) {
  const std::string temporary = path + ".tmp";
  const std::string contents = modelProfileJson(profile);
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Diagnostic{"cannot create " + temporary + ": " + std::strerror(errno), path, 0, 0,
                                "choose a folder you can write to"};
  std::string failure;
  size_t written = 0;
  while (written < contents.size()) {
    ssize_t count = ::write(fd, contents.data() + written, contents.size() - written);
    if (count < 0 && errno == EINTR) continue;
    if (count <= 0) {
      failure = std::strerror(errno);
      break;
    }
    written += size_t(count);
  }
  if (failure.empty() && ::fsync(fd) != 0) failure = std::strerror(errno);
  if (::close(fd) != 0 && failure.empty()) failure = std::strerror(errno);
  if (failure.empty() && ::rename(temporary.c_str(), path.c_str()) != 0) failure = std::strerror(errno);
  if (!failure.empty()) {
    ::unlink(temporary.c_str());
    return Diagnostic{"cannot save the profile: " + failure, path, 0, 0, "choose a folder you can write to"};
  }
  return Status::success();
}

Expected<ModelProfile> readModelProfile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return Diagnostic{"cannot read the profile: " + std::string(std::strerror(errno)), path, 0, 0, ""};
  std::ostringstream contents;
  contents << file.rdbuf();
  return parseModelProfile(contents.str(), path);
}

std::string profilePathForModel(const std::string& modelPath) {
  std::filesystem::path path(modelPath);
  return (path.parent_path() / (path.stem().string() + ".profile.json")).string();
}

}  // namespace tessel::driver
