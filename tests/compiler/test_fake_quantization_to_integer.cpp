// FakeQuantizationToInteger: a QDQ convolution region (x quantized and dequantized, weights
// dequantized, Conv, Relu, QuantizeLinear) runs as one integer QLinearConv, then on the VNNI
// kernel after AlterLayout, and gives what the float region gives to within one quantization
// step of the output; a region whose float result is read elsewhere stays float.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <random>

#include "QuantizedGraphTestSupport.h"

using namespace tessel;
using namespace tessel::graph;

namespace {


Value operation(const std::string& name, const std::string& op, std::vector<Value> inputs, Attributes attributes = {}) {
  return makeOperation(name, op, std::move(inputs), std::move(attributes), {TensorType{}}, {{name, op, 13}})[0];
}

struct Region {
  bool relu = true, perFilter = true, signedData = false, quantizedBias = false, floatResultUsedElsewhere = false;
  bool secondLayer = false;  ///< Another QDQ convolution reading the first's quantized output.
};

constexpr float kDataScale = 0.05f, kOutputScale = 0.08f;

Graph qdqConv(const Region& r, std::mt19937& rng) {
  const int64_t C = 16, K = 32;
  runtime::DataType byteType = r.signedData ? runtime::DataType::int8() : runtime::DataType::uint8();
  auto zero = [&](int unsignedValue, int signedValue) {
    return testing::arrayOf<uint8_t>({}, byteType, {uint8_t(r.signedData ? signedValue : unsignedValue)});
  };
  Value x = makeInput("x", TensorType{DataType::float32(), {1, C, 8, 8}, ""});
  Value xs = makeConstant("xs", testing::arrayOf<float>({}, runtime::DataType::float32(), {kDataScale}));
  Value xz = makeConstant("xz", zero(128, 0));
  Value xq = operation("x_q", "QuantizeLinear", {x, xs, xz});
  Value xf = operation("x_dq", "DequantizeLinear", {xq, xs, xz});

  std::uniform_int_distribution<int> weightByte(-127, 127);
  std::vector<int8_t> weights(size_t(K * C * 9));
  for (auto& w : weights) w = int8_t(weightByte(rng));
  std::vector<float> ws(size_t(r.perFilter ? K : 1));
  for (size_t k = 0; k < ws.size(); ++k) ws[k] = 0.004f + 0.001f * float(k % 3);
  Value wq = makeConstant("w_q", testing::arrayOf<int8_t>({K, C, 3, 3}, runtime::DataType::int8(), weights));
  Value wsValue = makeConstant("ws", testing::arrayOf<float>({int64_t(ws.size())}, runtime::DataType::float32(), ws));
  Value wz = makeConstant("wz", testing::arrayOf<int8_t>({int64_t(ws.size())}, runtime::DataType::int8(),
                                              std::vector<int8_t>(ws.size(), 0)));
  Value wf = operation("w_dq", "DequantizeLinear", {wq, wsValue, wz}, {{"axis", int64_t(0)}});

  std::vector<float> realBias(static_cast<size_t>(K));
  for (auto& b : realBias) b = float(weightByte(rng)) * 0.01f;
  Value bias;
  if (r.quantizedBias) {
    // As ONNX Runtime writes it: int32 in the scale xs * ws, dequantized.
    std::vector<int32_t> q(static_cast<size_t>(K));
    std::vector<float> bs(static_cast<size_t>(K));
    for (int64_t k = 0; k < K; ++k) {
      bs[size_t(k)] = kDataScale * ws[r.perFilter ? size_t(k) : 0];
      q[size_t(k)] = int32_t(std::lround(realBias[size_t(k)] / bs[size_t(k)]));
    }
    bias = operation("b_dq", "DequantizeLinear",
                     {makeConstant("b_q", testing::arrayOf<int32_t>({K}, runtime::DataType::int32(), q)),
                      makeConstant("bs", testing::arrayOf<float>({K}, runtime::DataType::float32(), bs))},
                     {{"axis", int64_t(0)}});
  } else {
    bias = makeConstant("b", testing::arrayOf<float>({K}, runtime::DataType::float32(), realBias));
  }
  Value y = operation("conv", "Conv", {xf, wf, bias}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  Value activated = r.relu ? operation("relu", "Relu", {y}) : y;
  Value ys = makeConstant("ys", testing::arrayOf<float>({}, runtime::DataType::float32(), {kOutputScale}));
  Value yz = makeConstant("yz", zero(20, -10));
  Value yq = operation("y_q", "QuantizeLinear", {activated, ys, yz});
  Value out = operation("y_dq", "DequantizeLinear", {yq, ys, yz});
  if (r.secondLayer) {
    std::vector<int8_t> weights2(static_cast<size_t>(K * K * 9));
    for (auto& w : weights2) w = int8_t(weightByte(rng));
    Value w2 = operation("w2_dq", "DequantizeLinear",
                         {makeConstant("w2_q", testing::arrayOf<int8_t>({K, K, 3, 3}, runtime::DataType::int8(), weights2)),
                          makeConstant("ws2", testing::arrayOf<float>({}, runtime::DataType::float32(), {0.002f})),
                          makeConstant("wz2", testing::arrayOf<int8_t>({}, runtime::DataType::int8(), {0}))});
    Value y2 = operation("relu2", "Relu",
                         {operation("conv2", "Conv", {out, w2}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}})});
    Value ys2 = makeConstant("ys2", testing::arrayOf<float>({}, runtime::DataType::float32(), {kOutputScale}));
    Value yz2 = makeConstant("yz2", zero(0, -128));
    out = operation("y2_dq", "DequantizeLinear", {operation("y2_q", "QuantizeLinear", {y2, ys2, yz2}), ys2, yz2});
  }
  if (r.floatResultUsedElsewhere) return Graph{{x}, {out, y}, {"y", "float"}};
  return Graph{{x}, {out}, {"y"}};
}

