// The task scheduler: on a synthetic model whose tasks improve at known rates it spends trials
// where the model's latency falls most (beating round-robin for the same trials), gives every
// task a first round, stops tasks that no longer improve and never picks an exhausted one.
#include <QtTest>

#include <cmath>
#include <random>

#include "tuner/scheduler/TaskScheduler.h"

using namespace tessel::tuner;

namespace {

// A task whose best time after t trials falls from `defaultMs` towards floor × defaultMs with
// time constant tau (in trials).
struct SyntheticTask {
  double weight, defaultMs, floor, tau;
  double bestAfter(int trials) const { return defaultMs * (floor + (1 - floor) * std::exp(-trials / tau)); }
};

const std::vector<SyntheticTask> kModel = {
    {1, 10.0, 0.30, 200},  // a big kernel with much to gain, slowly
    {4, 1.0, 0.50, 40},    // a small kernel run four times, quick gains
    {1, 0.5, 1.00, 10},    // nothing to gain at all
    {2, 3.0, 0.90, 50},    // a little to gain
    {1, 0.2, 0.20, 30},    // much to gain but negligible time
};
constexpr int kRoundTrials = 16;

double modelLatency(const std::vector<int>& trials) {
  double total = 0;
  for (size_t i = 0; i < kModel.size(); ++i) total += kModel[i].weight * kModel[i].bestAfter(trials[i]);
  return total;
}

std::vector<double> weights() {
  std::vector<double> out;
  for (auto& task : kModel) out.push_back(task.weight);
  return out;
}

// Runs `rounds` rounds chosen by the scheduler; returns the trials each task got.
std::vector<int> schedule(TaskScheduler& scheduler, int rounds, std::vector<int>* order = nullptr) {
  std::mt19937_64 rng(7);
  std::vector<int> trials(kModel.size(), 0);
  for (int round = 0; round < rounds; ++round) {
    auto task = scheduler.next(rng);
    if (!task) break;
    if (order) order->push_back(*task);
    trials[size_t(*task)] += kRoundTrials;
    scheduler.recordRound(*task, trials[size_t(*task)], kModel[size_t(*task)].bestAfter(trials[size_t(*task)]));
  }
  return trials;
}

}  // namespace

class TestScheduler : public QObject {
  Q_OBJECT
private slots:
  void everyTaskGetsAFirstRoundBiggestShareFirst() {
    TaskScheduler scheduler(weights());
    // The defaults are measured before the first round; the scheduler knows each task's share.
    for (int i = 0; i < int(kModel.size()); ++i) scheduler.recordBaseline(i, 1, kModel[size_t(i)].defaultMs);
    std::vector<int> order;
    schedule(scheduler, int(kModel.size()), &order);
    // Shares: 10, 4, 0.5, 6, 0.2 -> tasks 0, 3, 1, 2, 4 ... every one of them once.
    QCOMPARE(order, (std::vector<int>{0, 3, 1, 2, 4}));
  }

  void beatsRoundRobinForTheSameTrials() {
    const int rounds = 60;
    TaskScheduler scheduler(weights());
    std::vector<int> gradientTrials = schedule(scheduler, rounds);
    std::vector<int> roundRobin(kModel.size(), 0);
    for (int round = 0; round < rounds; ++round) roundRobin[size_t(round) % kModel.size()] += kRoundTrials;
    double viaGradient = modelLatency(gradientTrials), viaRoundRobin = modelLatency(roundRobin);
    qInfo("model latency after %d rounds: gradient %.3f ms, round-robin %.3f ms (default %.3f)", rounds, viaGradient,
          viaRoundRobin, modelLatency(std::vector<int>(kModel.size(), 0)));
    QVERIFY(viaGradient < viaRoundRobin * 0.97);
    // The task with nothing to gain got little; the big one got the most.
    QVERIFY(gradientTrials[2] < gradientTrials[0]);
    QVERIFY(gradientTrials[0] == *std::max_element(gradientTrials.begin(), gradientTrials.end()));
    QCOMPARE(scheduler.estimatedLatencyMs(), viaGradient);
  }

  void stopsTasksThatNoLongerImprove() {
    TaskSchedulerOptions options;
    options.earlyStoppingTrials = 64;
    TaskScheduler scheduler(weights(), options);
    schedule(scheduler, 200);
    QVERIFY(scheduler.progress(2).stopped);  // never improved
    QVERIFY(!scheduler.progress(2).exhausted);
    QVERIFY(scheduler.progress(2).trials <= 64 + kRoundTrials);
  }

  void stoppedTasksAreRevivedWithTwiceThePatience() {
    TaskSchedulerOptions options;
    options.earlyStoppingTrials = 32;
    TaskScheduler scheduler({1.0, 1.0}, options);
    scheduler.markExhausted(0);  // an exhausted task stays out for good
    std::mt19937_64 rng(1);
    int trials = 0;
    while (auto task = scheduler.next(rng)) {
      trials += kRoundTrials;
      scheduler.recordRound(*task, trials, 1.0);  // never improves after its first round
    }
    QVERIFY(scheduler.progress(1).stopped);
    int stoppedAt = scheduler.progress(1).trials;
    QCOMPARE(scheduler.reviveStopped(), std::vector<int>{1});
    QVERIFY(scheduler.progress(1).live());
    QVERIFY(!scheduler.progress(0).live());
    QCOMPARE(scheduler.progress(1).revivals, 1);
    while (auto task = scheduler.next(rng)) {
      trials += kRoundTrials;
      scheduler.recordRound(*task, trials, 1.0);
    }
    // Stopped again, after 64 more trials without improvement, not 32.
    QCOMPARE(scheduler.progress(1).trials - stoppedAt, 64);
    scheduler.markExhausted(1);
    QVERIFY(scheduler.reviveStopped().empty());
  }

  void exhaustedTasksAreNeverPickedAndTheEndIsSaid() {
    TaskScheduler scheduler({1.0, 1.0});
    scheduler.markExhausted(0);
    std::mt19937_64 rng(1);
    for (int i = 0; i < 50; ++i) {
      auto task = scheduler.next(rng);
      QVERIFY(task);
      QCOMPARE(*task, 1);
      scheduler.recordRound(1, (i + 1) * 16, 1.0 / (i + 1));
    }
    scheduler.markExhausted(1);
    QVERIFY(!scheduler.next(rng));
    QCOMPARE(scheduler.liveTasks(), 0);
  }

  void aTaskThatNeverWorkedStillGetsItsRounds() {
    // Every candidate failed so far: no best, no gradient, yet it is not forgotten.
    TaskScheduler scheduler({1.0});
    std::mt19937_64 rng(1);
    scheduler.recordRound(0, 16, std::nullopt);
    QCOMPARE(scheduler.gradient(0), 0.0);
    QCOMPARE(scheduler.next(rng).value_or(-1), 0);
    QCOMPARE(scheduler.estimatedLatencyMs(), 0.0);
  }
};

QTEST_GUILESS_MAIN(TestScheduler)
#include "test_scheduler.moc"
