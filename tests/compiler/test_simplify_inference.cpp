// SimplifyInference: training-only operations disappear and batch normalization folds into the
// layer before it (or becomes a per-channel Mul + Add), computing the same numbers.
#include <QtTest>

#include "GraphPassTestSupport.h"
#include "compiler/graph/SimplifyInference.h"

using namespace tessel;
using namespace tessel::graph;
using namespace tessel::testing;

Q_DECLARE_METATYPE(std::vector<int64_t>)
Q_DECLARE_METATYPE(tessel::graph::Attributes)

namespace {
std::vector<std::string> opNames(const Graph& graph) {
  std::vector<std::string> names;
  for (const OperationNode* node : graph.operations()) names.push_back(node->op);
  return names;
}

Graph simplified(const Graph& graph) {
  auto result = simplifyInference(graph);
  if (!result) qFatal("simplifyInference failed: %s", result.error().toString().c_str());
  return *result;
}

// BatchNormalization over `channels` with constant, varied parameters (variances positive).
Value batchNorm(const std::string& name, Value x, int64_t channels, double epsilon = 1e-5) {
  Value gamma = makeConstant(name + ".gamma", variedArray({channels}, 1));
  Value beta = makeConstant(name + ".beta", variedArray({channels}, 2));
  Value mean = makeConstant(name + ".mean", variedArray({channels}, 3));
  Value variance = makeConstant(name + ".var", floatArray({channels}, [](int64_t i) { return 0.5 + 0.25 * i; }));
  return typed(name, "BatchNormalization", {x, gamma, beta, mean, variance}, {{"epsilon", epsilon}});
}

Value convolution(const std::string& name, Value x, int64_t filters, bool bias) {
  int64_t channels = x.type().shape[1];
  std::vector<Value> inputs{x, makeConstant(name + ".w", variedArray({filters, channels, 3, 3}, 4))};
  if (bias) inputs.push_back(makeConstant(name + ".b", variedArray({filters}, 5)));
  return typed(name, "Conv", inputs, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
}

// The simplified graph computes what the original does (both evaluated by their kernels).
void checkSameNumbers(const Graph& original, const Graph& after) {
  auto expected = evaluateConstantGraph(original);
  auto actual = evaluateConstantGraph(after);
  QCOMPARE(actual.size(), expected.size());
  QVERIFY(!expected.empty());
  for (size_t i = 0; i < expected.size(); ++i) {
    double error = largestRelativeError(actual[i], expected[i]);
    QVERIFY2(error < 1e-4, qPrintable(QString("output %1 differs by %2").arg(i).arg(error)));
  }
}

const OperationNode* findOp(const Graph& graph, const std::string& op) {
  for (const OperationNode* node : graph.operations())
    if (node->op == op) return node;
  return nullptr;
}
}  // namespace

class TestSimplifyInference : public QObject {
  Q_OBJECT
private slots:
  void inferenceNoOpsDisappear() {
    Value x = makeInput("x", f32({4}));
    Value y = typed("relu", "Relu", {typed("drop", "Dropout", {typed("id", "Identity", {x})})});
    Graph after = simplified(Graph{{x}, {y}, {"y"}});
    QCOMPARE(opNames(after), std::vector<std::string>{"Relu"});
    QVERIFY(after.operations()[0]->inputs[0] == x);
  }

  void aReadDropoutMaskIsAllOnes() {
    Value x = makeInput("x", f32({2, 3}));
    auto dropout = typedOutputs("drop", "Dropout", {x}, {}, 2);
    Graph after = simplified(Graph{{x}, {dropout[0], dropout[1]}, {"y", "mask"}});
    QCOMPARE(int(after.operationCount()), 0);
    QVERIFY(after.outputs[0] == x);
    auto* mask = asConstant(after.outputs[1].node());
    QVERIFY(mask != nullptr);
    QCOMPARE(mask->outputTypes[0], dropout[1].type());
    const auto* bytes = static_cast<const uint8_t*>(mask->data.data());
    for (int64_t i = 0; i < mask->data.numElements(); ++i) QCOMPARE(int(bytes[i]), 1);
  }

