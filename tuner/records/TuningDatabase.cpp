// The database of tuning records: best schedules, lookups and statistics.
#include "tuner/records/TuningDatabase.h"

#include <algorithm>

namespace tessel::tuner {

namespace {

// Strictly faster: an equal time keeps the earlier record, so the best does not flicker between
// equally fast schedules as records are re-read.
bool faster(const TuningRecord& candidate, const TuningRecord* current) {
  return !current || candidate.result()->medianMs < current->result()->medianMs;
}

}  // namespace

std::optional<double> WorkloadStatistics::speedupOverDefault() const {
  if (!best || !defaultMedianMs || best->result()->medianMs <= 0) return std::nullopt;
  return *defaultMedianMs / best->result()->medianMs;
}

TuningDatabase::TuningDatabase(std::vector<TuningRecord> records) {
  for (TuningRecord& record : records) add(std::move(record));
}

void TuningDatabase::add(TuningRecord record) {
  const TuningRecord& stored = records_.emplace_back(std::move(record));
  if (!stored.result()) return;
  Key key{stored.workload, stored.target};
  const TuningRecord*& fastest = fastest_[key];
  if (faster(stored, fastest)) fastest = &stored;
  if (stored.origin == RecordOrigin::Confirm) chooseConfirmed(key, stored);
}

// The confirmed choice: the trace whose confirmation medians have the least median. One
// confirmation is as noisy as any measurement; the median over several, taken in turns with
// its rivals, is what the tuner trusts (and what a lucky single search sample is not).
void TuningDatabase::chooseConfirmed(const Key& key, const TuningRecord& added) {
  std::vector<const TuningRecord*>& samples = confirmations_[key][added.trace];
  samples.push_back(&added);
  const TuningRecord* chosen = nullptr;
  double chosenMs = 0;
  for (auto& [trace, records] : confirmations_[key]) {
    std::vector<const TuningRecord*> sorted = records;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](auto* a, auto* b) { return a->result()->medianMs < b->result()->medianMs; });
    const TuningRecord* middle = sorted[(sorted.size() - 1) / 2];
    if (!chosen || middle->result()->medianMs < chosenMs) {
      chosen = middle;
      chosenMs = middle->result()->medianMs;
    }
  }
  confirmed_[key] = chosen;
}

const TuningRecord* TuningDatabase::best(const std::string& workloadKey, const std::string& target) const {
  Key key{workloadKey, target};
  if (auto it = confirmed_.find(key); it != confirmed_.end()) return it->second;
  auto it = fastest_.find(key);
  return it == fastest_.end() ? nullptr : it->second;
}

std::vector<const TuningRecord*> TuningDatabase::bestForTarget(const std::string& target) const {
  std::vector<const TuningRecord*> out;
  for (auto& [key, record] : fastest_)
    if (key.second == target) out.push_back(best(key.first, key.second));
  std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->workload < b->workload; });
  return out;
}

std::vector<std::string> TuningDatabase::targets() const {
  std::set<std::string> targets;
  for (const TuningRecord& record : records_) targets.insert(record.target);
  return {targets.begin(), targets.end()};
}

LookupReport TuningDatabase::lookup(const std::set<std::string>& modelKeys, const std::string& target) const {
  LookupReport report;
  std::set<std::string> otherTargets;
  for (const TuningRecord& record : records_) {
    if (record.target != target) {
      ++report.otherTargetRecords;
      otherTargets.insert(record.target);
    } else if (!modelKeys.count(record.workload)) {
      ++report.unknownWorkloadRecords;
    }
  }
  for (const std::string& key : modelKeys)
    if (best(key, target)) report.appliedKeys.push_back(key);
  report.otherTargets.assign(otherTargets.begin(), otherTargets.end());
  return report;
}

std::vector<WorkloadStatistics> TuningDatabase::statistics() const {
  std::vector<WorkloadStatistics> out;
  std::map<Key, size_t> index;
  for (const TuningRecord& record : records_) {
    auto [it, inserted] = index.try_emplace({record.workload, record.target}, out.size());
    if (inserted) {
      WorkloadStatistics& fresh = out.emplace_back();
      fresh.workload = record.workload;
      fresh.workloadHash = record.workloadHash;
      fresh.target = record.target;
      fresh.best = best(record.workload, record.target);
    }
    WorkloadStatistics& statistics = out[it->second];
    ++statistics.trials;
    if (statistics.task.empty()) statistics.task = record.task;
    const MeasuredTime* time = record.result();
    if (!time)
      ++statistics.errors;
    else if (record.origin == RecordOrigin::Default)
      statistics.defaultMedianMs = std::min(statistics.defaultMedianMs.value_or(time->medianMs), time->medianMs);
  }
  // A confirmed best is compared with the default as measured beside it (in the same turns),
  // not with the default's luckiest single sample.
  for (WorkloadStatistics& statistics : out) {
    if (!statistics.best || statistics.best->origin != RecordOrigin::Confirm) continue;
    std::set<std::string> defaultTraces;
    for (const TuningRecord& record : records_)
      if (record.origin == RecordOrigin::Default && record.workload == statistics.workload &&
          record.target == statistics.target)
        defaultTraces.insert(record.trace);
    std::vector<double> beside;
    for (const TuningRecord& record : records_)
      if ((record.origin == RecordOrigin::Confirm || record.origin == RecordOrigin::Control) && record.result() &&
          record.workload == statistics.workload && record.target == statistics.target &&
          defaultTraces.count(record.trace))
        beside.push_back(record.result()->medianMs);
    if (beside.empty()) continue;
    std::sort(beside.begin(), beside.end());
    statistics.defaultMedianMs = beside[(beside.size() - 1) / 2];
  }
  return out;
}

}  // namespace tessel::tuner
