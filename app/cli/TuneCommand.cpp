// tessel tune: auto-tunes the kernels of a model (or one operator) and appends every trial to a
// records file that `--tuning-records` applies everywhere. The work is the tuner's
// (tuner/session); this file turns its event stream into a live table and a summary, writes
// the stream with --events, and measures the whole model, tuned against default, at the end.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <random>

#include "app/cli/Commands.h"
#include "app/cli/InputFlags.h"
#include "app/cli/MeasureCommand.h"
#include "app/cli/ModelCommand.h"
#include "app/cli/OperatorSpec.h"
#include "compiler/driver/RunModel.h"
#include "runtime/PeakBandwidth.h"
#include "runtime/PeakFlops.h"
#include "runtime/ThreadPool.h"
#include "runtime/Timer.h"
#include "tuner/session/TuningSession.h"

namespace tessel::cli {

namespace {

const char* kSynopsis =
    "MODEL --records FILE [--time-budget 20m | --trials N] [options]\n"
    "       tessel tune matmul|dense|conv2d [operator flags] --records FILE [options]";

const char* kDescription =
    "Searches faster schedules for every kernel of MODEL (identical kernels are one task, weighted\n"
    "by how often they run), or for one operator. Each round the task scheduler picks the task\n"
    "whose tuning should shorten the model's latency most; the search proposes candidates from\n"
    "the task's generated search space, ranked by a cost model (XGBoost on loop-nest features)\n"
    "that is retrained as measurements arrive; a separate worker process builds, checks and times\n"
    "each candidate (a candidate that crashes or hangs costs a restart, and is recorded as an\n"
    "error). Every trial is appended to --records at once. At the end each task's best few\n"
    "schedules are measured again in turns with the default, and the model is timed with the\n"
    "tuned and the default schedules in turns.\n"
    "\n"
    "Apply the results with --tuning-records FILE on compile, run, bench, inspect and project run.\n"
    "--resume continues a session from its records file (and the cost model saved beside it as\n"
    "FILE.model); without it, a file that already holds trials of these kernels is refused.\n"
    "Ctrl-C stops after the candidate being measured; every trial so far is kept. SIGUSR1 pauses\n"
    "the search after the current round and SIGUSR2 resumes it (paused time does not count\n"
    "against the budget): `kill -USR1 PID`, as the Studio's Pause button does.\n"
    "--time-budget is the search's (confirmation and the final measurement follow, usually under\n"
    "a minute): 90s, 20m, 1h or 1h30m. --trials counts all trials of this session but the final\n"
    "confirmations. --events writes every event as a JSON line (tuner/Events.md) to FILE, or to\n"
    "stdout with '-' (the table then goes to stderr); without it they go to FILE.events beside\n"
    "the records, where the Studio's Tuning view finds them.\n"
    "An operator tunes for a GPU with --target opencl or --target \"cuda -arch=sm_90\": candidates\n"
    "from the GPU tiling space (tiles and threads per block, k step, unrolling) are exported as GPU\n"
    "modules and timed by the device (OpenCL runs on a CPU through PoCL); apply the records with\n"
    "tessel bench OP --target ... --tuning-records FILE.\n"
    "Exit status: 0 done, 2 an error (nothing measured is lost), 130 interrupted.\n";

std::vector<FlagSpec> tuneFlags(const std::string& op) {
  std::vector<FlagSpec> flags = {
      {"records", "FILE: the tuning records to append to (JSON lines; created when missing)", true, ""},
      {"time-budget", "how long to search: 90s, 20m, 1h (default 10m unless --trials is given)", true, ""},
      {"trials", "stop after this many trials", true, ""},
      {"tasks", "tune only this task: a kernel name, workload hash or op such as fused(Conv+Relu) (repeatable)",
       true, "", true},
      threadsFlag(),
      {"resume", "continue from the trials already in --records", false, ""},
      {"events", "FILE or -: write every event as a JSON line", true, ""},
      {"from-scratch", "search only the generated sketches, without the default schedule's (an experiment)", false,
       ""},
      {"seed", "seed of the search", true, "1"},
      {"flush-caches", "auto, yes or no: time candidates with their weights evicted from the caches before each "
                       "call (auto: when the weights are larger than the last-level cache, as they then are "
                       "when the model runs)",
       true, "auto"},
      {"timing-turns", "N: time each round's candidates in N turns each, so that a machine whose speed drifts "
                       "slows them alike (1: one after the other)",
       true, "20"},
  };
  if (op.empty()) {
    appendSourceFlags(flags, "");
  } else {
    for (auto& flag : operatorFlags(op)) flags.push_back(flag);
  }
  flags.push_back({"target",
                   "an operator's: where candidates run: llvm (this CPU, the default), opencl (PoCL on a CPU, or a "
                   "GPU) or \"cuda -arch=sm_90\" (needs that GPU); records are filed under it",
                   true, ""});
  return flags;
}

bool isOperatorName(const std::string& name) {
  auto names = operatorNames();
  return std::find(names.begin(), names.end(), name) != names.end();
}

// "90s", "20m", "1h30m", "300" (seconds); nullopt when malformed.
std::optional<double> parseDuration(const std::string& text) {
  if (text.empty()) return std::nullopt;
  double total = 0;
  size_t i = 0;
  while (i < text.size()) {
    size_t end = i;
    while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.')) ++end;
    if (end == i) return std::nullopt;
    double value = std::strtod(text.substr(i, end - i).c_str(), nullptr);
    double unit = 1;
    if (end < text.size()) {
      char u = text[end++];
      if (u == 'h') unit = 3600;
      else if (u == 'm') unit = 60;
      else if (u == 's') unit = 1;
      else return std::nullopt;
    } else if (i != 0) {
      return std::nullopt;  // "1h30" is ambiguous
    }
    total += value * unit;
    i = end;
  }
  return total;
}

std::string formatBytes(int64_t bytes) {
  char text[32];
  if (bytes >= (int64_t(1) << 20)) std::snprintf(text, sizeof text, "%.1f MiB", double(bytes) / double(1 << 20));
  else std::snprintf(text, sizeof text, "%.0f KiB", double(bytes) / 1024.0);
  return text;
}

std::string formatDuration(double seconds) {
  char text[32];
  int whole = int(std::lround(seconds));
  if (whole >= 3600) std::snprintf(text, sizeof text, "%dh%02dm%02ds", whole / 3600, whole / 60 % 60, whole % 60);
  else if (whole >= 60) std::snprintf(text, sizeof text, "%dm%02ds", whole / 60, whole % 60);
  else std::snprintf(text, sizeof text, "%.1fs", seconds);
  return text;
}

std::atomic<bool> interruptRequested{false};

extern "C" void onInterrupt(int) {
  interruptRequested = true;
  // A second Ctrl-C ends the process the usual way.
  std::signal(SIGINT, SIG_DFL);
}

std::atomic<bool> pauseRequested{false};

extern "C" void onPause(int) { pauseRequested = true; }
extern "C" void onResume(int) { pauseRequested = false; }

std::string numberOr(const nlohmann::json& value, const char* format, const char* missing = "-") {
  if (!value.is_number()) return missing;
  char text[48];
  std::snprintf(text, sizeof text, format, value.get<double>());
  return text;
}

// Turns the event stream into what a person watches: a header, a row per round, a progress bar
// on a terminal, and the summary. Writes the table to `out` (stderr when events go to stdout).
class LiveTable {
public:
  LiveTable(FILE* out, bool terminal) : out_(out), terminal_(terminal) {}

