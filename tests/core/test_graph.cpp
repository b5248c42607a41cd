// The graph IR: building, printing, traversal order and structural hashing.
#include <QtTest>

#include "core/graph/Graph.h"

using namespace tessel;
using namespace tessel::graph;

namespace {
TensorType f32(std::vector<int64_t> shape) { return TensorType{DataType::float32(), std::move(shape), ""}; }

runtime::NDArray weights(std::vector<int64_t> shape) {
  auto array = runtime::NDArray::empty(shape, runtime::DataType::float32());
  for (float& v : array.values<float>()) v = 0.5f;
  return array;
}

// data -> Conv(weight) -> Relu -> Add(data') where the names come from `prefix`.
Graph smallNet(const std::string& prefix, int64_t stride = 1) {
  Value data = makeInput(prefix + "data", f32({1, 3, 8, 8}));
  Value weight = makeConstant(prefix + "w", weights({4, 3, 3, 3}));
  Value conv = makeOperation(prefix + "conv", "Conv", {data, weight},
                             {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"strides", std::vector<int64_t>{stride, stride}}},
                             {f32({1, 4, 8, 8})}, {{"Conv_0", "Conv"}})[0];
  Value relu = makeOperation(prefix + "relu", "Relu", {conv}, {}, {f32({1, 4, 8, 8})}, {{"Relu_1", "Relu"}})[0];
  Value sum = makeOperation(prefix + "sum", "Add", {relu, conv}, {}, {f32({1, 4, 8, 8})}, {{"Add_2", "Add"}})[0];
  return Graph{{data}, {sum}, {"out"}};
}
}  // namespace

class TestGraph : public QObject {
  Q_OBJECT
private slots:
  void printsOneOperationPerLine() {
    QCOMPARE(QString::fromStdString(printGraph(smallNet(""))),
             QString("graph(%data: float32[1, 3, 8, 8]) {\n"
                     "  const @w: float32[4, 3, 3, 3]\n"
                     "  %conv = Conv(%data, @w) {pads=[1, 1, 1, 1], strides=[1, 1]} : float32[1, 4, 8, 8]  # Conv_0\n"
                     "  %relu = Relu(%conv) : float32[1, 4, 8, 8]  # Relu_1\n"
                     "  %sum = Add(%relu, %conv) : float32[1, 4, 8, 8]  # Add_2\n"
                     "  return %sum\n"
                     "}\n"));
  }

  void producersComeBeforeConsumers() {
    Graph g = smallNet("");
    auto order = g.topologicalOrder();
    QCOMPARE(int(order.size()), 5);
    std::map<std::string, int> at;
    for (size_t i = 0; i < order.size(); ++i) at[order[i]->name] = int(i);
    QVERIFY(at["data"] < at["conv"] && at["w"] < at["conv"]);
    QVERIFY(at["conv"] < at["relu"] && at["relu"] < at["sum"]);
    QCOMPARE(int(g.operationCount()), 3);
  }

  void hashIgnoresNamesButNotStructure() {
    QCOMPARE(structuralHash(smallNet("a.")), structuralHash(smallNet("b.")));
    QVERIFY(structuralHash(smallNet("a.")) != structuralHash(smallNet("a.", 2)));
  }

  void multiOutputNodesAndRepeatedNamesPrintDistinctly() {
    Value x = makeInput("x", f32({4, 6}));
    auto halves = makeOperation("split", "Split", {x}, {{"axis", int64_t(1)}}, {f32({4, 3}), f32({4, 3})});
    Value a = makeOperation("y", "Relu", {halves[0]}, {}, {f32({4, 3})})[0];
    Value b = makeOperation("y", "Neg", {halves[1]}, {}, {f32({4, 3})})[0];
    Value sum = makeOperation("sum", "Add", {a, b}, {}, {f32({4, 3})})[0];
    QString text = QString::fromStdString(printGraph(Graph{{x}, {sum}, {"sum"}}));
    QVERIFY2(text.contains("%split, %split:1 = Split(%x) {axis=1} : (float32[4, 3], float32[4, 3])"), qPrintable(text));
    QVERIFY2(text.contains("%y = Relu(%split)") && text.contains("%y_1 = Neg(%split:1)"), qPrintable(text));
    QVERIFY2(text.contains("%sum = Add(%y, %y_1)"), qPrintable(text));
  }

  void longChainsDoNotOverflowTheStack() {
    Value v = makeInput("x", f32({4}));
    Value input = v;
    for (int i = 0; i < 200000; ++i) v = makeOperation("r" + std::to_string(i), "Relu", {v}, {}, {f32({4})})[0];
    Graph g{{input}, {v}, {"y"}};
    QCOMPARE(int(g.operationCount()), 200000);
    QVERIFY(structuralHash(g) != 0);
  }

  void attributeAccessWithFallback() {
    Graph g = smallNet("");
    const OperationNode* conv = g.operations()[0];
    QCOMPARE(conv->attribute<std::vector<int64_t>>("strides", {}), (std::vector<int64_t>{1, 1}));
    QCOMPARE(conv->attribute<int64_t>("group", 1), int64_t(1));
    QCOMPARE(conv->attribute<int64_t>("strides", 7), int64_t(7));  // wrong type: the fallback
  }
};

QTEST_GUILESS_MAIN(TestGraph)
#include "test_graph.moc"
