// tessel measure: times one task of a model (or one bare operator) under a schedule. It is
// what the Studio's Measure button runs in a child process, so a kernel that crashes or hangs
// takes down only this process (DESIGN.md, "Measurement is isolated").
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "app/cli/Commands.h"
#include "app/cli/InputFlags.h"
#include "app/cli/MeasureCommand.h"
#include "app/cli/ModelCommand.h"
#include "app/cli/OperatorSpec.h"
#include "compiler/driver/MeasureKernel.h"
#include "compiler/driver/ScheduleTask.h"
#include "compiler/frontend/onnx/OnnxImporter.h"
#include "compiler/schedule/TraceText.h"

namespace tessel::cli {

namespace {

const char* kSynopsis = "MODEL --task KERNEL [options]\n       tessel measure --operator OP [operator flags] [options]\n"
                        "       tessel measure --list-tasks MODEL [model flags]";

const char* kDescription =
    "Builds one kernel under a schedule and times it on random inputs (the same seed, the same\n"
    "data): warm-up calls, then samples until both --min-repeats and --min-seconds are reached.\n"
    "Prints kernel=, threads=, samples=, median_ms=, min_ms=, flops=, gflops=, peak_gflops= (this\n"
    "machine's measured float32 FMA peak; its int8 vpdpbusd peak for an int8 kernel) and\n"
    "fraction_of_peak=.\n"
    "\n"
    "The model is imported and compiled with the given flags exactly as `tessel compile` and the\n"
    "Studio do, so the same flags give the same kernel names (--list-tasks prints them).\n"
    "--operator times an operator `tessel bench` knows (matmul, dense, conv2d, bf16_matmul,\n"
    "int8_matmul) with its flags (`tessel bench OP --help` lists them) instead of a model's task.\n"
    "--schedule replays a schedule text file (as the Studio's editor shows it) instead of the\n"
    "default schedule; a schedule error names the file, line and column.\n"
    "\n"
    "--json prints one JSON object (kernel, median_ms, min_ms, samples, flops, gflops,\n"
    "peak_gflops, fraction_of_peak, threads) or, on failure, {\"error\": {message, location, line,\n"
    "column, hint}}; progress goes to stderr as lines \"progress <percent>\" while sampling.\n"
    "This is the form the Studio reads from the process it starts. With --list-tasks, --json prints\n"
    "an array of {name, node, op, flops}.\n"
    "\n"
    "--target opencl or cuda (with --operator) lowers the schedule for that GPU target, exports\n"
    "it as a GPU module and times it on the device the runtime finds, each sample timed by the\n"
    "device; it adds device= (and \"device\" in JSON) and prints threads=0, peak_gflops=0 and\n"
    "fraction_of_peak=0: there is no measured peak for a device.\n"
    "Exit status: 0 measured, 2 any error.\n";

std::vector<FlagSpec> measureFlags(const std::string& op) {
  std::vector<FlagSpec> flags = {
      {"task", "the kernel to measure (its symbol; see --list-tasks)", true, ""},
      {"list-tasks", "print the model's task (kernel) names and stop", false, ""},
      {"operator", "OP: measure a bare operator (matmul, dense, conv2d, bf16_matmul, int8_matmul) instead of a model's task", true, ""},
      {"schedule", "schedule text file replacing the default schedule", true, ""},
      threadsFlag(),
      {"min-seconds", "keep sampling until the samples add up to this many seconds", true, "0.2"},
      {"min-repeats", "take at least this many timed samples", true, "10"},
      {"max-repeats", "take at most this many timed samples", true, "2000"},
      {"warmup-calls", "untimed calls before sampling", true, "1"},
      {"seed", "seed of the random inputs", true, "42"},
      {"peak-gflops", "the machine peak to compare against (default: measured now, about 0.2 s)", true, "0"},
      {"json", "print one JSON object (and progress lines on stderr)", false, ""},
      {"target", "with --operator, where the kernel runs: llvm (this CPU, the default), opencl (PoCL on a CPU, or a GPU) or \"cuda -arch=sm_90\" (needs that GPU)", true, ""},
  };
  appendSourceFlags(flags, op);
  return flags;
}

std::optional<std::string> readNumber(const CommandLine& line, const std::string& name, double* out) {
  std::string text = line.get(name);
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(value >= 0)) return "--" + name + " must be a non-negative number, got '" + text + "'";
  *out = value;
  return std::nullopt;
}

std::optional<std::string> readMeasureOptions(const CommandLine& line, driver::MeasureOptions* options) {
  int64_t minRepeats = 0, maxRepeats = 0, warmup = 0, seed = 0;
  if (auto error = readNumber(line, "min-seconds", &options->minSeconds)) return error;
  if (auto error = line.getInt("min-repeats", &minRepeats)) return error;
  if (auto error = line.getInt("max-repeats", &maxRepeats)) return error;
  if (auto error = line.getInt("warmup-calls", &warmup, 0)) return error;
  if (auto error = line.getInt("seed", &seed, 0)) return error;
  if (auto error = readNumber(line, "peak-gflops", &options->peakGflops)) return error;
  if (maxRepeats < minRepeats) return "--max-repeats must be at least --min-repeats";
  options->minRepeats = int(minRepeats);
  options->maxRepeats = int(maxRepeats);
  options->warmupCalls = int(warmup);
  options->seed = unsigned(seed);
  return std::nullopt;
}

// Reads --schedule; nullopt when the flag is absent. A parse error names the file.
std::optional<Expected<Trace>> readScheduleFile(const CommandLine& line) {
  if (!line.has("schedule")) return std::nullopt;
  std::string path = line.get("schedule");
  std::ifstream file(path);
  if (!file) return Expected<Trace>(Diagnostic{"cannot read the schedule file", path, 0, 0, "check the path"});
  std::stringstream text;
  text << file.rdbuf();
  return parseTraceText(text.str());
}

// A schedule error points into the schedule text: name the file it came from.
Diagnostic locateInSchedule(Diagnostic diagnostic, const CommandLine& line) {
  if (line.has("schedule") && (diagnostic.line > 0 || diagnostic.location == "schedule"))
    diagnostic.location = line.get("schedule");
  return diagnostic;
}

// The values of --input and --inputs-dir by input name (the compiler binds those it needs).
Expected<std::map<std::string, runtime::NDArray>> readInputValues(const CommandLine& line, const std::string& model) {
  driver::RunRequest request;
  std::optional<Diagnostic> unreadable;
  if (auto error = readInputFlags(line, &request, &unreadable)) {
    if (unreadable) return *unreadable;
    return Diagnostic{*error, "", 0, 0, ""};
  }
  if (request.positionalInputs.empty() && request.namedInputs.empty()) return std::map<std::string, runtime::NDArray>{};
  auto declared = frontend::readOnnxInputs(model);
  if (!declared) return declared.error();
  std::string names;
  for (auto& input : *declared) names += (names.empty() ? "" : ", ") + input.name;
  std::map<std::string, runtime::NDArray> values;
  if (request.positionalInputs.size() > declared->size())
    return Diagnostic{"the model has " + std::to_string(declared->size()) + " inputs but --inputs-dir holds " +
                          std::to_string(request.positionalInputs.size()),
                      model, 0, 0, "its inputs: " + names};
  for (size_t i = 0; i < request.positionalInputs.size(); ++i) {
    if (request.positionalInputs[i].sequence)
      return Diagnostic{"input '" + (*declared)[i].name + "' is a sequence; measure takes tensor inputs only", model, 0, 0,
                        "measure a model whose inputs are tensors, or use tessel run"};
    values.emplace((*declared)[i].name, request.positionalInputs[i].tensor);
  }
  // A misspelled name would otherwise be ignored without a word.
  for (auto& [name, value] : request.namedInputs) {
    bool known = std::any_of(declared->begin(), declared->end(),
                             [&, &wanted = name](auto& input) { return input.name == wanted; });
    if (!known) return Diagnostic{"the model has no input named '" + name + "'", model, 0, 0, "its inputs: " + names};
    if (!values.emplace(name, value).second)
      return Diagnostic{"input '" + name + "' is given twice (by name and by position)", model, 0, 0, ""};
  }
  return values;
}

}  // namespace

