// A tuning session: for each task of a model (or one operator), search its space with the
// cost model, measure the proposed candidates in the persistent worker, append every trial to
// the records file, retrain the model as data arrives, and in the end confirm each task's
// choice by measuring its top candidates in turns. Everything that happens is an event
// (TuningEvents.h). Records are the only state that matters: a session killed at any moment
// loses no trial, and one started with `resume` continues from the file.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/support/Error.h"
#include "core/target/Target.h"
#include "tuner/measure/MeasureWorker.h"
#include "tuner/model/CostModel.h"
#include "tuner/scheduler/TaskScheduler.h"
#include "tuner/search/EvolutionarySearch.h"
#include "tuner/session/TuningEvents.h"
#include "tuner/session/TuningTask.h"
#include "tuner/space/SearchSpace.h"

namespace tessel::tuner {

/// The model's latency with the default schedules and with the tuned ones, measured in turns.
struct ModelLatencyComparison {
  double defaultMs = 0;
  double tunedMs = 0;
  int runs = 0;                 ///< Timed runs of each.
  double maxAbsDifference = 0;  ///< Between the two models' outputs on the same inputs.
};

/// The tuned schedule of each workload key (trace text), as the session chose them.
using ChosenSchedules = std::map<std::string, std::string>;

struct TuningSessionOptions {
  std::string recordsPath;
  /// Where the cost model is saved after each training (and loaded from on resume); empty:
  /// recordsPath + ".model".
  std::string costModelPath;
  std::string sourceLabel;  ///< The model file, or "operator matmul ..." (for events).
  Target target = hostTarget();
  /// Stop searching after this many seconds (0: no limit) or trials of this session (0: no
  /// limit); at least one must be set. Confirmation and the final measurement follow.
  double budgetSeconds = 0;
  int budgetTrials = 0;
  /// Continue from the records file's trials of these tasks (and the saved cost model).
  /// Without it a file that already holds trials of these tasks on this target is refused.
  bool resume = false;
  int threads = 0;          ///< The worker's threads (for events; the worker is set up already).
  double peakGflops = 0;    ///< The machine's FMA peak with those threads; 0: unknown.
  double bandwidthGBps = 0; ///< Its memory bandwidth (read and write) with those threads; 0: unknown.
  SpaceOptions space;       ///< includeDefaultSketch false: the "from scratch" experiment.
  SearchOptions search;
  TaskSchedulerOptions scheduler;
  CostModelOptions costModel;
  /// How each candidate is measured (task and trace are filled in per candidate).
  MeasureRequest measure = defaultTuningMeasurement();
  /// Why the candidates' weights are or are not evicted before each timed call, for people
  /// (the session_start event's "timing"); empty: not said.
  std::string timingRegime;
  /// Per task, the best candidates re-measured in turns at the end, and how many times each.
  int confirmCandidates = 3;
  int confirmRepeats = 3;
  uint64_t seed = 1;
  /// Polled between candidates (and by the worker while it measures, when the caller wires
  /// it there too): true stops the session as "interrupted", with every trial kept.
  std::function<bool()> cancelled;
  /// Polled between rounds: while it returns true the session waits (a `pause` event, then
  /// `resume`), measuring nothing, and the time budget does not run.
  std::function<bool()> paused;
  EventSink events;
  /// Measures the whole model with the chosen schedules against the defaults (optional).
  std::function<Expected<ModelLatencyComparison>(const ChosenSchedules&)> measureModel;

  /// Short samples: a tuning session measures thousands of candidates.
  static MeasureRequest defaultTuningMeasurement();
};

/// How one task ended.
struct TaskOutcome {
  std::string name;
  std::string workloadKey;
  int trials = 0;  ///< In the records (resumed ones included).
  int errors = 0;
  std::optional<double> defaultMs;
  std::optional<double> bestMs;   ///< The chosen schedule's (confirmed) time.
  std::string chosenTrace;        ///< Empty when the default stays.
  bool tuned = false;             ///< A schedule other than the default was chosen.
};

struct TuningSessionResult {
  std::string reason;  ///< "budget", "trials", "converged", "interrupted", "error".
  int trials = 0;      ///< Measured in this session (failures, controls and confirmations included).
  int errors = 0;
  double elapsedSeconds = 0;
  std::map<std::string, double> seconds;  ///< Where the time went (the session_end event's).
  std::vector<TaskOutcome> tasks;
  ChosenSchedules chosen;
  double defaultLatencyMs = 0;    ///< Σ weight × default time of the tasks.
  double estimatedLatencyMs = 0;  ///< Σ weight × chosen time.
  std::optional<ModelLatencyComparison> measured;
  /// Set when the session stopped for an error after it started (records kept).
  std::optional<Diagnostic> error;
};

/// Runs a session over `tasks` measured by `worker` (whose source serves those task names).
/// A Diagnostic, before anything is measured, for: no task, no budget, a records file that
/// cannot be read or written, trials of these tasks already in the file without `resume`,
/// a worker that cannot start. Later failures (a full disk) end the session with
/// result.error set and every trial appended so far kept.
Expected<TuningSessionResult> runTuningSession(const std::vector<TuningTask>& tasks, MeasureWorker& worker,
                                               const TuningSessionOptions& options);

}  // namespace tessel::tuner
