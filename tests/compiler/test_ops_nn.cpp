// Neural-network operators from compiler/ops (pooling, softmax, normalization, reductions)
// under their default schedules: results match straightforward C++ written from the ONNX
// specification, and invalid attributes are refused with a message naming them.
#include <QtTest>

#include <cmath>
#include <functional>
#include <random>

#include "compiler/lower/Build.h"
#include "compiler/lower/Lower.h"
#include "compiler/ops/Normalization.h"
#include "compiler/ops/Pooling.h"
#include "compiler/ops/Reduction.h"
#include "compiler/ops/Softmax.h"
#include "core/ir/IRPrinter.h"
#include "runtime/NDArray.h"

using namespace tessel;

Q_DECLARE_METATYPE(std::vector<int64_t>)

namespace {
using Shape = std::vector<int64_t>;

Shape shapeOf(const te::Tensor& t) {
  Shape shape;
  for (auto& e : t.shape()) shape.push_back(*asConstInt(e));
  return shape;
}


// Row-major coordinates of flat index `flat` in `shape`.
Shape coordinates(int64_t flat, const Shape& shape) {
  Shape index(shape.size());
  for (int d = int(shape.size()) - 1; d >= 0; --d) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

int64_t flatIndex(const Shape& index, const Shape& shape) {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + index[d];
  return flat;
}

std::vector<float> randomValues(int64_t count, float low, float high, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(low, high);
  std::vector<float> values(static_cast<size_t>(count));
  for (float& v : values) v = uniform(rng);
  return values;
}

// Builds `w` under `schedule`, runs it on `inputs` (one vector per input, in order) and
// returns the first output's elements.
template <class OutputType = float>
std::vector<OutputType> runWorkload(const Workload& w, const Schedule& schedule,
                                    const std::vector<std::vector<float>>& inputs) {
  auto built = build(schedule, w.args(), w.name);
  if (!built) qFatal("%s", built.error().toString().c_str());
  std::vector<runtime::Value> args;
  for (size_t i = 0; i < w.inputs.size(); ++i) {
    auto array = runtime::NDArray::empty(shapeOf(w.inputs[i]), runtime::DataType::float32());
    auto values = array.values<float>();
    if (size_t(values.size()) != inputs[i].size()) qFatal("input %zu has the wrong element count", i);
    std::copy(inputs[i].begin(), inputs[i].end(), values.begin());
    args.push_back(array);
  }
  auto output = runtime::NDArray::empty(shapeOf(w.outputs[0]), toRuntimeType(w.outputs[0].dtype()));
  args.push_back(output);
  built->function.callPacked(args);
  return output.toVector<OutputType>();
}

bool closeEnough(const std::vector<float>& got, const std::vector<float>& expected, float tolerance) {
  if (got.size() != expected.size()) {
    qWarning("got %zu elements, expected %zu", got.size(), expected.size());
    return false;
  }
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - expected[i]) <= tolerance * (1 + std::fabs(expected[i])))) {
      qWarning("element %zu: got %g, expected %g", i, double(got[i]), double(expected[i]));
      return false;
    }
  return true;
}

Target testTarget() {
  Target target = hostTarget();
  target.cores = std::max(target.cores, 2);  // exercise the parallel loops even on one core
  return target;
}

// ONNX pooling written out directly: every output position, every tap of its window.
std::vector<float> referencePool(const PoolParams& p, const Shape& outShape, const std::vector<float>& in) {
  size_t rank = p.kernel.size();
  auto attr = [&](const Shape& values, size_t d, int64_t fallback) { return values.empty() ? fallback : values[d]; };
  std::vector<float> out(static_cast<size_t>(elementCount(outShape)));
  for (int64_t o = 0; o < int64_t(out.size()); ++o) {
    Shape at = coordinates(o, outShape);
    float best = -INFINITY, sum = 0;
    int64_t counted = 1;
    for (size_t d = 0; d < rank; ++d) {
      // The divisor: taps inside the input, or also inside the padding with count_include_pad.
      int64_t taps = 0;
      for (int64_t t = 0; t < p.kernel[d]; ++t) {
        int64_t pos = at[d + 2] * attr(p.strides, d, 1) + t * attr(p.dilations, d, 1) - attr(p.padsBegin, d, 0);
        int64_t low = p.countIncludePad ? -attr(p.padsBegin, d, 0) : 0;
        int64_t high = p.inputShape[d + 2] + (p.countIncludePad ? attr(p.padsEnd, d, 0) : 0);
        if (pos >= low && pos < high) ++taps;
      }
      counted *= taps;
    }
    for (int64_t t = 0; t < elementCount(p.kernel); ++t) {
      Shape tap = coordinates(t, p.kernel);
      Shape source = {at[0], at[1]};
      bool inside = true;
      for (size_t d = 0; d < rank; ++d) {
        int64_t pos = at[d + 2] * attr(p.strides, d, 1) + tap[d] * attr(p.dilations, d, 1) - attr(p.padsBegin, d, 0);
        inside = inside && pos >= 0 && pos < p.inputShape[d + 2];
        source.push_back(pos);
      }
      if (!inside) continue;
      float v = in[size_t(flatIndex(source, p.inputShape))];
      best = std::max(best, v);
      sum += v;
    }
    out[size_t(o)] = p.kind == PoolKind::Max ? best : sum / float(counted);
  }
  return out;
}
}  // namespace