runtime::NDArray runCompiled(const Graph& graph, bool integer, const runtime::NDArray& input, QString* optimized) {
  PassOptions passes;
  if (!integer) passes.disabledPasses = {"FakeQuantizationToInteger"};
  return testing::runCompiledGraph(graph, passes, input, optimized);
}

}  // namespace

Q_DECLARE_METATYPE(Region)

class TestFakeQuantizationToInteger : public QObject {
  Q_OBJECT
private slots:
  void integerRegionMatchesTheFloatOne_data() {
    QTest::addColumn<Region>("region");
    QTest::newRow("uint8, Relu, per-filter scales, float bias") << Region{};
    QTest::newRow("int8, no Relu, one scale, quantized bias") << Region{false, false, true, true, false};
  }
  void integerRegionMatchesTheFloatOne() {
    QFETCH(Region, region);
    std::mt19937 rng(3);
    Graph graph = qdqConv(region, rng);
    std::uniform_real_distribution<float> uniform(region.signedData ? -3.0f : -6.0f, region.signedData ? 3.0f : 6.0f);
    std::vector<float> data(16 * 64);
    for (auto& v : data) v = uniform(rng);
    auto input = testing::arrayOf<float>({1, 16, 8, 8}, runtime::DataType::float32(), data);
    QString integerText, floatText;
    runtime::NDArray integer = runCompiled(graph, true, input, &integerText);
    runtime::NDArray real = runCompiled(graph, false, input, &floatText);
    // The convolution became the int8 kernel; without the pass it stays a float Conv.
    QVERIFY2(integerText.contains("QLinearConvPrepacked") && !integerText.contains("= Conv"),
             qPrintable(integerText));
    QVERIFY2(!floatText.contains("QLinearConv"), qPrintable(floatText));
    auto got = integer.values<float>(), expected = real.values<float>();
    QCOMPARE(got.size(), expected.size());
    int64_t differing = 0, clipped = 0;
    float low = float((region.signedData ? -128 : 0) - (region.signedData ? -10 : 20)) * kOutputScale;
    for (size_t i = 0; i < got.size(); ++i) {
      QVERIFY2(std::fabs(got[i] - expected[i]) <= kOutputScale * 1.001f,
               qPrintable(QString("element %1: %2 against %3").arg(i).arg(got[i]).arg(expected[i])));
      differing += got[i] != expected[i];
      clipped += expected[i] <= low + 1e-6f;
    }
    QVERIFY2(differing * 50 <= int64_t(got.size()),
             qPrintable(QString("%1 of %2 differ by a step").arg(differing).arg(got.size())));
    QVERIFY2(clipped * 2 < int64_t(got.size()), qPrintable(QString("%1 of %2 clipped").arg(clipped).arg(got.size())));
  }

