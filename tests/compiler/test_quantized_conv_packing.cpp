// QLinearConv with constant int8 weights runs on the int8 VNNI convolution after AlterLayout:
// a model compiled with weight packing gives what the reference kernel gives without it (to
// the rounding of one float32 tie), for uint8 and int8 data, per-filter and per-tensor weight
// scales, strides, padding and a bias; a QLinearConv the fast kernel cannot take (asymmetric
// weights) is left to the reference kernel.
#include <QtTest>

#include <random>

#include "QuantizedGraphTestSupport.h"

using namespace tessel;
using namespace tessel::graph;

namespace {


struct QuantizedConvCase {
  int64_t channels = 32, size = 10, filters = 64, kernel = 3, stride = 1, pad = 1;
  bool signedData = false, perFilterScale = true, bias = true;
  int weightZeroPoint = 0;
};

Graph quantizedConvGraph(const QuantizedConvCase& c, std::mt19937& rng) {
  DataType byteType = c.signedData ? DataType::int8() : DataType::uint8();
  runtime::DataType runtimeByte = c.signedData ? runtime::DataType::int8() : runtime::DataType::uint8();
  Value x = makeInput("x", TensorType{byteType, {1, c.channels, c.size, c.size}, ""});
  std::uniform_int_distribution<int> weightByte(-128, 127);
  std::vector<int8_t> weights(size_t(c.filters * c.channels * c.kernel * c.kernel));
  for (auto& w : weights) w = int8_t(weightByte(rng));
  std::vector<float> wScale(size_t(c.perFilterScale ? c.filters : 1));
  for (size_t k = 0; k < wScale.size(); ++k) wScale[k] = 0.002f + 0.0005f * float(k % 5);
  std::vector<int32_t> bias(size_t(c.filters));
  for (auto& b : bias) b = weightByte(rng) * 40;
  int8_t dataZero = c.signedData ? int8_t(-3) : int8_t(0), outputZero = c.signedData ? int8_t(5) : int8_t(0);
  std::vector<uint8_t> dataZeroBytes = {c.signedData ? uint8_t(dataZero) : uint8_t(118)};
  std::vector<uint8_t> outputZeroBytes = {c.signedData ? uint8_t(outputZero) : uint8_t(96)};
  std::vector<Value> inputs = {
      x,
      makeConstant("x_scale", testing::arrayOf<float>({}, runtime::DataType::float32(), {0.03f})),
      makeConstant("x_zero_point", testing::arrayOf<uint8_t>({}, runtimeByte, dataZeroBytes)),
      makeConstant("w", testing::arrayOf<int8_t>({c.filters, c.channels, c.kernel, c.kernel}, runtime::DataType::int8(), weights)),
      makeConstant("w_scale", testing::arrayOf<float>({int64_t(wScale.size())}, runtime::DataType::float32(), wScale)),
      makeConstant("w_zero_point",
                   testing::arrayOf<int8_t>({c.filters}, runtime::DataType::int8(),
                                 std::vector<int8_t>(size_t(c.filters), int8_t(c.weightZeroPoint)))),
      makeConstant("y_scale", testing::arrayOf<float>({}, runtime::DataType::float32(), {0.4f})),
      makeConstant("y_zero_point", testing::arrayOf<uint8_t>({}, runtimeByte, outputZeroBytes)),
  };
  if (c.bias) inputs.push_back(makeConstant("B", testing::arrayOf<int32_t>({c.filters}, runtime::DataType::int32(), bias)));
  Attributes attributes = {{"pads", std::vector<int64_t>{c.pad, c.pad, c.pad, c.pad}},
                           {"strides", std::vector<int64_t>{c.stride, c.stride}}};
  Value y = makeOperation("qconv", "QLinearConv", inputs, attributes, {TensorType{}}, {{"qconv", "QLinearConv", 13}})[0];
  return Graph{{x}, {y}, {"y"}};
}

runtime::NDArray runCompiled(const Graph& graph, bool packWeights, const runtime::NDArray& input, QString* optimized) {
  PassOptions passes;
  passes.config["AlterLayout.pack_weights"] = packWeights ? "true" : "false";
  return testing::runCompiledGraph(graph, passes, input, optimized);
}

}  // namespace