class TestOpsNN : public QObject {
  Q_OBJECT
private slots:
  void poolMatchesReference_data() {
    QTest::addColumn<bool>("isMax");
    QTest::addColumn<Shape>("input");
    QTest::addColumn<Shape>("kernel");
    QTest::addColumn<Shape>("strides");
    QTest::addColumn<Shape>("pads");  // ONNX layout: begins, then ends
    QTest::addColumn<Shape>("dilations");
    QTest::addColumn<bool>("ceilMode");
    QTest::addColumn<bool>("countIncludePad");
    QTest::addColumn<Shape>("expectedShape");
    QTest::newRow("max resnet stem") << true << Shape{1, 3, 20, 37} << Shape{3, 3} << Shape{2, 2} << Shape{1, 1, 1, 1}
                                     << Shape{} << false << false << Shape{1, 3, 10, 19};
    QTest::newRow("max 2x2 no pad") << true << Shape{2, 5, 8, 40} << Shape{2, 2} << Shape{2, 2} << Shape{} << Shape{}
                                    << false << false << Shape{2, 5, 4, 20};
    QTest::newRow("max ceil squeezenet") << true << Shape{1, 4, 14, 14} << Shape{3, 3} << Shape{2, 2} << Shape{}
                                         << Shape{} << true << false << Shape{1, 4, 7, 7};
    QTest::newRow("max ceil drops window in end pad")
        << true << Shape{1, 2, 5, 5} << Shape{2, 2} << Shape{2, 2} << Shape{1, 1, 1, 1} << Shape{} << true << false
        << Shape{1, 2, 3, 3};
    QTest::newRow("max dilated asymmetric pads") << true << Shape{1, 2, 11, 23} << Shape{2, 3} << Shape{1, 2}
                                                 << Shape{0, 2, 1, 1} << Shape{2, 2} << false << false
                                                 << Shape{1, 2, 10, 11};
    QTest::newRow("max 1-D") << true << Shape{2, 3, 50} << Shape{4} << Shape{3} << Shape{2, 1} << Shape{} << false
                             << false << Shape{2, 3, 17};
    QTest::newRow("avg exclude pad") << false << Shape{1, 3, 9, 21} << Shape{3, 3} << Shape{1, 1} << Shape{1, 1, 1, 1}
                                     << Shape{} << false << false << Shape{1, 3, 9, 21};
    QTest::newRow("avg include pad") << false << Shape{2, 2, 9, 21} << Shape{3, 3} << Shape{2, 2} << Shape{1, 1, 1, 1}
                                     << Shape{} << false << true << Shape{2, 2, 5, 11};
    QTest::newRow("avg ceil include pad") << false << Shape{1, 3, 10, 18} << Shape{3, 3} << Shape{2, 2}
                                          << Shape{0, 1, 0, 1} << Shape{} << true << true << Shape{1, 3, 5, 10};
    QTest::newRow("avg ceil exclude pad") << false << Shape{1, 2, 6, 7} << Shape{2, 2} << Shape{2, 2} << Shape{}
                                          << Shape{} << true << false << Shape{1, 2, 3, 4};
    QTest::newRow("avg 3-D") << false << Shape{1, 2, 5, 6, 7} << Shape{2, 2, 3} << Shape{1, 2, 2} << Shape{}
                             << Shape{} << false << false << Shape{1, 2, 4, 3, 3};
  }
  void poolMatchesReference() {
    QFETCH(bool, isMax);
    QFETCH(Shape, input);
    QFETCH(Shape, kernel);
    QFETCH(Shape, strides);
    QFETCH(Shape, pads);
    QFETCH(Shape, dilations);
    QFETCH(bool, ceilMode);
    QFETCH(bool, countIncludePad);
    QFETCH(Shape, expectedShape);
    PoolParams p;
    p.kind = isMax ? PoolKind::Max : PoolKind::Average;
    p.inputShape = input;
    p.kernel = kernel;
    p.strides = strides;
    if (!pads.empty()) {
      p.padsBegin.assign(pads.begin(), pads.begin() + pads.size() / 2);
      p.padsEnd.assign(pads.begin() + pads.size() / 2, pads.end());
    }
    p.dilations = dilations;
    p.ceilMode = ceilMode;
    p.countIncludePad = countIncludePad;
    auto w = pool(p);
    QVERIFY2(w.ok(), w.ok() ? "" : w.error().toString().c_str());
    QCOMPARE(shapeOf(w->outputs[0]), expectedShape);
    auto schedule = defaultPoolSchedule(*w, testTarget());
    QVERIFY2(schedule.ok(), schedule.ok() ? "" : schedule.error().toString().c_str());
    // Negative values only, so a padded zero winning a max would show.
    std::vector<float> in = randomValues(elementCount(input), -3.0f, -0.5f, 11);
    auto got = runWorkload(*w, *schedule, {in});
    QVERIFY(closeEnough(got, referencePool(p, expectedShape, in), 1e-5f));
  }

