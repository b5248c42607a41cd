// FoldConstant: what the compiler computes ahead of time, and with which values.
#include <QtTest>

#include "GraphPassTestSupport.h"

using namespace tessel;
using namespace tessel::graph;
using namespace tessel::testing;

namespace {
Graph folded(const Graph& graph) {
  auto result = foldConstant(graph);
  if (!result) qFatal("foldConstant failed: %s", result.error().toString().c_str());
  return *result;
}

std::vector<std::string> opNames(const Graph& graph) {
  std::vector<std::string> names;
  for (const OperationNode* node : graph.operations()) names.push_back(node->op);
  return names;
}
}  // namespace

class TestFoldConstant : public QObject {
  Q_OBJECT
private slots:
  void aConstantSubgraphBecomesOneConstant() {
    Value x = makeInput("x", f32({2, 3}));
    Value a = makeConstant("a", floatArray({2, 3}, [](int64_t i) { return double(i) - 2.5; }));
    Value b = makeConstant("b", floatArray({3}, [](int64_t i) { return 0.5 * double(i); }));
    Value relu = typed("relu", "Relu", {typed("sum", "Add", {a, b})});
    Value y = typed("scaled", "Mul", {x, relu});
    Graph after = folded(Graph{{x}, {y}, {"y"}});

    QCOMPARE(opNames(after), std::vector<std::string>{"Mul"});
    const OperationNode* mul = after.operations()[0];
    QVERIFY(mul->inputs[0] == x);
    auto* constant = asConstant(mul->inputs[1].node());
    QVERIFY(constant != nullptr);
    QCOMPARE(QString::fromStdString(constant->name), QString("relu.folded"));
    QCOMPARE(constant->outputTypes[0], relu.type());
    auto values = constant->data.toVector<float>();
    for (int64_t i = 0; i < 6; ++i) QCOMPARE(values[size_t(i)], float(std::max(0.0, double(i) - 2.5 + 0.5 * (i % 3))));
  }

  void aFoldedNameKeepsEveryNodeItCameFrom() {
    // A Conv that absorbed a BatchNormalization stands for both ONNX nodes.
    Value a = makeConstant("a", floatArray({4}, [](int64_t i) { return double(i); }));
    Value y = makeOperation("conv", "Neg", {a}, {}, {f32({4})},
                            {{"conv", "Conv", 13}, {"bn", "BatchNormalization", 13}})[0];
    Graph after = folded(Graph{{}, {y}, {"y"}});
    QCOMPARE(QString::fromStdString(after.outputs[0].node()->name), QString("conv+bn.folded"));
  }

  void theShapeOfARuntimeInputIsKnownWhenCompiling() {
    Value x = makeInput("x", f32({2, 3, 4}));
    Value y = makeInput("y", f32({24}));
    Value shape = typed("shape", "Shape", {x});
    // Typed by hand: before folding, the registry cannot type a Reshape to a computed shape.
    Value reshaped = makeOperation("reshape", "Reshape", {typed("relu", "Relu", {y}), shape}, {}, {f32({2, 3, 4})},
                                   {{"reshape_onnx", "Reshape", 13}})[0];
    Graph after = folded(Graph{{x, y}, {reshaped, shape}, {"out", "shape"}});

    QCOMPARE(opNames(after), (std::vector<std::string>{"Relu", "Reshape"}));
    auto* constant = asConstant(after.outputs[1].node());
    QVERIFY(constant != nullptr);
    QCOMPARE(constant->data.toVector<int64_t>(), (std::vector<int64_t>{2, 3, 4}));
    QVERIFY(asOperation(after.outputs[0].node())->inputs[1] == after.outputs[1]);
  }

