// The tuning loop (DESIGN.md, "The tuner"): tasks -> scheduler -> search (space, cost model)
// -> measuring worker -> records, model and events; then confirmation of each task's choice.
// This file is the session's course; Session.h lists the others.
#include "tuner/session/TuningSession.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include "compiler/schedule/TraceText.h"
#include "tuner/session/Session.h"

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
  // A round's candidates timed in turns of 2.5 ms each: this VM's speed drifts over a round's
  // second of timing by as much as its candidates differ. Two measurements of the same rounds
  // (bench/timing_agreement.py) ordered their candidates alike in 63-66% of pairs one after
  // the other, 74-79% in 5 or 10 turns and 83-88% in 20 (ResNet-18; MobileNetV2: 76-77%
  // against 87-88%): that is the ceiling of the cost model's measured ranking accuracy.
  request.turns = 20;
  return request;
}

namespace session {

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

void Session::startEvent() {
  nlohmann::json tasks = nlohmann::json::array();
  for (size_t i = 0; i < tasks_.size(); ++i) {
    nlohmann::json sketches = nlohmann::json::array();
    for (const Sketch& sketch : states_[i].space.sketches()) sketches.push_back(sketch.name);
    tasks.push_back(sessionStartTask(int(i), tasks_[i], states_[i].space.size(), sketches, states_[i].resumedTrials));
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
        {"bandwidth_gbps", options_.bandwidthGBps},
        {"from_scratch", !options_.space.includeDefaultSketch},
        {"flush_caches", options_.measure.flushCaches},
        {"timing", options_.timingRegime},
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
      if (first && state.space.hasDefault()) {
        double throughput = state.defaultMs ? 1.0 / *state.defaultMs : 0;
        state.measured.push_back({state.space.defaultCandidate(), throughput});
        noteProgram(i, state.space.defaultCandidate(), throughput);
      }
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

bool Session::reviveStoppedTasks() {
  std::vector<int> revived = scheduler_.reviveStopped();
  if (revived.empty()) return false;
  nlohmann::json names = nlohmann::json::array();
  int patience = 0;
  for (int task : revived) {
    names.push_back(tasks_[size_t(task)].name);
    patience = std::max(patience, scheduler_.progress(task).patience);
  }
  std::optional<double> remaining;
  if (options_.budgetSeconds > 0) remaining = std::max(0.0, options_.budgetSeconds - searchElapsed());
  emit({{"event", "revive"},
        {"tasks", revived},
        {"names", names},
        {"patience_trials", patience},
        {"remaining_s", remaining ? nlohmann::json(*remaining) : nlohmann::json()}});
  return true;
}

void Session::waitWhilePaused() {
  auto since = Clock::now();
  emit({{"event", "pause"}});
  while (options_.paused() && !cancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  double seconds = secondsSince(since);
  pausedSeconds_ += seconds;
  emit({{"event", "resume"}, {"paused_s", std::round(seconds * 1000) / 1000}});
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
    if (options_.paused && options_.paused()) waitWhilePaused();
    if (cancelled()) {
      interrupted_ = true;
      break;
    }
    if (!budgetLeft()) {
      reason = options_.budgetTrials > 0 && searchTrials_ >= options_.budgetTrials ? "trials" : "budget";
      break;
    }
    std::optional<int> task = scheduler_.next(rng_);
    if (!task && reviveStoppedTasks()) task = scheduler_.next(rng_);
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

}  // namespace session

Expected<TuningSessionResult> runTuningSession(const std::vector<TuningTask>& tasks, MeasureWorker& worker,
                                               const TuningSessionOptions& options) {
  session::Session session(tasks, worker, options);
  return session.run();
}

}  // namespace tessel::tuner
