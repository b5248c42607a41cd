// One search round of a task: candidates proposed by the evolutionary search and ranked by the
// cost model, lowered for their features in parallel, measured as one batch by the worker,
// each recorded and emitted as it arrives, the best re-measured as a control, the model
// retrained when due, and the round's figures (ranking accuracy among them) emitted.
#include "tuner/session/Session.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <thread>

#include "compiler/lower/Lower.h"
#include "compiler/schedule/Schedule.h"
#include "compiler/schedule/TraceText.h"
#include "core/ir/StructuralEqual.h"
#include "tuner/model/RankingQuality.h"

namespace tessel::tuner::session {

namespace {

// Candidates whose lowered code has more store statements than this many times the default's
// (and more than the minimum) are recorded as build failures without being built.
constexpr double kStatementGrowthLimit = 8;
constexpr double kMinimumStatementLimit = 512;

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

}  // namespace

std::optional<std::vector<float>> Session::featuresOf(size_t task, const Trace& trace, const Candidate* candidate,
                                                      uint64_t* program) {
  const TuningTask& spec = tasks_[task];
  Expected<Schedule> schedule = Schedule::replay(spec.workload.outputs, trace);
  if (!schedule) return std::nullopt;
  // For the session's target: a GPU candidate over the block's limits fails here, unmeasured.
  Expected<LoweredFunction> lowered = lower(*schedule, spec.workload.args(), spec.name, options_.target);
  if (!lowered) return std::nullopt;
  if (program) *program = structuralHash(lowered->func);
  std::vector<float> features = extractLoopFeatures(lowered->func, featureTarget_);
  std::vector<float> decisions = decisionFeatures(candidate);
  features.insert(features.end(), decisions.begin(), decisions.end());
  return features;
}

std::optional<std::vector<float>> Session::featuresOf(size_t task, const Candidate& candidate) {
  TaskState& state = states_[task];
  std::string key = SearchSpace::pointKey(candidate);
  auto it = state.features.find(key);
  if (it != state.features.end()) return it->second;
  std::optional<std::vector<float>> features;
  uint64_t program = 0;
  try {
    features = featuresOf(task, state.space.instantiate(candidate), &candidate, &program);
  } catch (const UserError&) {
  }
  if (features) state.programs[key] = program;
  return state.features.emplace(key, std::move(features)).first->second;
}

std::optional<uint64_t> Session::programOf(size_t task, const Candidate& candidate) {
  if (!featuresOf(task, candidate)) return std::nullopt;
  const TaskState& state = states_[task];
  auto it = state.programs.find(SearchSpace::pointKey(candidate));
  return it == state.programs.end() ? std::nullopt : std::optional<uint64_t>(it->second);
}

void Session::noteProgram(size_t task, const Candidate& candidate, double throughput) {
  if (auto program = programOf(task, candidate)) {
    double& known = states_[task].measuredPrograms[*program];
    known = std::max(known, throughput);
  }
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
  std::vector<uint64_t> programs(missing.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next++) < missing.size();) {
      try {
        computed[i] = featuresOf(task, state.space.instantiate(*missing[i]), missing[i], &programs[i]);
      } catch (const std::exception&) {
      }
    }
  };
  size_t threadCount = std::min<size_t>(missing.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> threads;
  for (size_t t = 1; t < threadCount; ++t) threads.emplace_back(work);
  work();
  for (auto& thread : threads) thread.join();
  for (size_t i = 0; i < missing.size(); ++i) {
    std::string key = SearchSpace::pointKey(*missing[i]);
    if (computed[i]) state.programs[key] = programs[i];
    state.features.emplace(key, std::move(computed[i]));
  }
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
  // A new point whose lowered code is a program already measured is not measured again: it
  // takes that program's throughput (so the search still learns where it lies), and a batch
  // holds each program once.
  std::vector<MeasuredPoint> equivalents;
  std::set<uint64_t> programsThisRound;
  int skippedBefore = state.equivalentSkipped;
  CandidateFilter newProgram = [&](const Candidate& candidate) {
    std::optional<uint64_t> program = programOf(task, candidate);
    if (!program) return true;  // it does not lower: measuring records why, and the model learns it
    if (auto known = state.measuredPrograms.find(*program); known != state.measuredPrograms.end()) {
      state.seen.insert(SearchSpace::pointKey(candidate));
      equivalents.push_back({candidate, known->second});
      ++state.equivalentSkipped;
      return false;
    }
    return programsThisRound.insert(*program).second;
  };
  std::vector<Candidate> batch =
      proposeBatch(state.space, state.measured, scorer, state.seen, options_.search, rng_, newProgram);
  state.measured.insert(state.measured.end(), equivalents.begin(), equivalents.end());
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
    noteProgram(task, batch[i], throughput);
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

  std::optional<double> pairwise, recall, rho, tau;
  if (predicted.size() >= 2) {
    double accuracy = pairwiseAccuracy(predicted, throughputs);
    if (std::isfinite(accuracy)) pairwise = accuracy;
    double topK = topKRecall(predicted, throughputs, std::max(1, int(predicted.size()) / 4));
    if (std::isfinite(topK)) recall = topK;
    double spearman = spearmanRho(predicted, throughputs), kendall = kendallTau(predicted, throughputs);
    if (std::isfinite(spearman)) rho = spearman;
    if (std::isfinite(kendall)) tau = kendall;
  }
  std::optional<double> gflops, percentOfPeak, speedup, eta;
  if (bestMs && spec.flops > 0) gflops = spec.flops / (*bestMs * 1e6);
  if (gflops && options_.peakGflops > 0) percentOfPeak = 100 * *gflops / options_.peakGflops;
  if (bestMs && state.defaultMs && *bestMs > 0) speedup = *state.defaultMs / *bestMs;
  if (options_.budgetSeconds > 0) eta = std::max(0.0, options_.budgetSeconds - searchElapsed());
  else if (options_.budgetTrials > 0 && searchTrials_ > 0)
    eta = std::max(0, options_.budgetTrials - searchTrials_) * searchElapsed() / searchTrials_;
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
        {"spearman_rho", nullable(rho)},
        {"chosen_by", std::string(scheduler_.lastChoice().reason)},
        {"gradient_ms_per_trial", scheduler_.lastChoice().gradient},
        {"kendall_tau", nullable(tau)},
        {"equivalent_skipped", state.equivalentSkipped - skippedBefore},
        {"model_samples", model_.sampleCount()},
        {"estimated_latency_ms", scheduler_.estimatedLatencyMs()},
        {"default_latency_ms", defaultLatency},
        {"eta_s", nullable(eta)},
        {"stopped", progress.stopped},
        {"exhausted", progress.exhausted}});
}

}  // namespace tessel::tuner::session
