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
#include "compiler/opdefs/OpRegistry.h"

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
  call.target = ScheduleTarget::host();
  call.target.threads = std::max(call.target.threads, 2);  // exercise the parallel loops
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
                           "ArgMin"})
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
    QTest::newRow("vector times matrix") << Shape{6} << Shape{2, 6, 5};
    QTest::newRow("matrix times vector") << Shape{4, 6} << Shape{6};
    QTest::newRow("dot product") << Shape{7} << Shape{7};
  }
  void matmulMatchesNumpySemantics() {
    QFETCH(Shape, a);
    QFETCH(Shape, b);
    HostTensor x = randomTensor(a, 4), y = randomTensor(b, 5);
    auto outputs = runOp(makeCall("MatMul", {typeOf(a), typeOf(b)}), {x, y});
    QCOMPARE(outputs.size(), size_t(1));
    EXPECT_CLOSE(outputs[0], referenceMatmul(x, y), 1e-4);
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

  void softmaxOfLargeNumbersStaysFinite() {
    HostTensor x{{2, 4}, {1000, 1001, 1002, 1003, -1000, 0, 1, 2}};
    auto outputs = runOp(makeCall("Softmax", {typeOf({2, 4})}, {}, 1, 13), {x});
    QCOMPARE(outputs.size(), size_t(1));
    EXPECT_CLOSE(outputs[0], referenceSoftmax(x, 1, 1, "Softmax"), 1e-5);
  }
};

QTEST_GUILESS_MAIN(TestOpdefsNN)
#include "test_opdefs_nn.moc"