  void globalPoolMatchesReference_data() {
    QTest::addColumn<bool>("isMax");
    QTest::addColumn<Shape>("input");
    QTest::newRow("avg resnet head") << false << Shape{2, 64, 7, 7};
    QTest::newRow("max odd") << true << Shape{1, 5, 13, 3};
    QTest::newRow("avg 1-D") << false << Shape{3, 4, 33};
    // Planes reduced in vector lanes: a whole number of steps, a partial last step, 3-D.
    QTest::newRow("avg 8x8") << false << Shape{1, 3, 8, 8};
    QTest::newRow("max 14x14") << true << Shape{1, 6, 14, 14};
    QTest::newRow("avg 3-D") << false << Shape{1, 2, 3, 5, 7};
  }
  void globalPoolMatchesReference() {
    QFETCH(bool, isMax);
    QFETCH(Shape, input);
    auto w = globalPool(isMax ? PoolKind::Max : PoolKind::Average, input);
    QVERIFY(w.ok());
    Shape expectedShape = {input[0], input[1]};
    expectedShape.resize(input.size(), 1);
    QCOMPARE(shapeOf(w->outputs[0]), expectedShape);
    auto schedule = defaultPoolSchedule(*w, testTarget());
    QVERIFY(schedule.ok());
    std::vector<float> in = randomValues(elementCount(input), -2.0f, 2.0f, 5);
    auto got = runWorkload(*w, *schedule, {in});
    int64_t plane = elementCount(input) / (input[0] * input[1]);
    std::vector<float> expected;
    for (int64_t i = 0; i < input[0] * input[1]; ++i) {
      float best = -INFINITY, sum = 0;
      for (int64_t j = 0; j < plane; ++j) {
        best = std::max(best, in[size_t(i * plane + j)]);
        sum += in[size_t(i * plane + j)];
      }
      expected.push_back(isMax ? best : sum / float(plane));
    }
    QVERIFY(closeEnough(got, expected, 1e-5f));
  }

  void globalAveragePoolReadsPlanesInVectors() {
    // One serial chain of scalar adds per plane ran EfficientNet's and DenseNet's global
    // pools at 3-15% of their memory bound: each plane is now read in contiguous vectors
    // into lanes of partial sums, a 7x7 plane's partial last step peeled off.
    Target target = testTarget();
    target.vectorBits = 32 * 8;
    auto w = globalPool(PoolKind::Average, {1, 64, 7, 7});
    QVERIFY(w.ok());
    auto schedule = defaultPoolSchedule(*w, target);
    QVERIFY(schedule.ok());
    auto lowered = lower(*schedule, w->args(), w->name);
    QVERIFY(lowered.ok());
    QString text = QString::fromStdString(toString(lowered->func));
    QVERIFY2(text.contains("data[ramp(planes*49 + j*16, 1, 16)]") && !text.contains("min(ramp"), qPrintable(text));
  }

  void poolAutoPadMatchesOnnx_data() {
    QTest::addColumn<QString>("autoPad");
    QTest::addColumn<Shape>("input");
    QTest::addColumn<Shape>("kernel");
    QTest::addColumn<Shape>("strides");
    QTest::addColumn<Shape>("expectedPads");  // begins, then ends
    QTest::addColumn<Shape>("expectedShape");
    QTest::newRow("same upper odd total") << "SAME_UPPER" << Shape{1, 2, 7, 8} << Shape{2, 3} << Shape{2, 2}
                                          << Shape{0, 0, 1, 1} << Shape{1, 2, 4, 4};
    QTest::newRow("same lower odd total") << "SAME_LOWER" << Shape{1, 2, 7, 8} << Shape{2, 3} << Shape{2, 2}
                                          << Shape{1, 1, 0, 0} << Shape{1, 2, 4, 4};
    QTest::newRow("same stride 1") << "SAME_UPPER" << Shape{1, 1, 5, 5} << Shape{3, 3} << Shape{1, 1}
                                   << Shape{1, 1, 1, 1} << Shape{1, 1, 5, 5};
    QTest::newRow("valid") << "VALID" << Shape{1, 1, 9, 9} << Shape{3, 3} << Shape{2, 2} << Shape{0, 0, 0, 0}
                           << Shape{1, 1, 4, 4};
  }
  void poolAutoPadMatchesOnnx() {
    QFETCH(QString, autoPad);
    QFETCH(Shape, input);
    QFETCH(Shape, kernel);
    QFETCH(Shape, strides);
    QFETCH(Shape, expectedPads);
    QFETCH(Shape, expectedShape);
    PoolParams p;
    p.kind = PoolKind::Average;
    p.inputShape = input;
    p.kernel = kernel;
    p.strides = strides;
    p.padsBegin = p.padsEnd = {5, 5};  // replaced
    QVERIFY(resolveAutoPad(p, autoPad.toStdString()).ok());
    Shape pads = p.padsBegin;
    pads.insert(pads.end(), p.padsEnd.begin(), p.padsEnd.end());
    QCOMPARE(pads, expectedPads);
    auto shape = poolOutputShape(p);
    QVERIFY(shape.ok());
    QCOMPARE(*shape, expectedShape);
    auto w = pool(p);
    QVERIFY(w.ok());
    auto schedule = defaultPoolSchedule(*w, testTarget());
    QVERIFY(schedule.ok());
    std::vector<float> in = randomValues(elementCount(input), -1.0f, 1.0f, 17);
    QVERIFY(closeEnough(runWorkload(*w, *schedule, {in}), referencePool(p, expectedShape, in), 1e-5f));
  }

