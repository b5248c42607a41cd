// FakeQuantizationToInteger on dense layers: dequantize -> Gemm / MatMul (+ bias) [-> Relu]
// [-> quantize] regions run as one QDensePrepacked on the int8 kernel and give what the float
// region gives: to within the bias's rounding for a float output (a classifier's logits), to
// within one quantization step for a quantized one. ONNX Runtime's dynamically quantized
// dense layers (DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul) take the same kernel
// with the run-time scale. Asymmetric weights stay float.
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

struct DenseRegion {
  QString op = "Gemm";            ///< "Gemm" (transB, as PyTorch's Linear exports) or "MatMul" (+ Add).
  std::vector<int64_t> dataShape = {1, 64};
  int64_t columns = 40;
  bool perColumn = true, signedData = false, bias = true, relu = false, quantizedOutput = false;
  int weightZero = 0;             ///< Non-zero: asymmetric weights, which stay float.
};

constexpr float kDataScale = 0.05f, kOutputScale = 0.08f;

Graph qdqDense(const DenseRegion& r, std::mt19937& rng) {
  const int64_t K = r.dataShape.back(), N = r.columns;
  runtime::DataType byteType = r.signedData ? runtime::DataType::int8() : runtime::DataType::uint8();
  auto zero = [&](int unsignedValue, int signedValue) {
    return testing::arrayOf<uint8_t>({}, byteType, {uint8_t(r.signedData ? signedValue : unsignedValue)});
  };
  Value x = makeInput("x", TensorType{DataType::float32(), r.dataShape, ""});
  Value xs = makeConstant("xs", testing::arrayOf<float>({}, runtime::DataType::float32(), {kDataScale}));
  Value xz = makeConstant("xz", zero(128, 3));
  Value xf = operation("x_dq", "DequantizeLinear", {operation("x_q", "QuantizeLinear", {x, xs, xz}), xs, xz});

  bool transposed = r.op == "Gemm";
  std::uniform_int_distribution<int> weightByte(-127, 127);
  std::vector<int8_t> weights(size_t(K * N));
  for (auto& w : weights) w = int8_t(weightByte(rng));
  std::vector<float> ws(size_t(r.perColumn ? N : 1));
  for (size_t n = 0; n < ws.size(); ++n) ws[n] = 0.004f + 0.001f * float(n % 3);
  std::vector<int64_t> weightShape = transposed ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N};
  Value wq = makeConstant("w_q", testing::arrayOf<int8_t>(weightShape, runtime::DataType::int8(), weights));
  Value wsValue = makeConstant("ws", testing::arrayOf<float>({int64_t(ws.size())}, runtime::DataType::float32(), ws));
  Value wz = makeConstant("wz", testing::arrayOf<int8_t>({int64_t(ws.size())}, runtime::DataType::int8(),
                                                         std::vector<int8_t>(ws.size(), int8_t(r.weightZero))));
  Value wf = operation("w_dq", "DequantizeLinear", {wq, wsValue, wz}, {{"axis", int64_t(transposed ? 0 : 1)}});

  std::vector<float> realBias(static_cast<size_t>(N));
  for (auto& b : realBias) b = float(weightByte(rng)) * 0.01f;
  Value bias = makeConstant("b", testing::arrayOf<float>({N}, runtime::DataType::float32(), realBias));
  Value y;
  if (r.op == "Gemm") {
    std::vector<Value> inputs = {xf, wf};
    if (r.bias) inputs.push_back(bias);
    y = operation("dense", "Gemm", inputs, {{"transB", int64_t(1)}});
  } else {
    y = operation("dense", "MatMul", {xf, wf});
    if (r.bias) y = operation("dense_bias", "Add", {y, bias});
  }
  if (r.relu) y = operation("relu", "Relu", {y});
  if (r.quantizedOutput) {
    Value ys = makeConstant("ys", testing::arrayOf<float>({}, runtime::DataType::float32(), {kOutputScale}));
    Value yz = makeConstant("yz", zero(20, -10));
    y = operation("y_dq", "DequantizeLinear", {operation("y_q", "QuantizeLinear", {y, ys, yz}), ys, yz});
  }
  return Graph{{x}, {y}, {"y"}};
}

runtime::NDArray runCompiled(const Graph& graph, bool integer, const runtime::NDArray& input, QString* optimized) {
  PassOptions passes;
  if (!integer) passes.disabledPasses = {"FakeQuantizationToInteger"};
  return testing::runCompiledGraph(graph, passes, input, optimized);
}

}  // namespace

