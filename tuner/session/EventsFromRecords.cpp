// Rebuilding a session's event stream from its records: the records are walked in file order
// (the order they were measured in), with the same per-task bookkeeping a live session keeps,
// and each record becomes the event the session wrote when it measured it.
#include "tuner/session/EventsFromRecords.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>
#include <optional>

#include "tuner/model/RankingQuality.h"
#include "tuner/session/Session.h"
#include "tuner/session/TuningEvents.h"

namespace tessel::tuner {

namespace {

using session::nullable;

// Seconds since the epoch of a record's "2026-11-25T12:34:56Z"; nullopt when it is not one.
std::optional<double> secondsOf(const std::string& time) {
  std::tm parts{};
  if (std::sscanf(time.c_str(), "%4d-%2d-%2dT%2d:%2d:%2dZ", &parts.tm_year, &parts.tm_mon, &parts.tm_mday,
                  &parts.tm_hour, &parts.tm_min, &parts.tm_sec) != 6)
    return std::nullopt;
  parts.tm_year -= 1900;
  parts.tm_mon -= 1;
  return double(timegm(&parts));
}

// "-cores=2" in a target string; 0 when absent.
int coresOf(const std::string& target) {
  size_t at = target.find("-cores=");
  return at == std::string::npos ? 0 : std::atoi(target.c_str() + at + 7);
}

struct Task {
  int index = 0;
  std::string name, hash, workload, op, defaultTrace;
  std::vector<std::string> kernels;
  int weight = 1;
  double flops = 0, bytes = 0;
  int trials = 0, errors = 0;
  std::optional<double> defaultMs, bestMs;
  std::optional<double> confirmedDefaultMs, chosenMs;
  bool tuned = false;
};

// A confirmation in progress: each rival's trace beside it, in the order they first came.
struct Rival {
  std::string trace;
  session::ConfirmRival judged;
};

class Rebuilder {
public:
  explicit Rebuilder(const EventsFromRecordsOptions& options) : options_(options) {}

  std::vector<nlohmann::json> run(const std::vector<TuningRecord>& records) {
    std::vector<std::optional<double>> times;
    std::optional<double> first;
    for (const TuningRecord& record : records) {
      times.push_back(secondsOf(record.time));
      if (times.back() && (!first || *times.back() < *first)) first = times.back();
    }
    origin_ = first.value_or(0);
    for (const TuningRecord& record : records) taskOf(record);
    detectFromScratch(records);
    start(records);
    for (size_t r = 0; r < records.size(); ++r) {
      const TuningRecord& record = records[r];
      Task& task = tasks_[indexByHash_.at(record.workloadHash)];
      now_ = std::max(now_, times[r].value_or(origin_) - origin_);
      bool searching = record.origin == RecordOrigin::Search || record.origin == RecordOrigin::Random;
      bool confirming = record.origin == RecordOrigin::Confirm ||
                        (record.origin == RecordOrigin::Control && confirmTask_ == task.index &&
                         record.trace == task.defaultTrace);
      if (!confirming) flushConfirm();
      // A round is one task's searched candidates and its control, all filed under the
      // session's round number; the next round (or the next session's defaults) ends it.
      bool inRound = searching || (record.origin == RecordOrigin::Control && !confirming);
      if (roundTask_ >= 0 && (record.origin == RecordOrigin::Default || confirming ||
                              (inRound && (roundTask_ != task.index || roundNumber_ != record.round))))
        flushRound();
      if (searching && roundTask_ < 0) {
        roundTask_ = task.index;
        roundNumber_ = record.round;
        ++round_;
      }
      trial(task, record);
      if (roundTask_ == task.index && roundNumber_ == record.round) {
        if (searching) roundTrials_.push_back(&record);
        if (record.origin == RecordOrigin::Control && !confirming && record.result())
          roundControlMs_ = record.result()->medianMs;
      }
      if (confirming) confirm(task, record);
    }
    flushConfirm();
    flushRound();
    end();
    return std::move(events_);
  }

private:
  void emit(nlohmann::json event) {
    event["t"] = now_;
    events_.push_back(std::move(event));
  }