  void poolRejectsUnknownAutoPad() {
    PoolParams p;
    p.inputShape = {1, 1, 4, 4};
    p.kernel = {2, 2};
    Status status = resolveAutoPad(p, "SAME");
    QVERIFY(!status.ok());
    QVERIFY2(QString::fromStdString(status.error().toString()).contains("unknown auto_pad 'SAME'"),
             status.error().toString().c_str());
  }

  void poolRejectsInvalidAttributes_data() {
    QTest::addColumn<Shape>("input");
    QTest::addColumn<Shape>("kernel");
    QTest::addColumn<Shape>("strides");
    QTest::addColumn<Shape>("pads");
    QTest::addColumn<QString>("message");
    QTest::newRow("rank") << Shape{4, 4} << Shape{2} << Shape{} << Shape{} << "at least one spatial axis";
    QTest::newRow("kernel count") << Shape{1, 1, 8, 8} << Shape{2} << Shape{} << Shape{} << "kernel_shape has 1";
    QTest::newRow("zero stride") << Shape{1, 1, 8, 8} << Shape{2, 2} << Shape{0, 1} << Shape{}
                                 << "strides must be positive";
    QTest::newRow("stride count") << Shape{1, 1, 8, 8} << Shape{2, 2} << Shape{1} << Shape{} << "strides has 1";
    QTest::newRow("negative pad") << Shape{1, 1, 8, 8} << Shape{2, 2} << Shape{} << Shape{0, -1, 0, 0}
                                  << "must not be negative";
    QTest::newRow("pad as wide as kernel") << Shape{1, 1, 8, 8} << Shape{2, 2} << Shape{} << Shape{2, 0, 0, 0}
                                           << "smaller than the (dilated) kernel";
    QTest::newRow("kernel too large") << Shape{1, 1, 3, 8} << Shape{5, 2} << Shape{} << Shape{}
                                      << "larger than the padded input";
  }
  void poolRejectsInvalidAttributes() {
    QFETCH(Shape, input);
    QFETCH(Shape, kernel);
    QFETCH(Shape, strides);
    QFETCH(Shape, pads);
    QFETCH(QString, message);
    PoolParams p;
    p.inputShape = input;
    p.kernel = kernel;
    p.strides = strides;
    if (!pads.empty()) {
      p.padsBegin.assign(pads.begin(), pads.begin() + pads.size() / 2);
      p.padsEnd.assign(pads.begin() + pads.size() / 2, pads.end());
    }
    auto w = pool(p);
    QVERIFY(!w.ok());
    QString text = QString::fromStdString(w.error().toString());
    QVERIFY2(text.contains(message) && text.contains("maxpool"), qPrintable(text));
  }