  void operator()(const nlohmann::json& event) {
    const std::string kind = event["event"];
    if (kind == "session_start") start(event);
    else if (kind == "round") round(event);
    else if (kind == "trial") trial(event);
    else if (kind == "warning") line("warning: " + describe(event));
    else if (kind == "error") line("error: " + describe(event));
    else if (kind == "model_trained") trained(event);
    else if (kind == "revive") revive(event);
    else if (kind == "pause") line("paused (SIGUSR2 resumes)");
    else if (kind == "resume") line("resumed after " + formatDuration(event["paused_s"].get<double>()));
    else if (kind == "confirm") confirm(event);
    else if (kind == "model_latency") latency(event);
    else if (kind == "session_end") end(event);
  }

private:
  static std::string describe(const nlohmann::json& event) {
    std::string text = event.value("message", "");
    std::string location = event.value("location", "");
    std::string hint = event.value("hint", "");
    if (!location.empty()) text = location + ": " + text;
    if (!hint.empty()) text += " (" + hint + ")";
    return text;
  }

  void clearBar() {
    if (terminal_ && barShown_) std::fprintf(out_, "\r\033[K");
    barShown_ = false;
  }
  void line(const std::string& text) {
    clearBar();
    std::fprintf(out_, "%s\n", text.c_str());
    std::fflush(out_);
  }