  Task& taskOf(const TuningRecord& record) {
    auto [at, added] = indexByHash_.emplace(record.workloadHash, int(tasks_.size()));
    if (added) {
      Task task;
      task.index = int(tasks_.size());
      task.name = record.task;
      task.hash = record.workloadHash;
      task.workload = record.workload;
      task.op = opSummaryOfWorkloadKey(record.workload);
      task.kernels = {record.task};
      for (const RecordedTaskFacts& facts : options_.facts)
        if (facts.workloadHash == record.workloadHash) {
          if (!facts.op.empty()) task.op = facts.op;
          if (!facts.kernels.empty()) task.kernels = facts.kernels;
          task.weight = facts.weight;
          task.flops = facts.flops;
          task.bytes = facts.bytes;
        }
      tasks_.push_back(task);
    }
    Task& task = tasks_[size_t(at->second)];
    if (record.origin == RecordOrigin::Default && task.defaultTrace.empty()) task.defaultTrace = record.trace;
    // Without the model, a timed record gives the flops back (its GFLOP/s times its time).
    if (const MeasuredTime* time = record.result(); time && time->gflops && task.flops == 0)
      task.flops = *time->gflops * time->medianMs * 1e6;
    return task;
  }

  // Not recorded as such: a session without the defaults in its search re-measures the default
  // beside the confirmed candidates as a control, never as a candidate.
  void detectFromScratch(const std::vector<TuningRecord>& records) {
    std::map<std::string, std::pair<bool, bool>> confirmedDefault;  // hash -> (as confirm, as control)
    std::map<std::string, bool> confirmed;
    for (const TuningRecord& record : records) {
      const Task& task = tasks_[size_t(indexByHash_.at(record.workloadHash))];
      if (record.origin == RecordOrigin::Confirm) confirmed[record.workloadHash] = true;
      if (record.trace != task.defaultTrace) continue;
      if (record.origin == RecordOrigin::Confirm) confirmedDefault[record.workloadHash].first = true;
      if (record.origin == RecordOrigin::Control) confirmedDefault[record.workloadHash].second = true;
    }
    for (const auto& [hash, any] : confirmed) {
      auto [asConfirm, asControl] = confirmedDefault[hash];
      fromScratch_ = fromScratch_ || (any && !asConfirm && asControl);
    }
  }

  void start(const std::vector<TuningRecord>& records) {
    nlohmann::json tasks = nlohmann::json::array();
    for (const Task& task : tasks_)
      tasks.push_back({{"task", task.index},
                       {"name", task.name},
                       {"kernels", task.kernels},
                       {"op", task.op},
                       {"workload_hash", task.hash},
                       {"weight", task.weight},
                       {"flops", task.flops},
                       {"bytes", task.bytes},
                       {"space_size", 0},
                       {"sketches", nlohmann::json::array()},
                       {"resumed_trials", 0}});
    std::string target = records.empty() ? std::string() : records.front().target;
    emit({{"event", "session_start"},
          {"schema", kEventSchemaVersion},
          {"time", records.empty() ? std::string() : records.front().time},
          {"source", options_.source.empty() ? options_.recordsPath : options_.source},
          {"target", target},
          {"records", options_.recordsPath},
          {"resumed", false},
          {"resumed_trials", 0},
          {"budget_seconds", 0},
          {"budget_trials", 0},
          {"threads", coresOf(target)},
          {"peak_gflops", 0},
          {"bandwidth_gbps", 0},
          {"from_scratch", fromScratch_},
          {"flush_caches", false},
          {"timing", "not known: rebuilt from the records file"},
          {"tasks", tasks}});
    std::string hint = "the machine's peak, the budget and the scheduler's reasons are not known";
    if (options_.facts.empty())
      hint = "each task counts once in the model's latency (give the model to weigh them), and " + hint;
    emit({{"event", "warning"},
          {"message", "this session's history is rebuilt from its records file: no event stream was kept"},
          {"location", options_.recordsPath},
          {"hint", hint}});
  }

  void trial(Task& task, const TuningRecord& record) {
    ++task.trials;
    ++trials_;
    const MeasuredTime* time = record.result();
    if (!time) {
      ++task.errors;
      ++errors_;
    }
    // As the session keeps them: the default's time is its best measurement under any origin;
    // from scratch the default is the yardstick, never the best.
    bool isDefault = record.origin == RecordOrigin::Default || record.trace == task.defaultTrace;
    if (time && isDefault) task.defaultMs = std::min(task.defaultMs.value_or(time->medianMs), time->medianMs);
    if (time && !(isDefault && fromScratch_) && (!task.bestMs || time->medianMs < *task.bestMs))
      task.bestMs = time->medianMs;
    nlohmann::json event = {{"event", "trial"},
                            {"task", task.index},
                            {"name", task.name},
                            {"round", record.origin == RecordOrigin::Default ? 0 : std::max(round_, 0)},
                            {"origin", std::string(originName(record.origin))},
                            {"point", record.point},
                            {"prediction", nullable(record.prediction)},
                            {"ok", time != nullptr},
                            {"best_ms", nullable(task.bestMs)},
                            {"build_ms", 0},
                            {"trials", trials_},
                            {"task_trials", task.trials}};
    if (time) {
      event["median_ms"] = time->medianMs;
      event["min_ms"] = time->minMs;
      event["max_ms"] = time->maxMs;
      event["repeats"] = time->repeats;
      event["gflops"] = time->gflops.value_or(task.flops > 0 ? task.flops / (time->medianMs * 1e6) : 0);
    } else {
      const MeasureFailure* failure = record.failure();
      event["error"] = {{"kind", std::string(errorKindName(failure->kind))}, {"message", failure->message}, {"hint", ""}};
    }
    emit(std::move(event));
  }