  void softmaxMatchesReference_data() {
    QTest::addColumn<Shape>("shape");
    QTest::addColumn<int>("axis");
    QTest::addColumn<bool>("logSoftmax");
    QTest::newRow("last axis") << Shape{2, 3, 37} << -1 << false;
    QTest::newRow("attention scores") << Shape{1, 4, 16, 16} << 3 << false;
    QTest::newRow("first axis") << Shape{5, 33} << 0 << false;
    QTest::newRow("middle axis") << Shape{2, 5, 7, 19} << 1 << false;
    QTest::newRow("negative middle axis") << Shape{3, 6, 20} << -2 << false;
    QTest::newRow("rank 1") << Shape{41} << 0 << false;
    QTest::newRow("log last axis") << Shape{3, 4, 40} << -1 << true;
    QTest::newRow("log middle axis") << Shape{2, 6, 21} << 1 << true;
    QTest::newRow("log first axis of 1-D") << Shape{9} << -1 << true;
  }
  void softmaxMatchesReference() {
    QFETCH(Shape, shape);
    QFETCH(int, axis);
    QFETCH(bool, logSoftmax);
    SoftmaxParams p{shape, axis, logSoftmax};
    auto w = softmax(p);
    QVERIFY2(w.ok(), w.ok() ? "" : w.error().toString().c_str());
    auto schedule = defaultSoftmaxSchedule(*w, p, testTarget());
    QVERIFY2(schedule.ok(), schedule.ok() ? "" : schedule.error().toString().c_str());
    // Values up to 100: exp overflows float unless the row maximum is subtracted first.
    std::vector<float> in = randomValues(elementCount(shape), -100.0f, 100.0f, 3);
    auto got = runWorkload(*w, *schedule, {in});
    int64_t a = axis < 0 ? axis + int64_t(shape.size()) : axis;
    int64_t extent = shape[size_t(a)], stride = 1;
    for (size_t d = size_t(a) + 1; d < shape.size(); ++d) stride *= shape[d];
    std::vector<float> expected(in.size());
    for (int64_t i = 0; i < int64_t(in.size()); ++i) {
      int64_t first = i - (i / stride % extent) * stride;  // the same row, position 0 along the axis
      double best = -INFINITY, sum = 0;
      for (int64_t j = 0; j < extent; ++j) best = std::max(best, double(in[size_t(first + j * stride)]));
      for (int64_t j = 0; j < extent; ++j) sum += std::exp(double(in[size_t(first + j * stride)]) - best);
      double shifted = double(in[size_t(i)]) - best;
      expected[size_t(i)] = float(logSoftmax ? shifted - std::log(sum) : std::exp(shifted) / sum);
    }
    QVERIFY(closeEnough(got, expected, 1e-5f));
  }

  void softmaxRejectsAxisOutOfRange() {
    SoftmaxParams p{{2, 3}, 2, false};
    auto w = softmax(p);
    QVERIFY(!w.ok());
    QString text = QString::fromStdString(w.error().toString());
    QVERIFY2(text.contains("axis 2 is out of range for rank 2") && text.contains("[-2, 1]"), qPrintable(text));
    p.axis = -3;
    p.logSoftmax = true;
    QVERIFY(!softmax(p).ok());
    QVERIFY(QString::fromStdString(softmax(p).error().toString()).contains("logsoftmax"));
  }

  void softmaxScheduleComputesRowsInParallel() {
    SoftmaxParams p{{8, 128, 128}, -1, false};
    Target target;
    target.vectorBits = 32 * 8;
    target.cores = 4;
    auto w = softmax(p);
    QVERIFY(w.ok());
    auto schedule = defaultSoftmaxSchedule(*w, p, target);
    QVERIFY(schedule.ok());
    auto lowered = lower(*schedule, w->args(), w->name);
    QVERIFY(lowered.ok());
    QString text = QString::fromStdString(toString(lowered->func));
    // Rows in parallel in all four stages.
    QVERIFY2(text.count("parallel for") == 4 && text.contains("ramp("), qPrintable(text));
  }

