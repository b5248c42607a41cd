// The signal, vision, text and linear-algebra operator definitions
// (compiler/opdefs/SignalVision*.cpp): each operator's ONNX conformance models run through
// driver::runModel (inputs given before compiling, as `tessel run` does) and match their
// expected outputs; DFT, Det, RoiAlign, MaxUnpool and TfIdfVectorizer agree with C++ written
// from their definitions on cases the suite misses; bad inputs come back as Diagnostics
// naming the node.
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

// RoiAlign of `x` ([N, C, H, W]) by the ONNX operator's description: per bin, a grid of
// bilinear samples (sampling_ratio, or ceil(bin size) when 0), averaged or maxed.
HostTensor referenceRoiAlign(const HostTensor& x, const HostTensor& rois, const HostTensor& batchIndices,
                             int64_t outH, int64_t outW, int64_t sampling, double scale, bool halfPixel, bool maxMode) {
  int64_t channels = x.shape[1], height = x.shape[2], width = x.shape[3], count = rois.shape[0];
  HostTensor out{{count, channels, outH, outW}, {}};
  auto pixel = [&](int64_t b, int64_t c, int64_t row, int64_t column) {
    return x.values[size_t(offsetOf(x.shape, {b, c, row, column}))];
  };
  for (int64_t r = 0; r < count; ++r) {
    double offset = halfPixel ? 0.5 : 0.0;
    double x0 = rois.values[size_t(r * 4)] * scale - offset, y0 = rois.values[size_t(r * 4 + 1)] * scale - offset;
    double roiW = rois.values[size_t(r * 4 + 2)] * scale - offset - x0;
    double roiH = rois.values[size_t(r * 4 + 3)] * scale - offset - y0;
    if (!halfPixel) roiW = std::max(roiW, 1.0), roiH = std::max(roiH, 1.0);
    double binH = roiH / double(outH), binW = roiW / double(outW);
    int64_t gridH = sampling > 0 ? sampling : int64_t(std::ceil(binH));
    int64_t gridW = sampling > 0 ? sampling : int64_t(std::ceil(binW));
    auto b = int64_t(batchIndices.values[size_t(r)]);
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t ph = 0; ph < outH; ++ph)
        for (int64_t pw = 0; pw < outW; ++pw) {
          double total = 0, best = 0;
          bool first = true;
          for (int64_t iy = 0; iy < gridH; ++iy)
            for (int64_t ix = 0; ix < gridW; ++ix) {
              double y = y0 + double(ph) * binH + (double(iy) + 0.5) * binH / double(gridH);
              double xs = x0 + double(pw) * binW + (double(ix) + 0.5) * binW / double(gridW);
              double corners[4] = {0, 0, 0, 0};
              if (!(y < -1 || y > double(height) || xs < -1 || xs > double(width))) {
                y = std::max(y, 0.0), xs = std::max(xs, 0.0);
                auto yl = int64_t(y), xl = int64_t(xs);
                int64_t yh = yl + 1, xh = xl + 1;
                if (yl >= height - 1) yl = yh = height - 1, y = double(yl);
                if (xl >= width - 1) xl = xh = width - 1, xs = double(xl);
                double ly = y - double(yl), lx = xs - double(xl);
                corners[0] = (1 - ly) * (1 - lx) * pixel(b, c, yl, xl);
                corners[1] = (1 - ly) * lx * pixel(b, c, yl, xh);
                corners[2] = ly * (1 - lx) * pixel(b, c, yh, xl);
                corners[3] = ly * lx * pixel(b, c, yh, xh);
              }
              total += corners[0] + corners[1] + corners[2] + corners[3];
              double sample = std::max(std::max(corners[0], corners[1]), std::max(corners[2], corners[3]));
              best = first ? sample : std::max(best, sample);
              first = false;
            }
          out.values.push_back(maxMode ? best : total / double(std::max<int64_t>(gridH * gridW, 1)));
        }
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
          "test_tfidfvectorizer_tf_onlybigrams_levelempty", "test_maxunpool_export_without_output_shape",
          "test_maxunpool_export_with_output_shape", "test_roialign_aligned_false", "test_roialign_aligned_true",
          "test_nonmaxsuppression_center_point_box_format", "test_nonmaxsuppression_flipped_coordinates",
          "test_nonmaxsuppression_identical_boxes", "test_nonmaxsuppression_limit_output_size",
          "test_nonmaxsuppression_single_box", "test_nonmaxsuppression_suppress_by_IOU",
          "test_nonmaxsuppression_suppress_by_IOU_and_scores", "test_nonmaxsuppression_two_batches",
          "test_nonmaxsuppression_two_classes"})
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
    request.positionalInputs.assign(inputs->begin(), inputs->end());
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

  void roiAlignMatchesReference_data() {
    QTest::addColumn<int>("sampling");
    QTest::addColumn<bool>("halfPixel");
    QTest::addColumn<bool>("maxMode");
    QTest::newRow("avg, 2x2 samples, half pixel") << 2 << true << false;
    QTest::newRow("avg, adaptive samples, half pixel") << 0 << true << false;
    QTest::newRow("avg, adaptive samples, output half pixel") << 0 << false << false;
    QTest::newRow("max, 3x3 samples") << 3 << true << true;
    QTest::newRow("max, adaptive samples") << 0 << false << true;
  }
  void roiAlignMatchesReference() {
    QFETCH(int, sampling);
    QFETCH(bool, halfPixel);
    QFETCH(bool, maxMode);
    Shape shape{2, 3, 12, 10};
    HostTensor x = randomTensor(shape, 3);
    // Regions inside, across the border and degenerate (zero width), in input coordinates
    // that spatial_scale 0.5 maps to the feature map.
    HostTensor rois{{4, 4}, {0, 0, 19, 23, 4, 6, 12, 9, -4, 10, 30, 30, 8, 8, 8, 14}};
    HostTensor batchIndices{{4}, {0, 1, 1, 0}};
    Attributes attributes{{"output_height", int64_t(3)},
                          {"output_width", int64_t(4)},
                          {"sampling_ratio", int64_t(sampling)},
                          {"spatial_scale", 0.5},
                          {"mode", std::string(maxMode ? "max" : "avg")},
                          {"coordinate_transformation_mode", std::string(halfPixel ? "half_pixel" : "output_half_pixel")}};
    OpCall call = makeCall("RoiAlign", {typeOf(shape), typeOf({4, 4}), typeOf({4}, DataType::int64())}, attributes);
    auto outputs = runOp(call, {x, rois, batchIndices});
    QCOMPARE(outputs.size(), size_t(1));
    HostTensor expected = referenceRoiAlign(x, rois, batchIndices, 3, 4, sampling, 0.5, halfPixel, maxMode);
    std::string difference = tessel::testing::compareTensors(outputs[0], expected, 1e-5);
    QVERIFY2(difference.empty(), difference.c_str());
  }

  // MaxPool's indices (flat over the whole unpooled tensor) point into overlapping, padded
  // windows; MaxUnpool puts every value back there and zeros elsewhere, padded to output_shape.
  void maxUnpoolScattersToPooledIndices_data() {
    QTest::addColumn<bool>("withOutputShape");
    QTest::newRow("inferred shape") << false;
    QTest::newRow("larger output_shape") << true;
  }
  void maxUnpoolScattersToPooledIndices() {
    QFETCH(bool, withOutputShape);
    Shape shape{2, 2, 3, 4};
    // kernel 3, stride 2, pads 1: the unpooled plane is (3-1)*2-2+3 = 5 by (4-1)*2-2+3 = 7.
    Shape inferred{2, 2, 5, 7};
    Shape outShape = withOutputShape ? Shape{2, 2, 6, 9} : inferred;
    HostTensor x = randomTensor(shape, 5);
    HostTensor indices{shape, {}};
    std::mt19937 rng(11);
    std::vector<bool> taken(size_t(tessel::elementCount(inferred)), false);
    for (int64_t i = 0; i < tessel::elementCount(shape); ++i) {
      Shape at = indexOf(shape, i);
      // A free position of the element's window (rows 2h-1..2h+1, columns 2w-1..2w+1).
      std::vector<int64_t> choices;
      for (int64_t dy = -1; dy <= 1; ++dy)
        for (int64_t dx = -1; dx <= 1; ++dx) {
          int64_t row = at[2] * 2 + dy, column = at[3] * 2 + dx;
          if (row < 0 || row >= inferred[2] || column < 0 || column >= inferred[3]) continue;
          int64_t flat = offsetOf(inferred, {at[0], at[1], row, column});
          if (!taken[size_t(flat)]) choices.push_back(flat);
        }
      QVERIFY(!choices.empty());
      int64_t pick = choices[std::uniform_int_distribution<size_t>(0, choices.size() - 1)(rng)];
      taken[size_t(pick)] = true;
      indices.values.push_back(double(pick));
    }
    std::vector<TensorType> types{typeOf(shape), typeOf(shape, DataType::int64())};
    if (withOutputShape) types.push_back(typeOf({4}, DataType::int64()));
    OpCall call = makeCall("MaxUnpool", types,
                           {{"kernel_shape", Shape{3, 3}}, {"strides", Shape{2, 2}}, {"pads", Shape{1, 1, 1, 1}}});
    if (withOutputShape) {
      auto given = runtime::NDArray::empty({4}, runtime::DataType::int64());
      std::copy(outShape.begin(), outShape.end(), given.values<int64_t>().begin());
      call.constantInputs[2] = given;
    }
    auto outputs = runOp(call, {x, indices, HostTensor{}});
    QCOMPARE(outputs.size(), size_t(1));
    HostTensor expected{outShape, std::vector<double>(size_t(tessel::elementCount(outShape)), 0.0)};
    for (size_t i = 0; i < x.values.size(); ++i) {
      Shape at = indexOf(inferred, int64_t(indices.values[i]));
      expected.values[size_t(offsetOf(outShape, at))] = x.values[i];
    }
    std::string difference = tessel::testing::compareTensors(outputs[0], expected, 0);
    QVERIFY2(difference.empty(), difference.c_str());
  }

  // Counting n-grams with skips, in the three weighting modes, against a direct count.
  void tfIdfVectorizerCountsWeightedNGrams_data() {
    QTest::addColumn<QString>("mode");
    for (const char* mode : {"TF", "IDF", "TFIDF"}) QTest::newRow(mode) << QString(mode);
  }
  void tfIdfVectorizerCountsWeightedNGrams() {
    QFETCH(QString, mode);
    Shape shape{3, 11};
    std::mt19937 rng(17);
    HostTensor tokens = tessel::testing::makeTensor(
        shape, [&](int64_t) { return double(std::uniform_int_distribution<int>(1, 3)(rng)); });
    // Unigrams {1}, {2}; bigrams {1,2}, {3,3}, {2,1}; trigram {1,2,3}; columns permuted.
    std::vector<std::vector<int64_t>> grams{{1}, {2}, {1, 2}, {3, 3}, {2, 1}, {1, 2, 3}};
    Shape pool{1, 2, 1, 2, 3, 3, 2, 1, 1, 2, 3};
    Shape columns{3, 0, 5, 1, 6, 2};
    std::vector<double> weights{0.5, 2.0, 1.5, 3.0, 0.25, 4.0};
    int64_t maxSkip = 2;
    OpCall call = makeCall("TfIdfVectorizer", {typeOf(shape, DataType::int64())},
                           {{"mode", mode.toStdString()},
                            {"min_gram_length", int64_t(1)},
                            {"max_gram_length", int64_t(3)},
                            {"max_skip_count", maxSkip},
                            {"ngram_counts", Shape{0, 2, 8}},
                            {"ngram_indexes", columns},
                            {"pool_int64s", pool},
                            {"weights", weights}});
    auto outputs = runOp(call, {tokens});
    QCOMPARE(outputs.size(), size_t(1));
    HostTensor expected{{3, 7}, std::vector<double>(21, 0.0)};
    for (int64_t row = 0; row < 3; ++row)
      for (size_t g = 0; g < grams.size(); ++g) {
        int64_t length = int64_t(grams[g].size()), count = 0;
        for (int64_t skip = 0; skip <= (length == 1 ? 0 : maxSkip); ++skip)
          for (int64_t start = 0; start + (length - 1) * (skip + 1) < shape[1]; ++start) {
            bool same = true;
            for (int64_t t = 0; t < length; ++t)
              same = same && tokens.values[size_t(row * shape[1] + start + t * (skip + 1))] == double(grams[g][size_t(t)]);
            count += same;
          }
        double value = mode == "TF" ? double(count) : mode == "IDF" ? (count > 0 ? weights[g] : 0.0) : count * weights[g];
        expected.values[size_t(row * 7 + columns[g])] = value;
      }
    std::string difference = tessel::testing::compareTensors(outputs[0], expected, 0);
    QVERIFY2(difference.empty(), difference.c_str());
  }

  void invalidCallsAreDiagnosedAtTheNode_data() {
    QTest::addColumn<int>("which");
    QTest::addColumn<QString>("mentions");
    QTest::newRow("Det beyond the expansion limit") << 0 << "not supported";
    QTest::newRow("DFT along the complex axis") << 1 << "axis 2";
    QTest::newRow("STFT without a frame length") << 2 << "frame length";
    QTest::newRow("window size not a constant") << 3 << "constant";
    QTest::newRow("TfIdfVectorizer over strings") << 4 << "string";
    QTest::newRow("NonMaxSuppression of boxes known only at run time") << 5 << "constant";
  }
  void invalidCallsAreDiagnosedAtTheNode() {
    QFETCH(int, which);
    QFETCH(QString, mentions);
    OpCall call;
    switch (which) {
      case 0: call = makeCall("Det", {typeOf({6, 6})}); break;
      case 1: call = makeCall("DFT", {typeOf({1, 8, 2})}, {{"axis", int64_t(2)}}); break;
      case 2:
        call = makeCall("STFT", {typeOf({1, 64, 1}), typeOf({}, DataType::int64())});
        call.constantInputs[1] = int64Scalar(8);
        break;
      case 3: call = makeCall("HannWindow", {typeOf({}, DataType::int64())}); break;
      case 5: call = makeCall("NonMaxSuppression", {typeOf({1, 6, 4}), typeOf({1, 1, 6})}); break;
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
