// The signal, vision, text and linear-algebra operator definitions
// (compiler/opdefs/SignalVision*.cpp): the ONNX conformance models of each operator run
// through driver::runModel and match their expected outputs; DFT and Det agree with C++
// written from their definitions; bad inputs come back as Diagnostics naming the node.
#include <QtTest>

#include <cmath>
#include <complex>
#include <filesystem>
#include <numbers>
#include <random>

#include "OpsTestSupport.h"
#include "compiler/driver/RunModel.h"
#include "compiler/opdefs/OpRegistry.h"

using namespace tessel;
using namespace tessel::graph;
using tessel::testing::HostTensor;
using tessel::testing::indexOf;
using tessel::testing::offsetOf;

namespace {
using Shape = std::vector<int64_t>;
namespace fs = std::filesystem;

const fs::path kNodeTests = "/usr/share/libonnx-testdata/data/node";

TensorType typeOf(const Shape& shape, DataType dtype = DataType::float32()) { return TensorType{dtype, shape, ""}; }

OpCall makeCall(const std::string& op, std::vector<TensorType> inputs, Attributes attributes = {}) {
  OpCall call;
  call.op = op;
  call.nodeName = op + "_node";
  call.attributes = std::move(attributes);
  call.inputTypes = std::move(inputs);
  call.constantInputs.resize(call.inputTypes.size());
  call.opset = 17;
  return call;
}

runtime::NDArray int64Scalar(int64_t value) {
  auto array = runtime::NDArray::empty({}, runtime::DataType::int64());
  array.values<int64_t>()[0] = value;
  return array;
}

HostTensor randomTensor(const Shape& shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-2.0, 2.0);
  return tessel::testing::makeTensor(shape, [&](int64_t) { return double(float(uniform(rng))); });
}

// Types the call, builds and runs its kernel on `inputs` (one per node input) and returns its
// outputs; empty (with a warning) when any step fails or the kernel disagrees with its types.
std::vector<HostTensor> runOp(const OpCall& call, const std::vector<HostTensor>& inputs) {
  auto types = inferOpTypes(call);
  auto kernel = buildOpKernel(call);
  if (!types || !kernel) {
    qWarning("%s", (!types ? types.error() : kernel.error()).toString().c_str());
    return {};
  }
  Schedule schedule = kernel->schedule ? *kernel->schedule(kernel->workload, call.target)
                                       : Schedule(kernel->workload.outputs);
  std::vector<HostTensor> kernelInputs;
  for (int index : kernel->inputIndices) kernelInputs.push_back(inputs[size_t(index)]);
  auto outputs = tessel::testing::runWorkload(kernel->workload, schedule, kernelInputs);
  for (size_t i = 0; i < outputs.size(); ++i)
    if (i >= types->size() || outputs[i].shape != (*types)[i].shape) return {};
  return outputs;
}

// The DFT of `signal` ([batch, n, 2]) along axis 1 by its definition, `length` bins from the
// signal zero-padded or truncated to `length`.
HostTensor referenceDft(const HostTensor& signal, int64_t length, bool inverse, bool onesided) {
  int64_t batch = signal.shape[0], n = signal.shape[1];
  int64_t bins = onesided ? length / 2 + 1 : length;
  HostTensor out{{batch, bins, 2}, std::vector<double>(size_t(batch * bins * 2))};
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t k = 0; k < bins; ++k) {
      std::complex<double> sum;
      for (int64_t m = 0; m < std::min(n, length); ++m) {
        std::complex<double> x(signal.values[size_t(offsetOf(signal.shape, {b, m, 0}))],
                               signal.values[size_t(offsetOf(signal.shape, {b, m, 1}))]);
        double angle = (inverse ? 2 : -2) * std::numbers::pi * double(k * m) / double(length);
        sum += x * std::polar(1.0, angle);
      }
      if (inverse) sum /= double(length);
      out.values[size_t(offsetOf(out.shape, {b, k, 0}))] = sum.real();
      out.values[size_t(offsetOf(out.shape, {b, k, 1}))] = sum.imag();
    }
  return out;
}