Q_DECLARE_METATYPE(QuantizedConvCase)

class TestQuantizedConvPacking : public QObject {
  Q_OBJECT
private slots:
  void packedKernelGivesTheReferenceResult_data() {
    QTest::addColumn<QuantizedConvCase>("conv");
    QTest::newRow("uint8 3x3 per-filter scale") << QuantizedConvCase{};
    QuantizedConvCase strided;
    strided.stride = 2;
    strided.perFilterScale = false;
    strided.bias = false;
    QTest::newRow("uint8 stride 2, one scale, no bias") << strided;
    QuantizedConvCase signedData;
    signedData.signedData = true;
    signedData.kernel = 1;
    signedData.pad = 0;
    signedData.channels = 24;
    signedData.filters = 48;
    QTest::newRow("int8 1x1, 24 channels, 48 filters") << signedData;
  }
  void packedKernelGivesTheReferenceResult() {
    QFETCH(QuantizedConvCase, conv);
    std::mt19937 rng(9);
    Graph graph = quantizedConvGraph(conv, rng);
    std::uniform_int_distribution<int> byte(0, 255);
    std::vector<uint8_t> data(size_t(conv.channels * conv.size * conv.size));
    for (auto& v : data) v = uint8_t(byte(rng));
    auto input = testing::arrayOf<uint8_t>({1, conv.channels, conv.size, conv.size},
                                conv.signedData ? runtime::DataType::int8() : runtime::DataType::uint8(), data);
    QString packedText, referenceText;
    runtime::NDArray packed = runCompiled(graph, true, input, &packedText);
    runtime::NDArray reference = runCompiled(graph, false, input, &referenceText);
    QVERIFY2(packedText.contains("QLinearConvPrepacked"), qPrintable(packedText));
    QVERIFY2(!referenceText.contains("QLinearConvPrepacked"), qPrintable(referenceText));
    QCOMPARE(packed.shape(), reference.shape());
    QCOMPARE(packed.dtype(), reference.dtype());
    const auto* got = static_cast<const uint8_t*>(packed.data());
    const auto* expected = static_cast<const uint8_t*>(reference.data());
    int64_t differing = 0, saturated = 0, count = packed.numElements();
    for (int64_t i = 0; i < count; ++i) {
      int a = conv.signedData ? int(int8_t(got[i])) : int(got[i]);
      int b = conv.signedData ? int(int8_t(expected[i])) : int(expected[i]);
      QVERIFY2(std::abs(a - b) <= 1, qPrintable(QString("element %1: %2 against %3").arg(i).arg(a).arg(b)));
      differing += a != b;
      saturated += b == (conv.signedData ? -128 : 0) || b == (conv.signedData ? 127 : 255);
    }
    QVERIFY2(differing * 1000 <= count, qPrintable(QString("%1 of %2 differ by one").arg(differing).arg(count)));
    // The case says something only if most outputs are inside the range, not clipped.
    QVERIFY2(saturated * 4 < count, qPrintable(QString("%1 of %2 saturated").arg(saturated).arg(count)));
  }

  void asymmetricWeightsStayOnTheReferenceKernel() {
    QuantizedConvCase asymmetric;
    asymmetric.weightZeroPoint = 3;
    std::mt19937 rng(4);
    Graph graph = quantizedConvGraph(asymmetric, rng);
    auto input = testing::arrayOf<uint8_t>({1, 32, 10, 10}, runtime::DataType::uint8(), std::vector<uint8_t>(3200, 117));
    QString text;
    runCompiled(graph, true, input, &text);
    QVERIFY2(text.contains("QLinearConv") && !text.contains("QLinearConvPrepacked"), qPrintable(text));
  }
};

QTEST_GUILESS_MAIN(TestQuantizedConvPacking)
#include "test_quantized_conv_packing.moc"
