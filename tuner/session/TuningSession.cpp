// The tuning loop (DESIGN.md, "The tuner"): tasks -> scheduler -> search (space, cost model)
// -> measuring worker -> records, model and events; then confirmation of each task's choice.
#include "tuner/session/TuningSession.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <random>
#include <set>
#include <thread>

#include "compiler/lower/Lower.h"
#include "compiler/schedule/Schedule.h"
#include "compiler/schedule/TraceText.h"
#include "tuner/features/LoopFeatures.h"
#include "tuner/model/RankingQuality.h"
#include "tuner/records/RecordFile.h"

namespace tessel::tuner {

MeasureRequest TuningSessionOptions::defaultTuningMeasurement() {
  MeasureRequest request;
  request.check = true;
  request.minSeconds = 0.05;
  request.minRepeats = 5;
  request.maxRepeats = 100;
  request.warmupCalls = 1;
  // Weights from memory, as in the model: tuned on cached weights, a kernel's gains did not
  // show in the model (ResNet-18: kernels 8% faster in isolation, the model not at all).
  request.flushCaches = true;
  return request;
}

namespace {

using Clock = std::chrono::steady_clock;

// Candidates whose lowered code has more store statements than this many times the default's
// (and more than the minimum) are recorded as build failures without being built.
constexpr double kStatementGrowthLimit = 8;
constexpr double kMinimumStatementLimit = 512;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

nlohmann::json nullable(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

// "1:3,0,2" (SearchSpace::pointKey) back into a candidate of `space`; nullopt when the space
// has no such point (the records came from another compiler's space).
std::optional<Candidate> parsePoint(const std::string& key, const SearchSpace& space) {
  size_t colon = key.find(':');
  if (colon == std::string::npos) return std::nullopt;
  Candidate candidate;
  try {
    candidate.sketch = std::stoi(key.substr(0, colon));
    std::string rest = key.substr(colon + 1);
    size_t start = 0;
    while (start < rest.size()) {
      size_t comma = rest.find(',', start);
      if (comma == std::string::npos) comma = rest.size();
      candidate.choices.push_back(std::stoi(rest.substr(start, comma - start)));
      start = comma + 1;
    }
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (candidate.sketch < 0 || size_t(candidate.sketch) >= space.sketches().size()) return std::nullopt;
  const Sketch& sketch = space.sketches()[size_t(candidate.sketch)];
  if (candidate.choices.size() != sketch.decisions.size()) return std::nullopt;
  for (size_t d = 0; d < candidate.choices.size(); ++d)
    if (candidate.choices[d] < 0 || size_t(candidate.choices[d]) >= sketch.decisions[d].choices.size()) return std::nullopt;
  if (SearchSpace::pointKey(candidate) != key) return std::nullopt;
  return candidate;
}

// The number of store statements of a lowered candidate, from its features (counts are stored
// as log2(1 + n)): after unrolling, the size of the code LLVM must compile.
double storeStatements(const std::vector<float>& features) {
  static const size_t index = [] {
    const auto& names = loopFeatureNames();
    return size_t(std::find(names.begin(), names.end(), "func.store_statements") - names.begin());
  }();
  if (index >= features.size()) return 0;
  return std::exp2(double(features[index])) - 1;
}

std::optional<MeasureErrorKind> recordedErrorKind(CandidateErrorKind kind) {
  switch (kind) {
    case CandidateErrorKind::Request:
    case CandidateErrorKind::Parse:
    case CandidateErrorKind::Lower: return MeasureErrorKind::Lower;
    case CandidateErrorKind::Build: return MeasureErrorKind::Build;
    case CandidateErrorKind::WrongResult: return MeasureErrorKind::WrongResult;
    case CandidateErrorKind::Runtime:
    case CandidateErrorKind::Protocol: return MeasureErrorKind::Runtime;
    case CandidateErrorKind::Crash: return MeasureErrorKind::Crash;
    case CandidateErrorKind::Timeout: return MeasureErrorKind::Timeout;
    // Not the candidate's fault: nothing to record about it.
    case CandidateErrorKind::Cancelled:
    case CandidateErrorKind::Start: return std::nullopt;
  }
  return std::nullopt;
}

// A valid measurement of one trace of a task.
struct Measured {
  std::string trace;
  std::string point;
  double ms = 0;
};

struct TaskState {
  SearchSpace space;
  std::string defaultTraceText;
  std::string defaultPoint;  // empty when the space has no default point
  std::vector<MeasuredPoint> measured;
  std::set<std::string> seen;
  std::map<std::string, std::optional<std::vector<float>>> features;  // by point key; nullopt: does not lower
  std::vector<Measured> valid;  // every valid measurement (resumed ones included)
  int trials = 0;
  int errors = 0;
  int resumedTrials = 0;
  std::optional<double> defaultMs;
  double defaultRequestSeconds = 0;  // the default's build and timing, once warm
  double defaultStatements = 0;      // stores of the default's lowered code
  std::optional<Measured> best;  // fastest valid (from scratch: fastest non-default)
  bool servable = true;
  bool confirmed = false;
  std::optional<Measured> chosen;
  std::optional<double> confirmedDefaultMs;
};

class Session {
public:
  Session(const std::vector<TuningTask>& tasks, MeasureWorker& worker, const TuningSessionOptions& options)
      : tasks_(tasks), worker_(worker), options_(options), model_(options.costModel),
        scheduler_(weights(tasks), options.scheduler), rng_(options.seed), targetString_(options.target.toString()) {
    featureTarget_.cores = std::max(1, options.target.cores);
    featureTarget_.vectorBytes = std::max(16, options.target.vectorBits / 8);
    featureTarget_.vectorRegisters = options.target.hasFeature("avx512f") ? 32 : 16;
    costModelPath_ = options.costModelPath.empty() ? options.recordsPath + ".model" : options.costModelPath;
  }

  Expected<TuningSessionResult> run();

private:
  static std::vector<double> weights(const std::vector<TuningTask>& tasks) {
    std::vector<double> out;
    for (const TuningTask& task : tasks) out.push_back(task.weight);
    return out;
  }

  double elapsed() const { return secondsSince(start_); }
  void emit(nlohmann::json event) {
    event["t"] = std::round(elapsed() * 1000) / 1000;
    if (options_.events) options_.events(event);
  }
  void warn(const std::string& message, const std::string& location, const std::string& hint) {
    emit({{"event", "warning"}, {"message", message}, {"location", location}, {"hint", hint}});
  }
  // Ends the session after an error it cannot go on from (every trial before it is kept).
  void stopForError(const Diagnostic& error) {
    fatal_ = error;
    emit({{"event", "error"},
          {"message", error.message},
          {"location", error.location},
          {"hint", error.hint},
          {"fatal", true}});
  }
  bool cancelled() const { return options_.cancelled && options_.cancelled(); }
  bool budgetLeft() const {
    if (options_.budgetSeconds > 0 && elapsed() >= options_.budgetSeconds) return false;
    if (options_.budgetTrials > 0 && searchTrials_ >= options_.budgetTrials) return false;
    return true;
  }

  Status prepare();
  Status resumeFrom(const RecordFileContents& contents);
  void absorbRecord(size_t task, const TuningRecord& record);
  void startEvent();
  void measureDefaults();
  void searchRound(int task);
  void confirm(size_t task);
  void trainIfDue(bool force = false);
  TuningSessionResult finish(std::string reason);

  std::optional<std::vector<float>> featuresOf(size_t task, const Trace& trace);
  std::optional<std::vector<float>> featuresOf(size_t task, const Candidate& candidate);
  std::vector<double> score(size_t task, const std::vector<Candidate>& candidates);
  void precomputeFeatures(size_t task, const std::vector<Candidate>& candidates);
  // A candidate on its way to the worker: what its record and event will say.
  struct Pending {
    std::string trace;
    RecordOrigin origin = RecordOrigin::Search;
    std::string point;
    std::optional<double> prediction;
    std::optional<std::vector<float>> features;
  };
  MeasureRequest requestFor(size_t task, const std::string& trace, RecordOrigin origin) const;
  /// Appends the record, updates the task and emits the trial event; false when the session
  /// stops instead (cancelled, or records that cannot be written).
  bool record(size_t task, const Pending& pending, const CandidateMeasurement& measurement);
  /// Measures candidates of one task as one batch (built in parallel), recording each as it
  /// comes; an entry is empty when it was not recorded.
  std::vector<std::optional<CandidateMeasurement>> measureBatch(size_t task, const std::vector<Pending>& pending);
  /// Measures one trace and records it; nullopt when nothing was recorded (cancelled, or the
  /// session ended for an error).
  std::optional<CandidateMeasurement> measure(size_t task, const std::string& trace, RecordOrigin origin,
                                              const std::string& point, std::optional<double> prediction,
                                              const std::optional<std::vector<float>>& features);
  void note(size_t task, const Measured& measured, RecordOrigin origin);

  const std::vector<TuningTask>& tasks_;
  MeasureWorker& worker_;
  const TuningSessionOptions& options_;
  std::vector<TaskState> states_;
  std::vector<CostModelSample> samples_;
  CostModel model_;
  TaskScheduler scheduler_;
  std::mt19937_64 rng_;
  std::string targetString_;
  std::string costModelPath_;
  LoopFeatureTarget featureTarget_;
  std::optional<RecordWriter> writer_;
  Clock::time_point start_ = Clock::now();
  std::map<std::string, double> seconds_;
  int round_ = 0;
  int sessionTrials_ = 0;  // everything measured in this session
  int searchTrials_ = 0;   // what --trials counts: all but confirmations
  int sessionErrors_ = 0;
  int resumedTrials_ = 0;
  std::optional<Diagnostic> fatal_;
  bool interrupted_ = false;
};

Status Session::prepare() {
  if (tasks_.empty())
    return Diagnostic{"there is no kernel to tune", options_.sourceLabel, 0, 0,
                      "the model compiles to no schedulable kernel (or --tasks selected none)"};
  if (options_.budgetSeconds <= 0 && options_.budgetTrials <= 0)
    return Diagnostic{"the tuning budget is zero", "", 0, 0, "give --time-budget (such as 20m) or --trials N"};
  for (const TuningTask& task : tasks_) {
    TaskState& state = states_.emplace_back();
    state.space = SearchSpace::generate(task.workload, task.defaultTrace, options_.target, options_.space);
    state.defaultTraceText = printTraceText(task.defaultTrace);
    if (state.space.hasDefault()) state.defaultPoint = SearchSpace::pointKey(state.space.defaultCandidate());
  }

  std::error_code ignored;
  if (std::filesystem::exists(options_.recordsPath, ignored)) {
    auto contents = readRecordFile(options_.recordsPath);
    if (!contents) return contents.error();
    if (Status resumed = resumeFrom(*contents); !resumed) return resumed;
  } else if (options_.resume) {
    return Diagnostic{"there is nothing to resume: the records file does not exist", options_.recordsPath, 0, 0,
                      "check the path, or leave out --resume to start a new session"};
  }
  auto writer = RecordWriter::open(options_.recordsPath);
  if (!writer) return writer.error();
  writer_.emplace(std::move(*writer));

  auto started = Clock::now();
  Status ready = worker_.start();
  seconds_["starting"] += secondsSince(started);
  if (!ready) return ready;
  for (size_t i = 0; i < tasks_.size(); ++i) {
    bool served = std::any_of(worker_.tasks().begin(), worker_.tasks().end(),
                              [&](const WorkerTask& task) { return task.name == tasks_[i].name; });
    if (!served) {
      states_[i].servable = false;
      scheduler_.markExhausted(int(i));
      warn("the measuring worker does not serve the kernel '" + tasks_[i].name + "'; it is not tuned",
           options_.sourceLabel, "the worker compiled the model differently; give it the same flags");
    }
  }
  return {};
}

Status Session::resumeFrom(const RecordFileContents& contents) {
  int shown = 0;
  for (const RecordProblem& problem : contents.problems)
    if (shown++ < 10) warn(problem.describe() + " (skipped)", options_.recordsPath, "the other records are used");
  if (contents.problems.size() > 10)
    warn(std::to_string(contents.problems.size() - 10) + " more lines skipped", options_.recordsPath, "");
  std::map<std::string, size_t> byKey;
  for (size_t i = 0; i < tasks_.size(); ++i) byKey.emplace(tasks_[i].workloadKey, i);
  int matching = 0;
  for (const TuningRecord& record : contents.records)
    if (record.target == targetString_ && byKey.count(record.workload)) ++matching;
  if (matching == 0) return {};
  if (!options_.resume)
    return Diagnostic{"the records file already holds " + std::to_string(matching) +
                          " trials of these kernels on this machine",
                      options_.recordsPath, 0, 0,
                      "add --resume to continue from them, or give a new --records file (nothing was changed)"};
  for (const TuningRecord& record : contents.records) {
    if (record.target != targetString_) continue;
    auto it = byKey.find(record.workload);
    if (it != byKey.end()) absorbRecord(it->second, record);
  }
  resumedTrials_ = matching;
  // The saved model, when it fits; otherwise it is trained again from the records.
  std::error_code ignored;
  if (std::filesystem::exists(costModelPath_, ignored)) {
    auto loaded = CostModel::load(costModelPath_, int(loopFeatureCount()), options_.costModel);
    if (loaded)
      model_ = std::move(*loaded);
    else
      warn("the saved cost model is not used: " + loaded.error().message, costModelPath_,
           "it is trained again from the records");
  }
  if (!model_.isTrained()) trainIfDue(true);
  return {};
}

void Session::absorbRecord(size_t task, const TuningRecord& record) {
  TaskState& state = states_[task];
  ++state.trials;
  ++state.resumedTrials;
  std::optional<Candidate> candidate;
  if (!record.point.empty()) {
    state.seen.insert(record.point);
    candidate = parsePoint(record.point, state.space);
  }
  const MeasuredTime* time = record.result();
  if (!time) ++state.errors;
  double throughput = time && time->medianMs > 0 ? 1.0 / time->medianMs : 0;
  if (candidate && record.origin != RecordOrigin::Control && record.origin != RecordOrigin::Confirm)
    state.measured.push_back({*candidate, throughput});
  if (record.origin != RecordOrigin::Control && record.origin != RecordOrigin::Confirm) {
    std::optional<std::vector<float>> features;
    if (candidate) {
      features = featuresOf(task, *candidate);
    } else if (auto trace = parseTraceText(record.trace)) {
      features = featuresOf(task, *trace);
    }
    if (features) samples_.push_back({tasks_[task].workloadKey, *features, throughput});
  }
  if (time) note(task, {record.trace, record.point, time->medianMs}, record.origin);
}

// Keeps the task's best, default time and list of valid measurements up to date.
void Session::note(size_t task, const Measured& measured, RecordOrigin origin) {
  TaskState& state = states_[task];
  state.valid.push_back(measured);
  bool isDefault = origin == RecordOrigin::Default || measured.trace == state.defaultTraceText;
  // The default's time is its best measurement under any origin, as a candidate's is: the
  // first one, taken while the worker is cold, is often the slowest.
  if (isDefault) state.defaultMs = std::min(state.defaultMs.value_or(measured.ms), measured.ms);
  // From scratch, the default is the yardstick, never a result.
  if (isDefault && !options_.space.includeDefaultSketch) return;
  if (!state.best || measured.ms < state.best->ms) state.best = measured;
}

std::optional<std::vector<float>> Session::featuresOf(size_t task, const Trace& trace) {
  const TuningTask& spec = tasks_[task];
  Expected<Schedule> schedule = Schedule::replay(spec.workload.outputs, trace);
  if (!schedule) return std::nullopt;
  Expected<LoweredFunction> lowered = lower(*schedule, spec.workload.args(), spec.name);
  if (!lowered) return std::nullopt;
  return extractLoopFeatures(lowered->func, featureTarget_);
}

std::optional<std::vector<float>> Session::featuresOf(size_t task, const Candidate& candidate) {
  TaskState& state = states_[task];
  std::string key = SearchSpace::pointKey(candidate);
  auto it = state.features.find(key);
  if (it != state.features.end()) return it->second;
  std::optional<std::vector<float>> features;
  try {
    features = featuresOf(task, state.space.instantiate(candidate));
  } catch (const UserError&) {
  }
  return state.features.emplace(key, std::move(features)).first->second;
}

// Lowering candidates for their features is most of the search's time; the worker is idle
// meanwhile, so every core lowers.
void Session::precomputeFeatures(size_t task, const std::vector<Candidate>& candidates) {
  TaskState& state = states_[task];
  std::vector<const Candidate*> missing;
  std::set<std::string> keys;
  for (const Candidate& candidate : candidates) {
    std::string key = SearchSpace::pointKey(candidate);
    if (!state.features.count(key) && keys.insert(key).second) missing.push_back(&candidate);
  }
  if (missing.size() < 8) return;  // not worth the threads
  std::vector<std::optional<std::vector<float>>> computed(missing.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next++) < missing.size();) {
      try {
        computed[i] = featuresOf(task, state.space.instantiate(*missing[i]));
      } catch (const std::exception&) {
      }
    }
  };
  size_t threadCount = std::min<size_t>(missing.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> threads;
  for (size_t t = 1; t < threadCount; ++t) threads.emplace_back(work);
  work();
  for (auto& thread : threads) thread.join();
  for (size_t i = 0; i < missing.size(); ++i)
    state.features.emplace(SearchSpace::pointKey(*missing[i]), std::move(computed[i]));
}

std::vector<double> Session::score(size_t task, const std::vector<Candidate>& candidates) {
  if (!model_.isTrained()) return {};
  precomputeFeatures(task, candidates);
  std::vector<std::vector<float>> rows;
  std::vector<size_t> rowOf(candidates.size(), SIZE_MAX);
  for (size_t i = 0; i < candidates.size(); ++i) {
    auto features = featuresOf(task, candidates[i]);
    if (!features) continue;
    rowOf[i] = rows.size();
    rows.push_back(std::move(*features));
  }
  auto predicted = model_.predict(rows);
  if (!predicted) return {};
  // A candidate that does not lower is scored last: measuring it would only confirm that.
  std::vector<double> scores(candidates.size(), -std::numeric_limits<double>::infinity());
  for (size_t i = 0; i < candidates.size(); ++i)
    if (rowOf[i] != SIZE_MAX) scores[i] = (*predicted)[rowOf[i]];
  return scores;
}

MeasureRequest Session::requestFor(size_t task, const std::string& trace, RecordOrigin origin) const {
  const TaskState& state = states_[task];
  MeasureRequest request = options_.measure;
  request.task = tasks_[task].name;
  request.trace = trace;
  // A candidate that takes many times longer than the default to build and time costs more
  // than it can teach: it is stopped and recorded as a timeout. (Some sketches' points unroll
  // into code that takes LLVM seconds to compile.)
  if (request.timeoutSeconds <= 0 && state.defaultRequestSeconds > 0 && origin != RecordOrigin::Default)
    request.timeoutSeconds = std::clamp(6 * state.defaultRequestSeconds + 2, 4.0, defaultCandidateTimeout(request));
  return request;
}

std::optional<CandidateMeasurement> Session::measure(size_t task, const std::string& trace, RecordOrigin origin,
                                                     const std::string& point, std::optional<double> prediction,
                                                     const std::optional<std::vector<float>>& features) {
  auto started = Clock::now();
  CandidateMeasurement measurement = worker_.measure(requestFor(task, trace, origin));
  double wall = secondsSince(started);
  TaskState& state = states_[task];
  if (origin == RecordOrigin::Default && measurement.ok())
    state.defaultRequestSeconds = state.defaultRequestSeconds > 0 ? std::min(state.defaultRequestSeconds, wall) : wall;
  seconds_["building"] += measurement.buildMilliseconds / 1000;
  seconds_["checking"] += measurement.checkMilliseconds / 1000;
  seconds_["timing"] += measurement.timingMilliseconds / 1000;
  seconds_["worker"] += std::max(0.0, wall - (measurement.buildMilliseconds + measurement.checkMilliseconds +
                                              measurement.timingMilliseconds) / 1000);
  if (!record(task, {trace, origin, point, prediction, features}, measurement)) return std::nullopt;
  return measurement;
}

std::vector<std::optional<CandidateMeasurement>> Session::measureBatch(size_t task, const std::vector<Pending>& pending) {
  std::vector<std::optional<CandidateMeasurement>> results(pending.size());
  std::vector<MeasureRequest> requests;
  for (const Pending& p : pending) requests.push_back(requestFor(task, p.trace, p.origin));
  auto started = Clock::now();
  double checkAndTiming = 0, recording = 0;
  worker_.measureBatch(requests, [&](size_t i, const CandidateMeasurement& measurement) {
    seconds_["checking"] += measurement.checkMilliseconds / 1000;
    seconds_["timing"] += measurement.timingMilliseconds / 1000;
    checkAndTiming += (measurement.checkMilliseconds + measurement.timingMilliseconds) / 1000;
    if (fatal_ || interrupted_) return;  // the rest of a batch after the session stopped
    auto recordingStarted = Clock::now();
    if (record(task, pending[i], measurement)) results[i] = measurement;
    recording += secondsSince(recordingStarted);
  });
  // Built in parallel: the wall time of the batch less its checks, timings and records is
  // what building it (and talking to the worker) took.
  seconds_["building"] += std::max(0.0, secondsSince(started) - checkAndTiming - recording);
  return results;
}

bool Session::record(size_t task, const Pending& pending, const CandidateMeasurement& measurement) {
  const TuningTask& spec = tasks_[task];
  TaskState& state = states_[task];
  const std::string& trace = pending.trace;
  RecordOrigin origin = pending.origin;
  const std::string& point = pending.point;
  const std::optional<double>& prediction = pending.prediction;
  const std::optional<std::vector<float>>& features = pending.features;
  TuningRecord record;
  record.workload = spec.workloadKey;
  record.workloadHash = spec.workloadHash;
  record.task = spec.name;
  record.target = targetString_;
  record.trace = trace;
  record.origin = origin;
  record.round = round_;
  record.prediction = prediction;
  record.point = point;
  record.time = utcTimestamp();
  if (measurement.ok()) {
    MeasuredTime time;
    time.medianMs = measurement.medianMilliseconds;
    time.minMs = measurement.minMilliseconds;
    time.maxMs = measurement.maxMilliseconds;
    time.repeats = std::max(1, measurement.samples);
    if (spec.flops > 0) time.gflops = measurement.gflops;
    record.outcome = time;
  } else {
    std::optional<MeasureErrorKind> kind = recordedErrorKind(measurement.failure->kind);
    if (!kind) {
      if (measurement.failure->kind == CandidateErrorKind::Cancelled) {
        interrupted_ = true;
      } else {
        stopForError(measurement.failure->diagnostic);
      }
      return false;
    }
    record.outcome = MeasureFailure{*kind, measurement.failure->diagnostic.toString()};
  }
  auto appending = Clock::now();
  Status appended = writer_->append(record);
  seconds_["records"] += secondsSince(appending);
  if (!appended) {
    Diagnostic error = appended.error();
    error.hint = "the trials recorded before this one are kept; free space and resume with --resume";
    stopForError(error);
    return false;
  }

  ++state.trials;
  ++sessionTrials_;
  if (origin != RecordOrigin::Confirm) ++searchTrials_;
  if (!measurement.ok()) {
    ++state.errors;
    ++sessionErrors_;
  }
  double throughput = measurement.ok() && measurement.medianMilliseconds > 0 ? 1.0 / measurement.medianMilliseconds : 0;
  if (measurement.ok()) note(task, {trace, point, measurement.medianMilliseconds}, origin);
  if (features && origin != RecordOrigin::Control && origin != RecordOrigin::Confirm)
    samples_.push_back({spec.workloadKey, *features, throughput});

  nlohmann::json event = {{"event", "trial"},
                          {"task", int(task)},
                          {"name", spec.name},
                          {"round", round_},
                          {"origin", std::string(originName(origin))},
                          {"point", point},
                          {"prediction", nullable(prediction)},
                          {"ok", measurement.ok()},
                          {"best_ms", nullable(state.best ? std::optional<double>(state.best->ms) : std::nullopt)},
                          {"build_ms", measurement.buildMilliseconds},
                          {"trials", sessionTrials_},
                          {"task_trials", state.trials}};
  if (measurement.ok()) {
    event["median_ms"] = measurement.medianMilliseconds;
    event["min_ms"] = measurement.minMilliseconds;
    event["max_ms"] = measurement.maxMilliseconds;
    event["repeats"] = measurement.samples;
    event["gflops"] = measurement.gflops;
  } else {
    event["error"] = {{"kind", std::string(candidateErrorKindName(measurement.failure->kind))},
                      {"message", measurement.failure->diagnostic.message},
                      {"hint", measurement.failure->diagnostic.hint}};
  }
  emit(std::move(event));
  // Stop after a trial, with it kept; the worker's current work is abandoned.
  if (cancelled()) interrupted_ = true;
  return true;
}

void Session::startEvent() {
  nlohmann::json tasks = nlohmann::json::array();
  for (size_t i = 0; i < tasks_.size(); ++i) {
    nlohmann::json sketches = nlohmann::json::array();
    for (const Sketch& sketch : states_[i].space.sketches()) sketches.push_back(sketch.name);
    tasks.push_back({{"task", int(i)},
                     {"name", tasks_[i].name},
                     {"kernels", tasks_[i].kernels},
                     {"op", tasks_[i].op},
                     {"workload_hash", tasks_[i].workloadHash},
                     {"weight", tasks_[i].weight},
                     {"flops", tasks_[i].flops},
                     {"space_size", states_[i].space.size()},
                     {"sketches", sketches},
                     {"resumed_trials", states_[i].resumedTrials}});
  }
  emit({{"event", "session_start"},
        {"schema", kEventSchemaVersion},
        {"time", utcTimestamp()},
        {"source", options_.sourceLabel},
        {"target", targetString_},
        {"records", options_.recordsPath},
        {"resumed", options_.resume},
        {"resumed_trials", resumedTrials_},
        {"budget_seconds", options_.budgetSeconds},
        {"budget_trials", options_.budgetTrials},
        {"threads", options_.threads},
        {"peak_gflops", options_.peakGflops},
        {"from_scratch", !options_.space.includeDefaultSketch},
        {"tasks", tasks}});
}

// Every task's default schedule first: the baseline of its speedup, the scheduler's first
// estimate of its share of the model, and (as a point of the space) the search's first seed.
void Session::measureDefaults() {
  for (size_t i = 0; i < tasks_.size() && !fatal_ && !interrupted_; ++i) {
    TaskState& state = states_[i];
    if (!state.servable) continue;
    // Twice: the first call of a kernel in a fresh worker is often slow, and the baseline
    // every speedup is measured against deserves a second look.
    if (!state.defaultMs) {
      if (cancelled()) {
        interrupted_ = true;
        return;
      }
      std::optional<std::vector<float>> features;
      if (state.space.hasDefault()) features = featuresOf(i, state.space.defaultCandidate());
      else features = featuresOf(i, tasks_[i].defaultTrace);
      auto first = measure(i, state.defaultTraceText, RecordOrigin::Default, state.defaultPoint, std::nullopt, features);
      if (first && first->ok())
        measure(i, state.defaultTraceText, RecordOrigin::Default, state.defaultPoint, std::nullopt, std::nullopt);
      if (first && state.space.hasDefault())
        state.measured.push_back({state.space.defaultCandidate(), state.defaultMs ? 1.0 / *state.defaultMs : 0});
    }
    if (!state.defaultPoint.empty()) state.seen.insert(state.defaultPoint);
    if (!state.defaultMs) {
      warn("the default schedule of '" + tasks_[i].name + "' could not be measured; the task is not tuned",
           tasks_[i].name, "its trial in the records says why");
      scheduler_.markExhausted(int(i));
      continue;
    }
    if (state.space.empty()) scheduler_.markExhausted(int(i));
    scheduler_.recordBaseline(int(i), state.trials, state.best ? std::optional<double>(state.best->ms) : state.defaultMs);
  }
}

void Session::trainIfDue(bool force) {
  if (samples_.empty()) return;
  if (!force && !model_.shouldRetrain(int(samples_.size()), elapsed())) return;
  if (force && int(samples_.size()) < 2) return;
  auto started = Clock::now();
  Status trained = model_.train(samples_);
  seconds_["training"] += secondsSince(started);
  if (!trained) {
    warn("the cost model could not be trained: " + trained.error().message, "", "candidates are chosen at random");
    return;
  }
  if (Status saved = model_.save(costModelPath_); !saved)
    warn("the cost model could not be saved: " + saved.error().message, costModelPath_,
         "a resumed session trains it again from the records");
  emit({{"event", "model_trained"},
        {"samples", int(samples_.size())},
        {"features", model_.featureCount()},
        {"seconds", model_.lastTrainingSeconds()}});
}

void Session::searchRound(int taskIndex) {
  size_t task = size_t(taskIndex);
  TaskState& state = states_[task];
  const TuningTask& spec = tasks_[task];
  ++round_;
  auto searching = Clock::now();
  CandidateScorer scorer = [&](const std::vector<Candidate>& candidates) { return score(task, candidates); };
  std::vector<Candidate> batch = proposeBatch(state.space, state.measured, scorer, state.seen, options_.search, rng_);
  std::vector<double> predictions = score(task, batch);
  seconds_["searching"] += secondsSince(searching);
  RecordOrigin origin = model_.isTrained() ? RecordOrigin::Search : RecordOrigin::Random;

  // As many as the trial budget still allows, built in parallel by the worker.
  std::vector<Pending> pending;
  std::set<std::string> tracesThisRound;
  for (size_t i = 0; i < batch.size(); ++i) {
    if (options_.budgetTrials > 0 && searchTrials_ + int(pending.size()) >= options_.budgetTrials) break;
    Pending& p = pending.emplace_back();
    p.point = SearchSpace::pointKey(batch[i]);
    if (!predictions.empty() && std::isfinite(predictions[i])) p.prediction = predictions[i];
    p.features = featuresOf(task, batch[i]);
    p.trace = printTraceText(state.space.instantiate(batch[i]));
    p.origin = origin;
    tracesThisRound.insert(p.trace);
  }
  // Candidates that unroll into far more code than the default are not sent: LLVM would take
  // seconds on each (stalling the batch) and such code is rarely fast. They are recorded as
  // build failures, so the cost model learns to avoid them.
  if (state.defaultStatements <= 0) {
    auto features = state.space.hasDefault() ? featuresOf(task, state.space.defaultCandidate())
                                             : featuresOf(task, spec.defaultTrace);
    if (features) state.defaultStatements = storeStatements(*features);
  }
  double statementLimit = std::max(kMinimumStatementLimit, kStatementGrowthLimit * state.defaultStatements);
  std::vector<Pending> sent;
  std::vector<size_t> sentIndex;
  std::vector<std::optional<CandidateMeasurement>> results(pending.size());
  for (size_t i = 0; i < pending.size(); ++i) {
    double statements = pending[i].features ? storeStatements(*pending[i].features) : 0;
    if (statements <= statementLimit) {
      sent.push_back(pending[i]);
      sentIndex.push_back(i);
      continue;
    }
    CandidateMeasurement tooLarge;
    char message[200];
    std::snprintf(message, sizeof message,
                  "not measured: it unrolls into %.0f statements, more than %.0f (%.0f times the default's %.0f)",
                  statements, statementLimit, kStatementGrowthLimit, state.defaultStatements);
    tooLarge.failure = CandidateFailure{CandidateErrorKind::Build,
                                        Diagnostic{message, spec.name, 0, 0, "LLVM would take seconds to compile it"}};
    if (!fatal_ && !interrupted_ && record(task, pending[i], tooLarge)) results[i] = tooLarge;
  }
  std::vector<std::optional<CandidateMeasurement>> measured = measureBatch(task, sent);
  for (size_t j = 0; j < sent.size(); ++j) results[sentIndex[j]] = measured[j];
  int measuredCount = 0, errors = 0;
  std::vector<double> predicted, throughputs;
  for (size_t i = 0; i < results.size(); ++i) {
    if (!results[i]) continue;
    ++measuredCount;
    double throughput = results[i]->ok() ? 1.0 / std::max(1e-9, results[i]->medianMilliseconds) : 0;
    if (!results[i]->ok()) ++errors;
    state.measured.push_back({batch[i], throughput});
    if (pending[i].prediction) {
      predicted.push_back(*pending[i].prediction);
      throughputs.push_back(throughput);
    }
  }
  // The control: the best so far measured again, to see what the machine's noise does to it.
  std::optional<double> controlMs;
  if (state.best && !tracesThisRound.count(state.best->trace) && budgetLeft() && !fatal_ && !interrupted_ &&
      !cancelled()) {
    Measured best = *state.best;
    auto measured = measure(task, best.trace, RecordOrigin::Control, best.point, std::nullopt, std::nullopt);
    if (measured && measured->ok()) controlMs = measured->medianMilliseconds;
  }

  std::optional<double> bestMs = state.best ? std::optional<double>(state.best->ms) : std::nullopt;
  scheduler_.recordRound(taskIndex, state.trials, bestMs);
  if (batch.size() < size_t(options_.search.batchSize)) scheduler_.markExhausted(taskIndex);
  trainIfDue();

  std::optional<double> pairwise, recall;
  if (predicted.size() >= 2) {
    double accuracy = pairwiseAccuracy(predicted, throughputs);
    if (std::isfinite(accuracy)) pairwise = accuracy;
    double topK = topKRecall(predicted, throughputs, std::max(1, int(predicted.size()) / 4));
    if (std::isfinite(topK)) recall = topK;
  }
  std::optional<double> gflops, percentOfPeak, speedup, eta;
  if (bestMs && spec.flops > 0) gflops = spec.flops / (*bestMs * 1e6);
  if (gflops && options_.peakGflops > 0) percentOfPeak = 100 * *gflops / options_.peakGflops;
  if (bestMs && state.defaultMs && *bestMs > 0) speedup = *state.defaultMs / *bestMs;
  if (options_.budgetSeconds > 0) eta = std::max(0.0, options_.budgetSeconds - elapsed());
  else if (options_.budgetTrials > 0 && searchTrials_ > 0)
    eta = std::max(0, options_.budgetTrials - searchTrials_) * elapsed() / searchTrials_;
  double defaultLatency = 0;
  for (size_t i = 0; i < tasks_.size(); ++i) defaultLatency += tasks_[i].weight * states_[i].defaultMs.value_or(0);
  const TaskProgress& progress = scheduler_.progress(taskIndex);
  emit({{"event", "round"},
        {"round", round_},
        {"task", taskIndex},
        {"name", spec.name},
        {"trials", sessionTrials_},
        {"task_trials", state.trials},
        {"measured", measuredCount},
        {"errors", errors},
        {"best_ms", nullable(bestMs)},
        {"best_gflops", nullable(gflops)},
        {"percent_of_peak", nullable(percentOfPeak)},
        {"default_ms", nullable(state.defaultMs)},
        {"speedup", nullable(speedup)},
        {"control_ms", nullable(controlMs)},
        {"pairwise_accuracy", nullable(pairwise)},
        {"top_k_recall", nullable(recall)},
        {"model_samples", model_.sampleCount()},
        {"estimated_latency_ms", scheduler_.estimatedLatencyMs()},
        {"default_latency_ms", defaultLatency},
        {"eta_s", nullable(eta)},
        {"stopped", progress.stopped},
        {"exhausted", progress.exhausted}});
}

// The final choice of a task: its best few schedules (and the default) measured again in turns,
// so that one lucky sample on a noisy machine cannot decide.
void Session::confirm(size_t task) {
  TaskState& state = states_[task];
  if (!state.servable || !state.best) return;
  std::vector<Measured> ranked = state.valid;
  std::stable_sort(ranked.begin(), ranked.end(), [](const Measured& a, const Measured& b) { return a.ms < b.ms; });
  struct Rival {
    Measured schedule;
    bool isDefault = false;
    std::vector<double> medians;
  };
  std::vector<Rival> rivals;
  std::set<std::string> taken;
  for (const Measured& measured : ranked) {
    if (int(rivals.size()) >= options_.confirmCandidates) break;
    if (measured.trace == state.defaultTraceText || !taken.insert(measured.trace).second) continue;
    rivals.push_back({measured, false, {}});
  }
  if (rivals.empty()) return;  // only the default ever worked
  rivals.push_back({{state.defaultTraceText, state.defaultPoint, state.defaultMs.value_or(0)}, true, {}});
  // From scratch the default is measured beside its rivals as the yardstick only.
  bool defaultCompetes = options_.space.includeDefaultSketch;
  for (int repeat = 0; repeat < options_.confirmRepeats; ++repeat) {
    for (Rival& rival : rivals) {
      if (fatal_ || interrupted_) return;
      if (cancelled()) {
        interrupted_ = true;
        return;
      }
      RecordOrigin origin = rival.isDefault && !defaultCompetes ? RecordOrigin::Control : RecordOrigin::Confirm;
      auto measured = measure(task, rival.schedule.trace, origin, rival.schedule.point, std::nullopt, std::nullopt);
      if (measured && measured->ok()) rival.medians.push_back(measured->medianMilliseconds);
    }
  }
  auto medianOf = [](std::vector<double> values) -> std::optional<double> {
    if (values.empty()) return std::nullopt;
    std::sort(values.begin(), values.end());
    return values[(values.size() - 1) / 2];
  };
  const Rival* chosen = nullptr;
  std::optional<double> chosenMs, defaultMs;
  nlohmann::json candidates = nlohmann::json::array();
  for (const Rival& rival : rivals) {
    std::optional<double> median = medianOf(rival.medians);
    candidates.push_back({{"point", rival.schedule.point},
                          {"default", rival.isDefault},
                          {"medians_ms", rival.medians},
                          {"median_ms", nullable(median)}});
    if (rival.isDefault) defaultMs = median;
    if (!median || (rival.isDefault && !defaultCompetes)) continue;
    if (!chosenMs || *median < *chosenMs) {
      chosen = &rival;
      chosenMs = median;
    }
  }
  state.confirmedDefaultMs = defaultMs;
  if (chosen) {
    state.confirmed = true;
    state.chosen = Measured{chosen->schedule.trace, chosen->schedule.point, *chosenMs};
  }
  std::optional<double> speedup;
  if (chosenMs && defaultMs && *chosenMs > 0) speedup = *defaultMs / *chosenMs;
  emit({{"event", "confirm"},
        {"task", int(task)},
        {"name", tasks_[task].name},
        {"candidates", candidates},
        {"chosen_point", chosen ? chosen->schedule.point : std::string()},
        {"chosen_ms", nullable(chosenMs)},
        {"default_ms", nullable(defaultMs)},
        {"speedup", nullable(speedup)}});
}

TuningSessionResult Session::finish(std::string reason) {
  TuningSessionResult result;
  result.reason = std::move(reason);
  result.error = fatal_;
  nlohmann::json taskSummaries = nlohmann::json::array();
  for (size_t i = 0; i < tasks_.size(); ++i) {
    const TaskState& state = states_[i];
    TaskOutcome outcome;
    outcome.name = tasks_[i].name;
    outcome.workloadKey = tasks_[i].workloadKey;
    outcome.trials = state.trials;
    outcome.errors = state.errors;
    // Confirmed tasks report the times measured side by side, not the best single samples.
    outcome.defaultMs = state.confirmedDefaultMs ? state.confirmedDefaultMs : state.defaultMs;
    // Unconfirmed (an interrupted session): the fastest single measurement, when it beats the default.
    std::optional<Measured> chosen = state.chosen;
    if (!chosen && state.best && (!state.defaultMs || state.best->ms < *state.defaultMs || !options_.space.includeDefaultSketch))
      chosen = state.best;
    if (chosen) {
      outcome.bestMs = chosen->ms;
      outcome.tuned = chosen->trace != state.defaultTraceText;
      if (outcome.tuned) {
        outcome.chosenTrace = chosen->trace;
        result.chosen[tasks_[i].workloadKey] = chosen->trace;
      }
    } else {
      outcome.bestMs = state.defaultMs;
    }
    result.defaultLatencyMs += tasks_[i].weight * outcome.defaultMs.value_or(0);
    result.estimatedLatencyMs += tasks_[i].weight * outcome.bestMs.value_or(outcome.defaultMs.value_or(0));
    std::optional<double> speedup;
    if (outcome.bestMs && outcome.defaultMs && *outcome.bestMs > 0) speedup = *outcome.defaultMs / *outcome.bestMs;
    taskSummaries.push_back({{"task", int(i)},
                             {"name", outcome.name},
                             {"trials", outcome.trials},
                             {"errors", outcome.errors},
                             {"default_ms", nullable(outcome.defaultMs)},
                             {"best_ms", nullable(outcome.bestMs)},
                             {"speedup", nullable(speedup)},
                             {"tuned", outcome.tuned}});
    result.tasks.push_back(std::move(outcome));
  }

  if (options_.measureModel && !interrupted_ && !fatal_ && !cancelled()) {
    auto started = Clock::now();
    auto measured = options_.measureModel(result.chosen);
    seconds_["model_latency"] += secondsSince(started);
    if (measured) {
      result.measured = *measured;
      emit({{"event", "model_latency"},
            {"default_ms", measured->defaultMs},
            {"tuned_ms", measured->tunedMs},
            {"speedup", measured->tunedMs > 0 ? measured->defaultMs / measured->tunedMs : 0.0},
            {"runs", measured->runs},
            {"max_abs_difference", measured->maxAbsDifference}});
    } else {
      warn("the model could not be measured with the tuned schedules: " + measured.error().message,
           measured.error().location, measured.error().hint);
    }
  }

  result.trials = sessionTrials_;
  result.errors = sessionErrors_;
  result.elapsedSeconds = elapsed();
  double accounted = 0;
  for (auto& [name, value] : seconds_) accounted += value;
  seconds_["other"] = std::max(0.0, result.elapsedSeconds - accounted);
  result.seconds = seconds_;
  emit({{"event", "session_end"},
        {"reason", result.reason},
        {"trials", result.trials},
        {"errors", result.errors},
        {"elapsed_s", result.elapsedSeconds},
        {"seconds", result.seconds},
        {"default_latency_ms", result.defaultLatencyMs},
        {"estimated_latency_ms", result.estimatedLatencyMs},
        {"measured_default_ms", nullable(result.measured ? std::optional<double>(result.measured->defaultMs) : std::nullopt)},
        {"measured_tuned_ms", nullable(result.measured ? std::optional<double>(result.measured->tunedMs) : std::nullopt)},
        {"records", options_.recordsPath},
        {"tasks", taskSummaries}});
  return result;
}

Expected<TuningSessionResult> Session::run() {
  if (Status prepared = prepare(); !prepared) return prepared.error();
  startEvent();
  measureDefaults();
  std::string reason;
  while (!fatal_ && !interrupted_) {
    if (cancelled()) {
      interrupted_ = true;
      break;
    }
    if (!budgetLeft()) {
      reason = options_.budgetTrials > 0 && searchTrials_ >= options_.budgetTrials ? "trials" : "budget";
      break;
    }
    std::optional<int> task = scheduler_.next(rng_);
    if (!task) {
      reason = "converged";
      break;
    }
    searchRound(*task);
  }
  if (!fatal_ && !interrupted_) {
    for (size_t i = 0; i < tasks_.size() && !fatal_ && !interrupted_; ++i) confirm(i);
  }
  if (fatal_) reason = "error";
  else if (interrupted_) reason = "interrupted";
  if (reason.empty()) reason = "budget";
  return finish(reason);
}

}  // namespace

Expected<TuningSessionResult> runTuningSession(const std::vector<TuningTask>& tasks, MeasureWorker& worker,
                                               const TuningSessionOptions& options) {
  Session session(tasks, worker, options);
  return session.run();
}

}  // namespace tessel::tuner