  // A MobileNet block's first half: a 1x1 int8 convolution then a depthwise 3x3 one, both in
  // QDQ form. The depthwise one runs on the int8 depthwise kernel in the blocks the first
  // writes, and the two give what the float region gives to within one output step.
  void depthwiseLayerRunsOnTheInt8DepthwiseKernel_data() {
    QTest::addColumn<int>("stride");
    QTest::addColumn<bool>("expand");  // false: the depthwise layer reads the model input (NCHW)
    QTest::newRow("stride 1") << 1 << true;
    QTest::newRow("stride 2") << 2 << true;
    QTest::newRow("on the model input") << 1 << false;
  }
  void depthwiseLayerRunsOnTheInt8DepthwiseKernel() {
    QFETCH(int, stride);
    QFETCH(bool, expand);
    const int64_t C = 16, K = 32, size = 9;
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> weightByte(-127, 127);
    auto scalar = [](const std::string& name, float value) {
      return makeConstant(name, testing::arrayOf<float>({}, runtime::DataType::float32(), {value}));
    };
    auto zero = [](const std::string& name, uint8_t value) {
      return makeConstant(name, testing::arrayOf<uint8_t>({}, runtime::DataType::uint8(), {value}));
    };
    auto qdq = [&](const std::string& name, Value v, float scale, uint8_t zeroPoint) {
      Value s = scalar(name + "_s", scale), z = zero(name + "_z", zeroPoint);
      return operation(name + "_dq", "DequantizeLinear", {operation(name + "_q", "QuantizeLinear", {v, s, z}), s, z});
    };
    auto weights = [&](const std::string& name, std::vector<int64_t> shape, float scale) {
      int64_t count = 1;
      for (int64_t d : shape) count *= d;
      std::vector<int8_t> values(static_cast<size_t>(count));
      for (auto& w : values) w = int8_t(weightByte(rng));
      int64_t filters = shape[0];
      std::vector<float> scales(static_cast<size_t>(filters));
      for (int64_t k = 0; k < filters; ++k) scales[size_t(k)] = scale * (1.0f + 0.1f * float(k % 4));
      return operation(name + "_dq", "DequantizeLinear",
                       {makeConstant(name + "_q", testing::arrayOf<int8_t>(shape, runtime::DataType::int8(), values)),
                        makeConstant(name + "_s", testing::arrayOf<float>({filters}, runtime::DataType::float32(), scales)),
                        makeConstant(name + "_z", testing::arrayOf<int8_t>({filters}, runtime::DataType::int8(),
                                                                           std::vector<int8_t>(size_t(filters), 0)))},
                       {{"axis", int64_t(0)}});
    };
    const int64_t inputChannels = expand ? C : K;
    Value x = makeInput("x", TensorType{DataType::float32(), {1, inputChannels, size, size}, ""});
    Value expanded = expand ? operation("expand", "Relu", {operation("expand_conv", "Conv",
                                                                     {qdq("x", x, 0.05f, 128),
                                                                      weights("w1", {K, C, 1, 1}, 0.01f)})})
                            : x;
    Value depthwise = operation(
        "dw", "Relu",
        {operation("dw_conv", "Conv", {qdq("e", expanded, expand ? 0.04f : 0.05f, expand ? 0 : 128),
                                       weights("w2", {K, 1, 3, 3}, 0.02f)},
                   {{"pads", std::vector<int64_t>{1, 1, 1, 1}},
                    {"strides", std::vector<int64_t>{stride, stride}},
                    {"group", K}})});
    Graph graph{{x}, {qdq("y", depthwise, 0.03f, 0)}, {"y"}};
    std::uniform_real_distribution<float> uniform(-6.0f, 6.0f);
    std::vector<float> data(size_t(inputChannels * size * size));
    for (auto& v : data) v = uniform(rng);
    auto input = testing::arrayOf<float>({1, inputChannels, size, size}, runtime::DataType::float32(), data);
    QString integerText, floatText;
    runtime::NDArray integerOutput = runCompiled(graph, true, input, &integerText);
    runtime::NDArray floatOutput = runCompiled(graph, false, input, &floatText);
    auto integer = integerOutput.values<float>(), real = floatOutput.values<float>();
    QVERIFY2(integerText.contains("QLinearDepthwiseConvPrepacked") &&
                 integerText.contains("QLinearConvPrepacked") == expand && !integerText.contains("= Conv"),
             qPrintable(integerText));
    QCOMPARE(integer.size(), real.size());
    int64_t differing = 0, positive = 0;
    for (size_t i = 0; i < integer.size(); ++i) {
      QVERIFY2(std::fabs(integer[i] - real[i]) <= 0.03f * 1.001f,
               qPrintable(QString("element %1: %2 against %3").arg(i).arg(integer[i]).arg(real[i])));
      differing += integer[i] != real[i];
      positive += real[i] > 0;
    }
    QVERIFY2(differing * 20 <= int64_t(integer.size()), qPrintable(QString("%1 differ").arg(differing)));
    QVERIFY2(positive * 4 > int64_t(integer.size()), qPrintable(QString("%1 positive").arg(positive)));
  }