  void batchNormFoldsIntoTheConvolutionBeforeIt_data() {
    QTest::addColumn<bool>("convHasBias");
    QTest::addColumn<bool>("identityBetween");
    QTest::newRow("no bias") << false << false;
    QTest::newRow("bias") << true << false;
    QTest::newRow("identity in between") << true << true;
  }
  void batchNormFoldsIntoTheConvolutionBeforeIt() {
    QFETCH(bool, convHasBias);
    QFETCH(bool, identityBetween);
    Value x = makeConstant("x", variedArray({1, 3, 6, 6}, 0));
    Value conv = convolution("conv", x, 4, convHasBias);
    if (identityBetween) conv = typed("id", "Identity", {conv});
    Value y = typed("relu", "Relu", {batchNorm("bn", conv, 4, 1e-3)});
    Graph original{{}, {y}, {"y"}};
    Graph after = simplified(original);
    QCOMPARE(opNames(after), (std::vector<std::string>{"Conv", "Relu"}));
    const OperationNode* folded = findOp(after, "Conv");
    QCOMPARE(folded->inputs.size(), size_t(3));  // a bias appears when there was none
    QCOMPARE(folded->provenance.size(), size_t(2));
    QCOMPARE(folded->outputTypes[0], conv.type());
    checkSameNumbers(original, after);
  }

  void everyLayerOfADeepStackFolds() {
    // Each fold rebuilds the layers after it; the next batch normalization still folds.
    Value x = makeConstant("x", variedArray({1, 2, 5, 5}, 0));
    Value y = x;
    for (int layer = 0; layer < 3; ++layer) {
      std::string name = "layer" + std::to_string(layer);
      y = typed(name + ".relu", "Relu", {batchNorm(name + ".bn", convolution(name + ".conv", y, 2, false), 2)});
    }
    Graph original{{}, {y}, {"y"}};
    Graph after = simplified(original);
    QCOMPARE(opNames(after), (std::vector<std::string>{"Conv", "Relu", "Conv", "Relu", "Conv", "Relu"}));
    checkSameNumbers(original, after);
  }

  void aConvolutionWithOtherReadersKeepsItsWeights() {
    Value x = makeConstant("x", variedArray({1, 3, 5, 5}, 0));
    Value conv = convolution("conv", x, 4, false);
    Value sum = typed("sum", "Add", {batchNorm("bn", conv, 4), typed("relu", "Relu", {conv})});
    Graph original{{}, {sum}, {"y"}};
    Graph after = simplified(original);
    QCOMPARE(opNames(after), (std::vector<std::string>{"Conv", "Mul", "Add", "Relu", "Add"}));
    QVERIFY(findOp(after, "Conv")->inputs[1] == findOp(original, "Conv")->inputs[1]);
    // Per-channel constants line up with axis 1 of NCHW.
    QCOMPARE(findOp(after, "Mul")->inputs[1].type().shape, (std::vector<int64_t>{4, 1, 1}));
    checkSameNumbers(original, after);
  }

  void batchNormWithoutALayerBeforeItBecomesMulAdd() {
    Value x = makeConstant("x", variedArray({2, 3, 4}, 0));
    Value y = batchNorm("bn", typed("relu", "Relu", {x}), 3);
    Graph original{{}, {y}, {"y"}};
    Graph after = simplified(original);
    QCOMPARE(opNames(after), (std::vector<std::string>{"Relu", "Mul", "Add"}));
    QCOMPARE(findOp(after, "Add")->inputs[1].type().shape, (std::vector<int64_t>{3, 1}));
    checkSameNumbers(original, after);
  }

  void batchNormFoldsIntoGemm() {
    Value a = makeConstant("a", variedArray({2, 5}, 0));
    Value b = makeConstant("b", variedArray({3, 5}, 6));
    Value c = makeConstant("c", variedArray({3}, 7));
    Value gemm = typed("gemm", "Gemm", {a, b, c}, {{"transB", int64_t(1)}, {"alpha", 0.5}, {"beta", 2.0}});
    Graph original{{}, {batchNorm("bn", gemm, 3)}, {"y"}};
    Graph after = simplified(original);
    QCOMPARE(opNames(after), std::vector<std::string>{"Gemm"});
    checkSameNumbers(original, after);
  }