void appendSourceFlags(std::vector<FlagSpec>& flags, const std::string& op) {
  flags.push_back(inputShapeFlag());
  for (auto& flag : inputFlags()) flags.push_back(flag);
  for (auto& flag : passFlags()) flags.push_back(flag);
  for (auto& flag : operatorFlags(op)) flags.push_back(flag);
}

std::string operatorArgument(const std::vector<std::string>& args) {
  for (size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "--operator") return args[i + 1];
  return "";
}

Status readModelSource(const std::string& model, const CommandLine& line, driver::LoadOptions* load,
                       driver::CompileOptions* compile, std::string* usageError) {
  if (auto error = readInputShapes(line, load)) {
    *usageError = *error;
    return Diagnostic{*error, "", 0, 0, ""};
  }
  if (auto error = readPassOptions(line, compile)) {
    *usageError = *error;
    return Diagnostic{*error, "", 0, 0, ""};
  }
  auto values = readInputValues(line, model);
  if (!values) return values.error();
  load->inputValues = std::move(*values);
  return {};
}

Expected<std::vector<driver::ScheduleTask>> compileTasks(const std::string& model, const CommandLine& line,
                                                         std::string* usageError, int64_t* constantBytes) {
  driver::LoadOptions load;
  driver::CompileOptions compile;
  if (Status read = readModelSource(model, line, &load, &compile, usageError); !read) return read.error();
  auto graph = driver::loadModel(model, load);
  if (!graph) return graph.error();
  auto compiled = driver::compileGraph(*graph, compile);
  if (!compiled) return compiled.error();
  if (constantBytes) {
    *constantBytes = 0;
    for (const auto& [name, array] : compiled->params) *constantBytes += int64_t(array.byteSize());
  }
  return driver::extractTasks(*compiled, compile.target);
}