// The determinant by Gaussian elimination with partial pivoting (another algorithm than the
// kernel's permutation expansion).
double referenceDeterminant(std::vector<double> a, int64_t n) {
  double det = 1;
  for (int64_t c = 0; c < n; ++c) {
    int64_t pivot = c;
    for (int64_t r = c + 1; r < n; ++r)
      if (std::abs(a[size_t(r * n + c)]) > std::abs(a[size_t(pivot * n + c)])) pivot = r;
    if (a[size_t(pivot * n + c)] == 0) return 0;
    if (pivot != c) {
      for (int64_t j = 0; j < n; ++j) std::swap(a[size_t(c * n + j)], a[size_t(pivot * n + j)]);
      det = -det;
    }
    det *= a[size_t(c * n + c)];
    for (int64_t r = c + 1; r < n; ++r) {
      double factor = a[size_t(r * n + c)] / a[size_t(c * n + c)];
      for (int64_t j = c; j < n; ++j) a[size_t(r * n + j)] -= factor * a[size_t(c * n + j)];
    }
  }
  return det;
}

}  // namespace

class TestOpdefsSignalVision : public QObject {
  Q_OBJECT
private slots:
  void conformanceModelMatchesExpectedOutputs_data() {
    QTest::addColumn<QString>("test");
    for (const char* name :
         {"test_hannwindow", "test_hannwindow_symmetric", "test_hammingwindow", "test_hammingwindow_symmetric",
          "test_blackmanwindow", "test_blackmanwindow_symmetric", "test_dft", "test_dft_axis", "test_dft_inverse",
          "test_stft", "test_stft_with_window", "test_melweightmatrix", "test_det_2d", "test_det_nd",
          "test_tfidfvectorizer_tf_only_bigrams_skip0", "test_tfidfvectorizer_tf_batch_onlybigrams_skip0",
          "test_tfidfvectorizer_tf_onlybigrams_skip5", "test_tfidfvectorizer_tf_batch_onlybigrams_skip5",
          "test_tfidfvectorizer_tf_uniandbigrams_skip5", "test_tfidfvectorizer_tf_batch_uniandbigrams_skip5",
          "test_tfidfvectorizer_tf_onlybigrams_levelempty"})
      QTest::newRow(name) << QString(name);
  }
  void conformanceModelMatchesExpectedOutputs() {
    QFETCH(QString, test);
    fs::path directory = kNodeTests / test.toStdString();
    if (!fs::exists(directory / "model.onnx"))
      QSKIP("the ONNX node tests are not installed (Debian package libonnx-testdata)");
    fs::path dataSet = directory / "test_data_set_0";
    driver::RunRequest request;
    request.model = (directory / "model.onnx").string();
    auto inputs = driver::readNumberedTensors(dataSet.string(), "input_");
    auto expected = driver::readNumberedTensors(dataSet.string(), "output_");
    QVERIFY2(inputs && expected, "the test data is readable");
    request.positionalInputs = *inputs;
    request.expectedOutputs = *expected;
    auto result = driver::runModel(request);
    QVERIFY2(result, result ? "" : result.error().toString().c_str());
    for (const auto& comparison : result->comparisons)
      QVERIFY2(comparison.matches, comparison.describe().c_str());
    QCOMPARE(result->comparisons.size(), expected->size());
  }

