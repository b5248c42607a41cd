// The gradient task scheduler (Zheng et al., "Ansor", OSDI 2020, section 6), without the
// similar-task term: Tessel's tasks of one model are keyed by exact workload, and two tasks
// of similar shape rarely share what makes them fast on a CPU.
#include "tuner/scheduler/TaskScheduler.h"

#include <algorithm>
#include <cmath>

namespace tessel::tuner {

TaskScheduler::TaskScheduler(std::vector<double> weights, TaskSchedulerOptions options) : options_(options) {
  tasks_.resize(weights.size());
  for (size_t i = 0; i < weights.size(); ++i) {
    tasks_[i].weight = weights[i];
    tasks_[i].patience = options_.earlyStoppingTrials;
  }
}

void TaskScheduler::recordBaseline(int task, int trialsNow, std::optional<double> defaultMs) {
  TaskProgress& progress = tasks_[size_t(task)];
  progress.trials = trialsNow;
  progress.trialsAtLastImprovement = trialsNow;
  if (defaultMs) {
    progress.bestMs = defaultMs;
    progress.history.emplace_back(trialsNow, *defaultMs);
  }
}

void TaskScheduler::recordRound(int task, int trialsNow, std::optional<double> bestMs) {
  TaskProgress& progress = tasks_[size_t(task)];
  ++progress.rounds;
  bool improved = bestMs && (!progress.bestMs || *bestMs < *progress.bestMs * (1 - options_.minimumImprovement));
  if (improved || progress.rounds == 1) progress.trialsAtLastImprovement = trialsNow;
  if (bestMs) progress.bestMs = progress.bestMs ? std::min(*progress.bestMs, *bestMs) : *bestMs;
  progress.trials = trialsNow;
  if (progress.bestMs) progress.history.emplace_back(trialsNow, *progress.bestMs);
  if (progress.patience > 0 && trialsNow - progress.trialsAtLastImprovement >= progress.patience)
    progress.stopped = true;
}

void TaskScheduler::markExhausted(int task) { tasks_[size_t(task)].exhausted = true; }

std::vector<int> TaskScheduler::reviveStopped() {
  std::vector<int> revived;
  for (int i = 0; i < taskCount(); ++i) {
    TaskProgress& progress = tasks_[size_t(i)];
    if (!progress.stopped || progress.exhausted) continue;
    progress.stopped = false;
    progress.patience *= 2;
    progress.trialsAtLastImprovement = progress.trials;
    ++progress.revivals;
    revived.push_back(i);
  }
  return revived;
}

double TaskScheduler::gradient(int task) const {
  const TaskProgress& progress = tasks_[size_t(task)];
  if (!progress.bestMs || progress.trials <= 0 || progress.history.empty()) return 0;
  double best = *progress.bestMs;
  // The recent slope: how much the best fell per trial over the last few rounds.
  double slope = 0;
  size_t back = std::min(progress.history.size() - 1, size_t(std::max(1, options_.backwardRounds)));
  if (back > 0) {
    auto [oldTrials, oldBest] = progress.history[progress.history.size() - 1 - back];
    int span = progress.trials - oldTrials;
    if (span > 0) slope = (best - oldBest) / span;
  }
  // The optimistic extrapolation: were the best to keep falling like 1/t, one more trial
  // would take best/t off it.
  double optimistic = -best / progress.trials;
  return progress.weight * (options_.alpha * slope + (1 - options_.alpha) * optimistic);
}

std::optional<int> TaskScheduler::next(std::mt19937_64& rng) {
  std::vector<int> live;
  for (int i = 0; i < taskCount(); ++i)
    if (tasks_[size_t(i)].live()) live.push_back(i);
  if (live.empty()) return std::nullopt;

  // Warm-up: every task gets a round before gradients (which need one) decide; the biggest
  // share of the model's time first, so a short budget goes where it matters.
  std::optional<int> warmup;
  auto share = [&](int i) { return tasks_[size_t(i)].weight * tasks_[size_t(i)].bestMs.value_or(0); };
  for (int i : live)
    if (tasks_[size_t(i)].rounds == 0 && (!warmup || share(i) > share(*warmup))) warmup = i;
  if (warmup) {
    lastChoice_ = {"warm-up", 0};
    return warmup;
  }

  if (std::uniform_real_distribution<double>(0, 1)(rng) < options_.epsilon) {
    int chosen = live[std::uniform_int_distribution<size_t>(0, live.size() - 1)(rng)];
    lastChoice_ = {"random", gradient(chosen)};
    return chosen;
  }
  int steepest = live.front();
  for (int i : live)
    if (gradient(i) < gradient(steepest)) steepest = i;
  lastChoice_ = {"gradient", gradient(steepest)};
  return steepest;
}

double TaskScheduler::estimatedLatencyMs() const {
  double total = 0;
  for (const TaskProgress& progress : tasks_)
    if (progress.bestMs) total += progress.weight * *progress.bestMs;
  return total;
}

int TaskScheduler::liveTasks() const {
  return int(std::count_if(tasks_.begin(), tasks_.end(), [](const TaskProgress& p) { return p.live(); }));
}

}  // namespace tessel::tuner
