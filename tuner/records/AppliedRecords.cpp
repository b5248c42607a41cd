// Reading a record file into tuned schedules for one target, and reporting what a compile made
// of them.
#include "tuner/records/AppliedRecords.h"

#include <map>
#include <set>
#include <sstream>

#include "compiler/driver/WorkloadKey.h"
#include "compiler/lower/Lower.h"
#include "compiler/schedule/TraceText.h"

namespace tessel::tuner {

namespace {

// A file with thousands of bad lines must not bury the rest of the report.
constexpr size_t kProblemsShown = 5;
// Target strings are long, and two of one machine differ in a word or two: those are shown.
constexpr size_t kDifferencesShown = 4;

std::string plural(int count, const std::string& singular, const std::string& pluralForm) {
  return std::to_string(count) + " " + (count == 1 ? singular : pluralForm);
}

// A target string's words by option name ("-cores"; the kind, first, as "kind").
std::map<std::string, std::string> targetOptions(const std::string& target) {
  std::map<std::string, std::string> options;
  std::istringstream words(target);
  std::string word;
  for (bool first = true; words >> word; first = false) options[first ? "kind" : word.substr(0, word.find('='))] = word;
  return options;
}

std::set<std::string> featuresOf(const std::string& mattr) {
  std::set<std::string> features;
  std::istringstream list(mattr.substr(mattr.find('=') + 1));
  for (std::string feature; std::getline(list, feature, ',');) features.insert(feature);
  return features;
}

std::string joined(const std::vector<std::string>& words, const std::string& separator) {
  std::string text;
  for (const std::string& word : words) text += (text.empty() ? "" : separator) + word;
  return text;
}

// How `other` differs from `mine`, option by option ("-cores=4 instead of -cores=2"): two
// targets of one machine differ in a word or two of two long lines.
std::string targetDifference(const std::string& other, const std::string& mine) {
  std::map<std::string, std::string> theirs = targetOptions(other), ours = targetOptions(mine);
  std::vector<std::string> differences;
  for (const auto& [option, word] : theirs) {
    auto same = ours.find(option);
    if (same == ours.end()) {
      differences.push_back(word + " where this target has none");
    } else if (option == "-mattr" && same->second != word) {
      std::set<std::string> theirFeatures = featuresOf(word), ourFeatures = featuresOf(same->second);
      std::vector<std::string> extra, lacking;
      for (const std::string& feature : theirFeatures)
        if (!ourFeatures.count(feature)) extra.push_back(feature);
      for (const std::string& feature : ourFeatures)
        if (!theirFeatures.count(feature)) lacking.push_back(feature);
      if (!extra.empty()) differences.push_back("features " + joined(extra, ",") + " this target lacks");
      if (!lacking.empty()) differences.push_back("without " + joined(lacking, ","));
    } else if (same->second != word) {
      differences.push_back(word + " instead of " + same->second);
    }
  }
  for (const auto& [option, word] : ours)
    if (!theirs.count(option)) differences.push_back("no " + option);
  if (differences.size() > kDifferencesShown) {
    differences.resize(kDifferencesShown);
    differences.push_back("...");
  }
  return joined(differences, ", ");
}

// Kernels made from an operation of the graph: the ones a record can schedule.
std::set<std::string> schedulableKeys(const driver::CompiledModel& model, int* kernels, int* tuned) {
  std::set<std::string> keys;
  for (const driver::CompiledKernel& kernel : model.kernels) {
    if (!kernel.node) continue;
    ++*kernels;
    if (kernel.tuned) ++*tuned;
    if (!kernel.workloadKey.empty()) keys.insert(kernel.workloadKey);
  }
  return keys;
}

}  // namespace

Expected<AppliedRecords> loadTuningRecords(const std::string& path, const Target& target) {
  auto contents = readRecordFile(path);
  if (!contents) {
    Diagnostic error = contents.error();
    error.message = "cannot apply the tuning records: " + error.message;
    if (error.hint.empty() || error.hint == "check the path")
      error.hint = "check the path: tuning records are the .jsonl file a tuning session writes";
    return error;
  }
  AppliedRecords applied;
  applied.path = path;
  applied.target = target.toString();
  applied.recordsRead = int(contents->records.size());
  applied.problems = std::move(contents->problems);
  auto database = std::make_shared<TuningDatabase>(std::move(contents->records));
  // The database decides which record is best; this only hands its choice to the compiler.
  auto schedules = std::make_shared<driver::TunedSchedules>();
  for (const TuningRecord* best : database->bestForTarget(applied.target))
    schedules->traces[best->workload] = best->trace;
  LookupReport others = database->lookup({}, applied.target);
  applied.otherTargetRecords = others.otherTargetRecords;
  applied.otherTargets = std::move(others.otherTargets);
  applied.schedules = std::move(schedules);
  applied.database = std::move(database);
  return applied;
}

void noteCompiledModel(AppliedRecords& applied, const driver::CompiledModel& model) {
  TuningOutcome outcome;
  std::set<std::string> keys = schedulableKeys(model, &outcome.kernels, &outcome.tunedKernels);
  outcome.unknownWorkloadRecords = applied.database->lookup(keys, applied.target).unknownWorkloadRecords;
  outcome.notes = model.tuningNotes;
  applied.outcome = std::move(outcome);
}

std::optional<Schedule> tunedOperatorSchedule(AppliedRecords& applied, const Workload& workload) {
  auto target = Target::parse(applied.target);
  TESSEL_ICHECK(target.ok()) << "the target string of applied records does not parse: " << applied.target;
  std::string key = driver::operatorWorkloadKey(workload, *target).text;
  TuningOutcome outcome;
  outcome.kernels = 1;
  outcome.unknownWorkloadRecords = applied.database->lookup({key}, applied.target).unknownWorkloadRecords;
  std::optional<Schedule> tuned;
  auto found = applied.schedules->traces.find(key);
  if (found != applied.schedules->traces.end()) {
    // The same checks the compiler makes of a model's kernel (ModelPlan): a record from an
    // older compiler may no longer replay or lower, and then the default is used.
    auto trace = parseTraceText(found->second);
    Expected<Schedule> schedule =
        trace ? Schedule::replay(workload.outputs, *trace) : Expected<Schedule>(trace.error());
    Status lowers = schedule ? Status::success() : Status(schedule.error());
    if (schedule) {
      auto lowered = lower(*schedule, workload.args(), workload.name, *target);
      if (!lowered) lowers = lowered.error();
    }
    if (lowers) {
      tuned = std::move(*schedule);
      outcome.tunedKernels = 1;
    } else {
      outcome.notes.push_back(workload.name + ": its tuned schedule was not used, the default was: " +
                              lowers.error().toString());
    }
  }
  applied.outcome = std::move(outcome);
  return tuned;
}

std::vector<std::string> describeAppliedRecords(const AppliedRecords& applied) {
  std::string prefix = "tuning records " + applied.path + ": ";
  std::vector<std::string> lines;
  std::string read = plural(applied.recordsRead, "record", "records") + " read, best schedules of " +
                     plural(applied.workloadCount(), "workload", "workloads") + " for this target";
  if (applied.outcome)
    lines.push_back(prefix + std::to_string(applied.outcome->tunedKernels) + " of " +
                    plural(applied.outcome->kernels, "kernel", "kernels") + " tuned (" + read + ")");
  else
    lines.push_back(prefix + read);
  if (applied.otherTargetRecords > 0) {
    size_t targets = applied.otherTargets.size();
    std::string difference = targetDifference(applied.otherTargets.front(), applied.target);
    lines.push_back(prefix + plural(applied.otherTargetRecords, "record", "records") + " for " +
                    (targets == 1 ? "another target" : std::to_string(targets) + " other targets") + " ignored (" +
                    (targets == 1 ? "it has " : "the first has ") + difference + ")");
  }
  if (applied.outcome && applied.outcome->unknownWorkloadRecords > 0)
    lines.push_back(prefix + plural(applied.outcome->unknownWorkloadRecords, "record", "records") +
                    " for workloads not compiled here");
  for (size_t i = 0; i < applied.problems.size() && i < kProblemsShown; ++i)
    lines.push_back(prefix + "skipped " + applied.problems[i].describe());
  if (applied.problems.size() > kProblemsShown)
    lines.push_back(prefix + "skipped " + std::to_string(applied.problems.size() - kProblemsShown) +
                    " more unreadable lines");
  if (applied.outcome)
    for (const std::string& note : applied.outcome->notes) lines.push_back(prefix + note);
  return lines;
}

}  // namespace tessel::tuner