  void dftMatchesDefinition_data() {
    QTest::addColumn<int>("length");
    QTest::addColumn<bool>("inverse");
    QTest::addColumn<bool>("onesided");
    QTest::newRow("forward") << 0 << false << false;
    QTest::newRow("inverse") << 0 << true << false;
    QTest::newRow("onesided") << 0 << false << true;
    QTest::newRow("zero-padded to 12") << 12 << false << false;
    QTest::newRow("truncated to 5") << 5 << false << false;
  }
  void dftMatchesDefinition() {
    QFETCH(int, length);
    QFETCH(bool, inverse);
    QFETCH(bool, onesided);
    Shape shape{3, 9, 2};
    HostTensor signal = randomTensor(shape, 7);
    std::vector<TensorType> types{typeOf(shape)};
    if (length > 0) types.push_back(typeOf({}, DataType::int64()));
    OpCall call = makeCall("DFT", types, {{"inverse", int64_t(inverse)}, {"onesided", int64_t(onesided)}});
    if (length > 0) call.constantInputs[1] = int64Scalar(length);
    auto outputs = runOp(call, {signal, HostTensor{}});
    QCOMPARE(outputs.size(), size_t(1));
    HostTensor expected = referenceDft(signal, length > 0 ? length : shape[1], inverse, onesided);
    std::string difference = tessel::testing::compareTensors(outputs[0], expected, 1e-5);
    QVERIFY2(difference.empty(), difference.c_str());
  }

  void detMatchesGaussianElimination_data() {
    QTest::addColumn<int>("size");
    for (int size : {1, 2, 3, 4, 5}) QTest::newRow(std::to_string(size).c_str()) << size;
  }
  void detMatchesGaussianElimination() {
    QFETCH(int, size);
    Shape shape{2, 3, size, size};
    HostTensor matrices = randomTensor(shape, unsigned(size));
    auto outputs = runOp(makeCall("Det", {typeOf(shape)}), {matrices});
    QCOMPARE(outputs.size(), size_t(1));
    QCOMPARE(outputs[0].shape, (Shape{2, 3}));
    int64_t area = int64_t(size) * size;
    for (int64_t m = 0; m < 6; ++m) {
      std::vector<double> a(matrices.values.begin() + m * area, matrices.values.begin() + (m + 1) * area);
      double expected = referenceDeterminant(a, size);
      QVERIFY2(std::abs(outputs[0].values[size_t(m)] - expected) <= 1e-4 * (1 + std::abs(expected)),
               ("matrix " + std::to_string(m) + ": got " + std::to_string(outputs[0].values[size_t(m)]) +
                ", expected " + std::to_string(expected))
                   .c_str());
    }
  }

  void invalidCallsAreDiagnosedAtTheNode_data() {
    QTest::addColumn<int>("which");
    QTest::addColumn<QString>("mentions");
    QTest::newRow("Det beyond the expansion limit") << 0 << "not supported";
    QTest::newRow("DFT along the complex axis") << 1 << "axis 3";
    QTest::newRow("STFT without a frame length") << 2 << "frame length";
    QTest::newRow("window size not a constant") << 3 << "constant";
    QTest::newRow("TfIdfVectorizer over strings") << 4 << "string";
  }
  void invalidCallsAreDiagnosedAtTheNode() {
    QFETCH(int, which);
    QFETCH(QString, mentions);
    OpCall call;
    switch (which) {
      case 0: call = makeCall("Det", {typeOf({6, 6})}); break;
      case 1: call = makeCall("DFT", {typeOf({1, 8, 2})}, {{"axis", int64_t(3)}}); break;
      case 2:
        call = makeCall("STFT", {typeOf({1, 64, 1}), typeOf({}, DataType::int64())});
        call.constantInputs[1] = int64Scalar(8);
        break;
      case 3: call = makeCall("HannWindow", {typeOf({}, DataType::int64())}); break;
      default:
        call = makeCall("TfIdfVectorizer", {typeOf({4}, DataType::int64())},
                        {{"mode", std::string("TF")}, {"pool_strings", std::vector<std::string>{"a"}}});
    }
    auto types = inferOpTypes(call);
    QVERIFY(!types);
    std::string message = types.error().toString();
    QVERIFY2(message.find(call.nodeName) != std::string::npos, message.c_str());
    QVERIFY2(message.find(mentions.toStdString()) != std::string::npos, message.c_str());
  }
};

QTEST_GUILESS_MAIN(TestOpdefsSignalVision)
#include "test_opdefs_signal_vision.moc"