  void batchNormFoldsIntoMatMulAndItsBias() {
    Value a = makeConstant("a", variedArray({2, 5}, 0));
    Value w = makeConstant("w", variedArray({5, 3}, 6));
    Value product = typed("dense", "MatMul", {a, w});
    Value biased = typed("dense.bias", "Add", {makeConstant("bias", variedArray({3}, 7)), product});
    Graph original{{}, {batchNorm("bn", biased, 3)}, {"y"}};
    Graph after = simplified(original);
    QCOMPARE(opNames(after), (std::vector<std::string>{"MatMul", "Add"}));
    checkSameNumbers(original, after);

    Graph withoutBias{{}, {batchNorm("bn", product, 3)}, {"y"}};
    Graph afterWithoutBias = simplified(withoutBias);
    QCOMPARE(opNames(afterWithoutBias), (std::vector<std::string>{"MatMul", "Add"}));
    checkSameNumbers(withoutBias, afterWithoutBias);
  }

  // PyTorch exports avg_pool2d(x, 3, stride=1, padding=1) as a Pad of zeros and an
  // AveragePool (Inception v3's branch pools; DenseNet's transitions pad by nothing): the pool
  // reads the unpadded input and counts its own padding instead, computing the same numbers.
  void zeroPaddingFoldsIntoTheAveragePool_data() {
    QTest::addColumn<std::vector<int64_t>>("padding");
    QTest::addColumn<graph::Attributes>("pool");
    QTest::addColumn<bool>("folds");
    using Ints = std::vector<int64_t>;
    Attributes window{{"kernel_shape", Ints{3, 3}}, {"strides", Ints{1, 1}}, {"pads", Ints{0, 0, 0, 0}}};
    QTest::newRow("Inception's padding of 1") << Ints{0, 0, 1, 1, 0, 0, 1, 1} << window << true;
    Attributes transition{{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}};
    QTest::newRow("DenseNet's empty padding") << Ints{0, 0, 0, 0, 0, 0, 0, 0} << transition << true;
    Attributes counted = window;
    counted["pads"] = Ints{1, 0, 0, 1};
    counted["count_include_pad"] = int64_t(1);
    QTest::newRow("uneven padding added to counted pads") << Ints{0, 0, 1, 0, 0, 0, 0, 1} << counted << true;
    QTest::newRow("padding as wide as the window") << Ints{0, 0, 3, 0, 0, 0, 0, 0} << window << false;
    Attributes uncounted = window;
    uncounted["pads"] = Ints{1, 1, 1, 1};
    QTest::newRow("pads the pool does not count") << Ints{0, 0, 1, 1, 0, 0, 1, 1} << uncounted << false;
    Attributes ceil = window;
    ceil["ceil_mode"] = int64_t(1);
    ceil["strides"] = Ints{2, 2};
    QTest::newRow("ceil_mode") << Ints{0, 0, 1, 1, 0, 0, 1, 1} << ceil << false;
    QTest::newRow("channel padding") << Ints{0, 1, 1, 1, 0, 0, 1, 1} << window << false;
  }
  void zeroPaddingFoldsIntoTheAveragePool() {
    QFETCH(std::vector<int64_t>, padding);
    QFETCH(graph::Attributes, pool);
    QFETCH(bool, folds);
    Value x = makeConstant("x", variedArray({1, 2, 6, 7}, 0));
    auto pads = runtime::NDArray::empty({int64_t(padding.size())}, runtime::DataType::int64());
    pads.copyFrom(padding);
    Value padded = typed("pad", "Pad", {x, makeConstant("pads", pads)}, {{"mode", std::string("constant")}});
    Graph original{{}, {typed("pool", "AveragePool", {padded}, pool)}, {"y"}};
    Graph after = simplified(original);
    const OperationNode* averagePool = findOp(after, "AveragePool");
    QVERIFY(averagePool);
    QCOMPARE(averagePool->inputs[0] == x, folds);
    QCOMPARE(findOp(after, "Pad") != nullptr, !folds);
    checkSameNumbers(original, after);
  }

