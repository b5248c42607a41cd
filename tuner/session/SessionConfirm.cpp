// The end of a session: each task's best few schedules confirmed against its default in
// interleaved re-measurements, the model measured with the choices, and the summary.
#include "tuner/session/Session.h"

#include <algorithm>

namespace tessel::tuner::session {

ConfirmJudgement judgeConfirmation(const std::vector<ConfirmRival>& rivals) {
  auto medianOf = [](std::vector<double> values) -> std::optional<double> {
    if (values.empty()) return std::nullopt;
    std::sort(values.begin(), values.end());
    return values[(values.size() - 1) / 2];
  };
  ConfirmJudgement judgement;
  for (size_t i = 0; i < rivals.size(); ++i) {
    const ConfirmRival& rival = rivals[i];
    std::optional<double> median = medianOf(rival.medians);
    judgement.candidates.push_back({{"point", rival.point},
                                    {"default", rival.isDefault},
                                    {"medians_ms", rival.medians},
                                    {"median_ms", nullable(median)}});
    if (rival.isDefault) judgement.defaultMs = median;
    if (!median || !rival.competes) continue;
    if (!judgement.chosenMs || *median < *judgement.chosenMs) {
      judgement.chosen = int(i);
      judgement.chosenMs = median;
    }
  }
  return judgement;
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
  // Each repeat is one batch, timed in turns (MeasureRequest::turns) when the session's rounds
  // are: the rivals then share the machine's slow and fast moments within a repeat as well.
  for (int repeat = 0; repeat < options_.confirmRepeats; ++repeat) {
    if (fatal_ || interrupted_) return;
    if (cancelled()) {
      interrupted_ = true;
      return;
    }
    std::vector<Pending> batch;
    for (const Rival& rival : rivals) {
      RecordOrigin origin = rival.isDefault && !defaultCompetes ? RecordOrigin::Control : RecordOrigin::Confirm;
      batch.push_back({rival.schedule.trace, origin, rival.schedule.point, std::nullopt, std::nullopt});
    }
    std::vector<std::optional<CandidateMeasurement>> measured = measureBatch(task, batch);
    if (fatal_ || interrupted_) return;
    for (size_t i = 0; i < rivals.size(); ++i)
      if (measured[i] && measured[i]->ok()) rivals[i].medians.push_back(measured[i]->medianMilliseconds);
  }
  std::vector<ConfirmRival> judged;
  for (const Rival& rival : rivals)
    judged.push_back({rival.schedule.point, rival.isDefault, !rival.isDefault || defaultCompetes, rival.medians});
  ConfirmJudgement judgement = judgeConfirmation(judged);
  const Rival* chosen = judgement.chosen >= 0 ? &rivals[size_t(judgement.chosen)] : nullptr;
  const std::optional<double> chosenMs = judgement.chosenMs, defaultMs = judgement.defaultMs;
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
        {"candidates", judgement.candidates},
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

}  // namespace tessel::tuner::session
