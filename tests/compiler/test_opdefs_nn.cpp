// The neural-network operator definitions (compiler/opdefs/NeuralNet*.cpp) through the
// registry: each ONNX operator is typed and built from an OpCall, JIT-compiled under its
// default schedule and run on random data, and the result is compared with C++ written
// from the ONNX specification. Invalid attributes come back as Diagnostics naming the node.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "OpsTestSupport.h"
#include "compiler/lower/Lower.h"
#include "compiler/opdefs/OpRegistry.h"
#include "core/ir/IRPrinter.h"

using namespace tessel;
using namespace tessel::graph;
using tessel::testing::HostTensor;
using tessel::testing::indexOf;
using tessel::testing::offsetOf;

namespace {
using Shape = std::vector<int64_t>;

HostTensor randomTensor(const Shape& shape, unsigned seed, double low = -2.0, double high = 2.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(low, high);
  // Rounded to float32 so the reference sees the values the kernel sees.
  return tessel::testing::makeTensor(shape, [&](int64_t) { return double(float(uniform(rng))); });
}

// Small integers with many ties (argmax/hardmax tie-breaking shows).
HostTensor tiedTensor(const Shape& shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> pick(-3, 3);
  return tessel::testing::makeTensor(shape, [&](int64_t) { return double(pick(rng)); });
}

TensorType typeOf(const Shape& shape, DataType dtype = DataType::float32()) { return TensorType{dtype, shape, ""}; }

OpCall makeCall(const std::string& op, std::vector<TensorType> inputs, Attributes attributes = {},
                int outputCount = 1, int opset = 0) {
  OpCall call;
  call.op = op;
  call.nodeName = op + "_node";
  call.attributes = std::move(attributes);
  call.inputTypes = std::move(inputs);
  call.constantInputs.resize(call.inputTypes.size());
  call.outputCount = outputCount;
  call.opset = opset;
  call.target = hostTarget();
  call.target.cores = std::max(call.target.cores, 2);  // exercise the parallel loops
  return call;
}

runtime::NDArray int64Constant(const std::vector<int64_t>& values) {
  auto array = runtime::NDArray::empty({int64_t(values.size())}, runtime::DataType::int64());
  std::copy(values.begin(), values.end(), array.values<int64_t>().begin());
  return array;
}

// Types the call, builds its kernel, runs it on `inputs` (one per node input; omitted
// optional inputs may be empty tensors) and returns every output. Checks that the kernel's
// outputs have the inferred types.
std::vector<HostTensor> runOp(const OpCall& call, const std::vector<HostTensor>& inputs) {
  auto types = inferOpTypes(call);
  if (!types) {
    qWarning("%s", types.error().toString().c_str());
    return {};
  }
  auto kernel = buildOpKernel(call);
  if (!kernel) {
    qWarning("%s", kernel.error().toString().c_str());
    return {};
  }
  auto schedule = kernel->schedule ? kernel->schedule(kernel->workload, call.target)
                                   : Expected<Schedule>(Schedule(kernel->workload.outputs));
  if (!schedule) {
    qWarning("schedule: %s", schedule.error().toString().c_str());
    return {};
  }
  std::vector<HostTensor> kernelInputs;
  for (int index : kernel->inputIndices) kernelInputs.push_back(inputs[size_t(index)]);
  auto outputs = tessel::testing::runWorkload(kernel->workload, *schedule, kernelInputs);
  if (outputs.size() != types->size()) {
    qWarning("%zu outputs for %zu inferred types", outputs.size(), types->size());
    return {};
  }
  for (size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i].shape != (*types)[i].shape || kernel->workload.outputs[i].dtype() != (*types)[i].dtype) {
      qWarning("output %zu: kernel shape %s, inferred %s", i, shapeName(outputs[i].shape).c_str(),
               (*types)[i].toString().c_str());
      return {};
    }
  return outputs;
}

#define EXPECT_CLOSE(got, expected, tolerance)                                                 \
  do {                                                                                         \
    std::string difference = tessel::testing::compareTensors((got), (expected), (tolerance));  \
    QVERIFY2(difference.empty(), difference.c_str());                                          \
  } while (0)

// ---------------------------------------------------------------------------------------
// References, written from the ONNX operator specifications.

// Conv: NCHW, weight [M, C/group, kH, kW], zero padding.
HostTensor referenceConv(const HostTensor& x, const HostTensor& w, const HostTensor* bias, Shape strides,
                         Shape pads, Shape dilations, int64_t group, const Shape& outShape) {
  HostTensor out{outShape, std::vector<double>(size_t(elementCount(outShape)), 0.0)};
  int64_t cpg = w.shape[1], mpg = outShape[1] / group;
  for (int64_t o = 0; o < elementCount(outShape); ++o) {
    Shape at = indexOf(outShape, o);
    int64_t g = at[1] / mpg;
    double sum = bias ? bias->values[size_t(at[1])] : 0.0;
    for (int64_t c = 0; c < cpg; ++c)
      for (int64_t r = 0; r < w.shape[2]; ++r)
        for (int64_t s = 0; s < w.shape[3]; ++s) {
          int64_t y = at[2] * strides[0] + r * dilations[0] - pads[0];
          int64_t xx = at[3] * strides[1] + s * dilations[1] - pads[1];
          if (y < 0 || y >= x.shape[2] || xx < 0 || xx >= x.shape[3]) continue;
          sum += x.values[size_t(offsetOf(x.shape, {at[0], g * cpg + c, y, xx}))] *
                 w.values[size_t(offsetOf(w.shape, {at[1], c, r, s}))];
        }
    out.values[size_t(o)] = sum;
  }
  return out;
}

// Conv over any number of spatial axes, operands shifted by zero points (ConvInteger).
HostTensor referenceConvNd(const HostTensor& x, const HostTensor& w, const Shape& strides, const Shape& pads,
                           const Shape& dilations, int64_t group, const Shape& outShape, double xZero = 0,
                           double wZero = 0) {
  size_t rank = x.shape.size() - 2;
  Shape kernel(w.shape.begin() + 2, w.shape.end());
  HostTensor out{outShape, {}};
  int64_t cpg = w.shape[1], mpg = outShape[1] / group;
  for (int64_t o = 0; o < elementCount(outShape); ++o) {
    Shape at = indexOf(outShape, o);
    double sum = 0;
    for (int64_t c = 0; c < cpg; ++c)
      for (int64_t t = 0; t < elementCount(kernel); ++t) {
        Shape tap = indexOf(kernel, t), xi = {at[0], at[1] / mpg * cpg + c}, wi = {at[1], c};
        bool inside = true;
        for (size_t d = 0; d < rank; ++d) {
          int64_t position = at[d + 2] * strides[d] + tap[d] * dilations[d] - pads[d];
          inside = inside && position >= 0 && position < x.shape[d + 2];
          xi.push_back(position);
          wi.push_back(tap[d]);
        }
        if (inside)
          sum += (x.values[size_t(offsetOf(x.shape, xi))] - xZero) * (w.values[size_t(offsetOf(w.shape, wi))] - wZero);
      }
    out.values.push_back(sum);
  }
  return out;
}

// ONNX requantization: round half to even, add the zero point, saturate to uint8.
double requantizeReference(double accumulator, double scale, double zeroPoint) {
  double v = std::nearbyint(accumulator * scale) + zeroPoint;  // the default rounding mode is to even
  return std::min(255.0, std::max(0.0, v));
}

HostTensor randomBytes(const Shape& shape, unsigned seed) {
  std::mt19937 rng(seed);
  return tessel::testing::makeTensor(shape, [&](int64_t) { return double(rng() % 256); });
}

// numpy.matmul with broadcast batch dimensions and 1-D operands.
HostTensor referenceMatmul(const HostTensor& a, const HostTensor& b) {
  Shape as = a.shape, bs = b.shape;
  bool dropM = as.size() == 1, dropN = bs.size() == 1;
  if (dropM) as.insert(as.begin(), 1);
  if (dropN) bs.push_back(1);
  size_t batchRank = std::max(as.size(), bs.size()) - 2;
  Shape batch(batchRank, 1);
  auto batchDim = [&](const Shape& s, size_t d) {
    size_t own = s.size() - 2;
    return d + own >= batchRank ? s[d + own - batchRank] : int64_t(1);
  };
  for (size_t d = 0; d < batchRank; ++d) batch[d] = std::max(batchDim(as, d), batchDim(bs, d));
  int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  Shape full = batch;
  full.push_back(m);
  full.push_back(n);
  Shape outShape = batch;
  if (!dropM) outShape.push_back(m);
  if (!dropN) outShape.push_back(n);
  HostTensor out{outShape, std::vector<double>(size_t(elementCount(full)), 0.0)};
  auto operandOffset = [&](const Shape& s, const Shape& at, int64_t row, int64_t column) {
    Shape index;
    size_t own = s.size() - 2;
    for (size_t d = 0; d < own; ++d) index.push_back(s[d] == 1 ? 0 : at[d + batchRank - own]);
    index.push_back(row);
    index.push_back(column);
    return size_t(offsetOf(s, index));
  };
  for (int64_t o = 0; o < elementCount(full); ++o) {
    Shape at = indexOf(full, o);
    int64_t i = at[batchRank], j = at[batchRank + 1];
    double sum = 0;
    for (int64_t kk = 0; kk < k; ++kk) sum += a.values[operandOffset(as, at, i, kk)] * b.values[operandOffset(bs, at, kk, j)];
    out.values[size_t(o)] = sum;
  }
  return out;
}

