// tessel-model-accuracy: how well the cost model ranks a tuning session's rounds, replayed
// offline from its records, under other model options. For each search round (after the
// third) a model trained on every trial measured before that round predicts the round's
// candidates; the figure is the mean pairwise ranking accuracy against their measured speed,
// as `tessel tune` reports it live. Use it to choose the cost model's options on real records
// instead of guessing; the session's own figures come from the options it ran with.
//
// usage: tessel-model-accuracy MODEL.onnx RECORDS.jsonl [--objective rank:pairwise|reg:squarederror]
//                              [--depth D] [--rounds R] [--eta E] [--every N] [--threads T]
//                              [--per-task] [--growth F] [--no-decisions] [--dump FILE.csv]
// --per-task trains each round's model on that round's task alone (AutoTVM's way) instead of
// on every task (Ansor's); --growth F retrains only when the trials grew by that fraction, as the
// session's training policy does (0, the default: a fresh model for every judged round);
// --no-decisions leaves the point's decision features out of the model's input; --dump writes
// every trial's features and speed as CSV for analysis.
#include <atomic>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <thread>

#include "app/cli/CommandLine.h"
#include "compiler/driver/Driver.h"
#include "compiler/driver/ScheduleTask.h"
#include "compiler/lower/Lower.h"
#include "compiler/schedule/TraceText.h"
#include "core/ir/StructuralEqual.h"
#include "runtime/ThreadPool.h"
#include "tuner/features/LoopFeatures.h"
#include "tuner/model/CostModel.h"
#include "tuner/model/RankingQuality.h"
#include "tuner/records/RecordFile.h"
#include "tuner/session/Session.h"
#include "tuner/session/TuningTask.h"
#include "tuner/space/SearchSpace.h"

using namespace tessel;

namespace {

struct Trial {
  std::string workload;
  int round = 0;
  tuner::RecordOrigin origin;
  std::optional<std::vector<float>> features;
  uint64_t program = 0;  // the lowered code's structural hash
  double throughput = 0;
};

int fail(const std::string& message) {
  std::fprintf(stderr, "tessel-model-accuracy: %s\n", message.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<cli::FlagSpec> flags = {
      {"objective", "rank:pairwise or reg:squarederror", true, "rank:pairwise"},
      {"depth", "maximum depth of each tree", true, "6"},
      {"rounds", "boosting rounds", true, "100"},
      {"eta", "learning rate", true, "0.2"},
      {"every", "evaluate every Nth round (training per round is the cost)", true, "1"},
      {"threads", "the threads the records were tuned with (the features' core count)", true, "2"},
      {"per-task", "train on the judged round's task only", false, ""},
      {"growth", "retrain when the trials grew by this fraction (0: before every judged round)", true, "0"},
      {"no-decisions", "leave the point's decisions out of the features", false, ""},
      {"dump", "write every trial's task, round, origin, speed and features to this CSV file", true, ""},
  };
  cli::CommandLine line;
  if (auto error = cli::CommandLine::parse(std::vector<std::string>(argv + 1, argv + argc), flags, &line))
    return fail(*error);
  if (line.positional().size() != 2) return fail("usage: tessel-model-accuracy MODEL.onnx RECORDS.jsonl [options]");
  const std::string modelPath = line.positional()[0], recordsPath = line.positional()[1];
  tuner::CostModelOptions options;
  options.objective = line.get("objective");
  options.maxDepth = std::stoi(line.get("depth"));
  options.rounds = std::stoi(line.get("rounds"));
  options.eta = std::stod(line.get("eta"));
  const int every = std::max(1, std::stoi(line.get("every")));
  const int threads = std::stoi(line.get("threads"));
  const bool perTask = line.has("per-task");
  const double growth = std::stod(line.get("growth"));
  const bool withDecisions = !line.has("no-decisions");
  const std::string dumpPath = line.get("dump");

  // The model's tasks, as `tessel tune` groups them.
  auto graph = driver::loadModel(modelPath);
  if (!graph) return fail(graph.error().toString());
  driver::CompileOptions compile;
  auto model = driver::compileGraph(*graph, compile);
  if (!model) return fail(model.error().toString());
  auto scheduleTasks = driver::extractTasks(*model, compile.target);
  if (!scheduleTasks) return fail(scheduleTasks.error().toString());
  std::map<std::string, tuner::TuningTask> tasks;
  std::map<std::string, tuner::SearchSpace> spaces;  // to read each record's point
  for (auto& task : tuner::groupTasksByWorkload(*scheduleTasks)) {
    spaces.emplace(task.workloadKey, tuner::SearchSpace::generate(task.workload, task.defaultTrace, compile.target));
    tasks.emplace(task.workloadKey, task);
  }

  auto contents = tuner::readRecordFile(recordsPath);
  if (!contents) return fail(contents.error().toString());
  LoopFeatureTarget featureTarget;
  featureTarget.cores = threads;
  featureTarget.vectorBytes = std::max(16, compile.target.vectorBits / 8);
  featureTarget.vectorRegisters = compile.target.hasFeature("avx512f") ? 32 : 16;

  // Features of every trial the model learns from or is judged on (not the re-measurements).
  std::vector<Trial> trials;
  std::vector<const tuner::TuningRecord*> sources;
  for (const tuner::TuningRecord& record : contents->records) {
    if (record.origin == tuner::RecordOrigin::Control || record.origin == tuner::RecordOrigin::Confirm) continue;
    if (!tasks.count(record.workload)) continue;
    const tuner::MeasuredTime* time = record.result();
    Trial trial;
    trial.workload = record.workload;
    trial.round = record.round;
    trial.origin = record.origin;
    trial.throughput = time && time->medianMs > 0 ? 1.0 / time->medianMs : 0.0;
    trials.push_back(std::move(trial));
    sources.push_back(&record);
  }
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next++) < trials.size();) {
      const tuner::TuningTask& task = tasks.at(trials[i].workload);
      auto trace = parseTraceText(sources[i]->trace);
      if (!trace) continue;
      auto schedule = Schedule::replay(task.workload.outputs, *trace);
      if (!schedule) continue;
      auto lowered = lower(*schedule, task.workload.args(), task.name);
      if (!lowered) continue;
      std::vector<float> features = extractLoopFeatures(lowered->func, featureTarget);
      if (withDecisions) {
        std::optional<tuner::Candidate> point;
        if (!sources[i]->point.empty())
          point = tuner::session::parsePoint(sources[i]->point, spaces.at(trials[i].workload));
        std::vector<float> decisions = tuner::decisionFeatures(point ? &*point : nullptr);
        features.insert(features.end(), decisions.begin(), decisions.end());
      }
      trials[i].features = std::move(features);
      trials[i].program = structuralHash(lowered->func);
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < std::max(1u, std::thread::hardware_concurrency()); ++t) pool.emplace_back(work);
  work();
  for (auto& thread : pool) thread.join();