  // Two int8 layers in a row pass their activations in channel blocks (no NCHW in between),
  // and compute what they compute on NCHW.
  void consecutiveLayersStayBlocked() {
    Region region;
    region.secondLayer = true;
    std::mt19937 rng(8);
    Graph graph = qdqConv(region, rng);
    std::uniform_real_distribution<float> uniform(-6.0f, 6.0f);
    std::vector<float> data(16 * 64);
    for (auto& v : data) v = uniform(rng);
    auto input = testing::arrayOf<float>({1, 16, 8, 8}, runtime::DataType::float32(), data);
    QString blockedText, nchwText;
    runtime::NDArray blocked = runCompiled(graph, true, input, &blockedText);
    PassOptions nchw;
    nchw.config["AlterLayout.blocked_activations"] = "false";
    runtime::NDArray plain = testing::runCompiledGraph(graph, nchw, input, &nchwText);
    QVERIFY2(blockedText.contains("data_layout=\"NCHW32c\"") && blockedText.contains("out_layout=\"NCHW32c\""),
             qPrintable(blockedText));
    QVERIFY2(!nchwText.contains("NCHW32c"), qPrintable(nchwText));
    auto got = blocked.values<float>(), expected = plain.values<float>();
    QCOMPARE(got.size(), expected.size());
    int64_t nonzero = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      QCOMPARE(got[i], expected[i]);  // the same integer arithmetic, only laid out otherwise
      nonzero += expected[i] != 0;
    }
    QVERIFY2(nonzero * 4 > int64_t(got.size()), qPrintable(QString("%1 nonzero").arg(nonzero)));
  }

  // A pre-quantized model with a zero or negative scale is refused at the node, not run.
  void nonPositiveScalesAreNamed_data() {
    QTest::addColumn<float>("scale");
    QTest::newRow("zero") << 0.0f;
    QTest::newRow("negative") << -0.5f;
  }
  void nonPositiveScalesAreNamed() {
    QFETCH(float, scale);
    Value x = makeInput("x", TensorType{DataType::float32(), {1, 4}, ""});
    Value s = makeConstant("s", testing::arrayOf<float>({}, runtime::DataType::float32(), {scale}));
    Value z = makeConstant("z", testing::arrayOf<uint8_t>({}, runtime::DataType::uint8(), {0}));
    Value q = operation("quantize_x", "QuantizeLinear", {x, s, z});
    auto compiled = driver::compileGraph(Graph{{x}, {q}, {"y"}});
    QVERIFY(!compiled.ok());
    QString message = QString::fromStdString(compiled.error().toString());
    QVERIFY2(message.contains("quantize_x") && message.contains("must be positive"), qPrintable(message));
  }

  void floatResultReadElsewhereStaysFloat() {
    Region region;
    region.relu = false;
    region.floatResultUsedElsewhere = true;
    std::mt19937 rng(5);
    Graph graph = qdqConv(region, rng);
    auto input = testing::arrayOf<float>({1, 16, 8, 8}, runtime::DataType::float32(), std::vector<float>(16 * 64, 0.5f));
    QString text;
    runCompiled(graph, true, input, &text);
    QVERIFY2(!text.contains("QLinearConv"), qPrintable(text));
  }

  // Dequantize -> MaxPool -> quantize with one scale and zero point pools the uint8 tensor
  // itself, which gives exactly what the float region gives (the maximum commutes with the
  // monotone dequantization); with another output scale it stays float.
  // QuantizeLinear with a constant scale multiplies by its reciprocal and corrects with an
  // FMA instead of dividing: the result must still be ONNX's round(x / scale) exactly, at the
  // ties where a plain x * (1 / scale) rounds the other way half the time, and saturate where
  // the quotient overflows.
  void quantizeLinearRoundsAsTheDivisionDoes_data() {
    QTest::addColumn<float>("scale");
    for (float scale : {0.1f, 0.05f, 0.0123f, 3.1e-5f, 7.7f, 0.3f})
      QTest::addRow("scale %g", double(scale)) << scale;
  }
  void quantizeLinearRoundsAsTheDivisionDoes() {
    QFETCH(float, scale);
    std::vector<float> values;
    for (int n = -140; n <= 140; ++n) {
      float tie = (float(n) + 0.5f) * scale;
      values.insert(values.end(), {tie, std::nextafter(tie, 0.0f), std::nextafter(tie, 1e30f), float(n) * scale});
    }
    values.insert(values.end(), {3e38f, -3e38f, 0.0f, -0.0f, 1e-30f});
    const auto count = int64_t(values.size());
    Value x = makeInput("x", TensorType{DataType::float32(), {count}, ""});
    Value ys = makeConstant("ys", testing::arrayOf<float>({}, runtime::DataType::float32(), {scale}));
    Value yz = makeConstant("yz", testing::arrayOf<uint8_t>({}, runtime::DataType::uint8(), {uint8_t(128)}));
    Graph graph{{x}, {operation("q", "QuantizeLinear", {x, ys, yz})}, {"y"}};
    QString optimized;
    auto y = testing::runCompiledGraph(graph, {}, testing::arrayOf<float>({count}, runtime::DataType::float32(), values),
                                       &optimized);
    const uint8_t* got = y.dataAs<uint8_t>();
    int differentFromProduct = 0;
    for (size_t i = 0; i < values.size(); ++i) {
      volatile float quotient = values[i] / scale;
      float expected = std::clamp(std::nearbyint(quotient) + 128.0f, 0.0f, 255.0f);
      QVERIFY2(float(got[i]) == expected, qPrintable(QString("%1 / %2: got %3, expected %4")
                                                          .arg(double(values[i]), 0, 'g', 9)
                                                          .arg(double(scale), 0, 'g', 9)
                                                          .arg(got[i])
                                                          .arg(double(expected))));
      volatile float product = values[i] * (1.0f / scale);
      differentFromProduct += std::clamp(std::nearbyint(product) + 128.0f, 0.0f, 255.0f) != expected;
    }
    // The inputs do exercise the difference: multiplying alone would get some of them wrong.
    QVERIFY2(differentFromProduct > 0, "the ties no longer exercise the correction");
  }

  void maxPoolOfQuantizedValuesPoolsTheIntegers_data() {
    QTest::addColumn<float>("outputScale");
    QTest::addColumn<bool>("integer");
    QTest::newRow("the input's scale") << kDataScale << true;
    QTest::newRow("another scale") << kOutputScale << false;
  }
  void maxPoolOfQuantizedValuesPoolsTheIntegers() {
    QFETCH(float, outputScale);
    QFETCH(bool, integer);
    auto scalar = [](const std::string& name, float value) {
      return makeConstant(name, testing::arrayOf<float>({}, runtime::DataType::float32(), {value}));
    };
    auto zero = [](const std::string& name) {
      return makeConstant(name, testing::arrayOf<uint8_t>({}, runtime::DataType::uint8(), {uint8_t(10)}));
    };
    Value x = makeInput("x", TensorType{DataType::float32(), {1, 16, 8, 8}, ""});
    Value xs = scalar("xs", kDataScale), xz = zero("xz");
    Value xf = operation("x_dq", "DequantizeLinear", {operation("x_q", "QuantizeLinear", {x, xs, xz}), xs, xz});
    Value pooled = operation("pool", "MaxPool", {xf}, {{"kernel_shape", std::vector<int64_t>{3, 3}},
                                                       {"strides", std::vector<int64_t>{2, 2}},
                                                       {"pads", std::vector<int64_t>{1, 1, 1, 1}}});
    Value ys = scalar("ys", outputScale), yz = zero("yz");
    Value y = operation("y_dq", "DequantizeLinear", {operation("y_q", "QuantizeLinear", {pooled, ys, yz}), ys, yz});
    Graph graph{{x}, {y}, {"y"}};
    std::mt19937 rng(8);
    std::uniform_real_distribution<float> uniform(-1.0f, 9.0f);
    std::vector<float> data(16 * 64);
    for (auto& v : data) v = uniform(rng);
    auto input = testing::arrayOf<float>({1, 16, 8, 8}, runtime::DataType::float32(), data);
    QString integerText, floatText;
    runtime::NDArray got = runCompiled(graph, true, input, &integerText);
    runtime::NDArray expected = runCompiled(graph, false, input, &floatText);
    QCOMPARE(integerText.contains(QRegularExpression("= MaxPool\\(%x_q[^\\n]*: uint8")), integer);
    auto a = got.values<float>(), b = expected.values<float>();
    QCOMPARE(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) QCOMPARE(a[i], b[i]);
  }
};

QTEST_GUILESS_MAIN(TestFakeQuantizationToInteger)
#include "test_fake_quantization_to_integer.moc"
