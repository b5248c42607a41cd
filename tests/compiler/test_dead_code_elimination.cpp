// DeadCodeElimination: unread outputs of multi-output operations stop being computed.
#include <QtTest>

#include "GraphPassTestSupport.h"
#include "compiler/graph/DeadCodeElimination.h"

using namespace tessel;
using namespace tessel::graph;
using namespace tessel::testing;

namespace {
Graph eliminated(const Graph& graph, DeadCodeReport& report) {
  auto result = deadCodeElimination(graph, &report);
  if (!result) qFatal("deadCodeElimination failed: %s", result.error().toString().c_str());
  return *result;
}
}  // namespace

class TestDeadCodeElimination : public QObject {
  Q_OBJECT
private slots:
  void unreadTrailingOutputsAreDropped() {
    Value x = makeInput("x", f32({1, 1, 4, 4}));
    auto pool = typedOutputs("pool", "MaxPool", {x}, {{"kernel_shape", std::vector<int64_t>{2, 2}},
                                                      {"strides", std::vector<int64_t>{2, 2}}}, 2);
    Value y = typed("relu", "Relu", {pool[0]});
    DeadCodeReport report;
    Graph after = eliminated(Graph{{x}, {y}, {"y"}}, report);
    QCOMPARE(report.removedOutputs, 1);
    QCOMPARE(report.removedOperations, 0);
    QString text = QString::fromStdString(printGraph(after));
    QVERIFY2(text.contains("%pool = MaxPool(%x) {kernel_shape=[2, 2], strides=[2, 2]} : float32[1, 1, 2, 2]"),
             qPrintable(text));
  }

  void anUnreadDropoutMaskIsNotComputed() {
    Value x = makeInput("x", f32({2, 3}));
    auto dropout = typedOutputs("drop", "Dropout", {x}, {}, 2);
    DeadCodeReport report;
    Graph after = eliminated(Graph{{x}, {typed("relu", "Relu", {dropout[0]})}, {"y"}}, report);
    QCOMPARE(report.removedOutputs, 1);
    QCOMPARE(after.operations()[0]->outputTypes.size(), size_t(1));
  }

  void readOutputsStay() {
    Value x = makeInput("x", f32({1, 1, 4, 4}));
    auto pool = typedOutputs("pool", "MaxPool", {x}, {{"kernel_shape", std::vector<int64_t>{2, 2}}}, 2);
    Graph graph{{x}, {pool[0], pool[1]}, {"y", "indices"}};
    DeadCodeReport report;
    Graph after = eliminated(graph, report);
    QCOMPARE(report.removedOutputs, 0);
    QVERIFY(after.outputs[0] == graph.outputs[0] && after.outputs[1] == graph.outputs[1]);
  }

  void aSplitWithUnreadPartsBecomesSlicesOfTheReadOnes() {
    Value x = makeConstant("x", floatArray({6, 2}, [](int64_t i) { return double(i); }));
    Value sizes = makeConstant("sizes", int64Array({1, 2, 3}));
    auto parts = typedOutputs("split", "Split", {x, sizes}, {{"axis", int64_t(0)}}, 3);
    Graph graph{{}, {typed("second", "Neg", {parts[1]})}, {"y"}};
    DeadCodeReport report;
    Graph after = eliminated(graph, report);
    QCOMPARE(report.removedOperations, 1);
    QCOMPARE(report.removedOutputs, 2);
    QCOMPARE(int(after.operationCount()), 2);
    QCOMPARE(QString::fromStdString(after.operations()[0]->op), QString("Slice"));
    // Rows 1 and 2, negated: the same as through the Split.
    auto expected = evaluateConstantGraph(graph);
    auto actual = evaluateConstantGraph(after);
    QCOMPARE(actual, expected);
    QCOMPARE(actual[0], (std::vector<double>{-2, -3, -4, -5}));
  }
};

QTEST_GUILESS_MAIN(TestDeadCodeElimination)
#include "test_dead_code_elimination.moc"
