// The tuning session's state, shared by the files that implement it (not part of the tuner's
// interface; runTuningSession in TuningSession.h is):
//   TuningSession.cpp   the session's course: prepare, defaults, rounds until the budget, finish
//   SessionResume.cpp   taking up a records file again (--resume)
//   SessionSearch.cpp   one search round: propose, score, measure as a batch, record, learn
//   SessionConfirm.cpp  the final choice of each task and the session's summary
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tuner/features/LoopFeatures.h"
#include "tuner/records/RecordFile.h"
#include "tuner/session/TuningSession.h"

namespace tessel::tuner::session {

using Clock = std::chrono::steady_clock;

inline double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

inline nlohmann::json nullable(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

// "1:3,0,2" (SearchSpace::pointKey) back into a candidate of `space`; nullopt when the space
// has no such point (the records came from another compiler's space).
std::optional<Candidate> parsePoint(const std::string& key, const SearchSpace& space);

// One rival of a task's final confirmation: a schedule and its re-measurements' medians.
struct ConfirmRival {
  std::string point;
  bool isDefault = false;
  bool competes = true;  // false for the default from scratch: the yardstick, never the choice
  std::vector<double> medians;
};

// What a confirmation decided: the rival with the lowest median of medians (the lower median
// for an even count) among those that compete, the default's, and the event's "candidates".
struct ConfirmJudgement {
  int chosen = -1;  // index into the rivals; -1: none had a time
  std::optional<double> chosenMs, defaultMs;
  nlohmann::json candidates = nlohmann::json::array();
};
// Shared by the live session and the history rebuilt from records (EventsFromRecords), which
// must decide alike.
ConfirmJudgement judgeConfirmation(const std::vector<ConfirmRival>& rivals);

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
  // Different points often lower to the same code (a split by 1, an unrolled loop of one
  // iteration, tiles that simplify alike): by point key, the lowered function's structural
  // hash (names aside); and for each program measured, its throughput (0: it failed).
  std::map<std::string, uint64_t> programs;
  std::map<uint64_t, double> measuredPrograms;
  int equivalentSkipped = 0;  // new points left out because their program was measured
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
  // Seconds of the session spent searching (and measuring), without the time it was paused:
  // what the time budget counts.
  double searchElapsed() const { return elapsed() - pausedSeconds_; }
  bool budgetLeft() const {
    if (options_.budgetSeconds > 0 && searchElapsed() >= options_.budgetSeconds) return false;
    if (options_.budgetTrials > 0 && searchTrials_ >= options_.budgetTrials) return false;
    return true;
  }

  Status prepare();
  Status resumeFrom(const RecordFileContents& contents);
  void absorbRecord(size_t task, const TuningRecord& record);
  void startEvent();
  void measureDefaults();
  void searchRound(int task);
  /// Every live task stopped improving while budget is left: searches them again with more
  /// patience (TaskScheduler::reviveStopped) and says so; false when none could be.
  bool reviveStoppedTasks();
  /// Waits while options_.paused says so (or until cancelled), with its events.
  void waitWhilePaused();
  void confirm(size_t task);
  void trainIfDue(bool force = false);
  TuningSessionResult finish(std::string reason);

  /// The cost model's features of a trace: its lowered code's loop-nest features, then the
  /// decisions of `candidate`, the point it came from (absent for a trace from elsewhere); when
  /// `program` is given, the lowered code's structural hash.
  std::optional<std::vector<float>> featuresOf(size_t task, const Trace& trace, const Candidate* candidate = nullptr,
                                               uint64_t* program = nullptr);
  std::optional<std::vector<float>> featuresOf(size_t task, const Candidate& candidate);
  /// The structural hash of the candidate's lowered code; nullopt when it does not lower.
  std::optional<uint64_t> programOf(size_t task, const Candidate& candidate);
  /// Notes that the candidate's program was measured with `throughput` (a later point that
  /// lowers to the same code is then not measured again).
  void noteProgram(size_t task, const Candidate& candidate, double throughput);
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
  double pausedSeconds_ = 0;
  int sessionTrials_ = 0;  // everything measured in this session
  int searchTrials_ = 0;   // what --trials counts: all but confirmations
  int sessionErrors_ = 0;
  int resumedTrials_ = 0;
  std::optional<Diagnostic> fatal_;
  bool interrupted_ = false;
};

}  // namespace tessel::tuner::session