namespace {

// One reporter for the three ways out, so --json always prints exactly one object.
class Reporter {
public:
  explicit Reporter(bool json) : json_(json) {}

  int fail(const Diagnostic& diagnostic) const {
    if (json_)
      std::cout << nlohmann::json{{"error",
                                   {{"message", diagnostic.message},
                                    {"location", diagnostic.location},
                                    {"line", diagnostic.line},
                                    {"column", diagnostic.column},
                                    {"hint", diagnostic.hint}}}}
                       .dump()
                << std::endl;
    return reportDiagnostic(diagnostic);
  }
  int usageError(const std::string& message) const {
    if (json_) return fail(Diagnostic{message, "", 0, 0, "see tessel measure --help"});
    return reportUsageError("measure", message);
  }

  int report(const driver::Measurement& m) const {
    if (json_) {
      nlohmann::json out{{"kernel", m.kernelName},   {"median_ms", m.medianMilliseconds},
                                  {"min_ms", m.minMilliseconds}, {"samples", m.samples},
                                  {"flops", m.flops},            {"gflops", m.gflops},
                                  {"peak_gflops", m.peakGflops}, {"fraction_of_peak", m.fractionOfPeak},
                                  {"threads", m.threads}};
      if (!m.device.empty()) out["device"] = m.device;
      std::cout << out.dump() << std::endl;
    } else {
      std::printf("kernel=%s\n", m.kernelName.c_str());
      if (!m.device.empty()) std::printf("device=%s\n", m.device.c_str());
      std::printf("threads=%d\nsamples=%d\nmedian_ms=%.6g\nmin_ms=%.6g\nflops=%.6g\ngflops=%.4g\n"
                  "peak_gflops=%.4g\nfraction_of_peak=%.3g\n",
                  m.threads, m.samples, m.medianMilliseconds, m.minMilliseconds, m.flops, m.gflops, m.peakGflops,
                  m.fractionOfPeak);
    }
    return kExitOk;
  }