  double latency(bool best) const {
    double sum = 0;
    for (const Task& task : tasks_) {
      std::optional<double> ms = best && task.bestMs ? task.bestMs : task.defaultMs;
      if (best && task.chosenMs) ms = task.chosenMs;
      sum += task.weight * ms.value_or(0);
    }
    return sum;
  }

  void flushRound() {
    if (roundTask_ < 0) return;
    const Task& task = tasks_[size_t(roundTask_)];
    // The quality figures over the candidates the model scored, failed ones at throughput 0,
    // as the live session computes them.
    std::vector<double> predicted, measured;
    int errors = 0;
    for (const TuningRecord* record : roundTrials_) {
      const MeasuredTime* time = record->result();
      if (!time) ++errors;
      if (!record->prediction) continue;
      predicted.push_back(*record->prediction);
      measured.push_back(time ? 1.0 / std::max(1e-9, time->medianMs) : 0);
    }
    auto figure = [&](double value) {
      return predicted.size() >= 2 && std::isfinite(value) ? std::optional<double>(value) : std::nullopt;
    };
    std::optional<double> gflops, speedup;
    if (task.bestMs && task.flops > 0) gflops = task.flops / (*task.bestMs * 1e6);
    if (task.bestMs && task.defaultMs && *task.bestMs > 0) speedup = *task.defaultMs / *task.bestMs;
    emit({{"event", "round"},
          {"round", round_},
          {"task", task.index},
          {"name", task.name},
          {"trials", trials_},
          {"task_trials", task.trials},
          {"measured", int(roundTrials_.size())},
          {"errors", errors},
          {"best_ms", nullable(task.bestMs)},
          {"best_gflops", nullable(gflops)},
          {"percent_of_peak", nullptr},
          {"default_ms", nullable(task.defaultMs)},
          {"speedup", nullable(speedup)},
          {"control_ms", nullable(roundControlMs_)},
          {"pairwise_accuracy", nullable(figure(pairwiseAccuracy(predicted, measured)))},
          {"top_k_recall", nullable(figure(topKRecall(predicted, measured, std::max(1, int(predicted.size()) / 4))))},
          {"spearman_rho", nullable(figure(spearmanRho(predicted, measured)))},
          {"kendall_tau", nullable(figure(kendallTau(predicted, measured)))},
          {"model_samples", 0},
          {"estimated_latency_ms", latency(true)},
          {"default_latency_ms", latency(false)},
          {"eta_s", nullptr},
          {"stopped", false},
          {"exhausted", false}});
    roundTask_ = -1;
    roundTrials_.clear();
    roundControlMs_.reset();
  }

  void confirm(const Task& task, const TuningRecord& record) {
    if (confirmTask_ != task.index) {
      flushConfirm();
      confirmTask_ = task.index;
    }
    auto rival = std::find_if(rivals_.begin(), rivals_.end(), [&](const Rival& r) { return r.trace == record.trace; });
    if (rival == rivals_.end()) {
      bool isDefault = record.trace == task.defaultTrace;
      // A default that competes is re-measured as a confirmation, one that does not as a control.
      rivals_.push_back({record.trace, {record.point, isDefault, record.origin == RecordOrigin::Confirm, {}}});
      rival = rivals_.end() - 1;
    }
    if (const MeasuredTime* time = record.result()) rival->judged.medians.push_back(time->medianMs);
  }

  void flushConfirm() {
    if (confirmTask_ < 0) return;
    Task& task = tasks_[size_t(confirmTask_)];
    std::vector<session::ConfirmRival> judged;
    for (const Rival& rival : rivals_) judged.push_back(rival.judged);
    session::ConfirmJudgement judgement = session::judgeConfirmation(judged);
    const session::ConfirmRival* chosen = judgement.chosen >= 0 ? &judged[size_t(judgement.chosen)] : nullptr;
    const std::optional<double> chosenMs = judgement.chosenMs, defaultMs = judgement.defaultMs;
    std::optional<double> speedup;
    if (chosenMs && defaultMs && *chosenMs > 0) speedup = *defaultMs / *chosenMs;
    task.confirmedDefaultMs = defaultMs;
    task.chosenMs = chosenMs;
    task.tuned = chosen && !chosen->isDefault;
    emit({{"event", "confirm"},
          {"task", task.index},
          {"name", task.name},
          {"candidates", judgement.candidates},
          {"chosen_point", chosen ? chosen->point : std::string()},
          {"chosen_ms", nullable(chosenMs)},
          {"default_ms", nullable(defaultMs)},
          {"speedup", nullable(speedup)}});
    confirmTask_ = -1;
    rivals_.clear();
  }

