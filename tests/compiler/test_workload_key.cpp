// Workload keys: the name of what a kernel computes, independent of node names, shared by
// identical kernels, different for anything that changes the computation; and tuned schedules
// applied by key.
#include <QtTest>

#include "compiler/driver/Driver.h"
#include "compiler/driver/ScheduleTask.h"
#include "compiler/driver/WorkloadKey.h"
#include "compiler/schedule/TraceText.h"
#include "tests/compiler/GraphPassTestSupport.h"

using namespace tessel;
using namespace tessel::graph;
using namespace tessel::testing;

namespace {

// x -> four times (Conv 3x3 -> Relu), node names starting with `prefix`; `width` sets the
// image size. The middle two convolutions (blocked layout in and out, different weights) are
// the same computation; the first and last also convert the layout.
Graph fourConvolutions(const std::string& prefix, int64_t width = 8) {
  Value x = makeInput(prefix + "x", f32({1, 8, width, width}));
  Attributes conv = {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"kernel_shape", std::vector<int64_t>{3, 3}}};
  Value value = x;
  for (int i = 0; i < 4; ++i) {
    std::string n = std::to_string(i);
    Value weight = makeConstant(prefix + "w" + n, filled({8, 8, 3, 3}, 0.1f * float(i + 1)));
    value = op(prefix + "conv" + n, "Conv", {value, weight}, f32({1, 8, width, width}), conv);
    value = op(prefix + "relu" + n, "Relu", {value}, f32({1, 8, width, width}));
  }
  return Graph{{x}, {value}, {"y"}};
}

driver::CompiledModel compiled(const Graph& graph, const driver::CompileOptions& options = {}) {
  auto model = driver::compileGraph(graph, options);
  if (!model) qFatal("%s", model.error().toString().c_str());
  return std::move(*model);
}

}  // namespace

class TestWorkloadKey : public QObject {
  Q_OBJECT
private slots:
  void identicalKernelsShareOneKeyWhateverTheirNames() {
    auto first = compiled(fourConvolutions("a_"));
    auto second = compiled(fourConvolutions("other_model_"));
    QCOMPARE(first.kernels.size(), size_t(4));
    QVERIFY(!first.kernels[0].workloadKey.empty());
    // The middle convolutions (different weights, same computation) share a task; the first
    // (which converts its input's layout) does not.
    QCOMPARE(first.kernels[1].workloadKey, first.kernels[2].workloadKey);
    QCOMPARE(first.kernels[1].workloadHash, first.kernels[2].workloadHash);
    QVERIFY(first.kernels[0].workloadKey != first.kernels[1].workloadKey);
    // Node names never reach the key.
    QCOMPARE(first.kernels[0].workloadKey, second.kernels[0].workloadKey);
    QVERIFY(first.kernels[0].workloadKey.find("a_") == std::string::npos);
    QCOMPARE(first.kernels[0].workloadHash.size(), size_t(16));
  }

  void whatChangesTheComputationChangesTheKey() {
    auto small = compiled(fourConvolutions("n_", 8));
    auto wide = compiled(fourConvolutions("n_", 12));
    QVERIFY(small.kernels[0].workloadKey != wide.kernels[0].workloadKey);
    QVERIFY(small.kernels[0].workloadKey.find("float32[1,8,8,8]") != std::string::npos);
    QVERIFY(small.kernels[0].workloadKey.find("Conv") != std::string::npos);
    // The target is part of the hash, not of the text.
    Target other = hostTarget();
    other.cores += 1;
    QVERIFY(driver::workloadKeyHash(small.kernels[0].workloadKey, other) != small.kernels[0].workloadHash);
    QCOMPARE(driver::workloadKeyHash(small.kernels[0].workloadKey, hostTarget()), small.kernels[0].workloadHash);
  }

  void tunedSchedulesAreAppliedByKey() {
    Graph graph = fourConvolutions("t_");
    auto plain = compiled(graph);
    QVERIFY(!plain.kernels[0].tuned);
    // A tuned schedule for the middle kernels' key (their default trace with its split
    // factors as they are): applied to both kernels of that key and to no other.
    auto tasks = driver::extractTasks(plain);
    QVERIFY(tasks);
    driver::CompileOptions options;
    auto tuned = std::make_shared<driver::TunedSchedules>();
    tuned->traces[(*tasks)[1].workloadKey] = (*tasks)[1].defaultTraceText();
    options.tunedSchedules = tuned;
    auto applied = compiled(graph, options);
    for (const auto& note : applied.tuningNotes) qWarning("%s", note.c_str());
    QVERIFY(applied.tuningNotes.empty());
    QVERIFY(!applied.kernels[0].tuned);
    QVERIFY(applied.kernels[1].tuned);
    QVERIFY(applied.kernels[2].tuned);
    QVERIFY(!applied.kernels[3].tuned);
    // A record that no longer replays is skipped with a note, and the default is used.
    tuned->traces[(*tasks)[1].workloadKey] = "xo, xi = split(no_such_stage, x, factor=4)\n";
    auto stale = compiled(graph, options);
    QVERIFY(!stale.kernels[1].tuned);
    QCOMPARE(stale.tuningNotes.size(), size_t(2));
    QVERIFY2(QString::fromStdString(stale.tuningNotes[0]).contains("the default was"),
             stale.tuningNotes[0].c_str());
  }
};

QTEST_GUILESS_MAIN(TestWorkloadKey)
#include "test_workload_key.moc"