  void reduceMatchesReference_data() {
    QTest::addColumn<int>("kind");
    QTest::addColumn<Shape>("shape");
    QTest::addColumn<Shape>("axes");
    QTest::addColumn<bool>("keepDims");
    QTest::addColumn<bool>("noop");
    QTest::addColumn<Shape>("expectedShape");
    QTest::newRow("sum middle") << int(ReduceKind::Sum) << Shape{3, 5, 7} << Shape{1} << true << false
                                << Shape{3, 1, 7};
    QTest::newRow("mean spatial") << int(ReduceKind::Mean) << Shape{2, 3, 17, 19} << Shape{2, 3} << true << false
                                  << Shape{2, 3, 1, 1};
    QTest::newRow("max last negative") << int(ReduceKind::Max) << Shape{4, 33} << Shape{-1} << false << false
                                       << Shape{4};
    QTest::newRow("min outer and inner") << int(ReduceKind::Min) << Shape{5, 6, 40} << Shape{2, 0} << false << false
                                         << Shape{6};
    QTest::newRow("prod") << int(ReduceKind::Prod) << Shape{3, 4, 5} << Shape{-2} << true << false << Shape{3, 1, 5};
    QTest::newRow("prod trailing") << int(ReduceKind::Prod) << Shape{2, 3, 37} << Shape{2} << false << false
                                   << Shape{2, 3};
    QTest::newRow("min trailing") << int(ReduceKind::Min) << Shape{3, 70} << Shape{1} << true << false << Shape{3, 1};
    QTest::newRow("max vector lanes kept") << int(ReduceKind::Max) << Shape{2, 64, 50} << Shape{1} << false << false
                                           << Shape{2, 50};
    QTest::newRow("sum all keep") << int(ReduceKind::Sum) << Shape{7, 9} << Shape{} << true << false << Shape{1, 1};
    QTest::newRow("mean all to scalar") << int(ReduceKind::Mean) << Shape{6, 35} << Shape{} << false << false
                                        << Shape{};
    QTest::newRow("noop with empty axes") << int(ReduceKind::Sum) << Shape{4, 5} << Shape{} << false << true
                                          << Shape{4, 5};
  }
  void reduceMatchesReference() {
    QFETCH(int, kind);
    QFETCH(Shape, shape);
    QFETCH(Shape, axes);
    QFETCH(bool, keepDims);
    QFETCH(bool, noop);
    QFETCH(Shape, expectedShape);
    ReduceParams p{ReduceKind(kind), shape, axes, keepDims, noop};
    auto w = reduce(p);
    QVERIFY2(w.ok(), w.ok() ? "" : w.error().toString().c_str());
    QCOMPARE(shapeOf(w->outputs[0]), expectedShape);
    auto schedule = defaultReduceSchedule(*w, p, testTarget());
    QVERIFY2(schedule.ok(), schedule.ok() ? "" : schedule.error().toString().c_str());
    bool product = ReduceKind(kind) == ReduceKind::Prod;
    std::vector<float> in = randomValues(elementCount(shape), product ? 0.5f : -2.0f, product ? 1.5f : 2.0f, 9);
    auto got = runWorkload(*w, *schedule, {in});
    // Reference: every input element folded into the output element it maps to.
    std::vector<bool> reduced(shape.size(), !noop && axes.empty());
    for (int64_t a : axes) reduced[size_t(a < 0 ? a + int64_t(shape.size()) : a)] = true;
    Shape kept;
    for (size_t d = 0; d < shape.size(); ++d)
      if (!reduced[d]) kept.push_back(shape[d]);
    std::vector<double> acc(size_t(elementCount(kept)), product ? 1.0 : 0.0);
    std::vector<bool> seen(acc.size(), false);
    for (int64_t i = 0; i < int64_t(in.size()); ++i) {
      Shape at = coordinates(i, shape), keptAt;
      for (size_t d = 0; d < shape.size(); ++d)
        if (!reduced[d]) keptAt.push_back(at[d]);
      size_t o = size_t(flatIndex(keptAt, kept));
      double v = in[size_t(i)];
      switch (ReduceKind(kind)) {
        case ReduceKind::Sum:
        case ReduceKind::Mean: acc[o] += v; break;
        case ReduceKind::Max: acc[o] = seen[o] ? std::max(acc[o], v) : v; break;
        case ReduceKind::Min: acc[o] = seen[o] ? std::min(acc[o], v) : v; break;
        case ReduceKind::Prod: acc[o] *= v; break;
      }
      seen[o] = true;
    }
    double count = double(in.size()) / double(acc.size());
    std::vector<float> expected;
    for (double v : acc) expected.push_back(float(ReduceKind(kind) == ReduceKind::Mean ? v / count : v));
    QVERIFY(closeEnough(got, expected, 1e-5f));
  }

  void reduceRejectsInvalidAxes_data() {
    QTest::addColumn<Shape>("axes");
    QTest::addColumn<QString>("message");
    QTest::newRow("too large") << Shape{3} << "axis 3 is out of range for rank 3";
    QTest::newRow("too negative") << Shape{0, -4} << "axis -4 is out of range for rank 3";
    QTest::newRow("repeated") << Shape{1, -2} << "axis -2 is listed twice";
  }
  void reduceRejectsInvalidAxes() {
    QFETCH(Shape, axes);
    QFETCH(QString, message);
    ReduceParams p{ReduceKind::Mean, {2, 3, 4}, axes, true, false};
    auto w = reduce(p);
    QVERIFY(!w.ok());
    QString text = QString::fromStdString(w.error().toString());
    QVERIFY2(text.contains(message) && text.contains("reduce_mean"), qPrintable(text));
  }

  void argReduceMatchesReference_data() {
    QTest::addColumn<bool>("isMax");
    QTest::addColumn<Shape>("shape");
    QTest::addColumn<int>("axis");
    QTest::addColumn<bool>("keepDims");
    QTest::addColumn<bool>("lastIndex");
    QTest::addColumn<Shape>("expectedShape");
    QTest::newRow("argmax last") << true << Shape{4, 37} << 1 << true << false << Shape{4, 1};
    QTest::newRow("argmax first negative") << true << Shape{5, 6, 7} << -3 << false << false << Shape{6, 7};
    QTest::newRow("argmin middle last index") << false << Shape{3, 20, 18} << 1 << true << true << Shape{3, 1, 18};
    QTest::newRow("argmin 1-D") << false << Shape{30} << 0 << false << false << Shape{};
    QTest::newRow("argmax last index") << true << Shape{6, 25} << -1 << false << true << Shape{6};
  }
  void argReduceMatchesReference() {
    QFETCH(bool, isMax);
    QFETCH(Shape, shape);
    QFETCH(int, axis);
    QFETCH(bool, keepDims);
    QFETCH(bool, lastIndex);
    QFETCH(Shape, expectedShape);
    ArgReduceParams p{isMax, shape, axis, keepDims, lastIndex};
    auto w = argReduce(p);
    QVERIFY2(w.ok(), w.ok() ? "" : w.error().toString().c_str());
    QCOMPARE(shapeOf(w->outputs[0]), expectedShape);
    auto schedule = defaultArgReduceSchedule(*w, testTarget());
    QVERIFY2(schedule.ok(), schedule.ok() ? "" : schedule.error().toString().c_str());
    // Small integers, so ties are common and the tie rule matters.
    std::vector<float> in = randomValues(elementCount(shape), 0.0f, 5.0f, 13);
    for (float& v : in) v = std::floor(v);
    auto got = runWorkload<int64_t>(*w, *schedule, {in});
    int64_t a = axis < 0 ? axis + int64_t(shape.size()) : axis;
    int64_t extent = shape[size_t(a)], stride = 1;
    for (size_t d = size_t(a) + 1; d < shape.size(); ++d) stride *= shape[d];
    std::vector<int64_t> expected;
    for (int64_t outer = 0; outer < elementCount(shape) / (extent * stride); ++outer)
      for (int64_t inner = 0; inner < stride; ++inner) {
        int64_t best = 0;
        for (int64_t j = 1; j < extent; ++j) {
          float v = in[size_t((outer * extent + j) * stride + inner)];
          float b = in[size_t((outer * extent + best) * stride + inner)];
          bool better = isMax ? v > b : v < b;
          if (better || (lastIndex && v == b)) best = j;
        }
        expected.push_back(best);
      }
    QCOMPARE(got, expected);
  }

