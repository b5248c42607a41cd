// Taking up a records file again (--resume): its trials, measured points, samples and the saved
// cost model come back, so a resumed session goes on where the last one stopped.
#include "tuner/session/Session.h"

#include <filesystem>

#include "compiler/schedule/TraceText.h"

namespace tessel::tuner::session {

std::optional<Candidate> parsePoint(const std::string& key, const SearchSpace& space) {
  size_t colon = key.find(':');
  if (colon == std::string::npos) return std::nullopt;
  Candidate candidate;
  try {
    candidate.sketch = std::stoi(key.substr(0, colon));
    std::string rest = key.substr(colon + 1);
    size_t start = 0;
    while (start < rest.size()) {
      size_t comma = rest.find(',', start);
      if (comma == std::string::npos) comma = rest.size();
      candidate.choices.push_back(std::stoi(rest.substr(start, comma - start)));
      start = comma + 1;
    }
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (candidate.sketch < 0 || size_t(candidate.sketch) >= space.sketches().size()) return std::nullopt;
  const Sketch& sketch = space.sketches()[size_t(candidate.sketch)];
  if (candidate.choices.size() != sketch.decisions.size()) return std::nullopt;
  for (size_t d = 0; d < candidate.choices.size(); ++d)
    if (candidate.choices[d] < 0 || size_t(candidate.choices[d]) >= sketch.decisions[d].choices.size()) return std::nullopt;
  if (SearchSpace::pointKey(candidate) != key) return std::nullopt;
  return candidate;
}

Status Session::resumeFrom(const RecordFileContents& contents) {
  int shown = 0;
  for (const RecordProblem& problem : contents.problems)
    if (shown++ < 10) warn(problem.describe() + " (skipped)", options_.recordsPath, "the other records are used");
  if (contents.problems.size() > 10)
    warn(std::to_string(contents.problems.size() - 10) + " more lines skipped", options_.recordsPath, "");
  std::map<std::string, size_t> byKey;
  for (size_t i = 0; i < tasks_.size(); ++i) byKey.emplace(tasks_[i].workloadKey, i);
  int matching = 0;
  for (const TuningRecord& record : contents.records)
    if (record.target == targetString_ && byKey.count(record.workload)) ++matching;
  if (matching == 0) return {};
  if (!options_.resume)
    return Diagnostic{"the records file already holds " + std::to_string(matching) +
                          " trials of these kernels on this machine",
                      options_.recordsPath, 0, 0,
                      "add --resume to continue from them, or give a new --records file (nothing was changed)"};
  for (const TuningRecord& record : contents.records) {
    if (record.target != targetString_) continue;
    auto it = byKey.find(record.workload);
    if (it != byKey.end()) absorbRecord(it->second, record);
  }
  resumedTrials_ = matching;
  // The saved model, when it fits; otherwise it is trained again from the records.
  std::error_code ignored;
  if (std::filesystem::exists(costModelPath_, ignored)) {
    auto loaded = CostModel::load(costModelPath_, int(loopFeatureCount() + decisionFeatureNames().size()),
                                  options_.costModel);
    if (loaded)
      model_ = std::move(*loaded);
    else
      warn("the saved cost model is not used: " + loaded.error().message, costModelPath_,
           "it is trained again from the records");
  }
  if (!model_.isTrained()) trainIfDue(true);
  return {};
}

void Session::absorbRecord(size_t task, const TuningRecord& record) {
  TaskState& state = states_[task];
  ++state.trials;
  ++state.resumedTrials;
  std::optional<Candidate> candidate;
  if (!record.point.empty()) {
    state.seen.insert(record.point);
    candidate = parsePoint(record.point, state.space);
  }
  const MeasuredTime* time = record.result();
  if (!time) ++state.errors;
  double throughput = time && time->medianMs > 0 ? 1.0 / time->medianMs : 0;
  if (candidate && record.origin != RecordOrigin::Control && record.origin != RecordOrigin::Confirm) {
    state.measured.push_back({*candidate, throughput});
    noteProgram(task, *candidate, throughput);
  }
  if (record.origin != RecordOrigin::Control && record.origin != RecordOrigin::Confirm) {
    std::optional<std::vector<float>> features;
    if (candidate) {
      features = featuresOf(task, *candidate);
    } else if (auto trace = parseTraceText(record.trace)) {
      features = featuresOf(task, *trace);
    }
    if (features) samples_.push_back({tasks_[task].workloadKey, *features, throughput});
  }
  if (time) note(task, {record.trace, record.point, time->medianMs}, record.origin);
}

// Keeps the task's best, default time and list of valid measurements up to date.
void Session::note(size_t task, const Measured& measured, RecordOrigin origin) {
  TaskState& state = states_[task];
  state.valid.push_back(measured);
  bool isDefault = origin == RecordOrigin::Default || measured.trace == state.defaultTraceText;
  // The default's time is its best measurement under any origin, as a candidate's is: the
  // first one, taken while the worker is cold, is often the slowest.
  if (isDefault) state.defaultMs = std::min(state.defaultMs.value_or(measured.ms), measured.ms);
  // From scratch, the default is the yardstick, never a result.
  if (isDefault && !options_.space.includeDefaultSketch) return;
  if (!state.best || measured.ms < state.best->ms) state.best = measured;
}

}  // namespace tessel::tuner::session
