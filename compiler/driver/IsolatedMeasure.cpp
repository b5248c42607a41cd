// Measuring in a child process: the request becomes a `tessel measure --json` command line
// (schedule text and input values through temporary files), run with ChildProcess, its JSON
// read back into a Measurement and its failures into Diagnostics.
#include "compiler/driver/IsolatedMeasure.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/support/ChildProcess.h"
#include "runtime/Npy.h"

namespace tessel::driver {

namespace fs = std::filesystem;

namespace {

// A directory of its own for the files handed to the child, removed with everything in it.
class TemporaryDirectory {
public:
  static Expected<TemporaryDirectory> create() {
    std::error_code error;
    fs::path base = fs::temp_directory_path(error);
    if (error) base = "/tmp";
    std::string pattern = (base / "tessel-measure-XXXXXX").string();
    if (!::mkdtemp(pattern.data()))
      return Diagnostic{"cannot create a temporary directory for measuring", base.string(), 0, 0,
                        "check that the temporary directory is writable (TMPDIR)"};
    return TemporaryDirectory(pattern);
  }
  TemporaryDirectory(TemporaryDirectory&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(TemporaryDirectory&&) = delete;
  ~TemporaryDirectory() {
    std::error_code ignored;
    if (!path_.empty()) fs::remove_all(path_, ignored);
  }
  fs::path path() const { return path_; }

private:
  explicit TemporaryDirectory(fs::path path) : path_(std::move(path)) {}
  fs::path path_;
};

std::string number(double value) {
  std::ostringstream text;
  // Every digit: a peak passed on must come back as the same double.
  text << std::setprecision(std::numeric_limits<double>::max_digits10) << value;
  return text.str();
}

std::string joined(const std::vector<int64_t>& values) {
  std::string text;
  for (int64_t v : values) {
    if (!text.empty()) text += ',';
    text += std::to_string(v);
  }
  return text;
}

bool isExecutableFile(const fs::path& path) {
  std::error_code error;
  return fs::is_regular_file(path, error) && ::access(path.c_str(), X_OK) == 0;
}

// What the user calls the kernel in messages.
std::string kernelLabel(const IsolatedMeasureRequest& request) {
  if (!request.kernelName.empty()) return request.kernelName;
  if (auto* task = std::get_if<ModelTaskSource>(&request.source)) return task->taskName;
  return std::get<OperatorSource>(request.source).name;
}

// The last lines the child wrote on stderr, progress lines left out: where its own words
// about a crash or an internal error are.
std::string stderrTail(const std::string& text, size_t maxLines = 12) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);)
    if (!line.empty() && line.rfind("progress ", 0) != 0) lines.push_back(line);
  if (lines.size() > maxLines) lines.erase(lines.begin(), lines.end() - long(maxLines));
  std::string tail;
  for (auto& line : lines) tail += (tail.empty() ? "" : "\n") + line;
  return tail;
}

// The last line of stdout that parses as a JSON object.
std::optional<nlohmann::json> lastJsonObject(const std::string& text) {
  std::istringstream stream(text);
  std::optional<nlohmann::json> found;
  for (std::string line; std::getline(stream, line);) {
    auto parsed = nlohmann::json::parse(line, nullptr, false);
    if (!parsed.is_discarded() && parsed.is_object()) found = std::move(parsed);
  }
  return found;
}

Expected<Measurement> measurementFrom(const nlohmann::json& json, const std::string& kernel) {
  try {
    Measurement m;
    m.kernelName = json.at("kernel").get<std::string>();
    m.medianMilliseconds = json.at("median_ms").get<double>();
    m.minMilliseconds = json.at("min_ms").get<double>();
    m.samples = json.at("samples").get<int>();
    m.flops = json.at("flops").get<double>();
    m.gflops = json.at("gflops").get<double>();
    m.peakGflops = json.at("peak_gflops").get<double>();
    m.fractionOfPeak = json.at("fraction_of_peak").get<double>();
    m.threads = json.at("threads").get<int>();
    return m;
  } catch (const nlohmann::json::exception& error) {
    return Diagnostic{"the measurement of '" + kernel + "' came back incomplete: " + error.what(), kernel, 0, 0,
                      "the tessel tool may be from another build than this program"};
  }
}