// Softmax / LogSoftmax / Hardmax over the axes [first, last] of `x`.
HostTensor referenceSoftmax(const HostTensor& x, int64_t first, int64_t last, const std::string& op) {
  HostTensor out{x.shape, std::vector<double>(x.values.size())};
  Shape lineShape(x.shape.begin() + first, x.shape.begin() + last + 1);
  int64_t length = elementCount(lineShape);
  std::vector<bool> done(x.values.size(), false);
  for (int64_t o = 0; o < int64_t(x.values.size()); ++o) {
    if (done[size_t(o)]) continue;
    Shape start = indexOf(x.shape, o);
    std::vector<size_t> line;
    for (int64_t k = 0; k < length; ++k) {
      Shape at = start, within = indexOf(lineShape, k);
      for (int64_t d = first; d <= last; ++d) at[size_t(d)] = within[size_t(d - first)];
      line.push_back(size_t(offsetOf(x.shape, at)));
    }
    double best = -INFINITY, sum = 0;
    size_t argBest = line[0];
    for (size_t e : line)
      if (x.values[e] > best) best = x.values[e], argBest = e;
    for (size_t e : line) sum += std::exp(x.values[e] - best);
    for (size_t e : line) {
      done[e] = true;
      if (op == "Softmax") out.values[e] = std::exp(x.values[e] - best) / sum;
      else if (op == "LogSoftmax") out.values[e] = x.values[e] - best - std::log(sum);
      else out.values[e] = e == argBest ? 1.0 : 0.0;
    }
  }
  return out;
}
// Every element of `shape` that `keep` says belongs to the same group as `at` (the others
// fixed): the offsets of one reduction group.
std::vector<size_t> groupOf(const Shape& shape, const Shape& at, const std::vector<bool>& reduced) {
  Shape groupShape;
  for (size_t d = 0; d < shape.size(); ++d) groupShape.push_back(reduced[d] ? shape[d] : 1);
  std::vector<size_t> offsets;
  for (int64_t g = 0; g < elementCount(groupShape); ++g) {
    Shape within = indexOf(groupShape, g), index = at;
    for (size_t d = 0; d < shape.size(); ++d)
      if (reduced[d]) index[d] = within[d];
    offsets.push_back(size_t(offsetOf(shape, index)));
  }
  return offsets;
}

// ONNX ReduceXxx over `axes` (all when empty), keepdims, by kind name.
HostTensor referenceReduce(const HostTensor& x, const Shape& axes, bool keepDims, const std::string& op) {
  size_t rank = x.shape.size();
  std::vector<bool> reduced(rank, axes.empty());
  for (int64_t a : axes) reduced[size_t(a < 0 ? a + int64_t(rank) : a)] = true;
  Shape keptShape, outShape;
  for (size_t d = 0; d < rank; ++d) {
    keptShape.push_back(reduced[d] ? 1 : x.shape[d]);
    if (!reduced[d] || keepDims) outShape.push_back(keptShape.back());
  }
  HostTensor out{outShape, {}};
  for (int64_t o = 0; o < elementCount(keptShape); ++o) {
    std::vector<double> v;
    for (size_t e : groupOf(x.shape, indexOf(keptShape, o), reduced)) v.push_back(x.values[e]);
    double sum = 0, sumAbs = 0, sumSquares = 0, product = 1, largest = -INFINITY, smallest = INFINITY;
    for (double e : v) {
      sum += e;
      sumAbs += std::fabs(e);
      sumSquares += e * e;
      product *= e;
      largest = std::max(largest, e);
      smallest = std::min(smallest, e);
    }
    double result = 0;
    if (op == "ReduceSum") result = sum;
    if (op == "ReduceMean") result = sum / double(v.size());
    if (op == "ReduceMax") result = largest;
    if (op == "ReduceMin") result = smallest;
    if (op == "ReduceProd") result = product;
    if (op == "ReduceSumSquare") result = sumSquares;
    if (op == "ReduceL1") result = sumAbs;
    if (op == "ReduceL2") result = std::sqrt(sumSquares);
    if (op == "ReduceLogSum") result = std::log(sum);
    if (op == "ReduceLogSumExp") {
      double exps = 0;
      for (double e : v) exps += std::exp(e);
      result = std::log(exps);
    }
    out.values.push_back(result);
  }
  return out;
}

// Normalizes every group of elements that differ only along `reduced` axes to mean 0 and
// variance 1 (population variance), with `epsilon` under the root.
HostTensor referenceStandardize(const HostTensor& x, const std::vector<bool>& reduced, double epsilon) {
  HostTensor out{x.shape, std::vector<double>(x.values.size())};
  Shape keptShape;
  for (size_t d = 0; d < x.shape.size(); ++d) keptShape.push_back(reduced[d] ? 1 : x.shape[d]);
  for (int64_t o = 0; o < elementCount(keptShape); ++o) {
    auto group = groupOf(x.shape, indexOf(keptShape, o), reduced);
    double mean = 0, variance = 0;
    for (size_t e : group) mean += x.values[e] / double(group.size());
    for (size_t e : group) variance += (x.values[e] - mean) * (x.values[e] - mean) / double(group.size());
    for (size_t e : group) out.values[e] = (x.values[e] - mean) / std::sqrt(variance + epsilon);
  }
  return out;
}
}  // namespace

Q_DECLARE_METATYPE(Shape)

class TestOpdefsNN : public QObject {
  Q_OBJECT
private slots:
  void everyNeuralNetOperatorIsRegistered() {
    for (const char* op : {"Conv", "MatMul", "Gemm", "MaxPool", "AveragePool", "GlobalMaxPool", "GlobalAveragePool",
                           "BatchNormalization", "InstanceNormalization", "LayerNormalization", "Softmax",
                           "LogSoftmax", "Hardmax", "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                           "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ArgMax",
                           "ArgMin", "ConvTranspose", "LpNormalization", "MeanVarianceNormalization", "LRN", "CumSum",
                           "TopK", "Einsum", "ConvInteger", "LpPool", "GlobalLpPool", "MatMulInteger", "QLinearMatMul",
                           "QLinearConv"})
      QVERIFY2(OpRegistry::global().find(op), op);
    QCOMPARE(OpRegistry::global().find("Conv")->pattern, OpPattern::OutElemwiseFusable);
    QCOMPARE(OpRegistry::global().find("ReduceSum")->pattern, OpPattern::CommReduce);
  }

  void convMatchesReference_data() {
    QTest::addColumn<Shape>("input");
    QTest::addColumn<Shape>("weight");
    QTest::addColumn<QString>("autoPad");
    QTest::addColumn<Shape>("strides");
    QTest::addColumn<Shape>("pads");
    QTest::addColumn<Shape>("dilations");
    QTest::addColumn<int>("group");
    QTest::addColumn<bool>("bias");
    QTest::newRow("3x3 padded, bias") << Shape{1, 3, 9, 9} << Shape{8, 3, 3, 3} << "NOTSET" << Shape{1, 1}
                                      << Shape{1, 1, 1, 1} << Shape{1, 1} << 1 << true;
    QTest::newRow("strided, asymmetric pads") << Shape{2, 4, 7, 8} << Shape{5, 4, 3, 2} << "NOTSET" << Shape{2, 3}
                                              << Shape{1, 0, 2, 1} << Shape{1, 1} << 1 << false;
    QTest::newRow("SAME_UPPER stride 2") << Shape{1, 2, 7, 7} << Shape{4, 2, 3, 3} << "SAME_UPPER" << Shape{2, 2}
                                         << Shape{} << Shape{1, 1} << 1 << false;
    QTest::newRow("SAME_LOWER") << Shape{1, 2, 6, 6} << Shape{4, 2, 2, 2} << "SAME_LOWER" << Shape{1, 1} << Shape{}
                                << Shape{1, 1} << 1 << true;
    QTest::newRow("VALID dilated") << Shape{1, 2, 10, 10} << Shape{3, 2, 3, 3} << "VALID" << Shape{1, 1} << Shape{}
                                   << Shape{2, 2} << 1 << false;
    QTest::newRow("grouped") << Shape{1, 8, 6, 6} << Shape{8, 2, 3, 3} << "NOTSET" << Shape{1, 1}
                             << Shape{1, 1, 1, 1} << Shape{1, 1} << 4 << true;
    QTest::newRow("depthwise") << Shape{1, 8, 10, 10} << Shape{8, 1, 3, 3} << "NOTSET" << Shape{1, 1}
                               << Shape{1, 1, 1, 1} << Shape{1, 1} << 8 << true;
  }
  void convMatchesReference() {
    QFETCH(Shape, input);
    QFETCH(Shape, weight);
    QFETCH(QString, autoPad);
    QFETCH(Shape, strides);
    QFETCH(Shape, pads);
    QFETCH(Shape, dilations);
    QFETCH(int, group);
    QFETCH(bool, bias);
    Attributes attributes = {{"strides", strides}, {"dilations", dilations}, {"group", int64_t(group)},
                             {"auto_pad", autoPad.toStdString()}};
    if (!pads.empty()) attributes["pads"] = pads;
    std::vector<TensorType> types = {typeOf(input), typeOf(weight)};
    if (bias) types.push_back(typeOf({weight[0]}));
    OpCall call = makeCall("Conv", types, attributes);
    HostTensor x = randomTensor(input, 1), w = randomTensor(weight, 2), b = randomTensor({weight[0]}, 3);
    auto outputs = runOp(call, {x, w, b});
    QCOMPARE(outputs.size(), size_t(1));
    // The padding the reference uses: explicit, none (VALID), or SAME's split of the total.
    Shape begin = {0, 0};
    if (!pads.empty()) begin = {pads[0], pads[1]};
    if (autoPad.startsWith("SAME"))
      for (size_t d = 0; d < 2; ++d) {
        int64_t out = (input[d + 2] + strides[d] - 1) / strides[d];
        int64_t total = std::max<int64_t>((out - 1) * strides[d] + dilations[d] * (weight[d + 2] - 1) + 1 - input[d + 2], 0);
        begin[d] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      }
    HostTensor expected = referenceConv(x, w, bias ? &b : nullptr, strides, begin, dilations, group, outputs[0].shape);
    EXPECT_CLOSE(outputs[0], expected, 1e-4);
  }