Q_DECLARE_METATYPE(DenseRegion)

class TestFakeQuantizationDense : public QObject {
  Q_OBJECT
private slots:
  void integerRegionMatchesTheFloatOne_data() {
    QTest::addColumn<DenseRegion>("region");
    QTest::newRow("Gemm, float logits, per-column scales")
        << DenseRegion{"Gemm", {1, 512}, 1000, true, false, true, false, false};
    QTest::newRow("Gemm, int8 data, one scale, no bias") << DenseRegion{"Gemm", {4, 64}, 48, false, true, false};
    QTest::newRow("MatMul + Add, 3-D rows, Relu, quantized")
        << DenseRegion{"MatMul", {2, 5, 96}, 64, true, false, true, true, true};
    QTest::newRow("Gemm, Relu, quantized int8") << DenseRegion{"Gemm", {3, 40}, 33, true, true, true, true, true};
  }
  void integerRegionMatchesTheFloatOne() {
    QFETCH(DenseRegion, region);
    std::mt19937 rng(5);
    Graph graph = qdqDense(region, rng);
    std::uniform_real_distribution<float> uniform(region.signedData ? -3.0f : -6.0f, region.signedData ? 3.0f : 6.0f);
    int64_t count = 1;
    for (int64_t extent : region.dataShape) count *= extent;
    std::vector<float> data(static_cast<size_t>(count));
    for (auto& v : data) v = uniform(rng);
    auto input = testing::arrayOf<float>(region.dataShape, runtime::DataType::float32(), data);
    QString integerText, floatText;
    runtime::NDArray integer = runCompiled(graph, true, input, &integerText);
    runtime::NDArray real = runCompiled(graph, false, input, &floatText);
    QVERIFY2(integerText.contains("QDensePrepacked") && !integerText.contains("= Gemm") &&
                 !integerText.contains("= MatMul"),
             qPrintable(integerText));
    QVERIFY2(!floatText.contains("QDensePrepacked"), qPrintable(floatText));
    auto got = integer.values<float>(), expected = real.values<float>();
    QCOMPARE(got.size(), expected.size());
    int64_t differing = 0, nonzero = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      // A float output differs by the bias rounded to accumulator units (half a unit of
      // xs * ws) and float rounding; a quantized one by a step where the float sum sits on
      // a rounding boundary.
      float tolerance = region.quantizedOutput ? kOutputScale * 1.001f : 0.5f * kDataScale * 0.0061f + 1e-4f * std::fabs(expected[i]) + 1e-5f;
      QVERIFY2(std::fabs(got[i] - expected[i]) <= tolerance,
               qPrintable(QString("element %1: %2 against %3").arg(i).arg(got[i]).arg(expected[i])));
      differing += got[i] != expected[i];
      nonzero += expected[i] != 0;
    }
    if (region.quantizedOutput)
      QVERIFY2(differing * 50 <= int64_t(got.size()),
               qPrintable(QString("%1 of %2 differ by a step").arg(differing).arg(got.size())));
    QVERIFY2(nonzero * 3 > int64_t(got.size()), qPrintable(QString("%1 nonzero").arg(nonzero)));
  }

  // ONNX Runtime's dynamic quantization (quantize_dynamic): DynamicQuantizeLinear ->
  // MatMulInteger -> Cast -> Mul(x_scale * w_scale) -> Add(bias) runs as one QDensePrepacked
  // reading the run-time scale and zero point, and computes what the reference operators do.
  void dynamicallyQuantizedDenseMatchesTheReference_data() {
    QTest::addColumn<bool>("perColumn");
    QTest::addColumn<bool>("bias");
    QTest::newRow("per-column scales, bias") << true << true;
    QTest::newRow("one scale, no bias") << false << false;
  }
  void dynamicallyQuantizedDenseMatchesTheReference() {
    QFETCH(bool, perColumn);
    QFETCH(bool, bias);
    const int64_t K = 96, N = 64;
    std::mt19937 rng(9);
    std::uniform_int_distribution<int> weightByte(-127, 127);
    std::vector<int8_t> weights(size_t(K * N));
    for (auto& w : weights) w = int8_t(weightByte(rng));
    std::vector<float> ws(size_t(perColumn ? N : 1)), realBias(static_cast<size_t>(N));
    for (size_t n = 0; n < ws.size(); ++n) ws[n] = 0.002f + 0.0005f * float(n % 4);
    for (auto& b : realBias) b = float(weightByte(rng)) * 0.01f;
    Value x = makeInput("x", TensorType{DataType::float32(), {1, 12, K}, ""});
    std::vector<Value> quantized = makeOperation("x_dq", "DynamicQuantizeLinear", {x}, {},
                                                 {TensorType{}, TensorType{}, TensorType{}}, {{"x_dq", "DynamicQuantizeLinear", 13}});
    Value wq = makeConstant("w_q", testing::arrayOf<int8_t>({K, N}, runtime::DataType::int8(), weights));
    Value wz = makeConstant("w_z", testing::arrayOf<int8_t>({}, runtime::DataType::int8(), {0}));
    Value product = operation("mmi", "MatMulInteger", {quantized[0], wq, quantized[2], wz});
    Value real = operation("cast", "Cast", {product}, {{"to", int64_t(1)}});
    Value wsValue = makeConstant("ws", testing::arrayOf<float>({int64_t(ws.size())}, runtime::DataType::float32(), ws));
    Value scale = operation("scale", "Mul", {quantized[1], wsValue});
    Value y = operation("dequantized", "Mul", {real, scale});
    if (bias) y = operation("bias", "Add", {y, makeConstant("b", testing::arrayOf<float>({N}, runtime::DataType::float32(), realBias))});
    Graph graph{{x}, {y}, {"y"}};

    std::normal_distribution<float> normal(0.0f, 2.0f);
    auto input = runtime::NDArray::empty({1, 12, K}, runtime::DataType::float32());
    for (float& v : input.values<float>()) v = normal(rng);
    QString integerText, referenceText;
    runtime::NDArray integer = runCompiled(graph, true, input, &integerText);
    runtime::NDArray reference = runCompiled(graph, false, input, &referenceText);
    QVERIFY2(integerText.contains("QDensePrepacked") && !integerText.contains("MatMulInteger"), qPrintable(integerText));
    QVERIFY2(referenceText.contains("MatMulInteger"), qPrintable(referenceText));
    auto got = integer.values<float>(), expected = reference.values<float>();
    QCOMPARE(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i)
      QVERIFY2(std::fabs(got[i] - expected[i]) <= 1e-5f * std::max(1.0f, std::fabs(expected[i])),
               qPrintable(QString("element %1: %2 against %3").arg(i).arg(got[i]).arg(expected[i])));
  }

  // A pre-quantized QLinearMatMul with a constant int8 B (one scale per column) runs on the
  // int8 dense kernel and requantizes as the reference operator does, to within one step
  // where the float product sits on a rounding boundary.
  void qlinearMatMulWithConstantWeightsUsesTheKernel() {
    const int64_t M = 6, K = 40, N = 24;
    std::mt19937 rng(17);
    std::uniform_int_distribution<int> byte(0, 255), weightByte(-127, 127);
    std::vector<int8_t> weights(size_t(K * N));
    for (auto& w : weights) w = int8_t(weightByte(rng));
    std::vector<float> ws(static_cast<size_t>(N));
    for (size_t n = 0; n < ws.size(); ++n) ws[n] = 0.002f + 0.0004f * float(n % 5);
    auto scalar = [](const std::string& name, float value) {
      return makeConstant(name, testing::arrayOf<float>({}, runtime::DataType::float32(), {value}));
    };
    auto byteScalar = [](const std::string& name, runtime::DataType type, uint8_t value) {
      return makeConstant(name, testing::arrayOf<uint8_t>({}, type, {value}));
    };
    Value x = makeInput("x", TensorType{DataType::uint8(), {M, K}, ""});
    Value y = operation("qmm", "QLinearMatMul",
                        {x, scalar("as", 0.03f), byteScalar("az", runtime::DataType::uint8(), 100),
                         makeConstant("b", testing::arrayOf<int8_t>({K, N}, runtime::DataType::int8(), weights)),
                         makeConstant("bs", testing::arrayOf<float>({N}, runtime::DataType::float32(), ws)),
                         makeConstant("bz", testing::arrayOf<int8_t>({N}, runtime::DataType::int8(),
                                                                     std::vector<int8_t>(size_t(N), 0))),
                         scalar("ys", 0.05f), byteScalar("yz", runtime::DataType::int8(), uint8_t(int8_t(-5)))});
    Graph graph{{x}, {y}, {"y"}};
    auto input = runtime::NDArray::empty({M, K}, runtime::DataType::uint8());
    for (int64_t i = 0; i < M * K; ++i) input.dataAs<uint8_t>()[i] = uint8_t(byte(rng));
    QString integerText, referenceText;
    runtime::NDArray integer = runCompiled(graph, true, input, &integerText);
    runtime::NDArray reference = runCompiled(graph, false, input, &referenceText);
    QVERIFY2(integerText.contains("QDensePrepacked") && !integerText.contains("= QLinearMatMul"), qPrintable(integerText));
    QVERIFY2(referenceText.contains("QLinearMatMul"), qPrintable(referenceText));
    int differing = 0;
    for (int64_t i = 0; i < M * N; ++i) {
      int got = integer.dataAs<int8_t>()[i], expected = reference.dataAs<int8_t>()[i];
      QVERIFY2(std::abs(got - expected) <= 1, qPrintable(QString("element %1: %2 against %3").arg(i).arg(got).arg(expected)));
      differing += got != expected;
    }
    QVERIFY2(differing * 50 <= M * N, qPrintable(QString("%1 differ by a step").arg(differing)));
  }

  // DynamicQuantizeLinear as ONNX defines it, on inputs of several axes (whose extremes are
  // reduced per position of the last axis first, in vectors, then across) and a last axis
  // that is not a whole number of vectors.
  void dynamicQuantizeLinearMatchesItsDefinition_data() {
    QTest::addColumn<QList<int>>("shape");
    QTest::newRow("[2, 5, 48]") << QList<int>{2, 5, 48};
    QTest::newRow("[7, 20]") << QList<int>{7, 20};
    QTest::newRow("[33]") << QList<int>{33};
  }
  void dynamicQuantizeLinearMatchesItsDefinition() {
    QFETCH(QList<int>, shape);
    std::vector<int64_t> dims(shape.begin(), shape.end());
    Value x = makeInput("x", TensorType{DataType::float32(), dims, ""});
    std::vector<Value> quantized = makeOperation("dql", "DynamicQuantizeLinear", {x}, {},
                                                 {TensorType{}, TensorType{}, TensorType{}}, {{"dql", "DynamicQuantizeLinear", 13}});
    Graph graph{{x}, {quantized[0], quantized[1], quantized[2]}, {"y", "scale", "zero"}};
    auto compiled = driver::compileGraph(graph, {});
    QVERIFY2(compiled.ok(), compiled.ok() ? "" : compiled.error().toString().c_str());
    auto executor = driver::createExecutor(*compiled);
    QVERIFY(executor.ok());
    std::mt19937 rng(21);
    std::uniform_real_distribution<float> uniform(-2.5f, 7.0f);
    auto input = runtime::NDArray::empty(dims, runtime::DataType::float32());
    for (float& v : input.values<float>()) v = uniform(rng);
    (*executor)->setInput("x", input);
    (*executor)->run();
    auto values = input.values<float>();
    float high = std::max(0.0f, *std::max_element(values.begin(), values.end()));
    float low = std::min(0.0f, *std::min_element(values.begin(), values.end()));
    float scale = (high - low) / 255.0f;
    float zero = std::clamp(std::nearbyint(-low / scale), 0.0f, 255.0f);
    QCOMPARE((*executor)->getOutput("scale").dataAs<float>()[0], scale);
    QCOMPARE(int((*executor)->getOutput("zero").dataAs<uint8_t>()[0]), int(zero));
    runtime::NDArray y = (*executor)->getOutput("y");
    for (size_t i = 0; i < values.size(); ++i) {
      int expected = int(std::clamp(std::nearbyint(values[i] / scale) + zero, 0.0f, 255.0f));
      QCOMPARE(int(y.dataAs<uint8_t>()[i]), expected);
    }
  }

  void asymmetricWeightsStayFloat() {
    std::mt19937 rng(5);
    DenseRegion region;
    region.weightZero = 4;
    QString text;
    auto input = runtime::NDArray::empty({1, 64}, runtime::DataType::float32());
    for (float& v : input.values<float>()) v = 0.5f;
    runCompiled(qdqDense(region, rng), true, input, &text);
    QVERIFY2(!text.contains("QDensePrepacked"), qPrintable(text));
  }
};

QTEST_GUILESS_MAIN(TestFakeQuantizationDense)
#include "test_fake_quantization_dense.moc"