Diagnostic diagnosticFrom(const nlohmann::json& error, const std::string& scheduleFile,
                          const std::string& scheduleName) {
  Diagnostic d;
  d.message = error.value("message", std::string("measuring failed"));
  d.location = error.value("location", std::string());
  d.line = error.value("line", 0);
  d.column = error.value("column", 0);
  d.hint = error.value("hint", std::string());
  // The temporary file means nothing to the user; the text it held is the editor's.
  if (!scheduleFile.empty() && d.location == scheduleFile) d.location = scheduleName.empty() ? "schedule" : scheduleName;
  return d;
}

// Writes the request's input values and schedule text where the child can read them.
Status writeChildFiles(const IsolatedMeasureRequest& request, const fs::path& directory, std::string* scheduleFile,
                       std::map<std::string, std::string>* inputFiles) {
  if (request.scheduleText) {
    *scheduleFile = (directory / "schedule.txt").string();
    std::ofstream file(*scheduleFile, std::ios::binary);
    file << *request.scheduleText;
    if (!file.flush()) return Diagnostic{"cannot write the schedule for measuring", *scheduleFile, 0, 0, ""};
  }
  if (auto* task = std::get_if<ModelTaskSource>(&request.source)) {
    auto written = writeInputValueFiles(task->load, directory.string());
    if (!written) return written.error();
    *inputFiles = std::move(*written);
  }
  return Status::success();
}

}  // namespace

Expected<std::map<std::string, std::string>> writeInputValueFiles(const LoadOptions& load, const std::string& directory) {
  std::map<std::string, std::string> files;
  int index = 0;
  for (auto& [name, value] : load.inputValues) {
    std::string path = (fs::path(directory) / ("input_" + std::to_string(index++) + ".npy")).string();
    try {
      runtime::writeNpy(path, value);
    } catch (const std::exception& error) {
      return Diagnostic{"cannot hand input '" + name + "' to the measuring process: " + error.what(), path, 0, 0, ""};
    }
    files[name] = path;
  }
  return files;
}

std::vector<std::string> modelSourceArguments(const std::string& modelPath, const LoadOptions& load,
                                              const CompileOptions& compile,
                                              const std::map<std::string, std::string>& inputFiles) {
  std::vector<std::string> args = {modelPath};
  for (auto& [name, shape] : load.inputShapes) args.insert(args.end(), {"--input-shape", name + ":" + joined(shape)});
  for (auto& [name, file] : inputFiles) args.insert(args.end(), {"--input", name + "=" + file});
  const graph::PassOptions& passes = compile.passes;
  args.insert(args.end(), {"--opt-level", std::to_string(passes.optLevel)});
  for (auto& pass : passes.disabledPasses) args.insert(args.end(), {"--disable-pass", pass});
  for (auto& [key, value] : passes.config) args.insert(args.end(), {"--pass-config", key + "=" + value});
  return args;
}

std::vector<std::string> operatorSourceArguments(const OperatorSource& op) {
  std::vector<std::string> args = {"--operator", op.name};
  for (auto& [name, value] : op.parameters) args.insert(args.end(), {"--" + name, value});
  return args;
}

std::vector<std::string> measureCommandArguments(const IsolatedMeasureRequest& request,
                                                 const std::string& scheduleFile,
                                                 const std::map<std::string, std::string>& inputFiles) {
  std::vector<std::string> args = {"measure"};
  std::vector<std::string> source;
  if (auto* task = std::get_if<ModelTaskSource>(&request.source)) {
    source = modelSourceArguments(task->modelPath, task->load, task->compile, inputFiles);
    source.insert(source.begin() + 1, {"--task", task->taskName});
  } else {
    source = operatorSourceArguments(std::get<OperatorSource>(request.source));
  }
  args.insert(args.end(), source.begin(), source.end());
  if (request.scheduleText) args.insert(args.end(), {"--schedule", scheduleFile});
  if (request.threads > 0) args.insert(args.end(), {"--threads", std::to_string(request.threads)});
  const MeasureOptions& options = request.options;
  args.insert(args.end(), {"--min-seconds", number(options.minSeconds), "--min-repeats",
                           std::to_string(options.minRepeats), "--max-repeats", std::to_string(options.maxRepeats),
                           "--warmup-calls", std::to_string(options.warmupCalls), "--seed",
                           std::to_string(options.seed), "--json"});
  if (options.peakGflops > 0) args.insert(args.end(), {"--peak-gflops", number(options.peakGflops)});
  return args;
}