  void end() {
    nlohmann::json summaries = nlohmann::json::array();
    double defaultLatency = 0, estimated = 0;
    for (const Task& task : tasks_) {
      std::optional<double> defaultMs = task.confirmedDefaultMs ? task.confirmedDefaultMs : task.defaultMs;
      std::optional<double> bestMs = task.chosenMs;
      bool tuned = task.tuned;
      if (!bestMs && task.bestMs && (fromScratch_ || (task.defaultMs && *task.bestMs < *task.defaultMs))) {
        bestMs = task.bestMs;  // never confirmed (an interrupted session): its fastest measurement
        tuned = true;
      }
      if (!bestMs) bestMs = defaultMs;
      std::optional<double> speedup;
      if (bestMs && defaultMs && *bestMs > 0) speedup = *defaultMs / *bestMs;
      defaultLatency += task.weight * defaultMs.value_or(0);
      estimated += task.weight * bestMs.value_or(0);
      summaries.push_back({{"task", task.index},
                           {"name", task.name},
                           {"trials", task.trials},
                           {"errors", task.errors},
                           {"default_ms", nullable(defaultMs)},
                           {"best_ms", nullable(bestMs)},
                           {"speedup", nullable(speedup)},
                           {"tuned", tuned}});
    }
    emit({{"event", "session_end"},
          {"reason", "records"},
          {"trials", trials_},
          {"errors", errors_},
          {"elapsed_s", now_},
          {"seconds", nlohmann::json::object()},
          {"default_latency_ms", defaultLatency},
          {"estimated_latency_ms", estimated},
          {"measured_default_ms", nullptr},
          {"measured_tuned_ms", nullptr},
          {"records", options_.recordsPath},
          {"tasks", summaries}});
  }

  const EventsFromRecordsOptions& options_;
  std::vector<nlohmann::json> events_;
  std::vector<Task> tasks_;
  std::map<std::string, int> indexByHash_;
  double origin_ = 0, now_ = 0;
  int trials_ = 0, errors_ = 0, round_ = 0;
  int roundTask_ = -1, roundNumber_ = 0;
  std::vector<const TuningRecord*> roundTrials_;
  std::optional<double> roundControlMs_;
  int confirmTask_ = -1;
  std::vector<Rival> rivals_;
  bool fromScratch_ = false;
};

}  // namespace

std::vector<nlohmann::json> eventsFromRecords(const std::vector<TuningRecord>& records,
                                              const EventsFromRecordsOptions& options) {
  return Rebuilder(options).run(records);
}

std::string opSummaryOfWorkloadKey(const std::string& key) {
  // An operator's name runs to its attributes "{", its opset "@" or its operands "(".
  auto nameOf = [](const std::string& text) { return text.substr(0, text.find_first_of("{@( ")); };
  // A bare operator's key (tessel tune matmul ...) is "operator NAME in=[...]".
  if (key.rfind("operator ", 0) == 0) return nameOf(key.substr(9));
  if (key.rfind("fused[", 0) != 0) return nameOf(key);
  // fused[%0=Conv{...}@13($0,$1); %1=Relu@13(%0); out=(%1)] in=...: the statements are split
  // at "; " outside braces, brackets and parentheses (attributes hold lists and strings).
  std::string ops, statement;
  int depth = 0;
  auto take = [&] {
    size_t equals = statement.find('=');
    if (statement.rfind('%', 0) == 0 && equals != std::string::npos)
      ops += (ops.empty() ? "" : "+") + nameOf(statement.substr(equals + 1));
    statement.clear();
  };
  for (size_t i = 6; i < key.size(); ++i) {
    char c = key[i];
    if (depth == 0 && c == ']') break;
    if (c == '{' || c == '[' || c == '(') ++depth;
    if (c == '}' || c == ']' || c == ')') --depth;
    if (depth == 0 && c == ';') {
      take();
      continue;
    }
    if (!(statement.empty() && c == ' ')) statement += c;
  }
  take();
  return "fused(" + ops + ")";
}

}  // namespace tessel::tuner