  void revive(const nlohmann::json& event) {
    std::string left = event["remaining_s"].is_number()
                           ? formatDuration(event["remaining_s"].get<double>()) + " of budget left"
                           : "trials left";
    line("every task stopped improving with " + left + ": searching " + std::to_string(event["tasks"].size()) +
         " of them again, each stopping after " + std::to_string(event["patience_trials"].get<int>()) +
         " trials without improvement");
  }

  void start(const nlohmann::json& event) {
    budgetSeconds_ = event["budget_seconds"];
    budgetTrials_ = event["budget_trials"];
    int kernels = 0;
    for (auto& task : event["tasks"]) {
      kernels += task["weight"].get<int>();
      names_.push_back(task["name"]);
    }
    std::string budget = budgetSeconds_ > 0 ? formatDuration(budgetSeconds_) : "";
    if (budgetTrials_ > 0) budget += (budget.empty() ? "" : ", ") + std::to_string(budgetTrials_) + " trials";
    line("tuning " + event["source"].get<std::string>() + ": " + std::to_string(event["tasks"].size()) + " tasks (" +
         std::to_string(kernels) + " kernels), budget " + budget + ", records " + event["records"].get<std::string>());
    line("target " + event["target"].get<std::string>());
    if (!event.value("timing", std::string()).empty()) line("timing: " + event["timing"].get<std::string>());
    if (event["resumed"].get<bool>())
      line("resuming from " + std::to_string(event["resumed_trials"].get<int>()) + " recorded trials");
    char header[256];
    std::snprintf(header, sizeof header, "%5s  %-34s %6s %9s %9s %6s %7s %10s %6s %8s", "round", "task", "trials",
                  "best ms", "GFLOP/s", "%peak", "speedup", "model ms", "rank", "ETA");
    line(header);
  }

  void trial(const nlohmann::json& event) {
    ++trials_;
    if (event["origin"] == "default") {
      // The baselines arrive before the first round: one line each keeps a long model's start visible.
      if (!event["ok"].get<bool>())
        line("default schedule of " + event["name"].get<std::string>() + " failed: " +
             event["error"].value("message", ""));
    }
    if (!event["ok"].get<bool>() && event["origin"] != "default") {
      const auto& error = event["error"];
      std::string kind = error.value("kind", "");
      if (kind == "crash" || kind == "timeout")
        line("  " + kind + " while measuring a candidate of " + event["name"].get<std::string>() + " (recorded): " +
             error.value("message", ""));
    }
    bar(event["t"].get<double>(), event["trials"].get<int>());
  }