  void tapsThatReadOnlyPaddingAreDropped_data() {
    using Ints = std::vector<int64_t>;
    QTest::addColumn<Ints>("inputShape");
    QTest::addColumn<Ints>("dilations");
    QTest::addColumn<Ints>("strides");
    QTest::addColumn<Ints>("kernelAfter");
    QTest::addColumn<Ints>("padsAfter");
    QTest::addColumn<Ints>("dilationsAfter");
    QTest::newRow("DeepLab's dilation 36 over 14x14: a 1x1") << Ints{1, 3, 14, 14} << Ints{36, 36} << Ints{1, 1}
                                                         << Ints{1, 1} << Ints{0, 0, 0, 0} << Ints{1, 1};
    QTest::newRow("dilation 12 over 14x14 reads the image with every tap")
        << Ints{1, 3, 14, 14} << Ints{12, 12} << Ints{1, 1} << Ints{3, 3} << Ints{12, 12, 12, 12} << Ints{12, 12};
    QTest::newRow("short rows, long columns: one axis shrinks") << Ints{1, 2, 6, 20} << Ints{8, 8} << Ints{1, 1}
                                                                << Ints{1, 3} << Ints{0, 8, 0, 8} << Ints{1, 8};
    QTest::newRow("stride 2") << Ints{1, 2, 9, 9} << Ints{10, 10} << Ints{2, 2} << Ints{1, 1} << Ints{0, 0, 0, 0}
                              << Ints{1, 1};
  }
  void tapsThatReadOnlyPaddingAreDropped() {
    using Ints = std::vector<int64_t>;
    QFETCH(Ints, inputShape);
    QFETCH(Ints, dilations);
    QFETCH(Ints, strides);
    QFETCH(Ints, kernelAfter);
    QFETCH(Ints, padsAfter);
    QFETCH(Ints, dilationsAfter);
    // A 3x3 convolution padded by its dilation, as the atrous pyramid's are.
    Value x = makeConstant("x", variedArray(inputShape, 0));
    Value weight = makeConstant("w", variedArray({4, inputShape[1], 3, 3}, 4));
    Value bias = makeConstant("b", variedArray({4}, 5));
    Ints pads{dilations[0], dilations[1], dilations[0], dilations[1]};
    Value y = typed("conv", "Conv", {x, weight, bias}, {{"pads", pads}, {"dilations", dilations}, {"strides", strides}});
    Graph original{{}, {y}, {"y"}};
    Graph after = simplified(original);
    const OperationNode* conv = findOp(after, "Conv");
    QVERIFY(conv);
    QCOMPARE(conv->outputTypes[0], y.type());
    QCOMPARE(conv->inputs[1].type().shape, (Ints{4, inputShape[1], kernelAfter[0], kernelAfter[1]}));
    QCOMPARE(conv->attribute<Ints>("pads", {}), padsAfter);
    QCOMPARE(conv->attribute<Ints>("dilations", {}), dilationsAfter);
    checkSameNumbers(original, after);
  }

  void batchNormWithRuntimeParametersStays() {
    Value x = makeInput("x", f32({1, 2, 3, 3}));
    Value gamma = makeInput("gamma", f32({2}));
    Value rest = makeConstant("rest", floatArray({2}, [](int64_t) { return 1.0; }));
    Value y = typed("bn", "BatchNormalization", {x, gamma, rest, rest, rest});
    Graph after = simplified(Graph{{x, gamma}, {y}, {"y"}});
    QCOMPARE(opNames(after), std::vector<std::string>{"BatchNormalization"});
  }
};

QTEST_GUILESS_MAIN(TestSimplifyInference)
#include "test_simplify_inference.moc"
