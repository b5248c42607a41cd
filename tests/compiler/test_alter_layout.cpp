// AlterLayout: which operations get weights packed at compile time, which activations go
// channel-blocked (NCHW<b>c), the graph it prints, and that the rewritten graphs compute what
// the originals did.
#include <QtTest>

#include "OpsTestSupport.h"
#include "compiler/driver/Driver.h"
#include "compiler/graph/AlterLayout.h"
#include "compiler/graph/InferTypes.h"
#include "compiler/opdefs/OpRegistry.h"
#include "compiler/ops/Conv2d.h"
#include "compiler/ops/LayoutTransform.h"
#include "compiler/ops/Matmul.h"

using namespace tessel;
using namespace tessel::graph;
using namespace tessel::testing;

Q_DECLARE_METATYPE(tessel::graph::Attributes)
Q_DECLARE_METATYPE(std::vector<int64_t>)

namespace {
TensorType f32(std::vector<int64_t> shape) { return TensorType{DataType::float32(), std::move(shape), ""}; }

// Values in [-1, 1) from a fixed pattern.
runtime::NDArray patterned(const std::vector<int64_t>& shape, int seed) {
  auto array = runtime::NDArray::empty(shape, runtime::DataType::float32());
  int64_t i = 0;
  for (float& v : array.values<float>()) {
    v = float(((i + seed) * 7919 + seed * 104729) % 2001) / 1000.0f - 1.0f;
    ++i;
  }
  return array;
}

runtime::NDArray scalar(float value) {
  auto array = runtime::NDArray::empty({}, runtime::DataType::float32());
  *array.dataAs<float>() = value;
  return array;
}

HostTensor hostOf(const runtime::NDArray& array) {
  HostTensor t{array.shape(), {}};
  for (float v : array.values<float>()) t.values.push_back(v);
  return t;
}

Value conv(const std::string& name, Value data, Value weight, std::vector<int64_t> outShape, Attributes attributes,
           Value bias = Value()) {
  std::vector<Value> inputs = {std::move(data), std::move(weight)};
  if (bias.defined()) inputs.push_back(std::move(bias));
  return makeOperation(name, "Conv", inputs, std::move(attributes), {f32(std::move(outShape))},
                       {{name + "_onnx", "Conv", 13}})[0];
}

const OperationNode* producer(const Value& v) { return asOperation(v.node()); }

int constantCount(const Graph& g) {
  int count = 0;
  for (const GraphNode* node : g.topologicalOrder()) count += asConstant(node) ? 1 : 0;
  return count;
}

// Runs the registry's kernel for `node` on its inputs' data (`values` for the non-constant ones).
std::vector<HostTensor> runNode(const OperationNode& node, const std::vector<HostTensor>& values,
                                const Target& target) {
  OpCall call = makeOpCall(node, target);
  auto kernel = buildOpKernel(call);
  if (!kernel) {
    qWarning("%s", kernel.error().toString().c_str());
    return {};
  }
  auto schedule = kernel->schedule(kernel->workload, target);
  if (!schedule) {
    qWarning("%s", schedule.error().toString().c_str());
    return {};
  }
  std::vector<HostTensor> inputs;
  size_t next = 0;
  for (int index : kernel->inputIndices)
    inputs.push_back(call.isConstant(size_t(index)) ? hostOf(call.constantInputs[size_t(index)]) : values[next++]);
  return runWorkload(kernel->workload, *schedule, inputs);
}

double largestDifference(const HostTensor& a, const HostTensor& b) {
  if (a.shape != b.shape) return 1e30;
  double worst = 0;
  for (size_t i = 0; i < a.values.size(); ++i) worst = std::max(worst, std::abs(a.values[i] - b.values[i]));
  return worst;
}

Target targetWithLanes(int lanes) {
  Target target = hostTarget();
  target.vectorBits = 32 * lanes;
  return target;
}

// An operation whose output type InferTypes fills in.
Value untyped(const std::string& name, const std::string& op, std::vector<Value> inputs, Attributes attributes = {}) {
  return makeOperation(name, op, std::move(inputs), std::move(attributes), {TensorType{}}, {{name, op, 13}})[0];
}

Attributes convAttributes(int64_t pad) { return {{"pads", std::vector<int64_t>{pad, pad, pad, pad}}}; }

// ResNet's stem and a residual block in small: conv1 -> relu -> maxpool -> conv2 -> add(maxpool)
// -> mul(per-channel), which ends three ways: an average pool, a 1x1 conv and a global average
// pool flattened as a classifier reads it. The chain AlterLayout keeps blocked, with NCHW ends.
Graph convChain(int64_t channels, int64_t filters, int64_t size) {
  Value x = makeInput("x", f32({1, channels, size, size}));
  Value c1 = untyped("conv1", "Conv", {x, makeConstant("w1", patterned({filters, channels, 3, 3}, 1)),
                                       makeConstant("b1", patterned({filters}, 2))},
                     convAttributes(1));
  Value r1 = untyped("relu1", "Relu", {c1});
  Value p1 = untyped("maxpool", "MaxPool", {r1}, {{"kernel_shape", std::vector<int64_t>{3, 3}},
                                                  {"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  Value c2 = untyped("conv2", "Conv", {p1, makeConstant("w2", patterned({filters, filters, 3, 3}, 3))},
                     convAttributes(1));
  Value sum = untyped("add", "Add", {c2, p1});
  Value scaled = untyped("scale", "Mul", {sum, makeConstant("s", patterned({filters, 1, 1}, 4))});
  Value pooled = untyped("pool", "AveragePool", {scaled}, {{"kernel_shape", std::vector<int64_t>{2, 2}},
                                                           {"strides", std::vector<int64_t>{2, 2}}});
  Value c3 = untyped("conv3", "Conv", {scaled, makeConstant("w3", patterned({filters, filters, 1, 1}, 5))},
                     convAttributes(0));
  Value features = untyped("flatten", "Flatten", {untyped("gap", "GlobalAveragePool", {scaled})});
  return Graph{{x}, {pooled, c3, features}, {"pooled", "projected", "features"}};
}

PassOptions disabling(const std::string& pass) {
  PassOptions options;
  options.disabledPasses = {pass};
  return options;
}

PassOptions configured(const std::string& key, const std::string& value) {
  PassOptions options;
  options.config[key] = value;
  return options;
}

// Compiles through the driver and runs on `input`; `alteredText` receives the graph after
// AlterLayout.
std::vector<runtime::NDArray> runCompiled(const Graph& graph, const PassOptions& passes, const runtime::NDArray& input,
                                          QString* alteredText = nullptr) {
  driver::CompileOptions options;
  options.passes = passes;
  auto compiled = driver::compileGraph(graph, options);
  if (!compiled) qFatal("%s", compiled.error().toString().c_str());
  for (const PassSnapshot& snapshot : compiled->snapshots)
    if (alteredText && snapshot.passName == "AlterLayout")
      *alteredText = QString::fromStdString(printGraph(snapshot.graph));
  auto executor = driver::createExecutor(*compiled);
  if (!executor) qFatal("%s", executor.error().toString().c_str());
  (*executor)->setInput("x", input);
  (*executor)->run();
  std::vector<runtime::NDArray> outputs;
  for (const std::string& name : (*executor)->outputNames()) outputs.push_back((*executor)->getOutput(name));
  return outputs;
}

// Fails the test unless both runs computed the same outputs.
void compareOutputs(const std::vector<runtime::NDArray>& got, const std::vector<runtime::NDArray>& expected) {
  QCOMPARE(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    QCOMPARE(got[i].shape(), expected[i].shape());
    double worst = largestDifference(hostOf(got[i]), hostOf(expected[i]));
    QVERIFY2(worst < 1e-3, qPrintable(QString("output %1 differs by %2").arg(i).arg(worst)));
  }
}

Value layoutTransform(const std::string& name, Value data, const std::string& from, const std::string& to) {
  return untyped(name, "LayoutTransform", {std::move(data)}, {{"src_layout", from}, {"dst_layout", to}});
}

// The AlterLayout snapshot of a compile (before fusion), printed.
QString alteredText(const Graph& graph, const Target& target) {
  auto typed = inferTypes(graph);
  if (!typed) qFatal("%s", typed.error().toString().c_str());
  auto altered = alterLayout(*typed, target, AlterLayoutOptions{});
  if (!altered) qFatal("%s", altered.error().toString().c_str());
  auto retyped = inferTypes(*altered, target);  // the rewritten graph must type-check as it is
  if (!retyped) qFatal("%s", retyped.error().toString().c_str());
  if (printGraph(*retyped) != printGraph(*altered)) qFatal("InferTypes changed the altered graph");
  return QString::fromStdString(printGraph(*altered));
}
}  // namespace

class TestAlterLayout : public QObject {
  Q_OBJECT
private slots:
  void convWeightIsPackedAtCompileTime() {
    Target target = targetWithLanes(8);
    Value x = makeInput("x", f32({1, 4, 6, 6}));
    Value w = makeConstant("w", patterned({16, 4, 3, 3}, 1));
    Value b = makeConstant("b", patterned({16}, 2));
    Value y = conv("conv1", x, w, {1, 16, 6, 6}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, b);
    Graph g{{x}, {y}, {"y"}};
    auto altered = alterLayout(g, target);
    QVERIFY2(altered.ok(), altered.ok() ? "" : altered.error().toString().c_str());
    // 16 filters in blocks of 16 (two 8-lane vectors): weight [1, 4, 3, 3, 16].
    QCOMPARE(QString::fromStdString(printGraph(*altered)),
             QString("graph(%x: float32[1, 4, 6, 6]) {\n"
                     "  const @w.OIHW16o: float32[1, 4, 3, 3, 16]@OIHW16o\n"
                     "  const @b: float32[16]\n"
                     "  %conv1 = ConvPrepacked(%x, @w.OIHW16o, @b) {pads=[1, 1, 1, 1], weight_shape=[16, 4, 3, 3]}"
                     " : float32[1, 16, 6, 6]  # conv1_onnx\n"
                     "  return %conv1\n"
                     "}\n"));
    QVERIFY(producer(altered->outputs[0])->provenance == producer(y)->provenance);
  }

  void packedConvComputesTheOriginalConv_data() {
    QTest::addColumn<int>("lanes");
    QTest::addColumn<int>("stride");
    QTest::addColumn<int>("group");
    QTest::newRow("3x3, AVX2 blocks") << 8 << 1 << 1;
    QTest::newRow("3x3 stride 2, AVX-512 blocks") << 16 << 2 << 1;
    QTest::newRow("grouped") << 8 << 1 << 2;
  }
  void packedConvComputesTheOriginalConv() {
    QFETCH(int, lanes);
    QFETCH(int, stride);
    QFETCH(int, group);
    Target target = targetWithLanes(lanes);
    Conv2dParams p;
    p.channels = 6;
    p.height = p.width = 9;
    p.filters = 20;  // not a multiple of the filter block: the packed weight ends in zeros
    p.kernelH = p.kernelW = 3;
    p.stride = stride;
    p.pad = 1;
    p.groups = group;
    p.bias = true;
    runtime::NDArray weight = patterned({p.filters, p.channels / group, 3, 3}, 3);
    runtime::NDArray bias = patterned({p.filters}, 4);
    Value x = makeInput("x", f32({1, p.channels, p.height, p.width}));
    Attributes attributes{{"pads", std::vector<int64_t>{1, 1, 1, 1}},
                          {"strides", std::vector<int64_t>{stride, stride}},
                          {"group", int64_t(group)}};
    Value y = conv("conv", x, makeConstant("w", weight), {1, p.filters, p.outHeight(), p.outWidth()}, attributes,
                   makeConstant("b", bias));
    auto altered = alterLayout(Graph{{x}, {y}, {"y"}}, target);
    QVERIFY(altered.ok());
    const OperationNode* packedConv = producer(altered->outputs[0]);
    QCOMPARE(QString::fromStdString(packedConv->op), QString("ConvPrepacked"));

    HostTensor data = hostOf(patterned({1, p.channels, p.height, p.width}, 5));
    auto got = runNode(*packedConv, {data}, target);
    QCOMPARE(got.size(), size_t(1));
    Workload original = conv2d(p, DataType::float32(), target);
    auto schedule = defaultConv2dSchedule(original, p, target);
    QVERIFY(schedule.ok());
    auto expected = runWorkload(original, *schedule, {data, hostOf(weight), hostOf(bias)});
    QCOMPARE(expected.size(), size_t(1));
    QVERIFY2(largestDifference(got[0], expected[0]) < 1e-4,
             qPrintable(QString::number(largestDifference(got[0], expected[0]))));
  }

  void convsAlterLayoutLeavesAlone() {
    Value x = makeInput("x", f32({1, 8, 6, 6}));
    Value runtimeWeight = makeInput("w", f32({8, 8, 3, 3}));
    Attributes pad1{{"pads", std::vector<int64_t>{1, 1, 1, 1}}};
    Value a = conv("weight_is_an_input", x, runtimeWeight, {1, 8, 6, 6}, pad1);
    Attributes depthwise = pad1;
    depthwise["group"] = int64_t(8);
    Value b = conv("depthwise", a, makeConstant("dw", patterned({8, 1, 3, 3}, 1)), {1, 8, 6, 6}, depthwise);
    Graph g{{x, runtimeWeight}, {b}, {"y"}};
    auto altered = alterLayout(g);
    QVERIFY(altered.ok());
    QVERIFY(altered->outputs[0] == g.outputs[0]);  // nothing rebuilt
  }

  void sharedWeightIsPackedOnce() {
    Value x = makeInput("x", f32({1, 8, 6, 6}));
    Value w = makeConstant("w", patterned({8, 8, 1, 1}, 1));
    Value a = conv("a", x, w, {1, 8, 6, 6}, {});
    Value b = conv("b", a, w, {1, 8, 6, 6}, {});
    AlterLayoutOptions weightsOnly;
    weightsOnly.blockedActivations = false;
    auto altered = alterLayout(Graph{{x}, {b}, {"y"}}, hostTarget(), weightsOnly);
    QVERIFY(altered.ok());
    QCOMPARE(constantCount(*altered), 1);
    QCOMPARE(QString::fromStdString(producer(altered->outputs[0])->op), QString("ConvPrepacked"));
    QCOMPARE(QString::fromStdString(producer(producer(altered->outputs[0])->inputs[0])->op),
             QString("ConvPrepacked"));
  }

  void malformedConvIsDiagnosed() {
    Value x = makeInput("x", f32({1, 6, 6, 6}));
    Value y = conv("bad_conv", x, makeConstant("w", patterned({8, 4, 3, 3}, 1)), {1, 8, 4, 4}, {});
    auto altered = alterLayout(Graph{{x}, {y}, {"y"}});
    QVERIFY(!altered.ok());
    QString message = QString::fromStdString(altered.error().toString());
    QVERIFY2(message.contains("bad_conv") && message.contains("channels"), qPrintable(message));
  }

  void matmulWithConstantMatrixUsesPackedPanels() {
    Target target = targetWithLanes(8);
    Value x = makeInput("x", f32({1, 5, 12}));
    runtime::NDArray b = patterned({12, 20}, 2);
    Value y = makeOperation("mm", "MatMul", {x, makeConstant("B", b)}, {}, {f32({1, 5, 20})})[0];
    auto altered = alterLayout(Graph{{x}, {y}, {"y"}}, target);
    QVERIFY(altered.ok());
    QString text = QString::fromStdString(printGraph(*altered));
    QVERIFY2(text.contains("const @B.KN16n: float32[2, 12, 16]@KN16n") &&
                 text.contains("%mm = DensePrepacked(%x, @B.KN16n) {n=20} : float32[1, 5, 20]"),
             qPrintable(text));

    HostTensor data = hostOf(patterned({1, 5, 12}, 3));
    auto got = runNode(*producer(altered->outputs[0]), {data}, target);
    QCOMPARE(got.size(), size_t(1));
    HostTensor weights = hostOf(b);
    double worst = 0;
    for (int64_t i = 0; i < 5; ++i)
      for (int64_t j = 0; j < 20; ++j) {
        double sum = 0;
        for (int64_t k = 0; k < 12; ++k) sum += data.values[size_t(i * 12 + k)] * weights.values[size_t(k * 20 + j)];
        worst = std::max(worst, std::abs(got[0].values[size_t(i * 20 + j)] - sum));
      }
    QVERIFY2(worst < 1e-4, qPrintable(QString::number(worst)));
  }

  void gemmBecomesPackedProductPlusBias() {
    Value x = makeInput("x", f32({2, 16}));
    Value b = makeConstant("fc.weight", patterned({10, 16}, 1));  // Linear: [out, in], transB
    Value c = makeConstant("fc.bias", patterned({10}, 2));
    Value y = makeOperation("fc", "Gemm", {x, b, c}, {{"transB", int64_t(1)}}, {f32({2, 10})})[0];
    auto altered = alterLayout(Graph{{x}, {y}, {"y"}});
    QVERIFY(altered.ok());
    QString text = QString::fromStdString(printGraph(*altered));
    QVERIFY2(text.contains("%fc.product = DensePrepacked(%x, @fc.weight.KN10n) {n=10} : float32[2, 10]") &&
                 text.contains("%fc = Add(%fc.product, @fc.bias) : float32[2, 10]"),
             qPrintable(text));

    // Scaled products stay Gemm (the packed kernel has no alpha).
    Value scaled =
        makeOperation("scaled", "Gemm", {x, b, c}, {{"transB", int64_t(1)}, {"alpha", 2.0}}, {f32({2, 10})})[0];
    auto kept = alterLayout(Graph{{x}, {scaled}, {"y"}});
    QVERIFY(kept.ok());
    QVERIFY(kept->outputs[0] == scaled);
  }

  void convChainStaysBlockedUntilItsNchwConsumers() {
    // AVX2 lanes: 16 filters make one block of 16 (two vectors).
    QString text = alteredText(convChain(8, 16, 6), targetWithLanes(8));
    QString expected("graph(%x: float32[1, 8, 6, 6]) {\n"
                     "  const @w1.OIHW16o: float32[1, 8, 3, 3, 16]@OIHW16o\n"
                     "  const @b1: float32[16]\n"
                     "  const @w2.OIHW16o: float32[1, 16, 3, 3, 16]@OIHW16o\n"
                     "  const @s.NCHW16c: float32[1, 1, 1, 16]\n"
                     "  const @w3.OIHW16o: float32[1, 16, 1, 1, 16]@OIHW16o\n"
                     "  %conv1 = ConvPrepacked(%x, @w1.OIHW16o, @b1) {out_layout=\"NCHW16c\", pads=[1, 1, 1, 1],"
                     " weight_shape=[16, 8, 3, 3]} : float32[1, 1, 6, 6, 16]@NCHW16c  # conv1\n"
                     "  %relu1 = Relu(%conv1) : float32[1, 1, 6, 6, 16]@NCHW16c  # relu1\n"
                     "  %maxpool = MaxPool(%relu1) {kernel_shape=[3, 3], pads=[1, 1, 1, 1]}"
                     " : float32[1, 1, 6, 6, 16]@NCHW16c  # maxpool\n"
                     "  %conv2 = ConvPrepacked(%maxpool, @w2.OIHW16o) {data_layout=\"NCHW16c\", out_layout=\"NCHW16c\","
                     " pads=[1, 1, 1, 1], weight_shape=[16, 16, 3, 3]} : float32[1, 1, 6, 6, 16]@NCHW16c  # conv2\n"
                     "  %add = Add(%conv2, %maxpool) : float32[1, 1, 6, 6, 16]@NCHW16c  # add\n"
                     "  %scale = Mul(%add, @s.NCHW16c) : float32[1, 1, 6, 6, 16]@NCHW16c  # scale\n"
                     "  %pool = AveragePool(%scale) {kernel_shape=[2, 2], strides=[2, 2]}"
                     " : float32[1, 1, 3, 3, 16]@NCHW16c  # pool\n"
                     "  %pool.NCHW = LayoutTransform(%pool) {dst_layout=\"NCHW\", src_layout=\"NCHW16c\"}"
                     " : float32[1, 16, 3, 3]\n"
                     "  %conv3 = ConvPrepacked(%scale, @w3.OIHW16o) {data_layout=\"NCHW16c\", pads=[0, 0, 0, 0],"
                     " weight_shape=[16, 16, 1, 1]} : float32[1, 16, 6, 6]  # conv3\n"
                     "  %gap = GlobalAveragePool(%scale) : float32[1, 1, 1, 1, 16]@NCHW16c  # gap\n"
                     "  %gap.NCHW = LayoutTransform(%gap) {dst_layout=\"NCHW\", src_layout=\"NCHW16c\"}"
                     " : float32[1, 16, 1, 1]\n"
                     "  %flatten = Flatten(%gap.NCHW) : float32[1, 16]  # flatten\n"
                     "  return %pool.NCHW, %conv3, %flatten\n"
                     "}\n");
    QVERIFY2(text == expected, qPrintable(text));
  }

  void blockedChainComputesWhatNchwDoes_data() {
    QTest::addColumn<int>("channels");
    QTest::addColumn<int>("filters");
    QTest::addColumn<int>("size");
    QTest::newRow("one block") << 8 << 16 << 6;
    QTest::newRow("several blocks, odd size") << 5 << 64 << 9;
    QTest::newRow("filters a vector does not divide") << 3 << 12 << 7;
  }
  void blockedChainComputesWhatNchwDoes() {
    QFETCH(int, channels);
    QFETCH(int, filters);
    QFETCH(int, size);
    Graph graph = convChain(channels, filters, size);
    runtime::NDArray input = patterned({1, channels, size, size}, 7);
    QString optimized;
    auto blocked = runCompiled(graph, {}, input, &optimized);
    auto reference = runCompiled(graph, disabling("AlterLayout"), input);
    compareOutputs(blocked, reference);
    // The chain ran blocked whenever the filter block divides the filters.
    Conv2dParams conv1;
    conv1.channels = channels;
    conv1.filters = filters;
    bool divides = filters % conv2dFilterBlock(conv1) == 0;
    QCOMPARE(optimized.contains("NCHW"), divides);
  }

  // A squeeze-and-excitation block (EfficientNet, MobileNetV3): the channel scale computed
  // from a global pool, a 1x1 convolution and a sigmoid multiplies the blocked activations in
  // place, with no layout transform of either operand, and computes what NCHW does.
  void squeezeAndExcitationScaleStaysBlocked() {
    const int64_t channels = 8, filters = 32, size = 7;
    Value x = makeInput("x", f32({1, channels, size, size}));
    Value c1 = untyped("conv1", "Conv", {x, makeConstant("w1", patterned({filters, channels, 3, 3}, 1))},
                       convAttributes(1));
    Value r1 = untyped("relu1", "Relu", {c1});
    Value squeezed = untyped("gap", "GlobalAveragePool", {r1});
    Value excited = untyped("fc", "Conv", {squeezed, makeConstant("wfc", patterned({filters, filters, 1, 1}, 2))},
                            convAttributes(0));
    Value scale = untyped("sigmoid", "Sigmoid", {excited});
    Value scaled = untyped("scale", "Mul", {r1, scale});
    Value c2 = untyped("conv2", "Conv", {scaled, makeConstant("w2", patterned({filters, filters, 1, 1}, 3))},
                       convAttributes(0));
    Graph graph{{x}, {c2}, {"y"}};
    runtime::NDArray input = patterned({1, channels, size, size}, 7);
    QString optimized;
    auto blocked = runCompiled(graph, {}, input, &optimized);
    auto reference = runCompiled(graph, disabling("AlterLayout"), input);
    compareOutputs(blocked, reference);
    QVERIFY2(optimized.contains(QRegularExpression("%scale = Mul\\(%relu1, %sigmoid\\) : float32\\[1, \\d+, 7, 7, \\d+\\]@NCHW")),
             qPrintable(optimized));
    QVERIFY2(!optimized.contains("LayoutTransform"), qPrintable(optimized));
  }

  // SqueezeNet's fire module and GoogLeNet's pool branch: a 1x1 squeeze, then 1x1 and 3x3
  // expansions joined by a channel Concat, which a 3x3 stride-1 max pool and a 1x1
  // convolution read. When both expansions write whole blocks of one size, the Concat joins
  // them and everything between the convolutions stays blocked; an expansion whose filters
  // fill no vector leaves the Concat, and the expansions' outputs, on NCHW, as before. Either
  // way nothing is transformed between the convolutions, and the graph computes what NCHW
  // does.
  void channelConcatStaysBlockedBetweenConvs_data() {
    QTest::addColumn<int>("left");
    QTest::addColumn<int>("right");
    QTest::addColumn<bool>("blocked");
    QTest::newRow("SqueezeNet's equal expansions") << 32 << 32 << true;
    QTest::newRow("unequal expansions, both in blocks of 16") << 16 << 48 << true;
    QTest::newRow("an expansion that fills no block") << 16 << 12 << false;
  }
  void channelConcatStaysBlockedBetweenConvs() {
    QFETCH(int, left);
    QFETCH(int, right);
    QFETCH(bool, blocked);
    const int64_t channels = 8, squeezed = 16, size = 7;
    Value x = makeInput("x", f32({1, channels, size, size}));
    Value squeeze = untyped("squeeze", "Relu", {untyped("squeeze_conv", "Conv",
        {x, makeConstant("ws", patterned({squeezed, channels, 1, 1}, 1))}, convAttributes(0))});
    Value expand1 = untyped("expand1", "Relu", {untyped("expand1_conv", "Conv",
        {squeeze, makeConstant("w1", patterned({left, squeezed, 1, 1}, 2))}, convAttributes(0))});
    Value expand3 = untyped("expand3", "Relu", {untyped("expand3_conv", "Conv",
        {squeeze, makeConstant("w3", patterned({right, squeezed, 3, 3}, 3))}, convAttributes(1))});
    Value joined = untyped("cat", "Concat", {expand1, expand3}, {{"axis", int64_t(1)}});
    Value pooled = untyped("pool", "MaxPool", {joined}, {{"kernel_shape", std::vector<int64_t>{3, 3}},
                                                         {"pads", std::vector<int64_t>{1, 1, 1, 1}}});
    Value next = untyped("next", "Conv", {joined, makeConstant("wn", patterned({16, left + right, 1, 1}, 4))},
                         convAttributes(0));
    Value branch = untyped("branch", "Conv", {pooled, makeConstant("wb", patterned({16, left + right, 1, 1}, 5))},
                           convAttributes(0));
    Graph graph{{x}, {untyped("sum", "Add", {next, branch})}, {"y"}};
    runtime::NDArray input = patterned({1, channels, size, size}, 7);
    compareOutputs(runCompiled(graph, {}, input), runCompiled(graph, disabling("AlterLayout"), input));

    QString text = alteredText(graph, targetWithLanes(8));
    QString joinedType = blocked ? QString("float32[1, %1, 7, 7, 16]@NCHW16c").arg((left + right) / 16)
                                 : QString("float32[1, %1, 7, 7]").arg(left + right);
    QVERIFY2(text.contains("%cat = Concat(%expand1, %expand3) {axis=1} : " + joinedType + "  # cat"),
             qPrintable(text));
    QVERIFY2(text.contains("%pool = MaxPool(%cat)"), qPrintable(text));
    // Unblocked, the expansions write NCHW themselves: no transform either.
    QVERIFY2(!text.contains("LayoutTransform"), qPrintable(text));
  }

  // An NCHW input of a channel Concat whose result reaches a convolution is transformed in
  // (one copy of that input) rather than the blocked one and the result transformed out.
  void channelConcatTransformsAnNchwInputIn() {
    const int64_t channels = 16, filters = 32, size = 6;
    Value x = makeInput("x", f32({1, channels, size, size}));
    Value c1 = untyped("conv1", "Conv", {x, makeConstant("w1", patterned({filters, channels, 3, 3}, 1))},
                       convAttributes(1));
    Value joined = untyped("cat", "Concat", {x, c1}, {{"axis", int64_t(1)}});
    Value c2 = untyped("conv2", "Conv", {joined, makeConstant("w2", patterned({16, channels + filters, 1, 1}, 2))},
                       convAttributes(0));
    Graph graph{{x}, {c2}, {"y"}};
    runtime::NDArray input = patterned({1, channels, size, size}, 7);
    compareOutputs(runCompiled(graph, {}, input), runCompiled(graph, disabling("AlterLayout"), input));
    QString text = alteredText(graph, targetWithLanes(8));
    QVERIFY2(text.contains("%x.NCHW16c = LayoutTransform(%x)") &&
                 text.contains("%cat = Concat(%x.NCHW16c, %conv1) {axis=1} : float32[1, 3, 6, 6, 16]@NCHW16c"),
             qPrintable(text));
    QCOMPARE(text.count("LayoutTransform"), 1);

    // Reaching no convolution, the smaller NCHW input is still the one transformed (DenseNet's
    // last Concat: 16 blocked layers and the last layer's NCHW output, before the classifier).
    Value features = untyped("relu", "Relu", {untyped("joined", "Concat", {x, c1, c1}, {{"axis", int64_t(1)}})});
    Graph classifier{{x}, {features, c2}, {"features", "y"}};
    compareOutputs(runCompiled(classifier, {}, input), runCompiled(classifier, disabling("AlterLayout"), input));
    QString tail = alteredText(classifier, targetWithLanes(8));
    QVERIFY2(tail.contains("%joined = Concat(%x.NCHW16c, %conv1, %conv1) {axis=1} : float32[1, 5, 6, 6, 16]@NCHW16c"),
             qPrintable(tail));
  }

  // MobileNetV2's inverted residual block: a 1x1 expansion, a depthwise 3x3 and a 1x1
  // projection, each followed by a clip. The depthwise convolution computes in the
  // expansion's blocks (its weight packed in them), so nothing between the convolutions is
  // transformed back to NCHW (the projection writes the NCHW output itself), and the block
  // computes what NCHW does.
  void depthwiseConvStaysBlockedBetweenConvs_data() {
    QTest::addColumn<int>("expanded");
    QTest::addColumn<int>("stride");
    QTest::addColumn<int>("size");
    QTest::newRow("stride 1") << 32 << 1 << 7;
    QTest::newRow("stride 2, odd size") << 48 << 2 << 9;
    QTest::newRow("channels a vector does not divide") << 12 << 1 << 6;
  }
  void depthwiseConvStaysBlockedBetweenConvs() {
    QFETCH(int, expanded);
    QFETCH(int, stride);
    QFETCH(int, size);
    const int64_t channels = 8, projected = 16;
    Value x = makeInput("x", f32({1, channels, size, size}));
    Value low = makeConstant("low", scalar(0.0f));
    Value high = makeConstant("high", scalar(0.5f));
    Value expand = untyped("expand", "Conv", {x, makeConstant("we", patterned({expanded, channels, 1, 1}, 1))},
                           convAttributes(0));
    Value clip1 = untyped("clip1", "Clip", {expand, low, high});
    Attributes depthwise = convAttributes(1);
    depthwise["group"] = int64_t(expanded);
    depthwise["strides"] = std::vector<int64_t>{stride, stride};
    Value dw = untyped("dw", "Conv", {clip1, makeConstant("wd", patterned({expanded, 1, 3, 3}, 2)),
                                      makeConstant("bd", patterned({expanded}, 3))},
                       depthwise);
    Value clip2 = untyped("clip2", "Clip", {dw, low, high});
    Value project = untyped("project", "Conv", {clip2, makeConstant("wp", patterned({projected, expanded, 1, 1}, 4))},
                            convAttributes(0));
    Graph graph{{x}, {project}, {"y"}};
    runtime::NDArray input = patterned({1, channels, size, size}, 7);
    QString optimized;
    auto blocked = runCompiled(graph, {}, input, &optimized);
    auto reference = runCompiled(graph, disabling("AlterLayout"), input);
    compareOutputs(blocked, reference);

    Target target = targetWithLanes(8);
    QString text = alteredText(graph, target);
    Conv2dParams expansion;
    expansion.channels = channels;
    expansion.filters = expanded;
    int64_t block = conv2dFilterBlock(expansion, target);
    if (expanded % block != 0) {  // the expansion stays NCHW, and so does the depthwise conv
      QVERIFY2(text.contains("%dw = Conv(%clip1, @wd, @bd)"), qPrintable(text));
      return;
    }
    QString layout = QString("NCHW%1c").arg(block);
    QVERIFY2(text.contains(QString("%dw = ConvPrepacked(%clip1, @wd.OIHW%1o, @bd) {data_layout=\"%2\"")
                               .arg(block)
                               .arg(layout)) &&
                 text.contains(QString("out_layout=\"%1\"").arg(layout)) &&
                 text.contains(QString("weight_shape=[%1, 1, 3, 3]").arg(expanded)),
             qPrintable(text));
    QVERIFY2(!text.contains("LayoutTransform"), qPrintable(text));  // the projection writes NCHW itself
  }

  void blockedActivationsCanBeTurnedOff() {
    auto typed = inferTypes(convChain(8, 16, 6));
    QVERIFY(typed.ok());
    AlterLayoutOptions options;
    options.blockedActivations = false;
    auto altered = alterLayout(*typed, targetWithLanes(8), options);
    QVERIFY(altered.ok());
    QString text = QString::fromStdString(printGraph(*altered));
    QVERIFY2(text.contains("ConvPrepacked") && !text.contains("NCHW16c") && !text.contains("LayoutTransform"),
             qPrintable(text));
  }

  // The driver's pass options reach AlterLayout: each turns its part off, the numbers stay.
  void passOptionsTurnAlterLayoutPartsOff() {
    Graph graph = convChain(8, 32, 7);
    runtime::NDArray input = patterned({1, 8, 7, 7}, 3);
    QString standard, unblocked, unpacked;
    auto reference = runCompiled(graph, {}, input, &standard);
    QVERIFY2(standard.contains("@NCHW"), qPrintable(standard));
    compareOutputs(runCompiled(graph, configured("AlterLayout.blocked_activations", "false"), input, &unblocked),
                   reference);
    QVERIFY2(unblocked.contains("ConvPrepacked") && !unblocked.contains("NCHW") &&
                 !unblocked.contains("LayoutTransform"),
             qPrintable(unblocked));
    compareOutputs(runCompiled(graph, configured("AlterLayout.pack_weights", "false"), input, &unpacked), reference);
    QVERIFY2(!unpacked.contains("Prepacked") && !unpacked.contains("NCHW"), qPrintable(unpacked));

    driver::CompileOptions misspelled;
    misspelled.passes = configured("AlterLayout.blocked_activations", "off");
    auto refused = driver::compileGraph(graph, misspelled);
    QVERIFY(!refused.ok());
    QString message = QString::fromStdString(refused.error().toString());
    QVERIFY2(message.contains("AlterLayout.blocked_activations") && message.contains("'off'") &&
                 message.contains("true or false"),
             qPrintable(message));
  }

  // A graph holding LayoutTransforms: each becomes a transform of its rewritten input, so an
  // inverse pair cancels, and a convolution reads a transform's blocked source in place.
  void existingTransformsCancel() {
    Value x = makeInput("x", f32({1, 16, 5, 5}));
    Value blocked = layoutTransform("to_blocked", x, "NCHW", "NCHW16c");
    Value back = layoutTransform("to_nchw", blocked, "NCHW16c", "NCHW");
    Value conv1 = untyped("conv1", "Conv", {back, makeConstant("w1", patterned({16, 16, 1, 1}, 1))}, convAttributes(0));
    Value relu = untyped("relu", "Relu", {layoutTransform("again_blocked", x, "NCHW", "NCHW16c")});
    Value conv2 = untyped("conv2", "Conv", {layoutTransform("again_nchw", relu, "NCHW16c", "NCHW"),
                                            makeConstant("w2", patterned({16, 16, 3, 3}, 2))},
                          convAttributes(1));
    Graph graph{{x}, {conv1, conv2}, {"direct", "through_relu"}};
    QString text = alteredText(graph, targetWithLanes(8));
    QString expected("graph(%x: float32[1, 16, 5, 5]) {\n"
                     "  const @w1.OIHW16o: float32[1, 16, 1, 1, 16]@OIHW16o\n"
                     "  const @w2.OIHW16o: float32[1, 16, 3, 3, 16]@OIHW16o\n"
                     "  %conv1 = ConvPrepacked(%x, @w1.OIHW16o) {pads=[0, 0, 0, 0], weight_shape=[16, 16, 1, 1]}"
                     " : float32[1, 16, 5, 5]  # conv1\n"
                     "  %x.NCHW16c = LayoutTransform(%x) {dst_layout=\"NCHW16c\", src_layout=\"NCHW\"}"
                     " : float32[1, 1, 5, 5, 16]@NCHW16c\n"
                     "  %relu = Relu(%x.NCHW16c) : float32[1, 1, 5, 5, 16]@NCHW16c  # relu\n"
                     "  %conv2 = ConvPrepacked(%relu, @w2.OIHW16o) {data_layout=\"NCHW16c\", pads=[1, 1, 1, 1],"
                     " weight_shape=[16, 16, 3, 3]} : float32[1, 16, 5, 5]  # conv2\n"
                     "  return %conv1, %conv2\n"
                     "}\n");
    QVERIFY2(text == expected, qPrintable(text));

    runtime::NDArray input = patterned({1, 16, 5, 5}, 4);
    compareOutputs(runCompiled(graph, {}, input), runCompiled(graph, disabling("AlterLayout"), input));
  }

  // AlterLayout's result already has its layouts: a second run keeps every one of them, and
  // the graph computes what the NCHW original does.
  void alterLayoutOfItsOwnResultChangesNothing() {
    Target host = hostTarget();
    auto typed = inferTypes(convChain(8, 32, 7));
    QVERIFY(typed.ok());
    auto once = alterLayout(*typed, host);
    QVERIFY(once.ok());
    auto twice = alterLayout(*once, host);
    QVERIFY(twice.ok());
    QCOMPARE(QString::fromStdString(printGraph(*twice)), QString::fromStdString(printGraph(*once)));

    runtime::NDArray input = patterned({1, 8, 7, 7}, 5);
    compareOutputs(runCompiled(*once, {}, input), runCompiled(*typed, disabling("AlterLayout"), input));
  }

  // Pooling is per channel: over NCHW<b>c it reads the blocked tensor in place and writes a
  // blocked result holding what the NCHW kernel computes, for every attribute ONNX allows.
  void poolsReadAndWriteBlockedActivations_data() {
    QTest::addColumn<QString>("op");
    QTest::addColumn<int>("block");
    QTest::addColumn<int>("size");
    QTest::addColumn<Attributes>("attributes");
    using Ints = std::vector<int64_t>;
    auto window = [](Ints kernel, Ints strides, Ints pads) {
      return Attributes{{"kernel_shape", kernel}, {"strides", strides}, {"pads", pads}};
    };
    QTest::newRow("ResNet's max pool 3x3 stride 2 pad 1") << "MaxPool" << 16 << 12 << window({3, 3}, {2, 2}, {1, 1, 1, 1});
    Attributes ceil = window({3, 3}, {2, 2}, {0, 0, 0, 0});
    ceil["ceil_mode"] = int64_t(1);
    QTest::newRow("SqueezeNet's max pool, ceil_mode") << "MaxPool" << 8 << 13 << ceil;
    Attributes dilated = window({2, 2}, {1, 1}, {1, 0, 0, 1});
    dilated["dilations"] = Ints{2, 2};
    QTest::newRow("dilated max pool, uneven pads") << "MaxPool" << 8 << 9 << dilated;
    QTest::newRow("average pool, padding not counted")
        << "AveragePool" << 16 << 10 << window({3, 3}, {1, 1}, {1, 1, 1, 1});
    Attributes included = window({3, 2}, {2, 1}, {1, 0, 1, 1});
    included["count_include_pad"] = int64_t(1);
    included["ceil_mode"] = int64_t(1);
    QTest::newRow("average pool, padding counted, ceil_mode") << "AveragePool" << 8 << 11 << included;
    Attributes same{{"kernel_shape", Ints{3, 3}}, {"auto_pad", std::string("SAME_UPPER")}};
    QTest::newRow("average pool, auto_pad") << "AveragePool" << 16 << 7 << same;
    QTest::newRow("global average pool") << "GlobalAveragePool" << 16 << 7 << Attributes{};
    QTest::newRow("global max pool") << "GlobalMaxPool" << 8 << 5 << Attributes{};
  }
  void poolsReadAndWriteBlockedActivations() {
    QFETCH(QString, op);
    QFETCH(int, block);
    QFETCH(int, size);
    QFETCH(Attributes, attributes);
    const Attributes& onnx = attributes;
    Target target = targetWithLanes(8);
    const int64_t channels = 32;
    std::vector<int64_t> shape = {2, channels, size, size};
    Value x = makeInput("x", f32(shape));
    Value nchwPool = untyped("pool", op.toStdString(), {x}, onnx);
    auto typed = inferTypes(Graph{{x}, {nchwPool}, {"y"}});
    QVERIFY2(typed.ok(), typed.ok() ? "" : typed.error().toString().c_str());
    const TensorType& nchwType = typed->outputs[0].type();

    std::string layout = blockedChannelLayout(block);
    Value blockedX = makeInput("x", TensorType{DataType::float32(), blockedChannelShape(shape, block), layout});
    Value blockedPool = untyped("pool", op.toStdString(), {blockedX}, onnx);
    auto blockedTyped = inferTypes(Graph{{blockedX}, {blockedPool}, {"y"}});
    QVERIFY2(blockedTyped.ok(), blockedTyped.ok() ? "" : blockedTyped.error().toString().c_str());
    const TensorType& blockedType = blockedTyped->outputs[0].type();
    QCOMPARE(QString::fromStdString(blockedType.layout), QString::fromStdString(layout));
    QCOMPARE(blockedType.shape, blockedChannelShape(nchwType.shape, block));

    HostTensor data = hostOf(patterned(shape, 11));
    auto expected = runNode(*producer(typed->outputs[0]), {data}, target);
    auto got = runNode(*producer(blockedTyped->outputs[0]), {blockedCopy(data, block)}, target);
    QCOMPARE(expected.size(), size_t(1));
    QCOMPARE(got.size(), size_t(1));
    QCOMPARE(got[0].shape, blockedType.shape);
    double worst = largestDifference(nchwCopy(got[0], block), expected[0]);
    QVERIFY2(worst < 1e-5, qPrintable(QString::number(worst)));
  }

  // A Concat along channels of NCHW<b>c tensors joins their outer block axis: its type is the
  // blocked form of the NCHW result, and so is what its kernel computes.
  void channelConcatJoinsBlocks_data() {
    QTest::addColumn<int>("block");
    QTest::addColumn<std::vector<int64_t>>("channels");
    QTest::addColumn<int64_t>("axis");
    QTest::newRow("two inputs, axis 1") << 16 << std::vector<int64_t>{32, 16} << int64_t(1);
    QTest::newRow("DenseNet-like, many inputs, axis -3") << 8 << std::vector<int64_t>{24, 8, 8, 8, 16} << int64_t(-3);
  }
  void channelConcatJoinsBlocks() {
    QFETCH(int, block);
    QFETCH(std::vector<int64_t>, channels);
    QFETCH(int64_t, axis);
    Target target = targetWithLanes(8);
    std::string layout = blockedChannelLayout(block);
    std::vector<Value> nchwInputs, blockedInputs;
    std::vector<HostTensor> nchwData, blockedData;
    for (size_t i = 0; i < channels.size(); ++i) {
      std::vector<int64_t> shape = {2, channels[i], 5, 3};
      std::string name = "x" + std::to_string(i);
      nchwInputs.push_back(makeInput(name, f32(shape)));
      blockedInputs.push_back(
          makeInput(name, TensorType{DataType::float32(), blockedChannelShape(shape, block), layout}));
      nchwData.push_back(hostOf(patterned(shape, int(i) + 3)));
      blockedData.push_back(blockedCopy(nchwData.back(), block));
    }
    auto typed = inferTypes(Graph{nchwInputs, {untyped("cat", "Concat", nchwInputs, {{"axis", axis}})}, {"y"}});
    QVERIFY2(typed.ok(), typed.ok() ? "" : typed.error().toString().c_str());
    auto blockedTyped =
        inferTypes(Graph{blockedInputs, {untyped("cat", "Concat", blockedInputs, {{"axis", axis}})}, {"y"}});
    QVERIFY2(blockedTyped.ok(), blockedTyped.ok() ? "" : blockedTyped.error().toString().c_str());
    const TensorType& blockedType = blockedTyped->outputs[0].type();
    QCOMPARE(QString::fromStdString(blockedType.layout), QString::fromStdString(layout));
    QCOMPARE(blockedType.shape, blockedChannelShape(typed->outputs[0].type().shape, block));

    auto expected = runNode(*producer(typed->outputs[0]), nchwData, target);
    auto got = runNode(*producer(blockedTyped->outputs[0]), blockedData, target);
    QCOMPARE(expected.size(), size_t(1));
    QCOMPARE(got.size(), size_t(1));
    QCOMPARE(got[0].shape, blockedType.shape);
    QCOMPARE(largestDifference(nchwCopy(got[0], block), expected[0]), 0.0);
  }

  void blockedConcatRefusesWhatItCannotJoin() {
    Value a = makeInput("a", TensorType{DataType::float32(), {1, 2, 4, 4, 8}, "NCHW8c"});
    Value b = makeInput("b", TensorType{DataType::float32(), {1, 1, 4, 4, 16}, "NCHW16c"});
    Value c = makeInput("c", f32({1, 8, 4, 4}));
    auto message = [](const Graph& graph) {
      auto typed = inferTypes(graph);
      return typed.ok() ? QString("typed") : QString::fromStdString(typed.error().toString());
    };
    QString mixed = message(Graph{{a, b}, {untyped("cat", "Concat", {a, b}, {{"axis", int64_t(1)}})}, {"y"}});
    QVERIFY2(mixed.contains("'cat'") && mixed.contains("NCHW16c") && mixed.contains("NCHW8c"), qPrintable(mixed));
    QString plain = message(Graph{{a, c}, {untyped("cat", "Concat", {a, c}, {{"axis", int64_t(1)}})}, {"y"}});
    QVERIFY2(plain.contains("'cat'") && plain.contains("layout"), qPrintable(plain));
    // Along the width the blocks would interleave with the channels within them.
    QString width = message(Graph{{a}, {untyped("cat", "Concat", {a, a}, {{"axis", int64_t(3)}})}, {"y"}});
    QVERIFY2(width.contains("'cat'") && width.contains("axis 1"), qPrintable(width));
  }

  void blockedPoolRefusesWhatNeedsNchw() {
    Value x = makeInput("x", TensorType{DataType::float32(), {1, 2, 4, 4, 8}, "NCHW8c"});
    Attributes window{{"kernel_shape", std::vector<int64_t>{2, 2}}};
    // MaxPool's Indices are offsets into an NCHW tensor.
    std::vector<Value> withIndices = makeOperation("pool", "MaxPool", {x}, window, {TensorType{}, TensorType{}},
                                                   {{"pool", "MaxPool", 13}});
    auto typed = inferTypes(Graph{{x}, {withIndices[0], withIndices[1]}, {"y", "indices"}});
    QVERIFY(!typed.ok());
    QString message = QString::fromStdString(typed.error().toString());
    QVERIFY2(message.contains("'pool'") && message.contains("Indices") && message.contains("NCHW"),
             qPrintable(message));
    // A blocked shape that does not match its layout.
    Value wrong = makeInput("w", TensorType{DataType::float32(), {1, 2, 4, 4, 4}, "NCHW8c"});
    auto mismatched = inferTypes(Graph{{wrong}, {untyped("gap", "GlobalAveragePool", {wrong})}, {"y"}});
    QVERIFY(!mismatched.ok());
    message = QString::fromStdString(mismatched.error().toString());
    QVERIFY2(message.contains("'gap'") && message.contains("NCHW8c"), qPrintable(message));
  }

  void layoutTransformRejectsMismatchedInput() {
    Value x = makeInput("x", f32({1, 12, 4, 4}));
    Value y = untyped("t", "LayoutTransform", {x}, {{"src_layout", std::string("NCHW")},
                                                     {"dst_layout", std::string("NCHW8c")}});
    auto typed = inferTypes(Graph{{x}, {y}, {"y"}});
    QVERIFY(!typed.ok());
    QString message = QString::fromStdString(typed.error().toString());
    QVERIFY2(message.contains("'t'") && message.contains("12 channels"), qPrintable(message));
  }
};

QTEST_GUILESS_MAIN(TestAlterLayout)
#include "test_alter_layout.moc"
