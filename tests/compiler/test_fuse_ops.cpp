// FuseOps: which operations end up in one kernel, what the fused nodes look like when printed.
#include <QtTest>

#include "compiler/graph/FuseOps.h"

using namespace tessel;
using namespace tessel::graph;

namespace {
TensorType f32(std::vector<int64_t> shape) { return TensorType{DataType::float32(), std::move(shape), ""}; }

runtime::NDArray filled(std::vector<int64_t> shape, float value) {
  auto array = runtime::NDArray::empty(std::move(shape), runtime::DataType::float32());
  for (float& v : array.values<float>()) v = value;
  return array;
}

runtime::NDArray int64s(std::vector<int64_t> values) {
  auto array = runtime::NDArray::empty({int64_t(values.size())}, runtime::DataType::int64());
  array.copyFrom(values);
  return array;
}

// An operation with its output type given (FuseOps reads types, it does not infer them).
Value op(const std::string& name, const std::string& kind, std::vector<Value> inputs, TensorType type,
         Attributes attributes = {}) {
  return makeOperation(name, kind, std::move(inputs), std::move(attributes), {std::move(type)},
                       {{name + "_onnx", kind, 13}})[0];
}

Value conv(const std::string& name, Value input, int64_t filters) {
  int64_t channels = input.type().shape[1];
  Value weight = makeConstant(name + ".w", filled({filters, channels, 3, 3}, 0.5f));
  auto shape = input.type().shape;
  shape[1] = filters;
  return op(name, "Conv", {input, weight}, f32(shape), {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
}

Graph fused(const Graph& graph, const FuseOptions& options = {}) {
  auto result = fuseOps(graph, options);
  if (!result) qFatal("fuseOps failed: %s", result.error().toString().c_str());
  return *result;
}

QString text(const Graph& graph) { return QString::fromStdString(printGraph(graph)); }

std::vector<std::string> opNames(const Graph& graph) {
  std::vector<std::string> names;
  for (const OperationNode* node : graph.operations()) names.push_back(node->op);
  return names;
}
}  // namespace

class TestFuseOps : public QObject {
  Q_OBJECT
private slots:
  void convBiasReluBecomeOneKernel() {
    Value x = makeInput("x", f32({1, 3, 8, 8}));
    Value c = conv("conv", x, 4);
    Value bias = makeConstant("bias", filled({4, 1, 1}, 0.25f));
    Value sum = op("add", "Add", {c, bias}, f32({1, 4, 8, 8}));
    Value relu = op("relu", "Relu", {sum}, f32({1, 4, 8, 8}));
    Graph after = fused(Graph{{x}, {relu}, {"y"}});

    // The fused node lists its primitives under it.
    QCOMPARE(text(after), QString("graph(%x: float32[1, 3, 8, 8]) {\n"
                                  "  const @conv.w: float32[4, 3, 3, 3]\n"
                                  "  const @bias: float32[4, 1, 1]\n"
                                  "  %fused_Conv_Add_Relu = fused_Conv_Add_Relu(%x, @conv.w, @bias) : "
                                  "float32[1, 4, 8, 8]  # conv_onnx, add_onnx, relu_onnx\n"
                                  "    graph(%x: float32[1, 3, 8, 8], %conv.w: float32[4, 3, 3, 3], "
                                  "%bias: float32[4, 1, 1]) {\n"
                                  "      %conv = Conv(%x, %conv.w) {pads=[1, 1, 1, 1]} : float32[1, 4, 8, 8]"
                                  "  # conv_onnx\n"
                                  "      %add = Add(%conv, %bias) : float32[1, 4, 8, 8]  # add_onnx\n"
                                  "      %relu = Relu(%add) : float32[1, 4, 8, 8]  # relu_onnx\n"
                                  "      return %relu\n"
                                  "    }\n"
                                  "  return %fused_Conv_Add_Relu\n"
                                  "}\n"));
    const OperationNode* node = after.operations().front();
    QVERIFY(node->isFused());
    QCOMPARE(node->body->operationCount(), size_t(3));
    QCOMPARE(node->provenance.size(), size_t(3));
    QCOMPARE(node->provenance[1].opset, 13);
  }

  void aValueWithTwoReadersEndsItsGroup() {
    Value x = makeInput("x", f32({1, 3, 8, 8}));
    Value c = conv("conv", x, 4);
    Value relu = op("relu", "Relu", {c}, f32({1, 4, 8, 8}));
    Value left = op("exp", "Exp", {relu}, f32({1, 4, 8, 8}));
    Value right = op("neg", "Neg", {relu}, f32({1, 4, 8, 8}));
    Value sum = op("sum", "Add", {left, right}, f32({1, 4, 8, 8}));
    Graph after = fused(Graph{{x}, {sum}, {"y"}});
    // relu is read twice: conv + relu stop there; the two branches join their reader.
    QCOMPARE(opNames(after), (std::vector<std::string>{"fused_Conv_Relu", "fused_Exp_Neg_Add"}));
    QVERIFY2(text(after).contains("= fused_Exp_Neg_Add(%fused_Conv_Relu)"), qPrintable(text(after)));
  }

  void aGraphOutputIsReadOutsideEveryGroup() {
    Value x = makeInput("x", f32({1, 3, 8, 8}));
    Value c = conv("conv", x, 4);
    Value relu = op("relu", "Relu", {c}, f32({1, 4, 8, 8}));
    Graph after = fused(Graph{{x}, {relu, c}, {"y", "features"}});
    QCOMPARE(opNames(after), (std::vector<std::string>{"Conv", "Relu"}));
  }

  void opaqueOperatorsStayAlone() {
    Value x = makeInput("x", f32({16}));
    Value a = op("a", "Relu", {x}, f32({16}));
    Value custom = op("custom", "NoSuchOperator", {a}, f32({16}));  // unknown: opaque
    Value b = op("b", "Relu", {custom}, f32({16}));
    Value c = op("c", "Exp", {b}, f32({16}));
    Graph after = fused(Graph{{x}, {c}, {"y"}});
    QCOMPARE(opNames(after), (std::vector<std::string>{"Relu", "NoSuchOperator", "fused_Relu_Exp"}));
  }

  void injectiveChainEndsInAReductionWithAnEpilogue() {
    Value x = makeInput("x", f32({4, 8}));
    Value t = op("t", "Transpose", {x}, f32({8, 4}), {{"perm", std::vector<int64_t>{1, 0}}});
    Value e = op("e", "Exp", {t}, f32({8, 4}));
    Value r = op("r", "ReduceSum", {e, makeConstant("axes", int64s({1}))}, f32({8, 1}), {{"keepdims", int64_t(1)}});
    Value l = op("l", "Log", {r}, f32({8, 1}));
    // A second reduction is a second anchor: it starts a group of its own.
    Value m = op("m", "ReduceMax", {l}, f32({1, 1}), {{"keepdims", int64_t(1)}});
    Graph after = fused(Graph{{x}, {m}, {"y"}});
    QCOMPARE(opNames(after), (std::vector<std::string>{"fused_Transpose_Exp_ReduceSum_Log", "ReduceMax"}));
  }

  void nothingJoinsAConvolutionFromAbove() {
    Value x = makeInput("x", f32({1, 3, 8, 8}));
    Value relu = op("relu", "Relu", {x}, f32({1, 3, 8, 8}));
    Value c1 = conv("conv1", relu, 4);
    Value c2 = conv("conv2", c1, 4);  // two anchors never share a group
    Graph after = fused(Graph{{x}, {c2}, {"y"}});
    QCOMPARE(opNames(after), (std::vector<std::string>{"Relu", "Conv", "Conv"}));
  }

  void anEpilogueKeepsTheAnchorsShape() {
    Value x = makeInput("x", f32({1, 3, 8, 8}));
    Value c = conv("conv", x, 4);
    Value other = makeInput("other", f32({2, 4, 8, 8}));
    Value wider = op("wider", "Add", {c, other}, f32({2, 4, 8, 8}));  // broadcasts the conv up
    Graph after = fused(Graph{{x, other}, {wider}, {"y"}});
    QCOMPARE(opNames(after), (std::vector<std::string>{"Conv", "Add"}));
  }

  void shapeConstantsStayInsideTheBody() {
    Value x = makeInput("x", f32({2, 8}));
    Value relu = op("relu", "Relu", {x}, f32({2, 8}));
    Value shape = makeConstant("shape", int64s({4, 4}));
    Value reshaped = op("reshape", "Reshape", {relu, shape}, f32({4, 4}));
    Value scale = makeConstant("scale", filled({4, 4}, 2.0f));
    Value scaled = op("scaled", "Mul", {reshaped, scale}, f32({4, 4}));
    Graph after = fused(Graph{{x}, {scaled}, {"y"}});
    QCOMPARE(opNames(after), (std::vector<std::string>{"fused_Relu_Reshape_Mul"}));
    const OperationNode* node = after.operations().front();
    // The shape is read by value when compiling; the weight stays a runtime parameter.
    QCOMPARE(node->inputs.size(), size_t(2));
    QVERIFY(node->inputs[0] == x);
    QVERIFY(node->inputs[1] == scale);
    QVERIFY2(text(*node->body).contains("%reshape = Reshape(%relu, @shape)"), qPrintable(text(*node->body)));
    QCOMPARE(node->body->inputs.size(), size_t(2));
  }

  void epiloguesCanBeTurnedOff() {
    Value x = makeInput("x", f32({1, 3, 8, 8}));
    Value relu = op("relu", "Relu", {conv("conv", x, 4)}, f32({1, 4, 8, 8}));
    Value exp = op("exp", "Exp", {relu}, f32({1, 4, 8, 8}));
    Graph graph{{x}, {exp}, {"y"}};
    QCOMPARE(opNames(fused(graph, {false})), (std::vector<std::string>{"Conv", "fused_Relu_Exp"}));
    QCOMPARE(opNames(fused(graph)), (std::vector<std::string>{"fused_Conv_Relu_Exp"}));
  }

  void fusedNamesAreUniqueAndOpsShared() {
    Value x = makeInput("x", f32({1, 3, 8, 8}));
    Value first = op("relu1", "Relu", {conv("conv1", x, 3)}, f32({1, 3, 8, 8}));
    Value second = op("relu2", "Relu", {conv("conv2", first, 3)}, f32({1, 3, 8, 8}));
    Graph after = fused(Graph{{x}, {second}, {"y"}});
    auto ops = after.operations();
    QCOMPARE(int(ops.size()), 2);
    QCOMPARE(QString::fromStdString(ops[0]->name), QString("fused_Conv_Relu"));
    QCOMPARE(QString::fromStdString(ops[1]->name), QString("fused_Conv_Relu_1"));
    QCOMPARE(ops[0]->op, ops[1]->op);
    QVERIFY(ops[1]->inputs[0].node() == ops[0]);  // the second block reads the first
  }

  void anUntypedGraphIsAUserError() {
    Value x = makeInput("x", f32({4}));
    Value y = makeOperation("y", "Relu", {x}, {}, {TensorType{}})[0];
    auto result = fuseOps(Graph{{x}, {y}, {"y"}});
    QVERIFY(!result.ok());
    QVERIFY(QString::fromStdString(result.error().toString()).contains("InferTypes"));
  }

  void fusingTwiceChangesNothing() {
    Value x = makeInput("x", f32({1, 3, 8, 8}));
    Value relu = op("relu", "Relu", {conv("conv", x, 4)}, f32({1, 4, 8, 8}));
    Graph once = fused(Graph{{x}, {relu}, {"y"}});
    Graph twice = fused(once);
    QCOMPARE(text(twice), text(once));
  }
};

QTEST_GUILESS_MAIN(TestFuseOps)
#include "test_fuse_ops.moc"
