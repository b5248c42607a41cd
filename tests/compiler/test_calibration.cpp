// Calibration on known distributions: a graph that passes its input through (Relu of a
// non-negative tensor, or Identity) so the watched tensor holds exactly the samples given.
// minmax takes the extremes, percentile clips a lone outlier, entropy clips a long tail
// below its maximum; the scale and zero point follow the clip; bad samples are diagnostics.
#include <QtTest>

#include <cmath>
#include <random>

#include "compiler/driver/Calibration.h"
#include "compiler/graph/InferTypes.h"
#include "core/graph/Graph.h"

using namespace tessel;
using namespace tessel::graph;

namespace {

constexpr int64_t kElements = 4096;

Graph passThrough() {
  Value x = makeInput("x", TensorType{DataType::float32(), {1, kElements}, ""});
  Value y = makeOperation("pass", "Identity", {x}, {}, {TensorType{}}, {{"pass", "Identity", 13}})[0];
  Value z = makeOperation("after", "Relu", {y}, {}, {TensorType{}}, {{"after", "Relu", 13}})[0];
  auto typed = inferTypes(Graph{{x}, {z}, {"z"}});  // as loadModel returns graphs
  if (!typed) qFatal("%s", typed.error().toString().c_str());
  return *typed;
}

driver::CalibrationSample sample(const std::vector<float>& values) {
  auto array = runtime::NDArray::empty({1, kElements}, runtime::DataType::float32());
  array.copyFrom(values.data(), values.size() * sizeof(float));
  return {{"x", array}};
}

driver::TensorRange calibrated(const std::vector<std::vector<float>>& samples, driver::CalibrationMethod method) {
  std::vector<driver::CalibrationSample> all;
  for (const auto& values : samples) all.push_back(sample(values));
  auto ranges = driver::calibrate(passThrough(), {{"pass", 0}}, all, method);
  if (!ranges) qFatal("%s", ranges.error().toString().c_str());
  return ranges->begin()->second;
}

// Uniform values in [-1, 3] with one outlier at 40.
std::vector<float> uniformWithOutlier() {
  std::mt19937 rng(2);
  std::uniform_real_distribution<float> uniform(-1.0f, 3.0f);
  std::vector<float> values(kElements);
  for (auto& v : values) v = uniform(rng);
  values[17] = 40.0f;
  return values;
}

}  // namespace

class TestCalibration : public QObject {
  Q_OBJECT
private slots:
  void minmaxTakesTheExtremes() {
    auto range = calibrated({uniformWithOutlier()}, driver::CalibrationMethod::MinMax);
    QCOMPARE(range.clipHigh, 40.0);
    QVERIFY(range.clipLow < -0.99 && range.clipLow >= -1.0);
    QCOMPARE(range.scale, (range.clipHigh - range.clipLow) / 255.0);
    // The zero point is where 0 lands: about 1/41 of the way up.
    QCOMPARE(range.zeroPoint, int(std::nearbyint(-range.clipLow / range.scale)));
    QVERIFY(range.zeroPoint >= 6 && range.zeroPoint <= 7);
  }

  void percentileClipsALoneOutlier() {
    // One outlier in 4 x 4096 values: 99.99% of them leaves it out and nothing else.
    std::vector<float> plain = uniformWithOutlier();
    plain[17] = 1.0f;
    auto range = calibrated({uniformWithOutlier(), plain, plain, plain}, driver::CalibrationMethod::Percentile);
    QVERIFY2(range.clipHigh > 2.9 && range.clipHigh < 3.2, qPrintable(QString::number(range.clipHigh)));
    QCOMPARE(range.max, 40.0);
  }

  void entropyClipsALongTail() {
    // Exponential magnitudes: most mass near 0, a tail to the maximum.
    std::mt19937 rng(3);
    std::exponential_distribution<float> exponential(1.0f);
    std::vector<std::vector<float>> samples(4, std::vector<float>(kElements));
    for (auto& values : samples)
      for (auto& v : values) v = exponential(rng);
    auto range = calibrated(samples, driver::CalibrationMethod::Entropy);
    QVERIFY2(range.clipHigh < range.max && range.clipHigh > 0.1 * range.max,
             qPrintable(QString("clip %1 of max %2").arg(range.clipHigh).arg(range.max)));
    QCOMPARE(range.clipLow, 0.0);  // non-negative data: 0 is the bottom of the range
    QCOMPARE(range.zeroPoint, 0);
  }

  void badSamplesAreDiagnostics() {
    auto zeros = driver::calibrate(passThrough(), {{"pass", 0}}, {sample(std::vector<float>(kElements, 0.0f))},
                                   driver::CalibrationMethod::MinMax);
    QVERIFY(!zeros.ok());
    QVERIFY2(QString::fromStdString(zeros.error().message).contains("was 0 on every calibration sample"),
             zeros.error().toString().c_str());

    auto wrongShape = runtime::NDArray::empty({2, kElements}, runtime::DataType::float32());
    auto shaped = driver::calibrate(passThrough(), {{"pass", 0}}, {{{"x", wrongShape}}},
                                    driver::CalibrationMethod::MinMax);
    QVERIFY(!shaped.ok());
    QVERIFY2(QString::fromStdString(shaped.error().message).contains("calibration sample 1 gives input 'x'"),
             shaped.error().toString().c_str());

    auto missing = driver::calibrate(passThrough(), {{"nowhere", 0}}, {sample(uniformWithOutlier())},
                                     driver::CalibrationMethod::MinMax);
    QVERIFY(!missing.ok());
    QVERIFY2(QString::fromStdString(missing.error().message).contains("no tensor made by 'nowhere'"),
             missing.error().toString().c_str());
  }

  void sqnrOfKnownNoise() {
    // Noise of a tenth of the signal's amplitude everywhere: 20 dB.
    std::vector<float> signal(1000, 1.0f), noisy(1000, 1.1f);
    QVERIFY(std::fabs(driver::sqnrDecibels(signal, noisy) - 20.0) < 1e-3);
    QVERIFY(std::isinf(driver::sqnrDecibels(signal, signal)));
  }
};

QTEST_GUILESS_MAIN(TestCalibration)
#include "test_calibration.moc"
