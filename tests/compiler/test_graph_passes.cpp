// Graph passes and the pass manager: what each pass changes, snapshots, options.
#include <QtTest>

#include "compiler/graph/EliminateCommonSubexpr.h"
#include "compiler/graph/GraphRewriter.h"
#include "compiler/graph/PassManager.h"
#include "compiler/graph/SimplifyInference.h"

using namespace tessel;
using namespace tessel::graph;

namespace {
TensorType f32(std::vector<int64_t> shape) { return TensorType{DataType::float32(), std::move(shape), ""}; }
Value op(const std::string& name, const std::string& kind, std::vector<Value> inputs, Attributes attributes = {}) {
  return makeOperation(name, kind, std::move(inputs), std::move(attributes), {f32({4})},
                       {{name + "_onnx", kind}})[0];
}
runtime::NDArray filled(float value) {
  auto array = runtime::NDArray::empty({4}, runtime::DataType::float32());
  for (float& v : array.values<float>()) v = value;
  return array;
}
}  // namespace

class TestGraphPasses : public QObject {
  Q_OBJECT
private slots:
  void rewriteWithNoChangeKeepsTheGraph() {
    Value x = makeInput("x", f32({4}));
    Value y = op("relu", "Relu", {x});
    Graph g{{x}, {y}, {"y"}};
    Graph same = rewriteGraph(g, [](const OperationNode&, const std::vector<Value>&) { return std::nullopt; });
    QVERIFY(same.outputs[0] == g.outputs[0]);
  }

  void commonSubexpressionsMerge() {
    Value x = makeInput("x", f32({4}));
    Value a = op("a", "Relu", {x});
    Value b = op("b", "Relu", {x});
    Value c = op("c", "LeakyRelu", {x}, {{"alpha", 0.1}});
    Value d = op("d", "LeakyRelu", {x}, {{"alpha", 0.2}});  // other attribute: stays
    Value w1 = makeConstant("w1", filled(2.0f)), w2 = makeConstant("w2", filled(2.0f));
    Value e = op("e", "Mul", {a, w1});
    Value f = op("f", "Mul", {b, w2});  // same after a=b and w1=w2
    Value sum = op("sum", "Add", {op("s1", "Add", {e, f}), op("s2", "Add", {c, d})});
    Graph g{{x}, {sum}, {"out"}};
    Graph merged = eliminateCommonSubexpr(g);
    QCOMPARE(int(g.operationCount()), 9);
    QCOMPARE(int(merged.operationCount()), 7);
    QString text = QString::fromStdString(printGraph(merged));
    QVERIFY2(text.contains("%s1 = Add(%e, %e)"), qPrintable(text));
    QVERIFY2(text.contains("alpha=0.1") && text.contains("alpha=0.2"), qPrintable(text));
  }

  void inferenceNoOpsDisappear() {
    Value x = makeInput("x", f32({4}));
    Value id = op("id", "Identity", {x});
    Value dropped = op("drop", "Dropout", {id});
    Value y = op("relu", "Relu", {dropped});
    Graph g = *simplifyInference(Graph{{x}, {y}, {"y"}});
    QCOMPARE(int(g.operationCount()), 1);
    QVERIFY(QString::fromStdString(printGraph(g)).contains("%relu = Relu(%x)"));
  }

  void passManagerSnapshotsEveryPass() {
    PassManager manager({{"SimplifyInference", 0, simplifyInference},
                         {"EliminateCommonSubexpr", 1,
                          [](const Graph& g) -> Expected<Graph> { return eliminateCommonSubexpr(g); }}});
    Value x = makeInput("x", f32({4}));
    Value y = op("sum", "Add", {op("a", "Relu", {op("id", "Identity", {x})}), op("b", "Relu", {x})});
    Graph g{{x}, {y}, {"y"}};

    auto all = manager.run(g, {});
    QVERIFY(all.ok());
    QCOMPARE(int(all->size()), 2);
    QCOMPARE(QString::fromStdString((*all)[0].passName), QString("SimplifyInference"));
    QCOMPARE(int((*all)[0].graph.operationCount()), 3);  // Identity gone
    QCOMPARE(int((*all)[1].graph.operationCount()), 2);  // the two Relus merged
    QVERIFY((*all)[1].milliseconds >= 0 && !(*all)[1].skipped);

    auto levelZero = manager.run(g, {0, {}});
    QVERIFY(levelZero.ok());
    QVERIFY((*levelZero)[1].skipped);
    QCOMPARE(int(levelZero->back().graph.operationCount()), 3);

    auto disabled = manager.run(g, {3, {"SimplifyInference"}});
    QVERIFY(disabled.ok());
    QVERIFY((*disabled)[0].skipped);
    QCOMPARE(int((*disabled)[0].graph.operationCount()), 4);
  }

  void passManagerRejectsBadOptions() {
    PassManager manager({{"A", 0, [](const Graph& g) -> Expected<Graph> { return g; }}});
    Graph g{{makeInput("x", f32({4}))}, {}, {}};
    auto unknown = manager.run(g, {3, {"FoldConstants"}});
    QVERIFY(!unknown.ok());
    QVERIFY(QString::fromStdString(unknown.error().toString()).contains("no pass named 'FoldConstants'"));
    QVERIFY(QString::fromStdString(unknown.error().toString()).contains("passes: A"));
    QVERIFY(!manager.run(g, {4, {}}).ok());
  }

  void aFailingPassNamesItself() {
    PassManager manager({{"Broken", 0, [](const Graph&) -> Expected<Graph> {
                            return Diagnostic{"cannot handle op Foo", "node n1", 0, 0, ""};
                          }}});
    Graph g{{makeInput("x", f32({4}))}, {}, {}};
    auto result = manager.run(g, {});
    QVERIFY(!result.ok());
    QVERIFY(QString::fromStdString(result.error().message).startsWith("Broken: cannot handle op Foo"));
  }
};

QTEST_GUILESS_MAIN(TestGraphPasses)
#include "test_graph_passes.moc"