  void argReduceRejectsAxisOutOfRange() {
    ArgReduceParams p{false, {4, 5}, -3, true, false};
    auto w = argReduce(p);
    QVERIFY(!w.ok());
    QString text = QString::fromStdString(w.error().toString());
    QVERIFY2(text.contains("axis -3 is out of range for rank 2") && text.contains("argmin"), qPrintable(text));
  }

  void reduceScheduleVectorizesKeptInnerAxis() {
    ReduceParams p{ReduceKind::Sum, {16, 64, 256}, {1}, false, false};
    Target target;
    target.vectorBits = 32 * 8;
    target.cores = 4;
    auto w = reduce(p);
    QVERIFY(w.ok());
    auto schedule = defaultReduceSchedule(*w, p, target);
    QVERIFY(schedule.ok());
    auto lowered = lower(*schedule, w->args(), w->name);
    QVERIFY(lowered.ok());
    QString text = QString::fromStdString(toString(lowered->func));
    QVERIFY2(text.contains("parallel for") && text.contains("ramp("), qPrintable(text));
  }

  void normalizationMatchesReference_data() {
    QTest::addColumn<int>("kind");
    QTest::addColumn<Shape>("shape");
    QTest::addColumn<int>("axis");
    QTest::addColumn<bool>("hasBias");
    QTest::newRow("layer last axis") << int(NormKind::Layer) << Shape{2, 5, 33} << -1 << true;
    QTest::newRow("layer two axes") << int(NormKind::Layer) << Shape{3, 4, 6} << 1 << true;
    QTest::newRow("layer no bias") << int(NormKind::Layer) << Shape{4, 64} << -1 << false;
    QTest::newRow("layer whole tensor") << int(NormKind::Layer) << Shape{5, 7} << -2 << true;
    QTest::newRow("batch image") << int(NormKind::Batch) << Shape{2, 3, 9, 21} << 0 << true;
    QTest::newRow("batch 2-D") << int(NormKind::Batch) << Shape{5, 40} << 0 << true;
    QTest::newRow("instance image") << int(NormKind::Instance) << Shape{2, 3, 7, 19} << 0 << true;
    QTest::newRow("instance 1-D") << int(NormKind::Instance) << Shape{3, 2, 45} << 0 << true;
  }
  void normalizationMatchesReference() {
    QFETCH(int, kind);
    QFETCH(Shape, shape);
    QFETCH(int, axis);
    QFETCH(bool, hasBias);
    NormParams p;
    p.kind = NormKind(kind);
    p.shape = shape;
    p.axis = axis;
    p.epsilon = 1e-3;
    p.hasBias = hasBias;
    auto w = normalization(p);
    QVERIFY2(w.ok(), w.ok() ? "" : w.error().toString().c_str());
    QCOMPARE(shapeOf(w->outputs[0]), shape);
    auto schedule = defaultNormalizationSchedule(*w, p, testTarget());
    QVERIFY2(schedule.ok(), schedule.ok() ? "" : schedule.error().toString().c_str());
    // An offset against a small spread: a one-pass variance would lose most of its digits.
    std::vector<std::vector<float>> inputs = {randomValues(elementCount(shape), 9.0f, 11.0f, 21)};
    for (size_t i = 1; i < w->inputs.size(); ++i) {
      bool variance = NormKind(kind) == NormKind::Batch && i == 4;
      inputs.push_back(randomValues(elementCount(shapeOf(w->inputs[i])), variance ? 0.1f : -1.5f, 1.5f, 30 + i));
    }
    auto got = runWorkload(*w, *schedule, inputs);
    const std::vector<float>& x = inputs[0];
    std::vector<float> expected(x.size());
    if (NormKind(kind) == NormKind::Batch) {
      int64_t pixels = elementCount(shape) / (shape[0] * shape[1]);
      for (size_t i = 0; i < x.size(); ++i) {
        size_t c = size_t(int64_t(i) / pixels % shape[1]);
        expected[i] = float((x[i] - inputs[3][c]) / std::sqrt(double(inputs[4][c]) + p.epsilon) * inputs[1][c] +
                            inputs[2][c]);
      }
    } else {
      // Rows of `count` consecutive elements share a mean and variance.
      int64_t first = NormKind(kind) == NormKind::Instance ? 2 : (axis < 0 ? axis + int64_t(shape.size()) : axis);
      int64_t count = 1;
      for (size_t d = size_t(first); d < shape.size(); ++d) count *= shape[d];
      for (int64_t row = 0; row < int64_t(x.size()) / count; ++row) {
        double mean = 0, variance = 0;
        for (int64_t j = 0; j < count; ++j) mean += x[size_t(row * count + j)];
        mean /= double(count);
        for (int64_t j = 0; j < count; ++j) variance += std::pow(x[size_t(row * count + j)] - mean, 2);
        variance /= double(count);
        for (int64_t j = 0; j < count; ++j) {
          size_t affine = NormKind(kind) == NormKind::Instance ? size_t(row % shape[1]) : size_t(j);
          double bias = inputs.size() > 2 ? inputs[2][affine] : 0.0;
          expected[size_t(row * count + j)] =
              float((x[size_t(row * count + j)] - mean) / std::sqrt(variance + p.epsilon) * inputs[1][affine] + bias);
        }
      }
    }
    QVERIFY(closeEnough(got, expected, 2e-4f));
  }