Expected<std::string> findTesselExecutable(const std::string& explicitPath) {
  if (!explicitPath.empty()) {
    if (isExecutableFile(explicitPath)) return explicitPath;
    return Diagnostic{"the tessel tool given is not an executable file", explicitPath, 0, 0,
                      "build the target tessel, or give the path of the tessel binary"};
  }
  if (const char* variable = std::getenv("TESSEL_CLI"); variable && *variable) {
    if (isExecutableFile(variable)) return std::string(variable);
    return Diagnostic{"TESSEL_CLI does not name an executable file", variable, 0, 0,
                      "point TESSEL_CLI at the tessel binary (build/bin/tessel), or unset it"};
  }
  std::error_code error;
  fs::path self = fs::read_symlink("/proc/self/exe", error);
  if (!error) {
    fs::path beside = self.parent_path() / "tessel";
    if (isExecutableFile(beside)) return beside.string();
  }
  if (const char* path = std::getenv("PATH")) {
    std::istringstream directories(path);
    for (std::string directory; std::getline(directories, directory, ':');) {
      fs::path candidate = fs::path(directory.empty() ? "." : directory) / "tessel";
      if (isExecutableFile(candidate)) return candidate.string();
    }
  }
  return Diagnostic{"cannot find the tessel command-line tool, which measures kernels in a process of its own", "",
                    0, 0,
                    "build the target tessel (it goes next to tessel-studio in build/bin), set TESSEL_CLI to its "
                    "path, or put it on PATH"};
}

Expected<Measurement> measureIsolated(const IsolatedMeasureRequest& request) {
  const std::string kernel = kernelLabel(request);
  auto tessel = findTesselExecutable(request.tesselPath);
  if (!tessel) return tessel.error();
  auto directory = TemporaryDirectory::create();
  if (!directory) return directory.error();
  std::string scheduleFile;
  std::map<std::string, std::string> inputFiles;
  if (Status written = writeChildFiles(request, directory->path(), &scheduleFile, &inputFiles); !written)
    return written.error();

  ChildProcessOptions child;
  child.cancelled = request.options.cancelled;
  child.timeoutSeconds =
      request.timeoutSeconds > 0 ? request.timeoutSeconds : 300 + 4 * std::max(0.0, request.options.minSeconds);
  if (request.options.progress)
    child.onStderrLine = [&progress = request.options.progress](std::string_view line) {
      if (line.rfind("progress ", 0) != 0) return;
      char* end = nullptr;
      std::string digits(line.substr(9));
      long percent = std::strtol(digits.c_str(), &end, 10);
      if (end != digits.c_str() && *end == '\0') progress(int(std::clamp(percent, 0L, 100L)));
    };
  auto ran = runChildProcess(*tessel, measureCommandArguments(request, scheduleFile, inputFiles), child);
  if (!ran) return ran.error();
  const ChildProcessResult& result = *ran;

  std::string tail = stderrTail(result.standardError);
  std::string lastWords = tail.empty() ? "" : "; its last output:\n" + tail;
  if (result.cancelled) return Diagnostic{"measuring " + kernel + " was cancelled", kernel, 0, 0, ""};
  if (result.timedOut)
    return Diagnostic{"measuring the kernel '" + kernel + "' " + result.describeEnd() +
                          "; its process was stopped, nothing else is affected",
                      kernel, 0, 0,
                      "the kernel may never finish under this schedule, or the time limit is too short for "
                      "the timing asked for" + lastWords};
  if (result.signal != 0)
    return Diagnostic{"the kernel '" + kernel + "' crashed while being measured (" + result.signalName +
                          "); it ran in a process of its own, so nothing else is affected",
                      kernel, 0, 0,
                      "this schedule makes code that crashes: a compiler bug worth reporting with the schedule" +
                          lastWords};
  auto json = lastJsonObject(result.standardOutput);
  if (!result.succeeded()) {
    if (json && json->contains("error") && (*json)["error"].is_object())
      return diagnosticFrom((*json)["error"], scheduleFile, request.scheduleName);
    return Diagnostic{"measuring the kernel '" + kernel + "' failed: the measuring process " + result.describeEnd(),
                      kernel, 0, 0, tail.empty() ? "it printed nothing on stderr" : tail};
  }
  if (!json)
    return Diagnostic{"measuring the kernel '" + kernel + "' gave no result", *tessel, 0, 0,
                      "the tessel tool printed no JSON object; it may be from another build than this program"};
  return measurementFrom(*json, kernel);
}

}  // namespace tessel::driver