  void round(const nlohmann::json& event) {
    std::string name = event["name"];
    if (name.size() > 34) name = name.substr(0, 31) + "...";
    char row[320];
    std::snprintf(row, sizeof row, "%5d  %-34s %6d %9s %9s %6s %7s %10s %6s %8s", event["round"].get<int>(),
                  name.c_str(), event["task_trials"].get<int>(), numberOr(event["best_ms"], "%.4f").c_str(),
                  numberOr(event["best_gflops"], "%.1f").c_str(), numberOr(event["percent_of_peak"], "%.0f%%").c_str(),
                  numberOr(event["speedup"], "%.2fx").c_str(), numberOr(event["estimated_latency_ms"], "%.3f").c_str(),
                  numberOr(event["pairwise_accuracy"], "%.2f").c_str(),
                  event["eta_s"].is_number() ? formatDuration(event["eta_s"].get<double>()).c_str() : "-");
    line(row);
    bar(event["t"].get<double>(), event["trials"].get<int>());
  }

  void trained(const nlohmann::json& event) {
    lastTraining_ = "model trained on " + std::to_string(event["samples"].get<int>()) + " samples";
  }

  void bar(double elapsed, int trials) {
    if (!terminal_) return;
    double fraction = 0;
    if (budgetSeconds_ > 0) fraction = std::max(fraction, elapsed / budgetSeconds_);
    if (budgetTrials_ > 0) fraction = std::max(fraction, double(trials) / budgetTrials_);
    fraction = std::min(1.0, fraction);
    int filled = int(fraction * 30);
    std::string drawn = std::string(size_t(filled), '#') + std::string(size_t(30 - filled), '.');
    std::fprintf(out_, "\r\033[K[%s] %3.0f%%  %d trials  %s  %s", drawn.c_str(), 100 * fraction, trials,
                 formatDuration(elapsed).c_str(), lastTraining_.c_str());
    std::fflush(out_);
    barShown_ = true;
  }

  void confirm(const nlohmann::json& event) {
    std::string text = "confirmed " + event["name"].get<std::string>() + ": ";
    text += event["chosen_ms"].is_number() ? numberOr(event["chosen_ms"], "%.4f ms") : std::string("default kept");
    if (event["default_ms"].is_number()) text += " vs default " + numberOr(event["default_ms"], "%.4f ms");
    if (event["speedup"].is_number()) text += " (" + numberOr(event["speedup"], "%.2fx") + ")";
    text += ", in turns over " + std::to_string(event["candidates"][0]["medians_ms"].size()) + " repeats";
    line(text);
  }

  void latency(const nlohmann::json& event) {
    char text[256];
    std::snprintf(text, sizeof text,
                  "model latency (measured in turns, %d runs each): default %.3f ms, tuned %.3f ms, %.2fx; "
                  "outputs differ by at most %.3g",
                  event["runs"].get<int>(), event["default_ms"].get<double>(), event["tuned_ms"].get<double>(),
                  event["speedup"].get<double>(), event["max_abs_difference"].get<double>());
    line(text);
  }