  if (!dumpPath.empty()) {
    FILE* dump = std::fopen(dumpPath.c_str(), "w");
    if (!dump) return fail("cannot write " + dumpPath);
    std::fprintf(dump, "task,round,origin,throughput");
    for (const std::string& name : loopFeatureNames()) std::fprintf(dump, ",%s", name.c_str());
    if (withDecisions)
      for (const std::string& name : tuner::decisionFeatureNames()) std::fprintf(dump, ",%s", name.c_str());
    std::fprintf(dump, "\n");
    std::map<std::string, int> taskIndex;
    for (const Trial& trial : trials) {
      if (!trial.features) continue;
      int index = taskIndex.emplace(trial.workload, int(taskIndex.size())).first->second;
      std::fprintf(dump, "%d,%d,%s,%g", index, trial.round, std::string(tuner::originName(trial.origin)).c_str(), trial.throughput);
      for (float value : *trial.features) std::fprintf(dump, ",%g", value);
      std::fprintf(dump, "\n");
    }
    std::fclose(dump);
  }

  // Rounds in order; each judged by a model trained on everything before it.
  std::map<int, std::vector<size_t>> byRound;
  for (size_t i = 0; i < trials.size(); ++i)
    if (trials[i].origin == tuner::RecordOrigin::Search && trials[i].features) byRound[trials[i].round].push_back(i);
  std::vector<double> accuracies, recalls;
  int judged = 0;
  tuner::CostModel costModel(options);
  size_t trainedOn = 0;
  for (auto& [round, members] : byRound) {
    if (members.size() < 2 || ++judged <= 3 || judged % every != 0) continue;
    std::vector<tuner::CostModelSample> samples;
    for (const Trial& trial : trials)
      if (trial.round < round && trial.features &&
          (!perTask || trial.workload == trials[members.front()].workload))
        samples.push_back({trial.workload, *trial.features, trial.throughput});
    // The session's policy (CostModel::shouldRetrain, less its time cap): a stale model until
    // the samples grew enough.
    bool due = growth <= 0 || perTask || !costModel.isTrained() ||
               double(samples.size()) - double(trainedOn) >= std::max(32.0, growth * double(trainedOn));
    if (due) {
      if (!costModel.train(samples)) continue;
      trainedOn = samples.size();
    }
    std::vector<std::vector<float>> rows;
    std::vector<double> measured;
    for (size_t i : members) {
      rows.push_back(*trials[i].features);
      measured.push_back(trials[i].throughput);
    }
    auto predicted = costModel.predict(rows);
    if (!predicted) continue;
    double accuracy = tuner::pairwiseAccuracy(*predicted, measured);
    double recall = tuner::topKRecall(*predicted, measured, std::max(1, int(rows.size()) / 4));
    if (std::isfinite(accuracy)) accuracies.push_back(accuracy);
    if (std::isfinite(recall)) recalls.push_back(recall);
  }
  auto mean = [](const std::vector<double>& values) {
    double sum = 0;
    for (double v : values) sum += v;
    return values.empty() ? NAN : sum / double(values.size());
  };
  std::printf("objective=%s depth=%d rounds=%d eta=%g growth=%g%s%s\n", options.objective.c_str(), options.maxDepth,
              options.rounds, options.eta, growth, perTask ? " per-task" : "", withDecisions ? "" : " no-decisions");
  // How many trials measured code already measured (different points, the same program), and
  // how many share their features with a different program (the model cannot tell them apart).
  std::set<std::pair<std::string, uint64_t>> programs;
  std::map<std::pair<std::string, std::vector<float>>, std::set<uint64_t>> programsByFeatures;
  size_t lowered = 0;
  for (const Trial& trial : trials) {
    if (!trial.features) continue;
    ++lowered;
    programs.insert({trial.workload, trial.program});
    programsByFeatures[{trial.workload, *trial.features}].insert(trial.program);
  }
  size_t ambiguous = 0;
  for (const auto& [key, set] : programsByFeatures) ambiguous += set.size() > 1 ? set.size() : 0;
  std::printf("trials=%zu rounds_judged=%zu\n", trials.size(), accuracies.size());
  std::printf("lowered=%zu distinct_programs=%zu distinct_feature_vectors=%zu programs_sharing_features=%zu\n", lowered,
              programs.size(), programsByFeatures.size(), ambiguous);
  std::printf("mean_pairwise_accuracy=%.3f\nmean_top_quarter_recall=%.3f\n", mean(accuracies), mean(recalls));
  return accuracies.empty() ? 1 : 0;
}