  void normalizationRejectsInvalidAttributes_data() {
    QTest::addColumn<int>("kind");
    QTest::addColumn<Shape>("shape");
    QTest::addColumn<int>("axis");
    QTest::addColumn<double>("epsilon");
    QTest::addColumn<QString>("message");
    QTest::newRow("layer axis") << int(NormKind::Layer) << Shape{2, 3} << 2 << 1e-5 << "axis 2 is out of range";
    QTest::newRow("layer negative epsilon") << int(NormKind::Layer) << Shape{2, 3} << -1 << -1e-5
                                            << "epsilon must be a finite number >= 0";
    QTest::newRow("batch rank") << int(NormKind::Batch) << Shape{8} << 0 << 1e-5 << "must be N x C";
    QTest::newRow("instance rank") << int(NormKind::Instance) << Shape{2, 8} << 0 << 1e-5 << "must be N x C x D1";
    QTest::newRow("batch epsilon nan") << int(NormKind::Batch) << Shape{2, 8} << 0 << double(NAN) << "epsilon";
  }
  void normalizationRejectsInvalidAttributes() {
    QFETCH(int, kind);
    QFETCH(Shape, shape);
    QFETCH(int, axis);
    QFETCH(double, epsilon);
    QFETCH(QString, message);
    NormParams p;
    p.kind = NormKind(kind);
    p.shape = shape;
    p.axis = axis;
    p.epsilon = epsilon;
    auto w = normalization(p);
    QVERIFY(!w.ok());
    QString text = QString::fromStdString(w.error().toString());
    QVERIFY2(text.contains(message), qPrintable(text));
  }

  void layerNormStatisticsReduceAcrossVectorLanes() {
    NormParams p;
    p.shape = {8, 768};
    Target target;
    target.vectorBits = 32 * 16;
    target.cores = 4;
    auto w = normalization(p);
    QVERIFY(w.ok());
    auto schedule = defaultNormalizationSchedule(*w, p, target);
    QVERIFY(schedule.ok());
    auto lowered = lower(*schedule, w->args(), w->name);
    QVERIFY(lowered.ok());
    QString text = QString::fromStdString(toString(lowered->func));
    // The per-row sums accumulate 16 lanes at a time instead of one serial chain of 768 adds.
    QVERIFY2(text.contains("layernorm.mean.lanes[ramp(") && text.contains("layernorm.var.lanes[ramp(") &&
                 text.contains("parallel for"),
             qPrintable(text));
  }

  void poolScheduleAccumulatesLocallyInParallel() {
    PoolParams p;
    p.inputShape = {1, 8, 56, 56};
    p.kernel = {3, 3};
    p.strides = {1, 1};
    p.padsBegin = p.padsEnd = {1, 1};
    Target target;
    target.vectorBits = 32 * 8;
    target.cores = 4;
    auto w = pool(p);
    QVERIFY(w.ok());
    auto schedule = defaultPoolSchedule(*w, target);
    QVERIFY(schedule.ok());
    auto lowered = lower(*schedule, w->args(), w->name);
    QVERIFY(lowered.ok());
    QString text = QString::fromStdString(toString(lowered->func));
    QVERIFY2(text.contains("parallel for (planes") && text.contains("allocate pool.local"), qPrintable(text));
  }
};

QTEST_GUILESS_MAIN(TestOpsNN)
#include "test_ops_nn.moc"