  void convInOneAndThreeDimensions_data() {
    QTest::addColumn<Shape>("input");
    QTest::addColumn<Shape>("weight");
    QTest::addColumn<Shape>("strides");
    QTest::addColumn<Shape>("pads");
    QTest::addColumn<Shape>("dilations");
    QTest::addColumn<int>("group");
    QTest::newRow("1-D padded") << Shape{2, 3, 40} << Shape{4, 3, 5} << Shape{1} << Shape{2, 2} << Shape{1} << 1;
    QTest::newRow("1-D strided, dilated, grouped") << Shape{1, 4, 30} << Shape{6, 2, 3} << Shape{2} << Shape{1, 0}
                                                   << Shape{2} << 2;
    QTest::newRow("1-D depthwise, stride 2") << Shape{1, 8, 50} << Shape{8, 1, 3} << Shape{2} << Shape{1, 1} << Shape{1}
                                            << 8;
    QTest::newRow("3-D") << Shape{1, 2, 5, 6, 20} << Shape{3, 2, 3, 3, 3} << Shape{1, 1, 1} << Shape{1, 1, 1, 1, 1, 1}
                         << Shape{1, 1, 1} << 1;
  }
  void convInOneAndThreeDimensions() {
    QFETCH(Shape, input);
    QFETCH(Shape, weight);
    QFETCH(Shape, strides);
    QFETCH(Shape, pads);
    QFETCH(Shape, dilations);
    QFETCH(int, group);
    OpCall call = makeCall("Conv", {typeOf(input), typeOf(weight), typeOf({weight[0]})},
                           {{"strides", strides}, {"pads", pads}, {"dilations", dilations}, {"group", int64_t(group)}});
    HostTensor x = randomTensor(input, 11), w = randomTensor(weight, 12), b = randomTensor({weight[0]}, 13);
    auto outputs = runOp(call, {x, w, b});
    QCOMPARE(outputs.size(), size_t(1));
    HostTensor expected = referenceConvNd(x, w, strides, pads, dilations, group, outputs[0].shape);
    for (int64_t o = 0; o < elementCount(expected.shape); ++o)
      expected.values[size_t(o)] += b.values[size_t(indexOf(expected.shape, o)[1])];
    EXPECT_CLOSE(outputs[0], expected, 1e-4);
  }

  void oneDimensionalConvUsesTheBlockedKernel() {
    // A 1-D convolution runs conv2d's register-blocked kernel over a height of 1.
    OpCall call = makeCall("Conv", {typeOf({1, 16, 64}), typeOf({32, 16, 3})}, {{"pads", Shape{1, 1}}});
    auto kernel = buildOpKernel(call);
    QVERIFY(kernel.ok());
    auto schedule = kernel->schedule(kernel->workload, call.target);
    QVERIFY2(schedule.ok(), schedule.ok() ? "" : schedule.error().message.c_str());
    QVERIFY(schedule->findStage("conv.blocked") != nullptr);
    QCOMPARE(tessel::testing::constShape(kernel->workload.inputs[0]), (Shape{1, 16, 64}));
    QCOMPARE(tessel::testing::constShape(kernel->workload.outputs[0]), (Shape{1, 32, 64}));
  }

  void convIntegerSubtractsZeroPoints() {
    Shape input = {1, 2, 6, 5}, weight = {3, 2, 2, 2};
    OpCall call = makeCall("ConvInteger",
                           {typeOf(input, DataType::uint8()), typeOf(weight, DataType::uint8()),
                            typeOf({}, DataType::uint8()), typeOf({}, DataType::uint8())},
                           {{"pads", Shape{1, 0, 0, 1}}});
    std::mt19937 rng(14);
    auto bytes = [&](const Shape& shape) {
      return tessel::testing::makeTensor(shape, [&](int64_t) { return double(rng() % 256); });
    };
    HostTensor x = bytes(input), w = bytes(weight);
    auto outputs = runOp(call, {x, w, HostTensor{{}, {130}}, HostTensor{{}, {7}}});
    QCOMPARE(outputs.size(), size_t(1));
    EXPECT_CLOSE(outputs[0], referenceConvNd(x, w, {1, 1}, {1, 0}, {1, 1}, 1, outputs[0].shape, 130, 7), 0);
  }

  void convAndGemmInFloat64() {
    Shape input = {1, 3, 8, 8}, weight = {4, 3, 3, 3};
    HostTensor x = randomTensor(input, 15), w = randomTensor(weight, 16);
    auto conv = runOp(makeCall("Conv", {typeOf(input, DataType::float64()), typeOf(weight, DataType::float64())},
                               {{"pads", Shape{1, 1, 1, 1}}}),
                      {x, w});
    QCOMPARE(conv.size(), size_t(1));
    EXPECT_CLOSE(conv[0], referenceConvNd(x, w, {1, 1}, {1, 1}, {1, 1}, 1, conv[0].shape), 1e-12);
    HostTensor a = randomTensor({5, 6}, 17), b = randomTensor({6, 7}, 18);
    auto gemm = runOp(makeCall("Gemm", {typeOf({5, 6}, DataType::float64()), typeOf({6, 7}, DataType::float64())}), {a, b});
    QCOMPARE(gemm.size(), size_t(1));
    EXPECT_CLOSE(gemm[0], referenceMatmul(a, b), 1e-12);
  }

  void convRefusesBadAttributesNamingTheNode() {
    OpCall call = makeCall("Conv", {typeOf({1, 6, 8, 8}), typeOf({4, 3, 3, 3})}, {{"group", int64_t(4)}});
    call.nodeName = "conv7";
    auto types = inferOpTypes(call);
    QVERIFY(!types);
    QVERIFY2(types.error().message.find("Conv 'conv7'") == 0, types.error().message.c_str());
    QCOMPARE(types.error().location, std::string("conv7"));

    OpCall pads = makeCall("Conv", {typeOf({1, 3, 8, 8}), typeOf({4, 3, 3, 3})}, {{"pads", Shape{1, 1}}});
    auto padsTypes = inferOpTypes(pads);
    QVERIFY(!padsTypes);
    QVERIFY2(padsTypes.error().message.find("pads") != std::string::npos, padsTypes.error().message.c_str());

    OpCall autoPad = makeCall("Conv", {typeOf({1, 3, 8, 8}), typeOf({4, 3, 3, 3})}, {{"auto_pad", std::string("SAME")}});
    QVERIFY(!inferOpTypes(autoPad));
  }

