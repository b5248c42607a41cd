// A tuning session as its event stream tells it (tuner/Events.md): the tasks, every trial,
// every round and the final choices, rebuilt line by line from `tessel tune --events`. The
// Studio's tuning dashboard draws from it while the session runs and afterwards from the saved
// stream; a line that is not a valid event is reported with its number and skipped, and
// everything valid before and after it is kept.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace tessel::tuner {

/// A task as session_start introduced it.
struct LoggedTask {
  int index = 0;
  std::string name;
  std::vector<std::string> kernels;
  std::string op;
  std::string workloadHash;
  int weight = 1;
  double flops = 0;
  double bytes = 0;  ///< Its inputs' and outputs' bytes (0 when the stream does not say).
  double spaceSize = 0;
  std::vector<std::string> sketches;
  int resumedTrials = 0;
};

/// One `trial` event.
struct LoggedTrial {
  int task = 0;
  int round = 0;
  std::string origin;  ///< default, search, random, control, confirm
  std::string point;
  std::optional<double> prediction;
  bool ok = false;
  double medianMs = 0, minMs = 0, maxMs = 0, gflops = 0;
  int repeats = 0;
  std::string errorKind, errorMessage;  ///< Set when !ok.
  int sessionTrials = 0;  ///< The session's trial count after this one (its 1-based number).
  double t = 0;
};

/// One `round` event.
struct LoggedRound {
  int round = 0, task = 0, trials = 0, taskTrials = 0, measured = 0, errors = 0, modelSamples = 0;
  std::optional<double> bestMs, bestGflops, percentOfPeak, defaultMs, speedup, controlMs;
  std::optional<double> pairwiseAccuracy, topKRecall, spearmanRho, kendallTau, etaSeconds;
  double estimatedLatencyMs = 0, defaultLatencyMs = 0;
  bool stopped = false, exhausted = false;
  std::string chosenBy;           ///< The scheduler's reason ("warm-up", "gradient", "random").
  double gradientMsPerTrial = 0;  ///< Its expected change of the model's latency per trial.
  double t = 0;
};

/// What the log knows of one task now.
struct LoggedTaskState {
  int trials = 0, errors = 0, rounds = 0;
  std::optional<double> defaultMs;  ///< The default schedule's time (first measurement).
  std::optional<double> bestMs;     ///< The fastest valid trial so far (any origin).
  int bestTrial = -1;               ///< Its index in trials().
  bool stopped = false, exhausted = false;
  /// After each of its rounds: (task trials, best ms).
  std::vector<std::pair<int, double>> bestHistory;
  /// The confirm event's choice, once the session confirmed it.
  std::optional<std::string> chosenPoint;
  std::optional<double> chosenMs, confirmedSpeedup;
};

struct LoggedProblem {
  int line = 0;  ///< 1-based line of the stream (0 for an event added without one).
  std::string message;
};

class TuningEventLog {
public:
  /// Reads one line of the stream (without its newline); blank lines are skipped. Returns
  /// false, and records a problem naming `lineNumber`, when it is not a valid event.
  bool addLine(std::string_view line, int lineNumber);
  /// Adds an event already parsed (and checked against the schema).
  void addEvent(const nlohmann::json& event);

  bool started() const { return started_; }
  bool ended() const { return endReason_.has_value(); }
  const std::string& source() const { return source_; }
  const std::string& target() const { return target_; }
  const std::string& recordsPath() const { return records_; }
  double budgetSeconds() const { return budgetSeconds_; }
  int budgetTrials() const { return budgetTrials_; }
  double peakGflops() const { return peakGflops_; }
  double bandwidthGBps() const { return bandwidthGBps_; }
  int threads() const { return threads_; }

  const std::vector<LoggedTask>& tasks() const { return tasks_; }
  const std::vector<LoggedTaskState>& taskStates() const { return states_; }
  const std::vector<LoggedTrial>& trials() const { return trials_; }
  const std::vector<LoggedRound>& rounds() const { return rounds_; }
  const std::vector<LoggedProblem>& problems() const { return problems_; }
  /// Events of types this version does not know (from a newer tessel), skipped.
  int unknownEvents() const { return unknownEvents_; }
  /// Warnings and non-fatal errors the session reported, as "location: message (hint)".
  const std::vector<std::string>& messages() const { return messages_; }

  /// Σ weight × default time over the tasks whose default was measured.
  double defaultLatencyMs() const;
  /// Σ weight × best time (the default's where nothing better is known).
  double estimatedLatencyMs() const;
  /// Between a `pause` event and its `resume`.
  bool paused() const { return paused_; }
  /// Every `revive`: (round count when it came, tasks revived).
  const std::vector<std::pair<int, std::vector<int>>>& revivals() const { return revivals_; }
  /// Seconds since the session started, as of the last event.
  double lastTime() const { return lastTime_; }

  /// session_end's reason ("budget", "trials", "converged", "interrupted", "error").
  const std::optional<std::string>& endReason() const { return endReason_; }
  /// The end-of-session measurement of the whole model, default and tuned (model_latency).
  std::optional<double> measuredDefaultMs() const { return measuredDefaultMs_; }
  std::optional<double> measuredTunedMs() const { return measuredTunedMs_; }

  /// Grows with every event added: a view redraws when it changed since its last look.
  long long generation() const { return generation_; }

private:
  void start(const nlohmann::json& event);
  void trial(const nlohmann::json& event);
  void round(const nlohmann::json& event);
  void confirm(const nlohmann::json& event);
  LoggedTaskState* stateOf(int task);

  bool started_ = false;
  std::string source_, target_, records_;
  double budgetSeconds_ = 0, peakGflops_ = 0, bandwidthGBps_ = 0;
  int budgetTrials_ = 0, threads_ = 0;
  std::vector<LoggedTask> tasks_;
  std::vector<LoggedTaskState> states_;
  std::vector<LoggedTrial> trials_;
  std::vector<LoggedRound> rounds_;
  std::vector<LoggedProblem> problems_;
  std::vector<std::string> messages_;
  std::optional<std::string> endReason_;
  std::optional<double> measuredDefaultMs_, measuredTunedMs_;
  double lastTime_ = 0;
  bool paused_ = false;
  std::vector<std::pair<int, std::vector<int>>> revivals_;
  long long generation_ = 0;
  int unknownEvents_ = 0;
  int line_ = 0;  // the line being read, for problems found while adding its event
};

}  // namespace tessel::tuner