  void end(const nlohmann::json& event) {
    clearBar();
    std::fprintf(out_, "\n");
    std::string reason = event["reason"];
    std::string why = reason == "budget"      ? "the time budget is spent"
                      : reason == "trials"    ? "the trial budget is spent"
                      : reason == "converged" ? "every task ran out of candidates"
                      : reason == "interrupted" ? "interrupted"
                                                : "an error stopped it";
    std::fprintf(out_, "session ended after %s (%s): %d trials, %d recorded as errors\n",
                 formatDuration(event["elapsed_s"].get<double>()).c_str(), why.c_str(), event["trials"].get<int>(),
                 event["errors"].get<int>());
    std::fprintf(out_, "%-40s %7s %10s %10s %8s\n", "task", "trials", "default ms", "tuned ms", "speedup");
    for (auto& task : event["tasks"]) {
      std::string name = task["name"];
      if (name.size() > 40) name = name.substr(0, 37) + "...";
      std::fprintf(out_, "%-40s %7d %10s %10s %8s\n", name.c_str(), task["trials"].get<int>(),
                   numberOr(task["default_ms"], "%.4f").c_str(), numberOr(task["best_ms"], "%.4f").c_str(),
                   numberOr(task["speedup"], "%.2fx").c_str());
    }
    std::fprintf(out_, "estimated model latency (sum of kernel times): default %.3f ms, tuned %.3f ms\n",
                 event["default_latency_ms"].get<double>(), event["estimated_latency_ms"].get<double>());
    if (event["measured_tuned_ms"].is_number())
      std::fprintf(out_, "measured model latency: default %.3f ms, tuned %.3f ms (%.2fx)\n",
                   event["measured_default_ms"].get<double>(), event["measured_tuned_ms"].get<double>(),
                   event["measured_default_ms"].get<double>() / event["measured_tuned_ms"].get<double>());
    std::string spent;
    double total = event["elapsed_s"].get<double>();
    std::vector<std::pair<double, std::string>> parts;
    for (auto& [name, seconds] : event["seconds"].items()) parts.emplace_back(seconds.get<double>(), name);
    std::sort(parts.rbegin(), parts.rend());
    for (auto& [seconds, name] : parts) {
      if (seconds < 0.05) continue;
      char part[96];
      std::snprintf(part, sizeof part, "%s%s %s (%.0f%%)", spent.empty() ? "" : ", ", name.c_str(),
                    formatDuration(seconds).c_str(), total > 0 ? 100 * seconds / total : 0.0);
      spent += part;
    }
    std::fprintf(out_, "where the time went: %s\n", spent.c_str());
    std::fprintf(out_, "records: %s\n", event["records"].get<std::string>().c_str());
    std::fflush(out_);
  }