  void matmulMatchesNumpySemantics_data() {
    QTest::addColumn<Shape>("a");
    QTest::addColumn<Shape>("b");
    QTest::newRow("2-D") << Shape{13, 17} << Shape{17, 40};
    QTest::newRow("3-D batch") << Shape{3, 9, 20} << Shape{3, 20, 33};
    QTest::newRow("attention 4-D") << Shape{2, 3, 16, 8} << Shape{2, 3, 8, 16};
    QTest::newRow("broadcast batch") << Shape{2, 1, 5, 6} << Shape{3, 6, 7};
    QTest::newRow("N-D times 2-D") << Shape{2, 12, 24} << Shape{24, 48};
    QTest::newRow("N-D times narrow 2-D") << Shape{3, 5, 6} << Shape{6, 3};
    QTest::newRow("float64 2-D") << Shape{5, 7} << Shape{7, 9};
    QTest::newRow("vector times matrix") << Shape{6} << Shape{2, 6, 5};
    QTest::newRow("matrix times vector") << Shape{4, 6} << Shape{6};
    QTest::newRow("dot product") << Shape{7} << Shape{7};
  }
  void matmulMatchesNumpySemantics() {
    QFETCH(Shape, a);
    QFETCH(Shape, b);
    DataType dtype = QByteArray(QTest::currentDataTag()).startsWith("float64") ? DataType::float64() : DataType::float32();
    HostTensor x = randomTensor(a, 4), y = randomTensor(b, 5);
    auto outputs = runOp(makeCall("MatMul", {typeOf(a, dtype), typeOf(b, dtype)}), {x, y});
    QCOMPARE(outputs.size(), size_t(1));
    EXPECT_CLOSE(outputs[0], referenceMatmul(x, y), 1e-4);
  }


  void attentionProductScheduleKeepsARegisterTile() {
    // The transformer's attention product: batched over heads, its default schedule runs
    // row blocks in parallel and accumulates a tile of vector columns in registers.
    OpCall call = makeCall("MatMul", {typeOf({1, 4, 64, 32}), typeOf({1, 4, 32, 64})});
    call.target.vectorBits = 32 * 8;
    call.target.cores = 4;
    auto kernel = buildOpKernel(call);
    QVERIFY(kernel.ok());
    auto schedule = kernel->schedule(kernel->workload, call.target);
    QVERIFY2(schedule.ok(), schedule.ok() ? "" : schedule.error().message.c_str());
    auto lowered = lower(*schedule, kernel->workload.args(), kernel->workload.name);
    QVERIFY(lowered.ok());
    QString text = QString::fromStdString(toString(lowered->func));
    QVERIFY2(text.contains("parallel for") && text.contains("allocate C.local") && text.contains("ramp("),
             qPrintable(text));
  }

  void matmulRefusesMismatchedShapes() {
    auto types = inferOpTypes(makeCall("MatMul", {typeOf({3, 4}), typeOf({5, 6})}));
    QVERIFY(!types);
    QVERIFY2(types.error().message.find("MatMul 'MatMul_node'") == 0, types.error().message.c_str());
    QVERIFY(!inferOpTypes(makeCall("MatMul", {typeOf({2, 3, 4}), typeOf({3, 4, 5})})));
  }

