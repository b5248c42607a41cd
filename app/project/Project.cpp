// Reading, validating and writing project documents (JSON through nlohmann/json).
#include "app/project/Project.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "app/project/AtomicFile.h"
#include "app/project/Autosave.h"
#include "compiler/driver/Driver.h"
#include "compiler/frontend/onnx/OnnxImporter.h"
#include "compiler/schedule/TraceText.h"

namespace tessel::project {

namespace {

namespace fs = std::filesystem;
// Keys keep the order they were written in, so a saved file reads top to bottom as documented.
using Json = nlohmann::ordered_json;

// A document mistake found deep in the reader; caught once at the top and returned.
struct InvalidDocument {
  Diagnostic diagnostic;
};

std::string child(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }
std::string element(const std::string& path, size_t index) { return path + "[" + std::to_string(index) + "]"; }

std::string joinNames(const std::vector<std::string>& names) {
  std::string text;
  for (auto& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

// Reads one document, checking each value's type and range, naming the JSON path of the first
// problem. Relative paths resolve against the project's directory.
class DocumentReader {
public:
  DocumentReader(std::string file, FileChecks checks)
      : file_(std::move(file)), directory_(fs::absolute(fs::path(file_)).parent_path()), checks_(checks) {}

  Expected<Project> read(const std::string& text) {
    Json root;
    try {
      root = Json::parse(text);
    } catch (const Json::parse_error& error) {
      return parseError(text, error);
    } catch (const Json::exception& error) {
      // A number beyond double's range ("1e400") is nlohmann's out_of_range, not a parse_error.
      return Diagnostic{std::string("the project file is not valid JSON: ") + error.what(), file_, 0, 0,
                        "fix the file in a text editor, or restore it from its autosave or version control"};
    }
    try {
      return readDocument(root);
    } catch (const InvalidDocument& invalid) {
      return invalid.diagnostic;
    }
  }

private:
  [[noreturn]] void fail(const std::string& path, const std::string& message, std::string hint = "") const {
    throw InvalidDocument{Diagnostic{path.empty() ? message : path + ": " + message, file_, 0, 0, std::move(hint)}};
  }

  // nlohmann reports the byte offset; people need the line and column.
  Diagnostic parseError(const std::string& text, const Json::parse_error& error) const {
    // nlohmann counts the bytes read, the last one being where parsing stopped, past the token
    // that did not fit ("model" where a comma was missing): point at that token's start.
    size_t read = std::min<size_t>(error.byte, text.size());
    size_t end = read == 0 ? 0 : read - 1;
    if (read >= 2 && text[read - 1] == '"') {
      size_t open = text.rfind('"', read - 2);
      if (open != std::string::npos && text.find('\n', open) >= read) end = open;
    } else {
      while (end > 0 && std::isalnum(static_cast<unsigned char>(text[end - 1]))) --end;
    }
    int line = 1, column = 1;
    for (size_t i = 0; i < end; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    // "[json.exception.parse_error.101] parse error at line 3, column 5: syntax error ..." keeps
    // only what follows the position, which the Diagnostic carries itself.
    std::string what = error.what();
    size_t position = what.find(": ", what.find("parse error"));
    std::string reason = position == std::string::npos ? what : what.substr(position + 2);
    return Diagnostic{"the project file is not valid JSON: " + reason, file_, line, column,
                      "fix the file in a text editor, or restore it from its autosave or version control"};
  }

  const Json& expect(const Json& value, const std::string& path, Json::value_t type, const char* what) const {
    bool ok = value.type() == type || (type == Json::value_t::number_float && value.is_number());
    if (!ok) fail(path, std::string("expected ") + what + ", found " + describeType(value));
    return value;
  }

  static std::string describeType(const Json& value) {
    if (value.is_number_float()) return "a number (" + value.dump() + ")";
    if (value.is_number()) return "a whole number (" + value.dump() + ")";
    if (value.is_string()) return "a string (" + value.dump() + ")";
    return std::string(value.is_array() || value.is_object() ? "an " : "") + value.type_name();
  }

  void checkKeys(const Json& object, const std::string& path, const std::vector<std::string>& known) const {
    for (auto& [key, value] : object.items())
      if (std::find(known.begin(), known.end(), key) == known.end())
        fail(child(path, key), "unknown key",
             (path.empty() ? std::string("a project's keys") : "the keys of \"" + path + "\"") + ": " +
                 joinNames(known) + (path.empty() ? "; other tools' data belongs under \"metadata\"" : ""));
  }

  const Json& objectAt(const Json& parent, const std::string& path, const std::string& key) const {
    return expect(parent.at(key), child(path, key), Json::value_t::object, "an object");
  }

  int64_t integer(const Json& value, const std::string& path, int64_t minimum, int64_t maximum) const {
    if (!value.is_number_integer()) fail(path, "expected a whole number, found " + describeType(value));
    int64_t number = value.is_number_unsigned() && value.get<uint64_t>() > uint64_t(INT64_MAX) ? INT64_MAX
                                                                                                : value.get<int64_t>();
    if (number < minimum || number > maximum)
      fail(path, std::to_string(number) + " is out of range: expected " +
                     (maximum == INT64_MAX ? "at least " + std::to_string(minimum)
                                           : std::to_string(minimum) + " to " + std::to_string(maximum)));
    return number;
  }

  double number(const Json& value, const std::string& path, bool positive) const {
    expect(value, path, Json::value_t::number_float, "a number");
    double number = value.get<double>();
    if (positive ? !(number > 0) : !(number >= 0))
      fail(path, value.dump() + " is out of range: expected a " + (positive ? "positive" : "non-negative") +
                     " number");
    return number;
  }

  std::string string(const Json& value, const std::string& path, bool allowEmpty = true) const {
    expect(value, path, Json::value_t::string, "a string");
    std::string text = value.get<std::string>();
    if (!allowEmpty && text.empty()) fail(path, "must not be empty");
    return text;
  }

  bool boolean(const Json& value, const std::string& path) const {
    return expect(value, path, Json::value_t::boolean, "true or false").get<bool>();
  }

  // A stored path made absolute against the project's directory; empty stays empty.
  std::string resolvedPath(const Json& value, const std::string& path) const {
    std::string stored = string(value, path);
    if (stored.empty()) return stored;
    fs::path resolved(stored);
    if (resolved.is_relative()) resolved = directory_ / resolved;
    return resolved.lexically_normal().string();
  }

  Project readDocument(const Json& root) const {
    if (!root.is_object())
      fail("", "not a Tessel project: the document is " + describeType(root) + ", not an object");
    if (!root.contains("format") || root["format"] != kProjectFormat)
      fail("format", std::string("not a Tessel project: expected \"format\": \"") + kProjectFormat + "\"" +
                         (root.contains("format") ? ", found " + root["format"].dump() : ""));
    if (!root.contains("version")) fail("version", "missing: a project says which format version it is written in");
    if (!root["version"].is_number_integer())
      fail("version", "expected a whole number, found " + describeType(root["version"]));
    int64_t version = root["version"].get<int64_t>();
    if (version > kProjectVersion)
      fail("", "written by a newer Tessel (version " + std::to_string(version) + "); this build reads version " +
                   std::to_string(kProjectVersion),
           "open it with a newer Tessel; this build will not overwrite it");
    if (version < 1) fail("version", std::to_string(version) + " is not a project format version");

    checkKeys(root, "", {"format", "version", "model", "input_shapes", "target", "passes", "tasks", "tuning_records",
                         "export", "reference", "benchmark", "measurements", "metadata"});
    Project project;
    if (!root.contains("model")) fail("model", "missing: a project names the ONNX model it is about");
    string(root["model"], "model", false);
    project.model = resolvedPath(root["model"], "model");
    if (root.contains("input_shapes")) readInputShapes(objectAt(root, "", "input_shapes"), project);
    if (root.contains("target")) readTarget(objectAt(root, "", "target"), project.target);
    if (root.contains("passes")) readPasses(objectAt(root, "", "passes"), project.passes);
    if (root.contains("tasks")) readTasks(expect(root["tasks"], "tasks", Json::value_t::array, "an array"), project);
    if (root.contains("tuning_records")) project.tuningRecords = resolvedPath(root["tuning_records"], "tuning_records");
    if (root.contains("export")) readExport(objectAt(root, "", "export"), project.exportSettings);
    if (root.contains("reference")) readReference(objectAt(root, "", "reference"), project.reference);
    if (root.contains("benchmark")) readBenchmark(objectAt(root, "", "benchmark"), project.benchmark);
    if (root.contains("measurements")) project.measurements = readMeasurements(objectAt(root, "", "measurements"));
    if (root.contains("metadata")) project.metadata = objectAt(root, "", "metadata").dump();
    if (checks_ == FileChecks::Required) checkFiles(project);
    return project;
  }

  std::string readMeasurements(const Json& measurements) const {
    for (auto& [task, variants] : measurements.items()) {
      std::string path = child("measurements", task);
      expect(variants, path, Json::value_t::array, "an array of measured variants");
      for (size_t i = 0; i < variants.size(); ++i) {
        std::string at = path + "[" + std::to_string(i) + "]";
        expect(variants[i], at, Json::value_t::object, "an object");
        if (!variants[i].contains("medianMs")) fail(at + ".medianMs", "missing: every measured variant has its latency");
        number(variants[i]["medianMs"], at + ".medianMs", true);
      }
    }
    return measurements.dump();
  }

  void readInputShapes(const Json& shapes, Project& project) const {
    for (auto& [name, dims] : shapes.items()) {
      std::string path = child("input_shapes", name);
      expect(dims, path, Json::value_t::array, "an array of dimensions");
      std::vector<int64_t>& shape = project.inputShapes[name];
      for (size_t i = 0; i < dims.size(); ++i) shape.push_back(integer(dims[i], element(path, i), 0, INT64_MAX));
    }
  }

  void readTarget(const Json& target, TargetSettings& settings) const {
    checkKeys(target, "target", {"threads", "vector_lanes"});
    if (target.contains("threads")) settings.threads = int(integer(target["threads"], "target.threads", 0, 1024));
    if (target.contains("vector_lanes"))
      settings.vectorLanes = int(integer(target["vector_lanes"], "target.vector_lanes", 0, 64));
  }

  void readPasses(const Json& passes, PassSettings& settings) const {
    checkKeys(passes, "passes", {"opt_level", "disabled", "config"});
    if (passes.contains("opt_level")) settings.optLevel = int(integer(passes["opt_level"], "passes.opt_level", 0, 3));
    if (passes.contains("disabled")) {
      const Json& disabled = expect(passes["disabled"], "passes.disabled", Json::value_t::array, "an array of pass names");
      for (size_t i = 0; i < disabled.size(); ++i)
        settings.disabledPasses.push_back(string(disabled[i], element("passes.disabled", i), false));
    }
    if (passes.contains("config"))
      for (auto& [key, value] : objectAt(passes, "passes", "config").items())
        settings.config[key] = string(value, child("passes.config", key));
    // The pass manager knows the pass names and the options each declares.
    graph::PassOptions options;
    options.optLevel = settings.optLevel;
    options.disabledPasses = settings.disabledPasses;
    options.config = settings.config;
    Status checked = driver::standardPasses().checkOptions(options);
    if (!checked) fail("passes", checked.error().message, checked.error().hint);
  }

  void readTasks(const Json& tasks, Project& project) const {
    for (size_t i = 0; i < tasks.size(); ++i) {
      std::string path = element("tasks", i);
      const Json& task = expect(tasks[i], path, Json::value_t::object, "an object");
      checkKeys(task, path, {"name", "workload", "trace"});
      for (const char* key : {"name", "workload", "trace"})
        if (!task.contains(key)) fail(child(path, key), "missing");
      driver::ScheduleEdit edit;
      edit.task = string(task["name"], child(path, "name"), false);
      edit.workload = string(task["workload"], child(path, "workload"), false);
      edit.trace = traceText(task["trace"], child(path, "trace"));
      if (const driver::ScheduleEdit* earlier = project.findTask(edit.task))
        fail(child(path, "name"), "task '" + edit.task + "' is edited twice (also tasks[" +
                                      std::to_string(earlier - project.tasks.data()) + "])",
             "keep one schedule per task");
      auto parsed = parseTraceText(edit.trace);
      if (!parsed)
        fail(child(path, "trace"), "line " + std::to_string(parsed.error().line) + ", column " +
                                       std::to_string(parsed.error().column) + ": " + parsed.error().message,
             parsed.error().hint);
      project.tasks.push_back(std::move(edit));
    }
  }

  // A trace is one string, or an array of lines each ending with a newline (readable in a diff).
  std::string traceText(const Json& trace, const std::string& path) const {
    if (trace.is_string()) return trace.get<std::string>();
    if (!trace.is_array()) fail(path, "expected a string or an array of lines, found " + describeType(trace));
    std::string text;
    for (size_t i = 0; i < trace.size(); ++i) text += string(trace[i], element(path, i)) + "\n";
    return text;
  }

  void readExport(const Json& exportObject, ExportSettings& settings) const {
    checkKeys(exportObject, "export", {"enabled", "directory"});
    if (exportObject.contains("enabled")) settings.enabled = boolean(exportObject["enabled"], "export.enabled");
    if (exportObject.contains("directory"))
      settings.directory = resolvedPath(exportObject["directory"], "export.directory");
    if (settings.enabled && settings.directory.empty())
      fail("export.directory", "export is enabled but names no directory");
  }

  void readReference(const Json& reference, ReferenceData& data) const {
    checkKeys(reference, "reference", {"directory", "rtol", "atol"});
    if (reference.contains("directory")) data.directory = resolvedPath(reference["directory"], "reference.directory");
    if (reference.contains("rtol")) data.rtol = number(reference["rtol"], "reference.rtol", false);
    if (reference.contains("atol")) data.atol = number(reference["atol"], "reference.atol", false);
  }

  void readBenchmark(const Json& benchmark, BenchmarkSettings& settings) const {
    checkKeys(benchmark, "benchmark",
              {"repeats", "threads", "max_latency_ms", "baseline_ms", "max_ratio", "max_tuned_ratio"});
    if (benchmark.contains("repeats"))
      settings.repeats = int(integer(benchmark["repeats"], "benchmark.repeats", 1, 1000000));
    if (benchmark.contains("threads"))
      settings.threads = int(integer(benchmark["threads"], "benchmark.threads", 0, 1024));
    if (benchmark.contains("max_latency_ms"))
      settings.maxLatencyMs = number(benchmark["max_latency_ms"], "benchmark.max_latency_ms", true);
    if (benchmark.contains("baseline_ms"))
      settings.baselineMs = number(benchmark["baseline_ms"], "benchmark.baseline_ms", true);
    if (benchmark.contains("max_ratio")) settings.maxRatio = number(benchmark["max_ratio"], "benchmark.max_ratio", true);
    if (benchmark.contains("max_tuned_ratio"))
      settings.maxTunedRatio = number(benchmark["max_tuned_ratio"], "benchmark.max_tuned_ratio", true);
    if (settings.baselineMs.has_value() != settings.maxRatio.has_value())
      fail(settings.baselineMs ? "benchmark.max_ratio" : "benchmark.baseline_ms",
           "missing: baseline_ms and max_ratio go together (latency at most max_ratio times the baseline)");
  }

  void checkFiles(const Project& project) const {
    std::error_code error;
    if (!fs::is_regular_file(project.model, error))
      fail("model", "no such file: " + project.model,
           "move the model back, or change \"model\" (a path relative to " + directory_.string() + ")");
    if (!project.inputShapes.empty()) {
      auto inputs = frontend::readOnnxInputs(project.model);
      if (!inputs) fail("model", inputs.error().message, inputs.error().hint);
      std::vector<std::string> names;
      for (auto& input : *inputs) names.push_back(input.name);
      for (auto& [name, shape] : project.inputShapes)
        if (std::find(names.begin(), names.end(), name) == names.end())
          fail(child("input_shapes", name), "the model has no input named '" + name + "'",
               "its inputs: " + joinNames(names));
    }
    if (!project.reference.directory.empty()) {
      if (!fs::is_directory(project.reference.directory, error))
        fail("reference.directory", "no such directory: " + project.reference.directory,
             "name a directory of input_0.pb and output_0.pb, or leave it empty to skip the check");
      if (!fs::exists(fs::path(project.reference.directory) / "output_0.pb", error))
        fail("reference.directory", project.reference.directory + " holds no output_0.pb",
             "reference data is input_N.pb and output_N.pb files (the ONNX test layout)");
    }
  }

  std::string file_;
  fs::path directory_;
  FileChecks checks_;
};

// `path` as written to a project file in `directory`: relative when it can be, so a project
// and its model move together; absolute when there is no directory (an untitled project).
// Paths that share nothing but the root ("/tmp/a.tessel" naming "/work/model.onnx") stay
// absolute: "../work/model.onnx" would only move with the whole file system.
std::string storedPath(const std::string& path, const fs::path& directory) {
  if (path.empty() || directory.empty()) return path;
  fs::path target(path);
  auto first = [](const fs::path& p) { return p.relative_path().empty() ? fs::path() : *p.relative_path().begin(); };
  if (first(target) != first(directory)) return path;
  fs::path relative = target.lexically_relative(directory);
  return relative.empty() ? path : relative.generic_string();
}

Json traceJson(const std::string& trace) {
  // Line arrays only for text where every line ends with a newline, so reading gives the same text.
  if (trace.empty() || trace.back() != '\n' || trace.find('\r') != std::string::npos) return trace;
  Json lines = Json::array();
  size_t start = 0;
  for (size_t end; (end = trace.find('\n', start)) != std::string::npos; start = end + 1)
    lines.push_back(trace.substr(start, end - start));
  return lines;
}

}  // namespace

const driver::ScheduleEdit* Project::findTask(const std::string& task) const {
  for (auto& edit : tasks)
    if (edit.task == task) return &edit;
  return nullptr;
}

void Project::setTask(driver::ScheduleEdit edit) {
  for (auto& existing : tasks)
    if (existing.task == edit.task) {
      existing = std::move(edit);
      return;
    }
  tasks.push_back(std::move(edit));
}

bool Project::removeTask(const std::string& task) {
  auto end = std::remove_if(tasks.begin(), tasks.end(), [&](auto& edit) { return edit.task == task; });
  bool removed = end != tasks.end();
  tasks.erase(end, tasks.end());
  return removed;
}

Expected<Project> parseProject(const std::string& text, const std::string& path, FileChecks checks) {
  return DocumentReader(path, checks).read(text);
}

Expected<Project> loadProject(const std::string& path, FileChecks checks) {
  auto text = readTextFile(path);
  if (!text) return text.error();
  return parseProject(*text, path, checks);
}

std::string formatProject(const Project& project, const std::string& path) {
  fs::path directory = path.empty() ? fs::path() : fs::absolute(fs::path(path)).parent_path();
  Json document;
  document["format"] = kProjectFormat;
  document["version"] = kProjectVersion;
  document["model"] = storedPath(project.model, directory);
  Json shapes = Json::object();
  for (auto& [name, shape] : project.inputShapes) shapes[name] = shape;
  document["input_shapes"] = shapes;
  document["target"] = {{"threads", project.target.threads}, {"vector_lanes", project.target.vectorLanes}};
  Json config = Json::object();
  for (auto& [key, value] : project.passes.config) config[key] = value;
  document["passes"] = {
      {"opt_level", project.passes.optLevel}, {"disabled", project.passes.disabledPasses}, {"config", config}};
  Json tasks = Json::array();
  for (auto& edit : project.tasks)
    tasks.push_back({{"name", edit.task}, {"workload", edit.workload}, {"trace", traceJson(edit.trace)}});
  document["tasks"] = tasks;
  document["tuning_records"] = storedPath(project.tuningRecords, directory);
  document["export"] = {{"enabled", project.exportSettings.enabled},
                        {"directory", storedPath(project.exportSettings.directory, directory)}};
  document["reference"] = {{"directory", storedPath(project.reference.directory, directory)},
                           {"rtol", project.reference.rtol},
                           {"atol", project.reference.atol}};
  Json benchmark = {{"repeats", project.benchmark.repeats}, {"threads", project.benchmark.threads}};
  if (project.benchmark.maxLatencyMs) benchmark["max_latency_ms"] = *project.benchmark.maxLatencyMs;
  if (project.benchmark.baselineMs) benchmark["baseline_ms"] = *project.benchmark.baselineMs;
  if (project.benchmark.maxRatio) benchmark["max_ratio"] = *project.benchmark.maxRatio;
  if (project.benchmark.maxTunedRatio) benchmark["max_tuned_ratio"] = *project.benchmark.maxTunedRatio;
  document["benchmark"] = benchmark;
  if (!project.measurements.empty()) {
    Json measurements = Json::parse(project.measurements, nullptr, false);
    TESSEL_ICHECK(measurements.is_object()) << "Project::measurements must be a JSON object, got: "
                                            << project.measurements;
    document["measurements"] = measurements;
  }
  if (!project.metadata.empty()) {
    Json metadata = Json::parse(project.metadata, nullptr, false);
    TESSEL_ICHECK(metadata.is_object()) << "Project::metadata must be a JSON object, got: " << project.metadata;
    document["metadata"] = metadata;
  }
  return document.dump(2) + "\n";
}

Status saveProject(const Project& project, const std::string& path) {
  std::error_code error;
  if (fs::exists(path, error)) {
    // A file this build cannot read may hold work it does not understand (a newer version) or
    // be the only copy of a damaged project: never replace it behind the user's back.
    auto text = readTextFile(path);
    Expected<Project> existing = text ? parseProject(*text, path, FileChecks::Skipped) : text.error();
    if (!existing) {
      Diagnostic d = existing.error();
      return Diagnostic{"will not overwrite a file this build cannot read as a project (" + d.toString() +
                            "); it was left untouched",
                        path, 0, 0, "save the project under another name"};
    }
  }
  Status written = writeFileAtomically(path, formatProject(project, path));
  if (!written) return written;
  discardAutosave(path);
  return Status::success();
}

Project starterProject(const std::string& model) {
  Project project;
  fs::path absolute = fs::absolute(fs::path(model)).lexically_normal();
  project.model = absolute.string();
  std::error_code error;
  for (const fs::path& candidate :
       {absolute.parent_path() / "test_data_set_0", absolute.parent_path() / absolute.stem() / "test_data_set_0"})
    if (fs::exists(candidate / "output_0.pb", error)) {
      project.reference.directory = candidate.string();
      break;
    }
  return project;
}

}  // namespace tessel::project
