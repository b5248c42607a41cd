// Rebuilding a tuning session from its event stream.
#include "tuner/session/TuningEventLog.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "tuner/session/TuningEvents.h"

namespace tessel::tuner {

namespace {

std::optional<double> optionalNumber(const nlohmann::json& event, const char* field) {
  auto it = event.find(field);
  if (it == event.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::vector<std::string> strings(const nlohmann::json& event, const char* field) {
  std::vector<std::string> out;
  auto it = event.find(field);
  if (it == event.end() || !it->is_array()) return out;
  for (const nlohmann::json& value : *it)
    if (value.is_string()) out.push_back(value.get<std::string>());
  return out;
}

}  // namespace

bool TuningEventLog::addLine(std::string_view line, int lineNumber) {
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return true;
  nlohmann::json event = nlohmann::json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (event.is_discarded()) {
    problems_.push_back({lineNumber, "not JSON (a line cut short, or not an event stream)"});
    return false;
  }
  // An event type this version does not know comes from a newer tessel: skipped, as
  // Events.md asks of readers (an object without "event" or "t" is still a problem).
  if (auto kind = event.find("event"); kind != event.end() && kind->is_string() && event.contains("t")) {
    const std::string name = kind->get<std::string>();
    bool known = std::any_of(eventSchemas().begin(), eventSchemas().end(),
                             [&](const EventSchema& schema) { return schema.event == name; });
    if (!known) {
      ++unknownEvents_;
      return true;
    }
  }
  if (auto problem = validateEvent(event)) {
    problems_.push_back({lineNumber, *problem});
    return false;
  }
  line_ = lineNumber;
  addEvent(event);
  line_ = 0;
  return true;
}

void TuningEventLog::addEvent(const nlohmann::json& event) {
  const std::string kind = event.value("event", "");
  lastTime_ = std::max(lastTime_, event.value("t", 0.0));
  ++generation_;
  if (kind == "session_start") start(event);
  else if (kind == "trial") trial(event);
  else if (kind == "round") round(event);
  else if (kind == "confirm") confirm(event);
  else if (kind == "model_latency") {
    measuredDefaultMs_ = optionalNumber(event, "default_ms");
    measuredTunedMs_ = optionalNumber(event, "tuned_ms");
  } else if (kind == "warning" || kind == "error") {
    std::string text = event.value("message", "");
    std::string location = event.value("location", ""), hint = event.value("hint", "");
    if (!location.empty()) text = location + ": " + text;
    if (!hint.empty()) text += " (" + hint + ")";
    messages_.push_back(kind + ": " + text);
  } else if (kind == "session_end") {
    paused_ = false;
    endReason_ = event.value("reason", "");
    if (auto tuned = optionalNumber(event, "measured_tuned_ms")) measuredTunedMs_ = tuned;
    if (auto measured = optionalNumber(event, "measured_default_ms")) measuredDefaultMs_ = measured;
  } else if (kind == "pause") {
    paused_ = true;
  } else if (kind == "resume") {
    paused_ = false;
  } else if (kind == "revive") {
    std::vector<int> revived;
    for (const nlohmann::json& task : event["tasks"])
      if (task.is_number_integer()) revived.push_back(task.get<int>());
    revivals_.emplace_back(int(rounds_.size()), std::move(revived));
  }
  // model_trained: nothing to keep beyond what rounds say.
}

void TuningEventLog::start(const nlohmann::json& event) {
  // A second session_start (a stream of several sessions appended) starts over.
  long long generation = generation_;
  *this = TuningEventLog();
  generation_ = generation;
  started_ = true;
  source_ = event.value("source", "");
  target_ = event.value("target", "");
  records_ = event.value("records", "");
  budgetSeconds_ = event.value("budget_seconds", 0.0);
  budgetTrials_ = event.value("budget_trials", 0);
  peakGflops_ = event.value("peak_gflops", 0.0);
  bandwidthGBps_ = event.value("bandwidth_gbps", 0.0);
  threads_ = event.value("threads", 0);
  lastTime_ = event.value("t", 0.0);
  for (const nlohmann::json& task : event["tasks"]) {
    LoggedTask logged;
    logged.index = task.value("task", int(tasks_.size()));
    logged.name = task.value("name", "");
    logged.kernels = strings(task, "kernels");
    logged.op = task.value("op", "");
    logged.workloadHash = task.value("workload_hash", "");
    logged.weight = task.value("weight", 1);
    logged.flops = task.value("flops", 0.0);
    logged.bytes = task.value("bytes", 0.0);
    logged.spaceSize = task.value("space_size", 0.0);
    logged.sketches = strings(task, "sketches");
    logged.resumedTrials = task.value("resumed_trials", 0);
    tasks_.push_back(std::move(logged));
  }
  states_.assign(tasks_.size(), LoggedTaskState());
}

LoggedTaskState* TuningEventLog::stateOf(int task) {
  if (task < 0 || size_t(task) >= states_.size()) return nullptr;
  return &states_[size_t(task)];
}

void TuningEventLog::trial(const nlohmann::json& event) {
  LoggedTrial trial;
  trial.task = event.value("task", -1);
  LoggedTaskState* state = stateOf(trial.task);
  if (!state) {
    problems_.push_back({line_, "a trial of task " + std::to_string(trial.task) + ", which session_start did not list"});
    return;
  }
  trial.round = event.value("round", 0);
  trial.origin = event.value("origin", "");
  trial.point = event.value("point", "");
  trial.prediction = optionalNumber(event, "prediction");
  trial.ok = event.value("ok", false);
  trial.medianMs = event.value("median_ms", 0.0);
  trial.minMs = event.value("min_ms", 0.0);
  trial.maxMs = event.value("max_ms", 0.0);
  trial.gflops = event.value("gflops", 0.0);
  trial.repeats = event.value("repeats", 0);
  if (auto error = event.find("error"); error != event.end() && error->is_object()) {
    trial.errorKind = error->value("kind", "");
    trial.errorMessage = error->value("message", "");
  }
  trial.sessionTrials = event.value("trials", int(trials_.size()) + 1);
  trial.t = event.value("t", 0.0);

  ++state->trials;
  if (!trial.ok) ++state->errors;
  if (trial.ok && trial.medianMs > 0) {
    if (trial.origin == "default" && !state->defaultMs) state->defaultMs = trial.medianMs;
    // Controls and confirmations re-measure known schedules: they do not make a new best.
    bool candidate = trial.origin != "control" && trial.origin != "confirm";
    if (candidate && (!state->bestMs || trial.medianMs < *state->bestMs)) {
      state->bestMs = trial.medianMs;
      state->bestTrial = int(trials_.size());
    }
  }
  trials_.push_back(std::move(trial));
}

void TuningEventLog::round(const nlohmann::json& event) {
  LoggedRound round;
  round.round = event.value("round", 0);
  round.task = event.value("task", -1);
  LoggedTaskState* state = stateOf(round.task);
  if (!state) {
    problems_.push_back({line_, "a round of task " + std::to_string(round.task) + ", which session_start did not list"});
    return;
  }
  round.trials = event.value("trials", 0);
  round.taskTrials = event.value("task_trials", 0);
  round.measured = event.value("measured", 0);
  round.errors = event.value("errors", 0);
  round.modelSamples = event.value("model_samples", 0);
  round.bestMs = optionalNumber(event, "best_ms");
  round.bestGflops = optionalNumber(event, "best_gflops");
  round.percentOfPeak = optionalNumber(event, "percent_of_peak");
  round.defaultMs = optionalNumber(event, "default_ms");
  round.speedup = optionalNumber(event, "speedup");
  round.controlMs = optionalNumber(event, "control_ms");
  round.pairwiseAccuracy = optionalNumber(event, "pairwise_accuracy");
  round.topKRecall = optionalNumber(event, "top_k_recall");
  round.spearmanRho = optionalNumber(event, "spearman_rho");
  round.kendallTau = optionalNumber(event, "kendall_tau");
  round.etaSeconds = optionalNumber(event, "eta_s");
  round.estimatedLatencyMs = event.value("estimated_latency_ms", 0.0);
  round.defaultLatencyMs = event.value("default_latency_ms", 0.0);
  round.stopped = event.value("stopped", false);
  round.exhausted = event.value("exhausted", false);
  round.chosenBy = event.value("chosen_by", "");
  round.gradientMsPerTrial = event.value("gradient_ms_per_trial", 0.0);
  round.t = event.value("t", 0.0);

  ++state->rounds;
  state->stopped = round.stopped;
  state->exhausted = round.exhausted;
  if (round.defaultMs && !state->defaultMs) state->defaultMs = round.defaultMs;
  // The session's best is the one the scheduler keeps (it can differ from the fastest trial
  // when a resumed session brought its best from the records).
  if (round.bestMs) {
    state->bestMs = state->bestMs ? std::min(*state->bestMs, *round.bestMs) : *round.bestMs;
    state->bestHistory.emplace_back(round.taskTrials, *round.bestMs);
  }
  rounds_.push_back(std::move(round));
}

void TuningEventLog::confirm(const nlohmann::json& event) {
  LoggedTaskState* state = stateOf(event.value("task", -1));
  if (!state) return;
  state->chosenPoint = event.value("chosen_point", "");
  state->chosenMs = optionalNumber(event, "chosen_ms");
  state->confirmedSpeedup = optionalNumber(event, "speedup");
}

double TuningEventLog::defaultLatencyMs() const {
  double total = 0;
  for (size_t i = 0; i < tasks_.size(); ++i)
    if (states_[i].defaultMs) total += tasks_[i].weight * *states_[i].defaultMs;
  return total;
}

double TuningEventLog::estimatedLatencyMs() const {
  double total = 0;
  for (size_t i = 0; i < tasks_.size(); ++i) {
    std::optional<double> best = states_[i].bestMs ? states_[i].bestMs : states_[i].defaultMs;
    if (best) total += tasks_[i].weight * *best;
  }
  return total;
}

}  // namespace tessel::tuner