  // "progress <percent>" lines on stderr, one per percent, flushed so the parent sees them now.
  std::function<void(int)> progress() const {
    if (!json_) return nullptr;
    return [last = -1](int percent) mutable {
      if (percent == last) return;
      last = percent;
      std::fprintf(stderr, "progress %d\n", percent);
      std::fflush(stderr);
    };
  }

private:
  bool json_;
};

int listTasks(const std::string& model, const CommandLine& line, const Reporter& reporter) {
  std::string usageError;
  auto tasks = compileTasks(model, line, &usageError);
  if (!usageError.empty()) return reporter.usageError(usageError);
  if (!tasks) return reporter.fail(tasks.error());
  if (line.has("json")) {
    nlohmann::json list = nlohmann::json::array();
    for (auto& task : *tasks)
      list.push_back({{"name", task.name}, {"node", task.nodeName}, {"op", task.op}, {"flops", task.flops}});
    std::cout << list.dump() << "\n";
  } else {
    for (auto& task : *tasks) std::cout << task.name << "\n";
  }
  return kExitOk;
}

Expected<driver::Measurement> measureModelTask(const std::string& model, const CommandLine& line,
                                               const driver::MeasureOptions& options, std::string* usageError) {
  auto tasks = compileTasks(model, line, usageError);
  if (!tasks) return tasks.error();
  std::string wanted = line.get("task");
  const driver::ScheduleTask* task = nullptr;
  std::string names;
  for (auto& candidate : *tasks) {
    if (candidate.name == wanted) task = &candidate;
    names += (names.empty() ? "" : ", ") + candidate.name;
  }
  if (!task)
    return Diagnostic{"the model has no task named '" + wanted + "'", model, 0, 0,
                      "its tasks: " + (names.empty() ? std::string("none") : names)};
  Trace trace = task->defaultTrace;
  if (auto file = readScheduleFile(line)) {
    if (!*file) return locateInSchedule(file->error(), line);
    trace = **file;
  }
  // The task's own count: a fused kernel's flops include what it absorbed.
  Workload workload = task->workload;
  workload.flops = task->flops;
  auto measured = driver::measureKernel(workload, trace, options);
  if (!measured) return locateInSchedule(measured.error(), line);
  measured->kernelName = task->name;
  return measured;
}

Expected<driver::Measurement> measureOperator(const std::string& op, const CommandLine& line,
                                              const driver::MeasureOptions& options, std::string* usageError) {
  std::unique_ptr<OperatorSpec> spec;
  if (auto error = makeOperator(op, line, &spec)) {
    *usageError = *error;
    return Diagnostic{*error, "", 0, 0, ""};
  }
  // The default schedule is the target's (makeOperator read --target).
  auto file = readScheduleFile(line);
  if (!file) {
    auto schedule = spec->defaultSchedule();
    if (!schedule) return schedule.error();
    return driver::measureKernelOnGpu(spec->workload, *schedule, spec->target, options);
  }
  if (!*file) return locateInSchedule(file->error(), line);
  auto schedule = Schedule::replay(spec->workload.outputs, **file);
  if (!schedule) return locateInSchedule(schedule.error(), line);
  auto measured = driver::measureKernelOnGpu(spec->workload, *schedule, spec->target, options);
  if (!measured) return locateInSchedule(measured.error(), line);
  return measured;
}

}  // namespace

int runMeasure(const std::vector<std::string>& args) {
  std::string op = operatorArgument(args);
  std::vector<FlagSpec> flags = measureFlags(op);
  CommandLine line;
  if (auto error = CommandLine::parse(args, flags, &line)) return reportUsageError("measure", *error);
  Reporter reporter(line.has("json"));
  if (line.helpRequested() || args.empty()) {
    std::cout << usage(std::string("tessel measure ") + kSynopsis, flags) << "\n" << kDescription;
    return args.empty() ? kExitError : kExitOk;
  }
  const auto& positional = line.positional();
  if (positional.size() > 1) return reporter.usageError("unexpected argument '" + positional[1] + "' (see --help)");
  std::string model = positional.empty() ? "" : positional[0];
  if (!op.empty() && !model.empty())
    return reporter.usageError("give either a MODEL or --operator, not both");
  if (op.empty() && model.empty()) return reporter.usageError("give a MODEL (with --task) or --operator OP");
  if (line.has("list-tasks")) {
    if (model.empty()) return reporter.usageError("--list-tasks needs a MODEL");
    return listTasks(model, line, reporter);
  }
  if (!op.empty() && line.has("task")) return reporter.usageError("--task names a task of a MODEL, not of --operator");
  if (op.empty() && line.has("target"))
    return reporter.usageError("--target measures an --operator on a device; a model's tasks are measured on this CPU "
                               "(tessel run MODEL --target opencl runs the whole model on the device)");
  if (op.empty() && !line.has("task"))
    return reporter.usageError("--task KERNEL is missing (tessel measure --list-tasks " + model + " lists them)");

  driver::MeasureOptions options;
  if (auto error = readMeasureOptions(line, &options)) return reporter.usageError(*error);
  if (auto error = applyThreads(line)) return reporter.usageError(*error);
  options.progress = reporter.progress();

  std::string usageError;
  auto measured = op.empty() ? measureModelTask(model, line, options, &usageError)
                             : measureOperator(op, line, options, &usageError);
  if (!usageError.empty()) return reporter.usageError(usageError);
  if (!measured) return reporter.fail(measured.error());
  return reporter.report(*measured);
}

}  // namespace tessel::cli
