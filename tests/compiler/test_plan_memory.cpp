// The static memory planner: storage reuse along chains and branches, and never two live
// tensors in one storage.
#include <QtTest>

#include <random>

#include "compiler/graph/PlanMemory.h"

using namespace tessel::graph;

namespace {
int storageCount(const MemoryAssignment& a) { return int(a.storageBytes.size()); }

// Checks every invariant a plan must keep, returning the first violation or an empty string.
QString violation(const std::vector<TensorLifetime>& tensors, const MemoryAssignment& plan) {
  if (plan.storageOf.size() != tensors.size()) return "one storage index per tensor";
  int64_t naive = 0, planned = 0;
  for (int64_t bytes : plan.storageBytes) planned += bytes;
  if (planned != plan.plannedBytes) return "plannedBytes is not the sum of the storages";
  for (size_t i = 0; i < tensors.size(); ++i) {
    int s = plan.storageOf[i];
    if (tensors[i].external) {
      if (s != -1) return QString("external tensor %1 got storage %2").arg(i).arg(s);
      continue;
    }
    naive += tensors[i].bytes;
    if (s < 0 || s >= storageCount(plan)) return QString("tensor %1 has no storage").arg(i);
    if (plan.storageBytes[size_t(s)] < tensors[i].bytes) return QString("tensor %1 does not fit").arg(i);
    for (size_t j = 0; j < i; ++j) {
      if (tensors[j].external || plan.storageOf[j] != s) continue;
      auto end = [](const TensorLifetime& t) { return std::max(t.producedAt, t.lastUsedAt); };
      bool overlap = tensors[i].producedAt <= end(tensors[j]) && tensors[j].producedAt <= end(tensors[i]);
      if (overlap) return QString("tensors %1 and %2 are live together in storage %3").arg(j).arg(i).arg(s);
    }
  }
  if (naive != plan.naiveBytes) return "naiveBytes is not the sum of the planned tensors";
  if (plan.plannedBytes > plan.naiveBytes) return "planning used more memory than no planning";
  return {};
}
}  // namespace

class TestPlanMemory : public QObject {
  Q_OBJECT
private slots:
  void aChainAlternatesBetweenTwoStorages() {
    // t_i is written by kernel i and read by kernel i + 1.
    std::vector<TensorLifetime> chain;
    for (int i = 0; i < 6; ++i) chain.push_back({1024, i, i + 1, false});
    MemoryAssignment plan = planMemory(chain);
    QCOMPARE(violation(chain, plan), QString());
    QCOMPARE(storageCount(plan), 2);
    QCOMPARE(plan.plannedBytes, int64_t(2048));
    QCOMPARE(plan.naiveBytes, int64_t(6 * 1024));
    QVERIFY(plan.storageOf[0] != plan.storageOf[1]);
    QCOMPARE(plan.storageOf[0], plan.storageOf[2]);
  }

  void aKernelNeverWritesIntoTheStorageItReads() {
    // t1 is produced by the step that reads t0 last: they must not share memory.
    std::vector<TensorLifetime> tensors{{256, 0, 1, false}, {256, 1, 2, false}};
    MemoryAssignment plan = planMemory(tensors);
    QVERIFY(plan.storageOf[0] != plan.storageOf[1]);
  }

  void branchesKeepTheSharedInputAlive() {
    // a feeds b (step 1) and c (step 2); b and c feed d (step 3); d feeds e (step 4).
    std::vector<TensorLifetime> tensors{
        {100, 0, 2, false},  // a
        {100, 1, 3, false},  // b
        {100, 2, 3, false},  // c
        {100, 3, 4, false},  // d
        {100, 4, 5, false},  // e
    };
    MemoryAssignment plan = planMemory(tensors);
    QCOMPARE(violation(tensors, plan), QString());
    QCOMPARE(storageCount(plan), 3);  // a, b and c are live together at step 2
    QCOMPARE(plan.storageOf[3], plan.storageOf[0]);  // a is dead after step 2
    QVERIFY(plan.storageOf[4] == plan.storageOf[1] || plan.storageOf[4] == plan.storageOf[2]);
  }

  void theSmallestStorageThatFitsWins() {
    std::vector<TensorLifetime> tensors{
        {4000, 0, 1, false},
        {1000, 0, 1, false},
        {900, 2, 3, false},   // both are free: the 1000-byte one is the better fit
        {3000, 2, 3, false},  // takes the 4000-byte one
    };
    MemoryAssignment plan = planMemory(tensors);
    QCOMPARE(violation(tensors, plan), QString());
    QCOMPARE(plan.storageOf[2], plan.storageOf[1]);
    QCOMPARE(plan.storageOf[3], plan.storageOf[0]);
    QCOMPARE(plan.plannedBytes, int64_t(5000));
  }

  void aFreeStorageGrowsRatherThanANewOneStarting() {
    std::vector<TensorLifetime> tensors{{100, 0, 1, false}, {500, 2, 3, false}};
    MemoryAssignment plan = planMemory(tensors);
    QCOMPARE(storageCount(plan), 1);
    QCOMPARE(plan.storageBytes[0], int64_t(500));
    QCOMPARE(plan.plannedBytes, int64_t(500));
    QCOMPARE(plan.naiveBytes, int64_t(600));
  }

  void externalTensorsAreNotPlanned() {
    std::vector<TensorLifetime> tensors{
        {4096, 0, 3, true},  // a graph input
        {64, 0, 1, false},
        {64, 2, 3, false},
        {4096, 3, 3, true},  // a graph output
    };
    MemoryAssignment plan = planMemory(tensors);
    QCOMPARE(violation(tensors, plan), QString());
    QCOMPARE(plan.storageOf[0], -1);
    QCOMPARE(plan.storageOf[3], -1);
    QCOMPARE(plan.naiveBytes, int64_t(128));
    QCOMPARE(plan.plannedBytes, int64_t(64));
  }

  void unreadTensorsStillOccupyTheirStepOnly() {
    // An output nobody reads (lastUsedAt before producedAt) is written at its step.
    std::vector<TensorLifetime> tensors{{64, 0, 1, false}, {64, 1, -1, false}, {64, 1, 2, false},
                                        {64, 2, 3, false}};
    MemoryAssignment plan = planMemory(tensors);
    QCOMPARE(violation(tensors, plan), QString());
    QVERIFY(plan.storageOf[1] != plan.storageOf[2]);
  }

  void randomLifetimesNeverShareLiveStorage() {
    std::mt19937 random(12345);
    for (int trial = 0; trial < 300; ++trial) {
      int steps = 1 + int(random() % 30);
      std::vector<TensorLifetime> tensors;
      int count = 1 + int(random() % 40);
      for (int i = 0; i < count; ++i) {
        int produced = int(random() % unsigned(steps));
        int lastUse = produced + int(random() % 6);
        tensors.push_back({int64_t(1 + random() % 5000), produced, lastUse, random() % 7 == 0});
      }
      MemoryAssignment plan = planMemory(tensors);
      QString problem = violation(tensors, plan);
      QVERIFY2(problem.isEmpty(), qPrintable(QString("trial %1: %2").arg(trial).arg(problem)));
    }
  }
};

QTEST_GUILESS_MAIN(TestPlanMemory)
#include "test_plan_memory.moc"
