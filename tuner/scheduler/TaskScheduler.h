// Which task of a model the tuner spends its next round on: the one whose further tuning is
// expected to shorten the model's latency most (Ansor's gradient task scheduler), after every
// task has had one round, with a little randomness and early stopping of tasks that no longer
// improve.
#pragma once

#include <optional>
#include <random>
#include <vector>

namespace tessel::tuner {

struct TaskSchedulerOptions {
  /// Weight of the recent improvement rate against the optimistic 1/t extrapolation (Ansor's
  /// alpha): the gradient is alpha × (recent slope) + (1 - alpha) × (-best / trials).
  double alpha = 0.2;
  /// Rounds of a task the recent slope looks back over (Ansor's backward window).
  int backwardRounds = 3;
  /// Chance of picking a random live task instead of the steepest (exploration: a gradient
  /// estimated from a few noisy rounds can be wrong for long).
  double epsilon = 0.05;
  /// A task whose best has not improved by `minimumImprovement` over its last this many
  /// trials is stopped; 0: never stop early.
  int earlyStoppingTrials = 160;
  double minimumImprovement = 0.01;
};

/// The scheduler's view of one task after some rounds.
struct TaskProgress {
  double weight = 1;   ///< How often the task's kernel runs per model run.
  int trials = 0;      ///< Candidates measured for it (failures included).
  int rounds = 0;
  std::optional<double> bestMs;  ///< Its fastest valid time so far.
  bool exhausted = false;        ///< Its space has no new point, or it cannot be measured.
  bool stopped = false;          ///< Early stopping: no improvement for a while.
  int trialsAtLastImprovement = 0;
  /// Trials without improvement that stop this task: the scheduler's `earlyStoppingTrials`,
  /// doubled each time the task is revived.
  int patience = 0;
  int revivals = 0;  ///< Times it was stopped and searched again.
  std::vector<std::pair<int, double>> history;  ///< (trials, best ms) after each round.

  bool live() const { return !exhausted && !stopped; }
};

/// Why next() chose its task, for people watching the session.
struct SchedulerChoice {
  /// "warm-up" (its first round, biggest share of the model first), "gradient" (the steepest
  /// expected fall of the model's latency) or "random" (exploration, epsilon).
  const char* reason = "";
  /// The gradient at the choice: expected change of the model's latency per trial of the task,
  /// in ms (negative: faster); 0 before the task's first round.
  double gradient = 0;
};

class TaskScheduler {
public:
  /// `weights[i]`: how many times task i's kernel runs per model run.
  explicit TaskScheduler(std::vector<double> weights, TaskSchedulerOptions options = {});

  /// The task's default schedule was measured (before any round): its time is the task's first
  /// best and, weighted, its share of the model for the warm-up order.
  void recordBaseline(int task, int trialsNow, std::optional<double> defaultMs);
  /// What a round of `task` left: its trials so far and best time (nullopt while no candidate
  /// of it has worked). Updates early stopping.
  void recordRound(int task, int trialsNow, std::optional<double> bestMs);
  /// The task has nothing more to measure (space exhausted, or its kernel cannot be built).
  void markExhausted(int task);
  /// Makes every early-stopped task live again with twice its patience, for a session whose
  /// budget outlasts the search: a plateau of a few hundred trials is often left later (the
  /// cost model, trained on the other tasks meanwhile, ranks better), and an unspent budget
  /// helps no one. Returns the tasks revived (none when every task is exhausted).
  std::vector<int> reviveStopped();

  /// The task for the next round, or nullopt when every task is exhausted or stopped. Tasks
  /// that have had no round yet come first, in order of their share of the model's time
  /// (weight × best, as known from the defaults measured first).
  std::optional<int> next(std::mt19937_64& rng);
  /// Why the last next() chose what it did.
  const SchedulerChoice& lastChoice() const { return lastChoice_; }

  /// d(model latency)/d(trials) estimated for `task` (negative: more trials are expected to
  /// help); 0 for a task without rounds or a best.
  double gradient(int task) const;

  /// Σ weight × best over the tasks with a best: the model's latency as the kernels' times
  /// predict it (what the progress table shows; the end summary measures the real one).
  double estimatedLatencyMs() const;

  const TaskProgress& progress(int task) const { return tasks_[size_t(task)]; }
  int taskCount() const { return int(tasks_.size()); }
  /// Tasks neither exhausted nor stopped.
  int liveTasks() const;

private:
  std::vector<TaskProgress> tasks_;
  TaskSchedulerOptions options_;
  SchedulerChoice lastChoice_;
};

}  // namespace tessel::tuner