  void aGraphWithoutConstantWorkIsLeftAsItIs() {
    Value x = makeInput("x", f32({8}));
    Value w = makeConstant("w", floatArray({8}, [](int64_t i) { return double(i); }));
    Value y = typed("exp", "Exp", {typed("mul", "Mul", {x, w})});
    Graph graph{{x}, {y}, {"y"}};
    Graph after = folded(graph);
    QVERIFY(after.outputs[0] == graph.outputs[0]);
  }

  void reshapingAConstantKeepsItsValues() {
    Value a = makeConstant("a", floatArray({2, 3}, [](int64_t i) { return double(i) * 1.5; }));
    Value reshaped = typed("reshape", "Reshape", {a, makeConstant("shape", int64Array({3, 1, 2}))});
    Value squeezed = typed("squeeze", "Squeeze", {reshaped, makeConstant("axes", int64Array({1}))});
    Graph after = folded(Graph{{}, {squeezed}, {"y"}});
    auto* constant = asConstant(after.outputs[0].node());
    QVERIFY(constant != nullptr);
    QCOMPARE(QString::fromStdString(constant->name), QString("squeeze.folded"));
    QCOMPARE(constant->outputTypes[0], squeezed.type());
    QCOMPARE(constant->data.toVector<float>(), (std::vector<float>{0, 1.5f, 3, 4.5f, 6, 7.5f}));
  }

  void largeResultsFold() {
    Value a = makeConstant("a", floatArray({256, 1024}, [](int64_t i) { return double(i % 97); }));
    Value y = typed("neg", "Neg", {a});
    auto values = evaluateConstantGraph(Graph{{}, {y}, {"y"}});
    QCOMPARE(values.size(), size_t(1));
    QCOMPARE(values[0].size(), size_t(256 * 1024));
    QCOMPARE(values[0][100000], -double(100000 % 97));
  }

  void randomOperatorsAreNotFolded() {
    Value a = makeConstant("a", floatArray({4}, [](int64_t) { return 0.0; }));
    Value noise = makeOperation("noise", "RandomUniformLike", {a}, {}, {f32({4})})[0];
    Graph after = folded(Graph{{}, {noise}, {"y"}});
    QCOMPARE(opNames(after), std::vector<std::string>{"RandomUniformLike"});
  }

  void oneOperationFoldsAsATypingPassGoes() {
    // What InferTypes can do to type a Reshape whose shape is computed: fold as it types.
    Value x = makeInput("x", f32({2, 3, 4}));
    Value shape = typed("shape", "Shape", {x});
    auto folded = foldOperation(*asOperation(shape.node()), {x});
    QVERIFY(folded.ok() && folded->has_value());
    Value constantShape = (**folded)[0];
    QCOMPARE(asConstant(constantShape.node())->data.toVector<int64_t>(), (std::vector<int64_t>{2, 3, 4}));
    Value gathered = typed("last", "Gather", {constantShape, makeConstant("index", int64Array({2}))});
    auto last = foldOperation(*asOperation(gathered.node()), asOperation(gathered.node())->inputs);
    QVERIFY(last.ok() && last->has_value());
    QCOMPARE(asConstant((**last)[0].node())->data.toVector<int64_t>(), std::vector<int64_t>{4});

    Value relu = typed("relu", "Relu", {x});
    auto notFolded = foldOperation(*asOperation(relu.node()), {x});
    QVERIFY(notFolded.ok() && !notFolded->has_value());
  }

  void anOperationThatCannotBeBuiltIsADiagnostic() {
    Value a = makeConstant("a", floatArray({4}, [](int64_t) { return 1.0; }));
    Value y = makeOperation("mystery", "NoSuchOperator", {a}, {}, {f32({4})})[0];
    auto result = foldConstant(Graph{{}, {y}, {"y"}});
    QVERIFY(!result.ok());
    QString message = QString::fromStdString(result.error().toString());
    QVERIFY2(message.contains("cannot fold NoSuchOperator 'mystery'"), qPrintable(message));
  }
};

QTEST_GUILESS_MAIN(TestFoldConstant)
#include "test_fold_constant.moc"