  FILE* out_;
  bool terminal_;
  bool barShown_ = false;
  double budgetSeconds_ = 0;
  int budgetTrials_ = 0;
  int trials_ = 0;
  std::vector<std::string> names_;
  std::string lastTraining_;
};

// The model with the default schedules and with `chosen`, timed in turns on the same random
// inputs, with their outputs compared.
Expected<tuner::ModelLatencyComparison> compareModelLatency(const driver::RunRequest& base,
                                                            const tuner::ChosenSchedules& chosen) {
  auto prepare = [&](bool tuned) {
    driver::RunRequest request = base;
    if (tuned) {
      auto schedules = std::make_shared<driver::TunedSchedules>();
      schedules->traces = chosen;
      request.compile.tunedSchedules = schedules;
    }
    std::mt19937 rng(42);
    return driver::prepareWithInputs(request,
                                     [&](const runtime::GraphTensor& tensor) { return driver::timingInput(tensor, rng); });
  };
  auto defaults = prepare(false);
  if (!defaults) return defaults.error();
  auto tuned = prepare(true);
  if (!tuned) return tuned.error();
  if (!defaults->executor || !tuned->executor)
    return Diagnostic{"the model runs with its control flow interpreted; its latency is not compared", base.model, 0, 0,
                      "tune a model whose control flow is decided while compiling"};
  runtime::GraphExecutor& a = *defaults->executor;
  runtime::GraphExecutor& b = *tuned->executor;
  a.run();
  b.run();
  tuner::ModelLatencyComparison comparison;
  for (const std::string& name : a.outputNames()) {
    runtime::NDArray x = a.getOutput(name), y = b.getOutput(name);
    if (x.dtype() != runtime::DataType::float32() || y.dtype() != runtime::DataType::float32() || x.numElements() != y.numElements())
      continue;
    for (int64_t i = 0; i < x.numElements(); ++i)
      comparison.maxAbsDifference =
          std::max(comparison.maxAbsDifference, double(std::fabs(x.dataAs<float>()[i] - y.dataAs<float>()[i])));
  }
  // As many runs as fit in about 4 seconds of both, 5 to 50 each, alternating so that the
  // machine's drift (throttling, a neighbour) falls on both alike.
  auto timeRun = [](runtime::GraphExecutor& executor) {
    auto start = std::chrono::steady_clock::now();
    executor.run();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  };
  double firstMs = std::max(1e-3, timeRun(a));
  int runs = std::clamp(int(2000 / firstMs), 5, 50);
  std::vector<double> defaultMs, tunedMs;
  for (int i = 0; i < runs; ++i) {
    defaultMs.push_back(timeRun(a));
    tunedMs.push_back(timeRun(b));
  }
  comparison.defaultMs = runtime::median(defaultMs);
  comparison.tunedMs = runtime::median(tunedMs);
  comparison.runs = runs;
  return comparison;
}

}  // namespace

int runTune(const std::vector<std::string>& args) {
  std::string op = !args.empty() && isOperatorName(args[0]) ? args[0] : "";
  std::vector<FlagSpec> flags = tuneFlags(op);
  CommandLine line;
  std::vector<std::string> rest = args;
  if (!op.empty()) rest.erase(rest.begin());
  if (auto error = CommandLine::parse(rest, flags, &line)) return reportUsageError("tune", *error);
  if (line.helpRequested() || args.empty()) {
    std::cout << usage(std::string("tessel tune ") + kSynopsis, flags) << "\n" << kDescription;
    return args.empty() ? kExitError : kExitOk;
  }
  const auto& positional = line.positional();
  if (op.empty() && positional.size() != 1)
    return reportUsageError("tune", positional.empty() ? "give a MODEL or an operator (matmul, dense, conv2d)"
                                                       : "unexpected argument '" + positional[1] + "'");
  if (!op.empty() && !positional.empty()) return reportUsageError("tune", "unexpected argument '" + positional[0] + "'");
  if (!line.has("records")) return reportUsageError("tune", "--records FILE is missing (where every trial is kept)");

  tuner::TuningSessionOptions options;
  options.recordsPath = line.get("records");
  options.resume = line.has("resume");
  if (line.has("time-budget")) {
    auto seconds = parseDuration(line.get("time-budget"));
    if (!seconds) return reportUsageError("tune", "--time-budget must be a duration such as 90s, 20m or 1h, got '" +
                                                      line.get("time-budget") + "'");
    if (*seconds <= 0) return reportUsageError("tune", "--time-budget is zero: there would be nothing to tune");
    options.budgetSeconds = *seconds;
  }
  if (line.has("trials")) {
    int64_t trials = 0;
    if (auto error = line.getInt("trials", &trials, 0)) return reportUsageError("tune", *error);
    if (trials == 0) return reportUsageError("tune", "--trials is zero: there would be nothing to tune");
    options.budgetTrials = int(trials);
  }
  if (!line.has("time-budget") && !line.has("trials")) options.budgetSeconds = 600;
  int64_t seed = 1;
  if (auto error = line.getInt("seed", &seed, 0)) return reportUsageError("tune", *error);
  options.seed = uint64_t(seed);
  options.space.includeDefaultSketch = !line.has("from-scratch");
  int64_t turns = options.measure.turns;
  if (auto error = line.getInt("timing-turns", &turns, 1)) return reportUsageError("tune", *error);
  if (turns > 100) return reportUsageError("tune", "--timing-turns must be from 1 to 100");
  options.measure.turns = int(turns);
  if (auto error = applyThreads(line)) return reportUsageError("tune", *error);
  int threads = runtime::ThreadPool::global().numThreads();
  options.threads = threads;
  // After --threads: the target's string (which records are filed under) includes the cores.
  options.target = hostTarget();
  std::unique_ptr<OperatorSpec> spec;
  if (op.empty() && line.has("target"))
    return reportUsageError("tune", "--target applies to an operator (tessel tune matmul|dense|conv2d ... --target "
                                    "opencl); a model's kernels are tuned for this CPU");
  if (!op.empty()) {
    if (auto error = makeOperator(op, line, &spec)) return reportUsageError("tune", *error);
    options.target = spec->target;  // the host, or the GPU --target names
  }
  const bool onGpu = options.target.kind != TargetKind::Cpu;
  if (onGpu) {
    // A device times its own runs (no drift between candidates to share out), keeps no
    // weights in a CPU cache, and has no measured peak: percentages of peak are left out.
    options.measure.turns = 1;
  } else {
    // Before compiling the model: right after a burst of compiling, a throttled machine reports
    // half its peak.
    options.peakGflops = runtime::measurePeakGflops(threads);
    options.bandwidthGBps = runtime::measureMemoryBandwidthGBps(threads);
  }

  // The tasks, and the worker that measures them (it compiles the same way, so the names agree).
  std::vector<tuner::TuningTask> tasks;
  int64_t weightBytes = 0;  // what a kernel reads besides its first input, summed over the model
  tuner::MeasureWorkerOptions workerOptions;
  workerOptions.threads = threads;
  workerOptions.cancelled = [] { return interruptRequested.load(); };
  driver::RunRequest modelRequest;
  if (op.empty()) {
    std::string model = positional[0];
    tuner::WorkerModelSource source;
    source.modelPath = model;
    std::string usageError;
    if (Status read = readModelSource(model, line, &source.load, &source.compile, &usageError); !read) {
      if (!usageError.empty()) return reportUsageError("tune", usageError);
      return reportDiagnostic(read.error());
    }
    auto scheduleTasks = compileTasks(model, line, &usageError, &weightBytes);
    if (!scheduleTasks) return reportDiagnostic(scheduleTasks.error());
    tasks = tuner::groupTasksByWorkload(*scheduleTasks);
    workerOptions.source = source;
    options.sourceLabel = model;
    modelRequest.model = model;
    modelRequest.inputShapes = source.load.inputShapes;
    modelRequest.namedInputs = source.load.inputValues;
    modelRequest.compile = source.compile;
  } else {
    auto schedule = spec->defaultSchedule();
    if (!schedule) return reportDiagnostic(schedule.error());
    tasks = {tuner::operatorTask(spec->workload, schedule->trace(), options.target)};
    for (size_t i = 1; i < spec->workload.inputs.size(); ++i) {
      int64_t elements = 1;
      for (const Expr& extent : spec->workload.inputs[i].shape()) elements *= asConstInt(extent) ? *asConstInt(extent) : 1;
      weightBytes += elements * spec->workload.inputs[i].dtype().bytes();
    }
    driver::OperatorSource source{op, {}};
    for (auto& flag : operatorFlags(op))
      if (line.has(flag.name)) source.parameters[flag.name] = line.get(flag.name);
    if (onGpu) source.parameters["target"] = options.target.toString();
    workerOptions.source = source;
    options.sourceLabel = spec->workload.name;
  }
  // Time candidates in the regime the model runs in. Weights larger than the last-level cache
  // come from memory on every inference, so candidates are timed with theirs evicted (tuned
  // on cached weights, ResNet-18's kernels got faster alone and the model did not); weights
  // that fit stay cached between inferences, and evicting them would tune for memory
  // bandwidth the model never waits on.
  std::string flush = line.get("flush-caches");
  if (flush != "auto" && flush != "yes" && flush != "no")
    return reportUsageError("tune", "--flush-caches must be auto, yes or no, not '" + flush + "'");
  const int64_t lastLevelCache = options.target.l3CacheBytes > 0 ? options.target.l3CacheBytes : options.target.l2CacheBytes;
  options.measure.flushCaches =
      !onGpu && (flush == "yes" || (flush == "auto" && (lastLevelCache <= 0 || weightBytes > lastLevelCache)));
  if (onGpu) {
    options.timingRegime = "each candidate's runs timed by the device (" + options.target.toString() + ")";
  } else {
    options.timingRegime = (options.measure.flushCaches ? "weights evicted from the caches before each call"
                                                        : "weights left in the caches") +
                           std::string(flush == "auto" ? " (" + formatBytes(weightBytes) + " of weights, " +
                                                             formatBytes(lastLevelCache) + " last-level cache)"
                                                       : " (--flush-caches " + flush + ")") +
                           (options.measure.turns > 1 ? ", a round's candidates in " +
                                                            std::to_string(options.measure.turns) + " turns"
                                                      : ", a round's candidates one after the other");
  }
  auto selected = tuner::selectTasks(tasks, line.getAll("tasks"));
  if (!selected) return reportDiagnostic(selected.error());
  if (selected->empty())
    return reportDiagnostic(Diagnostic{"the model has no kernel to tune", options.sourceLabel, 0, 0,
                                       "every operation of it is folded away or copied"});

  // Events: to a file, or to stdout with the table moved to stderr.
  std::ofstream eventFile;
  // Without --events the stream is kept beside the records (FILE.events), so the Studio's
  // tuning view can show the session later; a fresh session replaces an old stream there.
  bool eventsToStdout = line.get("events") == "-";
  std::string eventsPath = line.has("events") ? line.get("events") : options.recordsPath + ".events";
  // The kept stream is replaced only once the session starts: a session refused (its records
  // hold trials already, without --resume) leaves the old stream as it was.
  bool replaceKeptEvents = !line.has("events") && !options.resume;
  if (!eventsToStdout) {
    eventFile.open(eventsPath, std::ios::out | std::ios::app);
    if (!eventFile)
      return reportDiagnostic(Diagnostic{"cannot write the events file", eventsPath, 0, 0,
                                         "check that its directory exists and is writable"});
  }
  FILE* tableOut = eventsToStdout ? stderr : stdout;
  LiveTable table(tableOut, ::isatty(::fileno(tableOut)) != 0);
  options.events = [&](const nlohmann::json& event) {
    if (replaceKeptEvents && event["event"] == "session_start") {
      eventFile.close();
      eventFile.open(eventsPath, std::ios::out | std::ios::trunc);
    }
    if (eventsToStdout) std::cout << event.dump() << std::endl;
    else if (eventFile.is_open()) eventFile << event.dump() << std::endl;
    table(event);
  };
  options.cancelled = [] { return interruptRequested.load(); };
  options.paused = [] { return pauseRequested.load(); };
  if (op.empty())
    options.measureModel = [&](const tuner::ChosenSchedules& chosen) { return compareModelLatency(modelRequest, chosen); };

  tuner::MeasureWorker worker(workerOptions);
  interruptRequested = false;
  pauseRequested = false;
  auto previous = std::signal(SIGINT, onInterrupt);
  auto previousPause = std::signal(SIGUSR1, onPause);
  auto previousResume = std::signal(SIGUSR2, onResume);
  auto result = tuner::runTuningSession(*selected, worker, options);
  std::signal(SIGINT, previous);
  std::signal(SIGUSR1, previousPause);
  std::signal(SIGUSR2, previousResume);
  if (!result) return reportDiagnostic(result.error());
  std::string again = "tessel tune " + (op.empty() ? positional[0] : op) + " --records " + options.recordsPath;
  if (result->reason == "interrupted") {
    std::fprintf(stderr, "tessel tune: interrupted; every trial so far is in %s. Continue with: %s --resume\n",
                 options.recordsPath.c_str(), again.c_str());
    return 130;
  }
  if (result->error) {
    reportDiagnostic(*result->error);
    std::fprintf(stderr, "tessel tune: the trials measured before the error are in %s; continue with: %s --resume\n",
                 options.recordsPath.c_str(), again.c_str());
    return kExitError;
  }
  if (onGpu)
    std::fprintf(tableOut, "apply with: tessel bench %s [the same operator flags] --target \"%s\" --tuning-records %s\n",
                 op.c_str(), options.target.toString().c_str(), options.recordsPath.c_str());
  else
    std::fprintf(tableOut, "apply with: --tuning-records %s (compile, run, bench, inspect, project run)\n",
                 options.recordsPath.c_str());
  return kExitOk;
}

}  // namespace tessel::cli