  void gemmMatchesReference_data() {
    QTest::addColumn<bool>("transA");
    QTest::addColumn<bool>("transB");
    QTest::addColumn<double>("alpha");
    QTest::addColumn<double>("beta");
    QTest::addColumn<Shape>("c");  // empty: no C; {-1}: C omitted
    QTest::newRow("plain, no C") << false << false << 1.0 << 1.0 << Shape{-1};
    QTest::newRow("all attributes, matrix C") << true << true << 0.25 << 0.35 << Shape{3, 5};
    QTest::newRow("vector C") << false << true << 1.0 << 1.0 << Shape{5};
    QTest::newRow("scalar C") << false << false << 2.0 << 1.0 << Shape{};
    QTest::newRow("column C") << true << false << 1.0 << 0.5 << Shape{3, 1};
    QTest::newRow("C scaled by zero") << false << false << 1.0 << 0.0 << Shape{3, 5};
  }
  void gemmMatchesReference() {
    QFETCH(bool, transA);
    QFETCH(bool, transB);
    QFETCH(double, alpha);
    QFETCH(double, beta);
    QFETCH(Shape, c);
    int64_t m = 3, n = 5, k = 7;
    Shape aShape = transA ? Shape{k, m} : Shape{m, k}, bShape = transB ? Shape{n, k} : Shape{k, n};
    bool hasC = c != Shape{-1};
    std::vector<TensorType> types = {typeOf(aShape), typeOf(bShape)};
    if (hasC) types.push_back(typeOf(c));
    OpCall call = makeCall("Gemm", types,
                           {{"transA", int64_t(transA)}, {"transB", int64_t(transB)}, {"alpha", alpha}, {"beta", beta}});
    HostTensor a = randomTensor(aShape, 6), b = randomTensor(bShape, 7), bias = randomTensor(hasC ? c : Shape{}, 8);
    auto outputs = runOp(call, {a, b, bias});
    QCOMPARE(outputs.size(), size_t(1));
    HostTensor expected{{m, n}, {}};
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t kk = 0; kk < k; ++kk)
          sum += a.values[size_t(transA ? kk * m + i : i * k + kk)] * b.values[size_t(transB ? j * k + kk : kk * n + j)];
        double cij = 0;
        if (hasC) {
          Shape at;
          if (c.size() == 2) at = {c[0] == 1 ? 0 : i, c[1] == 1 ? 0 : j};
          if (c.size() == 1) at = {c[0] == 1 ? 0 : j};
          cij = bias.values[size_t(offsetOf(c, at))];
        }
        expected.values.push_back(alpha * sum + beta * cij);
      }
    EXPECT_CLOSE(outputs[0], expected, 1e-4);
  }

  void softmaxFamilyFollowsTheOpsetsAxisRule_data() {
    QTest::addColumn<QString>("op");
    QTest::addColumn<Shape>("shape");
    QTest::addColumn<int>("opset");
    QTest::addColumn<int>("axis");  // 99: the attribute is absent
    QTest::addColumn<int>("first");
    QTest::addColumn<int>("last");
    for (QString op : {"Softmax", "LogSoftmax", "Hardmax"}) {
      QByteArray o = op.toUtf8();
      QTest::newRow(o + " opset 13 default axis") << op << Shape{3, 4, 40} << 13 << 99 << 2 << 2;
      QTest::newRow(o + " opset 13 axis 1") << op << Shape{3, 20, 5} << 13 << 1 << 1 << 1;
      QTest::newRow(o + " opset 13 axis 0") << op << Shape{6, 4, 5} << 13 << 0 << 0 << 0;
      QTest::newRow(o + " opset 11 default: flattened from 1") << op << Shape{3, 4, 5} << 11 << 99 << 1 << 2;
      QTest::newRow(o + " opset 11 axis 0: everything") << op << Shape{2, 3, 7} << 11 << 0 << 0 << 2;
      QTest::newRow(o + " unknown opset: newest") << op << Shape{4, 6} << 0 << 99 << 1 << 1;
    }
  }
  void softmaxFamilyFollowsTheOpsetsAxisRule() {
    QFETCH(QString, op);
    QFETCH(Shape, shape);
    QFETCH(int, opset);
    QFETCH(int, axis);
    QFETCH(int, first);
    QFETCH(int, last);
    Attributes attributes;
    if (axis != 99) attributes["axis"] = int64_t(axis);
    OpCall call = makeCall(op.toStdString(), {typeOf(shape)}, attributes, 1, opset);
    HostTensor x = op == "Hardmax" ? tiedTensor(shape, 9) : randomTensor(shape, 9, -5, 5);
    auto outputs = runOp(call, {x});
    QCOMPARE(outputs.size(), size_t(1));
    EXPECT_CLOSE(outputs[0], referenceSoftmax(x, first, last, op.toStdString()), 1e-5);
  }


  void convTransposeMatchesScatterReference_data() {
    QTest::addColumn<Shape>("input");
    QTest::addColumn<Shape>("weight");
    QTest::addColumn<Shape>("strides");
    QTest::addColumn<Shape>("pads");
    QTest::addColumn<Shape>("outputPadding");
    QTest::addColumn<Shape>("dilations");
    QTest::addColumn<int>("group");
    QTest::newRow("2-D stride 2 with pads") << Shape{1, 3, 4, 5} << Shape{3, 2, 3, 3} << Shape{2, 2} << Shape{1, 0, 1, 1}
                                           << Shape{1, 0} << Shape{1, 1} << 1;
    QTest::newRow("1-D dilated") << Shape{2, 2, 6} << Shape{2, 3, 3} << Shape{1} << Shape{0, 0} << Shape{0}
                                 << Shape{2} << 1;
    QTest::newRow("3-D") << Shape{1, 2, 3, 3, 2} << Shape{2, 2, 2, 2, 2} << Shape{2, 1, 2} << Shape{0, 0, 0, 0, 0, 0}
                         << Shape{0, 0, 0} << Shape{1, 1, 1} << 1;
    QTest::newRow("grouped") << Shape{1, 4, 3, 3} << Shape{4, 3, 2, 2} << Shape{2, 2} << Shape{0, 0, 0, 0}
                             << Shape{0, 0} << Shape{1, 1} << 2;
  }
  void convTransposeMatchesScatterReference() {
    QFETCH(Shape, input);
    QFETCH(Shape, weight);
    QFETCH(Shape, strides);
    QFETCH(Shape, pads);
    QFETCH(Shape, outputPadding);
    QFETCH(Shape, dilations);
    QFETCH(int, group);
    size_t rank = input.size() - 2;
    int64_t filters = weight[1] * group;
    OpCall call = makeCall("ConvTranspose", {typeOf(input), typeOf(weight), typeOf({filters})},
                           {{"strides", strides}, {"pads", pads}, {"output_padding", outputPadding},
                            {"dilations", dilations}, {"group", int64_t(group)}});
    HostTensor x = randomTensor(input, 21), w = randomTensor(weight, 22), b = randomTensor({filters}, 23);
    auto outputs = runOp(call, {x, w, b});
    QCOMPARE(outputs.size(), size_t(1));
    // Scatter: every input element adds its kernel-weighted window into the output.
    Shape outShape = {input[0], filters};
    for (size_t d = 0; d < rank; ++d)
      outShape.push_back(strides[d] * (input[d + 2] - 1) + outputPadding[d] + dilations[d] * (weight[d + 2] - 1) + 1 -
                         pads[d] - pads[d + rank]);
    HostTensor expected{outShape, std::vector<double>(size_t(elementCount(outShape)), 0.0)};
    for (int64_t o = 0; o < elementCount(outShape); ++o) expected.values[size_t(o)] = b.values[size_t(indexOf(outShape, o)[1])];
    int64_t cpg = input[1] / group;
    Shape kernel(weight.begin() + 2, weight.end());
    for (int64_t i = 0; i < elementCount(input); ++i) {
      Shape at = indexOf(input, i);
      int64_t g = at[1] / cpg;
      for (int64_t m = 0; m < weight[1]; ++m)
        for (int64_t t = 0; t < elementCount(kernel); ++t) {
          Shape tap = indexOf(kernel, t), target = {at[0], g * weight[1] + m};
          bool inside = true;
          for (size_t d = 0; d < rank; ++d) {
            int64_t position = at[d + 2] * strides[d] + tap[d] * dilations[d] - pads[d];
            inside = inside && position >= 0 && position < outShape[d + 2];
            target.push_back(position);
          }
          if (!inside) continue;
          Shape wi = {at[1], m};
          wi.insert(wi.end(), tap.begin(), tap.end());
          expected.values[size_t(offsetOf(outShape, target))] +=
              x.values[size_t(i)] * w.values[size_t(offsetOf(weight, wi))];
        }
    }
    EXPECT_CLOSE(outputs[0], expected, 1e-4);
  }

  void convTransposeOutputShapeChoosesThePadding() {
    // ONNX's test_convtranspose_output_shape: output_shape 10x8 is one larger than natural.
    OpCall call = makeCall("ConvTranspose", {typeOf({1, 1, 3, 3}), typeOf({1, 2, 3, 3})},
                           {{"strides", Shape{3, 2}}, {"output_shape", Shape{10, 8}}});
    auto types = inferOpTypes(call);
    QVERIFY2(types.ok(), types.ok() ? "" : types.error().message.c_str());
    QCOMPARE((*types)[0].shape, (Shape{1, 2, 10, 8}));
  }

  void maxPoolReturnsIndices_data() {
    QTest::addColumn<int>("storageOrder");
    QTest::newRow("row-major") << 0;
    QTest::newRow("column-major") << 1;
  }
  void maxPoolReturnsIndices() {
    QFETCH(int, storageOrder);
    Shape shape = {2, 3, 7, 6};
    OpCall call = makeCall("MaxPool", {typeOf(shape)},
                           {{"kernel_shape", Shape{3, 2}}, {"strides", Shape{2, 2}}, {"pads", Shape{1, 0, 1, 1}},
                            {"storage_order", int64_t(storageOrder)}},
                           2);
    HostTensor x = tiedTensor(shape, 31);
    auto outputs = runOp(call, {x});
    QCOMPARE(outputs.size(), size_t(2));
    const Shape& outShape = outputs[0].shape;
    HostTensor values{outShape, {}}, indices{outShape, {}};
    for (int64_t o = 0; o < elementCount(outShape); ++o) {
      Shape at = indexOf(outShape, o);
      double best = -INFINITY;
      int64_t where = -1;
      for (int64_t r = 0; r < 3; ++r)
        for (int64_t c = 0; c < 2; ++c) {
          int64_t y = at[2] * 2 + r - 1, xx = at[3] * 2 + c - 0;
          if (y < 0 || y >= shape[2] || xx < 0 || xx >= shape[3]) continue;
          double v = x.values[size_t(offsetOf(shape, {at[0], at[1], y, xx}))];
          int64_t plane = (at[0] * shape[1] + at[1]) * shape[2] * shape[3];
          int64_t index = plane + (storageOrder ? xx * shape[2] + y : y * shape[3] + xx);
          // The first maximum in the order the spatial offset counts.
          if (v > best || (v == best && index < where)) best = v, where = index;
        }
      values.values.push_back(best);
      indices.values.push_back(double(where));
    }
    EXPECT_CLOSE(outputs[0], values, 0);
    EXPECT_CLOSE(outputs[1], indices, 0);
  }

  void averagePoolAndGlobalPoolsMatchReference() {
    Shape shape = {1, 4, 9, 9};
    HostTensor x = randomTensor(shape, 32);
    auto average = runOp(makeCall("AveragePool", {typeOf(shape)},
                                  {{"kernel_shape", Shape{3, 3}}, {"strides", Shape{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}}),
                         {x});
    QCOMPARE(average.size(), size_t(1));
    // SAME_UPPER: 9 -> 5 outputs, total pad 2 split 1/1; padding is not counted.
    HostTensor expected{{1, 4, 5, 5}, {}};
    for (int64_t o = 0; o < 100; ++o) {
      Shape at = indexOf({1, 4, 5, 5}, o);
      double sum = 0;
      int count = 0;
      for (int64_t r = 0; r < 3; ++r)
        for (int64_t c = 0; c < 3; ++c) {
          int64_t y = at[2] * 2 + r - 1, xx = at[3] * 2 + c - 1;
          if (y < 0 || y >= 9 || xx < 0 || xx >= 9) continue;
          sum += x.values[size_t(offsetOf(shape, {0, at[1], y, xx}))];
          ++count;
        }
      expected.values.push_back(sum / count);
    }
    EXPECT_CLOSE(average[0], expected, 1e-5);

    auto globalMax = runOp(makeCall("GlobalMaxPool", {typeOf(shape)}), {x});
    auto globalAverage = runOp(makeCall("GlobalAveragePool", {typeOf(shape)}), {x});
    QCOMPARE(globalMax.size(), size_t(1));
    QCOMPARE(globalAverage.size(), size_t(1));
    HostTensor maxExpected = referenceReduce(x, {2, 3}, true, "ReduceMax");
    HostTensor meanExpected = referenceReduce(x, {2, 3}, true, "ReduceMean");
    EXPECT_CLOSE(globalMax[0], maxExpected, 0);
    EXPECT_CLOSE(globalAverage[0], meanExpected, 1e-5);
  }


  void lpPoolsMatchReference() {
    Shape shape = {2, 3, 7, 7};
    HostTensor x = randomTensor(shape, 33);
    for (int64_t p : {1, 2, 3}) {
      auto local = runOp(makeCall("LpPool", {typeOf(shape)},
                                  {{"kernel_shape", Shape{3, 3}}, {"strides", Shape{2, 2}}, {"pads", Shape{1, 1, 1, 1}}, {"p", p}}),
                         {x});
      QCOMPARE(local.size(), size_t(1));
      HostTensor expected{{2, 3, 4, 4}, {}};
      for (int64_t o = 0; o < elementCount(expected.shape); ++o) {
        Shape at = indexOf(expected.shape, o);
        double sum = 0;
        for (int64_t r = 0; r < 3; ++r)
          for (int64_t c = 0; c < 3; ++c) {
            int64_t y = at[2] * 2 + r - 1, xx = at[3] * 2 + c - 1;
            if (y >= 0 && y < 7 && xx >= 0 && xx < 7)
              sum += std::pow(std::fabs(x.values[size_t(offsetOf(shape, {at[0], at[1], y, xx}))]), double(p));
          }
        expected.values.push_back(std::pow(sum, 1.0 / double(p)));
      }
      EXPECT_CLOSE(local[0], expected, 1e-4);
    }
    auto global = runOp(makeCall("GlobalLpPool", {typeOf(shape)}), {x});
    QCOMPARE(global.size(), size_t(1));
    EXPECT_CLOSE(global[0], referenceReduce(x, {2, 3}, true, "ReduceL2"), 1e-4);
  }

  void poolRefusesAMissingKernelShape() {
    auto types = inferOpTypes(makeCall("MaxPool", {typeOf({1, 1, 4, 4})}));
    QVERIFY(!types);
    QVERIFY2(types.error().message.find("kernel_shape") != std::string::npos, types.error().message.c_str());
  }

  void reductionsMatchReference_data() {
    QTest::addColumn<QString>("op");
    QTest::addColumn<Shape>("shape");
    QTest::addColumn<Shape>("axes");
    QTest::addColumn<bool>("keepDims");
    QTest::addColumn<bool>("axesAsInput");
    for (QString op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSumSquare", "ReduceL1",
                       "ReduceL2", "ReduceLogSum", "ReduceLogSumExp"}) {
      QByteArray o = op.toUtf8();
      QTest::newRow(o + " middle axis kept") << op << Shape{3, 4, 20} << Shape{1} << true << false;
      QTest::newRow(o + " trailing axes dropped") << op << Shape{2, 3, 40} << Shape{-2, -1} << false << false;
      QTest::newRow(o + " all axes") << op << Shape{3, 2, 5} << Shape{} << true << false;
      QTest::newRow(o + " axes as input") << op << Shape{5, 3, 4} << Shape{0, 2} << false << true;
    }
  }
  void reductionsMatchReference() {
    QFETCH(QString, op);
    QFETCH(Shape, shape);
    QFETCH(Shape, axes);
    QFETCH(bool, keepDims);
    QFETCH(bool, axesAsInput);
    Attributes attributes = {{"keepdims", int64_t(keepDims)}};
    std::vector<TensorType> types = {typeOf(shape)};
    if (axesAsInput) types.push_back(typeOf({int64_t(axes.size())}, DataType::int64()));
    else if (!axes.empty()) attributes["axes"] = axes;
    OpCall call = makeCall(op.toStdString(), types, attributes);
    if (axesAsInput) call.constantInputs[1] = int64Constant(axes);
    // Products and logarithms want values near 1 and positive sums.
    bool positive = op == "ReduceProd" || op == "ReduceLogSum";
    HostTensor x = positive ? randomTensor(shape, 41, 0.6, 1.4) : randomTensor(shape, 41);
    auto outputs = runOp(call, {x, HostTensor{}});
    QCOMPARE(outputs.size(), size_t(1));
    EXPECT_CLOSE(outputs[0], referenceReduce(x, axes, keepDims, op.toStdString()), 1e-4);
  }

  void reduceSumWithEmptyAxesInput() {
    // noop_with_empty_axes: an empty axes input copies; without it, everything is reduced.
    Shape shape = {3, 4};
    HostTensor x = randomTensor(shape, 42);
    for (int noop : {0, 1}) {
      OpCall call = makeCall("ReduceSum", {typeOf(shape), typeOf({0}, DataType::int64())},
                             {{"noop_with_empty_axes", int64_t(noop)}}, 1, 13);
      call.constantInputs[1] = int64Constant({});
      auto outputs = runOp(call, {x, HostTensor{}});
      QCOMPARE(outputs.size(), size_t(1));
      EXPECT_CLOSE(outputs[0], noop ? x : referenceReduce(x, {}, true, "ReduceSum"), 1e-5);
    }
  }

  void reduceSumOnIntegers() {
    Shape shape = {4, 6};
    HostTensor x = tiedTensor(shape, 43);
    auto outputs = runOp(makeCall("ReduceSum", {typeOf(shape, DataType::int32())}, {{"axes", Shape{1}}}), {x});
    QCOMPARE(outputs.size(), size_t(1));
    EXPECT_CLOSE(outputs[0], referenceReduce(x, {1}, true, "ReduceSum"), 0);
  }

  void reduceRefusesANonConstantAxesInput() {
    auto types = inferOpTypes(makeCall("ReduceSum", {typeOf({3, 4}), typeOf({1}, DataType::int64())}));
    QVERIFY(!types);
    QVERIFY2(types.error().message.find("must be a constant") != std::string::npos, types.error().message.c_str());
  }

  void argMaxAndArgMinPickTheRightTie_data() {
    QTest::addColumn<QString>("op");
    QTest::addColumn<int>("axis");
    QTest::addColumn<bool>("keepDims");
    QTest::addColumn<bool>("last");
    QTest::addColumn<bool>("integers");
    for (QString op : {"ArgMax", "ArgMin"}) {
      QByteArray o = op.toUtf8();
      QTest::newRow(o + " axis 0 first") << op << 0 << true << false << false;
      QTest::newRow(o + " axis -1 last, dropped") << op << -1 << false << true << false;
      QTest::newRow(o + " axis 1 on int32") << op << 1 << true << false << true;
    }
  }
  void argMaxAndArgMinPickTheRightTie() {
    QFETCH(QString, op);
    QFETCH(int, axis);
    QFETCH(bool, keepDims);
    QFETCH(bool, last);
    QFETCH(bool, integers);
    Shape shape = {4, 5, 6};
    HostTensor x = tiedTensor(shape, 44);
    OpCall call = makeCall(op.toStdString(), {typeOf(shape, integers ? DataType::int32() : DataType::float32())},
                           {{"axis", int64_t(axis)}, {"keepdims", int64_t(keepDims)}, {"select_last_index", int64_t(last)}});
    auto outputs = runOp(call, {x});
    QCOMPARE(outputs.size(), size_t(1));
    int64_t a = axis < 0 ? axis + 3 : axis;
    Shape kept = shape;
    kept[size_t(a)] = 1;
    Shape outShape;
    for (size_t d = 0; d < 3; ++d)
      if (int64_t(d) != a || keepDims) outShape.push_back(kept[d]);
    HostTensor expected{outShape, {}};
    for (int64_t o = 0; o < elementCount(kept); ++o) {
      Shape at = indexOf(kept, o);
      int64_t best = 0;
      for (int64_t k = 0; k < shape[size_t(a)]; ++k) {
        Shape here = at, there = at;
        here[size_t(a)] = k;
        there[size_t(a)] = best;
        double v = x.values[size_t(offsetOf(shape, here))], w = x.values[size_t(offsetOf(shape, there))];
        bool better = op == "ArgMax" ? v > w : v < w;
        if (better || (last && v == w)) best = k;
      }
      expected.values.push_back(double(best));
    }
    EXPECT_CLOSE(outputs[0], expected, 0);
  }

  void batchAndInstanceNormalizationMatchReference() {
    Shape shape = {2, 3, 5, 6};
    HostTensor x = randomTensor(shape, 51), scale = randomTensor({3}, 52), bias = randomTensor({3}, 53);
    HostTensor mean = randomTensor({3}, 54), var = randomTensor({3}, 55, 0.5, 2.0);
    auto batch = runOp(makeCall("BatchNormalization", {typeOf(shape), typeOf({3}), typeOf({3}), typeOf({3}), typeOf({3})},
                                {{"epsilon", 1e-3}}),
                       {x, scale, bias, mean, var});
    QCOMPARE(batch.size(), size_t(1));
    HostTensor expected{shape, {}};
    for (int64_t o = 0; o < elementCount(shape); ++o) {
      size_t c = size_t(indexOf(shape, o)[1]);
      expected.values.push_back((x.values[size_t(o)] - mean.values[c]) / std::sqrt(var.values[c] + 1e-3) *
                                    scale.values[c] + bias.values[c]);
    }
    EXPECT_CLOSE(batch[0], expected, 1e-4);

    auto instance = runOp(makeCall("InstanceNormalization", {typeOf(shape), typeOf({3}), typeOf({3})}, {{"epsilon", 1e-2}}),
                          {x, scale, bias});
    QCOMPARE(instance.size(), size_t(1));
    HostTensor standardized = referenceStandardize(x, {false, false, true, true}, 1e-2);
    for (int64_t o = 0; o < elementCount(shape); ++o) {
      size_t c = size_t(indexOf(shape, o)[1]);
      standardized.values[size_t(o)] = standardized.values[size_t(o)] * scale.values[c] + bias.values[c];
    }
    EXPECT_CLOSE(instance[0], standardized, 1e-4);
  }

  void batchNormalizationTrainingModeUpdatesRunningStatistics() {
    Shape shape = {3, 2, 4, 5};
    std::vector<TensorType> types = {typeOf(shape), typeOf({2}), typeOf({2}), typeOf({2}), typeOf({2})};
    HostTensor x = randomTensor(shape, 56), scale = randomTensor({2}, 57), bias = randomTensor({2}, 58);
    HostTensor mean = randomTensor({2}, 59), var = randomTensor({2}, 60, 0.5, 2.0);
    auto outputs = runOp(makeCall("BatchNormalization", types,
                                  {{"training_mode", int64_t(1)}, {"momentum", 0.8}, {"epsilon", 1e-3}}, 3, 15),
                         {x, scale, bias, mean, var});
    QCOMPARE(outputs.size(), size_t(3));
    HostTensor expected = referenceStandardize(x, {true, false, true, true}, 1e-3);
    HostTensor batchMean = referenceReduce(x, {0, 2, 3}, false, "ReduceMean");
    HostTensor runningMean{{2}, {}}, runningVar{{2}, {}};
    for (int64_t c = 0; c < 2; ++c) {
      double v = 0, count = double(elementCount(shape) / 2);
      for (int64_t o = 0; o < elementCount(shape); ++o)
        if (indexOf(shape, o)[1] == c) v += std::pow(x.values[size_t(o)] - batchMean.values[size_t(c)], 2) / count;
      runningMean.values.push_back(mean.values[size_t(c)] * 0.8 + batchMean.values[size_t(c)] * 0.2);
      runningVar.values.push_back(var.values[size_t(c)] * 0.8 + v * 0.2);
    }
    for (int64_t o = 0; o < elementCount(shape); ++o) {
      size_t c = size_t(indexOf(shape, o)[1]);
      expected.values[size_t(o)] = expected.values[size_t(o)] * scale.values[c] + bias.values[c];
    }
    EXPECT_CLOSE(outputs[0], expected, 1e-4);
    EXPECT_CLOSE(outputs[1], runningMean, 1e-5);
    EXPECT_CLOSE(outputs[2], runningVar, 1e-5);

    // Before opset 14, extra outputs (saved statistics) meant the old training form.
    auto old = inferOpTypes(makeCall("BatchNormalization", types, {}, 5, 9));
    QVERIFY(!old);
    QVERIFY2(old.error().message.find("training") != std::string::npos, old.error().message.c_str());
  }

  void layerNormalizationWithStatistics_data() {
    QTest::addColumn<Shape>("shape");
    QTest::addColumn<int>("axis");
    QTest::addColumn<bool>("bias");
    QTest::newRow("last axis, 3 outputs") << Shape{4, 48} << -1 << true;
    QTest::newRow("axis 1 of 3-D, no bias") << Shape{2, 3, 5} << 1 << false;
    QTest::newRow("axis 0") << Shape{3, 4} << 0 << true;
  }
  void layerNormalizationWithStatistics() {
    QFETCH(Shape, shape);
    QFETCH(int, axis);
    QFETCH(bool, bias);
    int64_t a = axis < 0 ? axis + int64_t(shape.size()) : axis;
    Shape normalized(shape.begin() + a, shape.end());
    std::vector<TensorType> types = {typeOf(shape), typeOf(normalized)};
    if (bias) types.push_back(typeOf(normalized));
    HostTensor x = randomTensor(shape, 61), scale = randomTensor(normalized, 62), b = randomTensor(normalized, 63);
    auto outputs = runOp(makeCall("LayerNormalization", types, {{"axis", int64_t(axis)}, {"epsilon", 1e-4}}, 3, 17),
                         {x, scale, b});
    QCOMPARE(outputs.size(), size_t(3));
    std::vector<bool> reduced(shape.size(), false);
    for (size_t d = size_t(a); d < shape.size(); ++d) reduced[d] = true;
    HostTensor expected = referenceStandardize(x, reduced, 1e-4);
    int64_t inner = elementCount(normalized);
    for (int64_t o = 0; o < elementCount(shape); ++o)
      expected.values[size_t(o)] = expected.values[size_t(o)] * scale.values[size_t(o % inner)] +
                                   (bias ? b.values[size_t(o % inner)] : 0.0);
    EXPECT_CLOSE(outputs[0], expected, 1e-4);
    // Mean and InvStdDev keep the normalized axes as ones.
    Shape statShape = shape;
    std::fill(statShape.begin() + a, statShape.end(), 1);
    HostTensor expectedMean{statShape, {}}, expectedInv{statShape, {}};
    for (int64_t row = 0; row < elementCount(statShape); ++row) {
      double m = 0, v = 0;
      for (int64_t k = 0; k < inner; ++k) m += x.values[size_t(row * inner + k)] / double(inner);
      for (int64_t k = 0; k < inner; ++k) v += std::pow(x.values[size_t(row * inner + k)] - m, 2) / double(inner);
      expectedMean.values.push_back(m);
      expectedInv.values.push_back(1.0 / std::sqrt(v + 1e-4));
    }
    EXPECT_CLOSE(outputs[1], expectedMean, 1e-4);
    EXPECT_CLOSE(outputs[2], expectedInv, 1e-4);

    // A node may leave out InvStdDev.
    auto meanOnly = runOp(makeCall("LayerNormalization", types, {{"axis", int64_t(axis)}, {"epsilon", 1e-4}}, 2, 17),
                          {x, scale, b});
    QCOMPARE(meanOnly.size(), size_t(2));
    EXPECT_CLOSE(meanOnly[1], expectedMean, 1e-4);
  }

  void lpNormalizationMvnAndLrnMatchReference() {
    Shape shape = {2, 5, 3, 4};
    HostTensor x = randomTensor(shape, 71);
    for (int64_t p : {1, 2}) {
      auto outputs = runOp(makeCall("LpNormalization", {typeOf(shape)}, {{"axis", int64_t(1)}, {"p", p}}), {x});
      QCOMPARE(outputs.size(), size_t(1));
      HostTensor norm = referenceReduce(x, {1}, true, p == 1 ? "ReduceL1" : "ReduceL2");
      HostTensor expected{shape, {}};
      for (int64_t o = 0; o < elementCount(shape); ++o) {
        Shape at = indexOf(shape, o);
        at[1] = 0;
        expected.values.push_back(x.values[size_t(o)] / norm.values[size_t(offsetOf({2, 1, 3, 4}, at))]);
      }
      EXPECT_CLOSE(outputs[0], expected, 1e-4);
    }

    auto mvn = runOp(makeCall("MeanVarianceNormalization", {typeOf(shape)}), {x});
    QCOMPARE(mvn.size(), size_t(1));
    EXPECT_CLOSE(mvn[0], referenceStandardize(x, {true, false, true, true}, 1e-9), 1e-4);

    auto lrn = runOp(makeCall("LRN", {typeOf(shape)}, {{"size", int64_t(3)}, {"alpha", 0.002}, {"beta", 0.5}, {"bias", 2.0}}),
                     {x});
    QCOMPARE(lrn.size(), size_t(1));
    HostTensor expected{shape, {}};
    for (int64_t o = 0; o < elementCount(shape); ++o) {
      Shape at = indexOf(shape, o);
      double squares = 0;
      for (int64_t c = std::max<int64_t>(0, at[1] - 1); c <= std::min<int64_t>(4, at[1] + 1); ++c) {
        Shape here = at;
        here[1] = c;
        squares += std::pow(x.values[size_t(offsetOf(shape, here))], 2);
      }
      expected.values.push_back(x.values[size_t(o)] / std::pow(2.0 + 0.002 / 3 * squares, 0.5));
    }
    EXPECT_CLOSE(lrn[0], expected, 1e-5);
  }


  void cumSumMatchesRunningSums_data() {
    QTest::addColumn<int>("axis");
    QTest::addColumn<bool>("exclusive");
    QTest::addColumn<bool>("reverse");
    QTest::newRow("axis 0") << 0 << false << false;
    QTest::newRow("axis 1 exclusive") << 1 << true << false;
    QTest::newRow("axis -1 reverse") << -1 << false << true;
    QTest::newRow("axis 1 reverse exclusive") << 1 << true << true;
  }
  void cumSumMatchesRunningSums() {
    QFETCH(int, axis);
    QFETCH(bool, exclusive);
    QFETCH(bool, reverse);
    Shape shape = {3, 5, 20};
    OpCall call = makeCall("CumSum", {typeOf(shape), typeOf({}, DataType::int64())},
                           {{"exclusive", int64_t(exclusive)}, {"reverse", int64_t(reverse)}});
    auto axisValue = runtime::NDArray::empty({}, runtime::DataType::int64());
    axisValue.values<int64_t>()[0] = axis;
    call.constantInputs[1] = axisValue;
    HostTensor x = randomTensor(shape, 81);
    auto outputs = runOp(call, {x, HostTensor{}});
    QCOMPARE(outputs.size(), size_t(1));
    int64_t a = axis < 0 ? axis + 3 : axis;
    HostTensor expected{shape, {}};
    for (int64_t o = 0; o < elementCount(shape); ++o) {
      Shape at = indexOf(shape, o);
      double sum = 0;
      for (int64_t k = 0; k < shape[size_t(a)]; ++k) {
        bool counted = reverse ? (exclusive ? k > at[size_t(a)] : k >= at[size_t(a)])
                               : (exclusive ? k < at[size_t(a)] : k <= at[size_t(a)]);
        Shape here = at;
        here[size_t(a)] = k;
        if (counted) sum += x.values[size_t(offsetOf(shape, here))];
      }
      expected.values.push_back(sum);
    }
    EXPECT_CLOSE(outputs[0], expected, 1e-5);
  }

  void topKReturnsSortedValuesAndIndices_data() {
    QTest::addColumn<int>("axis");
    QTest::addColumn<int>("k");
    QTest::addColumn<bool>("largest");
    QTest::newRow("largest 3 along the last axis") << -1 << 3 << true;
    QTest::newRow("smallest 2 along axis 1") << 1 << 2 << false;
    QTest::newRow("all of axis 0") << 0 << 4 << true;
  }
  void topKReturnsSortedValuesAndIndices() {
    QFETCH(int, axis);
    QFETCH(int, k);
    QFETCH(bool, largest);
    Shape shape = {4, 5, 6};
    OpCall call = makeCall("TopK", {typeOf(shape), typeOf({1}, DataType::int64())},
                           {{"axis", int64_t(axis)}, {"largest", int64_t(largest)}}, 2, 11);
    call.constantInputs[1] = int64Constant({k});
    HostTensor x = tiedTensor(shape, 91);  // ties: the lower index comes first
    auto outputs = runOp(call, {x, HostTensor{}});
    QCOMPARE(outputs.size(), size_t(2));
    int64_t a = axis < 0 ? axis + 3 : axis;
    Shape outShape = shape;
    outShape[size_t(a)] = k;
    HostTensor values{outShape, {}}, indices{outShape, {}};
    for (int64_t o = 0; o < elementCount(outShape); ++o) {
      Shape at = indexOf(outShape, o);
      std::vector<std::pair<double, int64_t>> line;
      for (int64_t i = 0; i < shape[size_t(a)]; ++i) {
        Shape here = at;
        here[size_t(a)] = i;
        line.push_back({x.values[size_t(offsetOf(shape, here))], i});
      }
      std::stable_sort(line.begin(), line.end(), [&](auto& l, auto& r) { return largest ? l.first > r.first : l.first < r.first; });
      values.values.push_back(line[size_t(at[size_t(a)])].first);
      indices.values.push_back(double(line[size_t(at[size_t(a)])].second));
    }
    EXPECT_CLOSE(outputs[0], values, 0);
    EXPECT_CLOSE(outputs[1], indices, 0);
  }

  void topKRefusesKLargerThanTheAxis() {
    OpCall call = makeCall("TopK", {typeOf({2, 3}), typeOf({1}, DataType::int64())});
    call.constantInputs[1] = int64Constant({4});
    auto types = inferOpTypes(call);
    QVERIFY(!types);
    QVERIFY2(types.error().message.find("TopK 'TopK_node'") == 0, types.error().message.c_str());
  }


  void einsumMatchesTheEquation() {
    // A batched product equals MatMul's numpy semantics.
    HostTensor a = randomTensor({2, 3, 4}, 101), b = randomTensor({2, 4, 5}, 102);
    auto product = runOp(makeCall("Einsum", {typeOf({2, 3, 4}), typeOf({2, 4, 5})}, {{"equation", std::string("bij, bjk -> bik")}}),
                         {a, b});
    QCOMPARE(product.size(), size_t(1));
    EXPECT_CLOSE(product[0], referenceMatmul(a, b), 1e-5);

    // A diagonal under broadcast batch axes, and an implicit-output inner product.
    HostTensor square = randomTensor({2, 3, 4, 4}, 103);
    auto diagonal = runOp(makeCall("Einsum", {typeOf({2, 3, 4, 4})}, {{"equation", std::string("...ii->...i")}}), {square});
    QCOMPARE(diagonal.size(), size_t(1));
    HostTensor expected{{2, 3, 4}, {}};
    for (int64_t o = 0; o < 24; ++o) expected.values.push_back(square.values[size_t(o * 4 + o % 4)]);
    EXPECT_CLOSE(diagonal[0], expected, 0);

    HostTensor u = randomTensor({7}, 104), v = randomTensor({7}, 105);
    auto inner = runOp(makeCall("Einsum", {typeOf({7}), typeOf({7})}, {{"equation", std::string("i,i")}}), {u, v});
    QCOMPARE(inner.size(), size_t(1));
    EXPECT_CLOSE(inner[0], referenceMatmul(u, v), 1e-5);

    auto mismatch = inferOpTypes(makeCall("Einsum", {typeOf({2, 3}), typeOf({4, 5})}, {{"equation", std::string("ij,jk->ik")}}));
    QVERIFY(!mismatch);
    QVERIFY2(mismatch.error().message.find("Einsum 'Einsum_node'") == 0, mismatch.error().message.c_str());
  }


  void integerAndQuantizedMatmulMatchReference() {
    Shape a = {2, 4, 6}, b = {6, 5};
    HostTensor x = randomBytes(a, 111), y = randomBytes(b, 112);
    // MatMulInteger with a zero point per row of A and one for all of B.
    HostTensor rowZero = randomBytes({4}, 113), columnZero{{}, {12}};
    auto integer = runOp(makeCall("MatMulInteger", {typeOf(a, DataType::uint8()), typeOf(b, DataType::uint8()),
                                                    typeOf({4}, DataType::uint8()), typeOf({}, DataType::uint8())}),
                         {x, y, rowZero, columnZero});
    QCOMPARE(integer.size(), size_t(1));
    HostTensor shiftedX = x, shiftedY = y;
    for (int64_t o = 0; o < elementCount(a); ++o) shiftedX.values[size_t(o)] -= rowZero.values[size_t(indexOf(a, o)[1])];
    for (double& v : shiftedY.values) v -= 12;
    HostTensor product = referenceMatmul(shiftedX, shiftedY);
    EXPECT_CLOSE(integer[0], product, 0);

    // QLinearMatMul: scalar zero points, requantized to uint8.
    OpCall call = makeCall("QLinearMatMul",
                           {typeOf(a, DataType::uint8()), typeOf({}), typeOf({}, DataType::uint8()),
                            typeOf(b, DataType::uint8()), typeOf({}), typeOf({}, DataType::uint8()), typeOf({}),
                            typeOf({}, DataType::uint8())});
    auto quantized = runOp(call, {x, HostTensor{{}, {0.02}}, HostTensor{{}, {100}}, y, HostTensor{{}, {0.01}},
                                  HostTensor{{}, {120}}, HostTensor{{}, {0.5}}, HostTensor{{}, {30}}});
    QCOMPARE(quantized.size(), size_t(1));
    HostTensor ax = x, by = y;
    for (double& v : ax.values) v -= 100;
    for (double& v : by.values) v -= 120;
    HostTensor expected = referenceMatmul(ax, by);
    double scale = double(float(0.02f * 0.01f / 0.5f));
    for (double& v : expected.values) v = requantizeReference(v, scale, 30);
    // The scale is applied in float32: allow one step where a product lands on a rounding edge.
    EXPECT_CLOSE(quantized[0], expected, 1.0 / 255);
  }

  void qlinearConvMatchesReference() {
    Shape input = {1, 2, 5, 5}, weight = {3, 2, 3, 3};
    HostTensor x = randomBytes(input, 121), w = randomBytes(weight, 122), bias = randomTensor({3}, 123, -500, 500);
    for (double& v : bias.values) v = std::round(v);
    HostTensor wScale{{3}, {0.001, 0.002, 0.0005}};
    OpCall call = makeCall("QLinearConv",
                           {typeOf(input, DataType::uint8()), typeOf({}), typeOf({}, DataType::uint8()),
                            typeOf(weight, DataType::uint8()), typeOf({3}), typeOf({3}, DataType::uint8()), typeOf({}),
                            typeOf({}, DataType::uint8()), typeOf({3}, DataType::int32())},
                           {{"pads", Shape{1, 1, 1, 1}}});
    HostTensor wZero{{3}, {128, 100, 90}};
    auto outputs = runOp(call, {x, HostTensor{{}, {0.05}}, HostTensor{{}, {110}}, w, wScale, wZero,
                                HostTensor{{}, {0.3}}, HostTensor{{}, {128}}, bias});
    QCOMPARE(outputs.size(), size_t(1));
    HostTensor expected{outputs[0].shape, {}};
    for (int64_t o = 0; o < elementCount(expected.shape); ++o) {
      Shape at = indexOf(expected.shape, o);
      double sum = bias.values[size_t(at[1])];
      for (int64_t c = 0; c < 2; ++c)
        for (int64_t r = 0; r < 3; ++r)
          for (int64_t q = 0; q < 3; ++q) {
            int64_t yy = at[2] + r - 1, xx = at[3] + q - 1;
            if (yy < 0 || yy >= 5 || xx < 0 || xx >= 5) continue;
            sum += (x.values[size_t(offsetOf(input, {0, c, yy, xx}))] - 110) *
                   (w.values[size_t(offsetOf(weight, {at[1], c, r, q}))] - wZero.values[size_t(at[1])]);
          }
      double scale = double(float(float(0.05f * float(wScale.values[size_t(at[1])])) / 0.3f));
      expected.values.push_back(requantizeReference(sum, scale, 128));
    }
    EXPECT_CLOSE(outputs[0], expected, 1.0 / 255);
  }

  void softmaxOfLargeNumbersStaysFinite() {
    HostTensor x{{2, 4}, {1000, 1001, 1002, 1003, -1000, 0, 1, 2}};
    auto outputs = runOp(makeCall("Softmax", {typeOf({2, 4})}, {}, 1, 13), {x});
    QCOMPARE(outputs.size(), size_t(1));
    EXPECT_CLOSE(outputs[0], referenceSoftmax(x, 1, 1, "Softmax"), 1e-5);
  }
};

QTEST_GUILESS_MAIN(TestOpdefsNN)
#include "test_opdefs_nn.moc"
