// The database of tuning records: the best schedule of each (workload, target), what a model
// would take from it, and per-workload statistics.
#pragma once

#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tuner/records/TuningRecord.h"

namespace tessel::tuner {

/// What a model with a given set of workload keys would take from the database on one target.
struct LookupReport {
  std::vector<std::string> appliedKeys;   ///< the model's keys that have a best record (sorted)
  int otherTargetRecords = 0;             ///< records measured for another target
  std::vector<std::string> otherTargets;  ///< those targets, sorted, each once
  int unknownWorkloadRecords = 0;         ///< records for this target of workloads the model lacks
};

/// The trials of one workload on one target.
struct WorkloadStatistics {
  std::string workload;
  std::string workloadHash;
  std::string target;
  std::string task;                       ///< the first non-empty task name among its records
  int trials = 0;                         ///< records, failed ones included
  int errors = 0;                         ///< failed measurements
  const TuningRecord* best = nullptr;     ///< the fastest valid record; nullptr when all failed
  /// The default schedule's time: when the best is a confirmed choice, the median of the
  /// default's re-measurements beside it (confirm and control records of the default's trace);
  /// otherwise the fastest origin=default valid record's median.
  std::optional<double> defaultMedianMs;

  /// How many times faster the best is than the default schedule, when both are known.
  std::optional<double> speedupOverDefault() const;
};

/// Tuning records, indexed by (workload key, target). Pointers into it stay valid as records are
/// added.
class TuningDatabase {
public:
  TuningDatabase() = default;
  explicit TuningDatabase(std::vector<TuningRecord> records);

  void add(TuningRecord record);
  /// Every record, in the order added.
  const std::deque<TuningRecord>& records() const { return records_; }

  /// The schedule to use for exactly this key and target, or nullptr when no record is valid.
  /// When the workload has confirmation records (origin confirm: the tuner's interleaved
  /// re-measurement of its top candidates at the end of a session), the trace whose
  /// confirmations have the least median median wins, and the record returned is that
  /// median confirmation. Otherwise it is the valid record (any origin) with the least median;
  /// the earliest added wins a tie.
  const TuningRecord* best(const std::string& workloadKey, const std::string& target) const;
  /// The best record of every workload measured on `target`, ordered by workload key.
  std::vector<const TuningRecord*> bestForTarget(const std::string& target) const;
  /// Every target with records, sorted.
  std::vector<std::string> targets() const;

  /// Which of `modelKeys` have a best record on `target`, and how many records do not apply.
  LookupReport lookup(const std::set<std::string>& modelKeys, const std::string& target) const;

  /// Statistics per (workload, target), in the order each pair was first added.
  std::vector<WorkloadStatistics> statistics() const;

private:
  using Key = std::pair<std::string, std::string>;  // (workload, target)

  void chooseConfirmed(const Key& key, const TuningRecord& added);

  std::deque<TuningRecord> records_;
  std::map<Key, const TuningRecord*> fastest_;    // least median, any origin
  std::map<Key, std::map<std::string, std::vector<const TuningRecord*>>> confirmations_;  // by trace
  std::map<Key, const TuningRecord*> confirmed_;  // the confirmed choice, when there are confirmations
};

}  // namespace tessel::tuner
