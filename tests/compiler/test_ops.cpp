// Operators from compiler/ops under their default schedules: results match plain C++ on
// awkward shapes, and the schedules really vectorize and parallelize.
#include <QtTest>

#include <cmath>
#include <random>

#include "OpsTestSupport.h"
#include "compiler/lower/Build.h"
#include "compiler/ops/Elementwise.h"
#include "compiler/ops/Matmul.h"
#include "core/ir/IROperators.h"
#include "core/ir/IRPrinter.h"
#include "runtime/NDArray.h"

using namespace tessel;
using tessel::testing::loweredText;

namespace {

std::vector<int64_t> shapeOf(const te::Tensor& t) {
  std::vector<int64_t> shape;
  for (auto& e : t.shape()) shape.push_back(*asConstInt(e));
  return shape;
}

// Builds `w` with `schedule`, fills inputs with values from `fill`, runs it, returns the output.
std::vector<float> run(const Workload& w, const Schedule& schedule, std::vector<std::vector<float>>& inputs,
                       float low = -1.0f, float high = 1.0f) {
  auto built = build(schedule, w.args(), w.name);
  if (!built) qFatal("%s", built.error().toString().c_str());
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(low, high);
  std::vector<runtime::Value> args;
  inputs.clear();
  for (auto& input : w.inputs) {
    auto array = runtime::NDArray::empty(shapeOf(input), runtime::DataType::float32());
    for (float& v : array.values<float>()) v = uniform(rng);
    inputs.push_back(array.toVector<float>());
    args.push_back(array);
  }
  auto output = runtime::NDArray::empty(shapeOf(w.outputs[0]), runtime::DataType::float32());
  args.push_back(output);
  built->function.callPacked(args);
  return output.toVector<float>();
}

void compareAll(const std::vector<float>& got, const std::vector<float>& expected, float tolerance) {
  QCOMPARE(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - expected[i]) <= tolerance * (1 + std::fabs(expected[i]))))
      QFAIL(qPrintable(QString("element %1: got %2, expected %3").arg(i).arg(got[i]).arg(expected[i])));
}
}  // namespace

class TestOps : public QObject {
  Q_OBJECT
private slots:
  void denseMatchesReference_data() {
    QTest::addColumn<int>("m");
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("k");
    QTest::newRow("square") << 64 << 64 << 64;
    QTest::newRow("odd") << 17 << 45 << 33;
    QTest::newRow("one row") << 1 << 100 << 70;
    QTest::newRow("narrow") << 50 << 3 << 8;
  }
  void denseMatchesReference() {
    QFETCH(int, m);
    QFETCH(int, n);
    QFETCH(int, k);
    Workload w = dense(m, n, k);
    auto schedule = defaultMatmulSchedule(w);
    QVERIFY(schedule.ok());
    std::vector<std::vector<float>> in;
    auto got = run(w, *schedule, in);
    std::vector<float> expected(size_t(m) * n, 0.0f);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j)
        for (int p = 0; p < k; ++p) expected[i * n + j] += in[0][i * k + p] * in[1][j * k + p];
    compareAll(got, expected, 1e-4f);
  }

  void unaryMatchesStandardLibrary_data() {
    QTest::addColumn<int>("op");
    for (UnaryOp op : {UnaryOp::Relu, UnaryOp::Neg, UnaryOp::Abs, UnaryOp::Exp, UnaryOp::Log, UnaryOp::Sqrt,
                       UnaryOp::Tanh, UnaryOp::Sigmoid, UnaryOp::Erf})
      QTest::newRow(unaryOpName(op)) << int(op);
  }
  void unaryMatchesStandardLibrary() {
    QFETCH(int, op);
    UnaryOp unary = UnaryOp(op);
    Workload w = unaryElementwise(unary, {3, 37, 129});
    auto schedule = defaultElementwiseSchedule(w);
    QVERIFY(schedule.ok());
    std::vector<std::vector<float>> in;
    bool positive = unary == UnaryOp::Log || unary == UnaryOp::Sqrt;
    auto got = run(w, *schedule, in, positive ? 0.01f : -3.0f, 3.0f);
    std::vector<float> expected(got.size());
    for (size_t i = 0; i < got.size(); ++i) {
      float x = in[0][i];
      switch (unary) {
        case UnaryOp::Relu: expected[i] = std::max(x, 0.0f); break;
        case UnaryOp::Neg: expected[i] = -x; break;
        case UnaryOp::Abs: expected[i] = std::fabs(x); break;
        case UnaryOp::Exp: expected[i] = std::exp(x); break;
        case UnaryOp::Log: expected[i] = std::log(x); break;
        case UnaryOp::Sqrt: expected[i] = std::sqrt(x); break;
        case UnaryOp::Tanh: expected[i] = std::tanh(x); break;
        case UnaryOp::Sigmoid: expected[i] = 1.0f / (1.0f + std::exp(-x)); break;
        case UnaryOp::Erf: expected[i] = std::erf(x); break;
      }
    }
    compareAll(got, expected, 1e-5f);
  }

  void binaryBroadcasts_data() {
    QTest::addColumn<int>("op");
    QTest::addColumn<QList<qint64>>("a");
    QTest::addColumn<QList<qint64>>("b");
    QTest::newRow("add same") << int(BinaryOp::Add) << QList<qint64>{4, 50} << QList<qint64>{4, 50};
    QTest::newRow("mul row") << int(BinaryOp::Mul) << QList<qint64>{4, 50} << QList<qint64>{50};
    QTest::newRow("sub column") << int(BinaryOp::Sub) << QList<qint64>{4, 1} << QList<qint64>{4, 50};
    QTest::newRow("max outer") << int(BinaryOp::Max) << QList<qint64>{3, 1, 5} << QList<qint64>{1, 7, 5};
    QTest::newRow("div scalar-like") << int(BinaryOp::Div) << QList<qint64>{2, 33} << QList<qint64>{1};
    QTest::newRow("min") << int(BinaryOp::Min) << QList<qint64>{100000} << QList<qint64>{100000};
    // Per-channel operands on NCHW planes that are not a multiple of the vector width (rows of
    // contiguous planes), in one thread and across parallel rows.
    QTest::newRow("per-channel scale, 14x14") << int(BinaryOp::Mul) << QList<qint64>{2, 24, 14, 14}
                                             << QList<qint64>{24, 1, 1};
    QTest::newRow("per-channel shift, parallel rows") << int(BinaryOp::Add) << QList<qint64>{1, 64, 28, 28}
                                                      << QList<qint64>{1, 64, 1, 1};
    QTest::newRow("per-row operand first") << int(BinaryOp::Sub) << QList<qint64>{40, 1} << QList<qint64>{40, 37};
  }
  void binaryBroadcasts() {
    QFETCH(int, op);
    QFETCH(QList<qint64>, a);
    QFETCH(QList<qint64>, b);
    std::vector<int64_t> aShape(a.begin(), a.end()), bShape(b.begin(), b.end());
    auto w = binaryElementwise(BinaryOp(op), aShape, bShape);
    QVERIFY(w.ok());
    auto schedule = defaultElementwiseSchedule(*w);
    QVERIFY(schedule.ok());
    std::vector<std::vector<float>> in;
    auto got = run(*w, *schedule, in, 0.5f, 2.0f);
    // Reference by explicit index arithmetic on the broadcast shape.
    std::vector<int64_t> out = shapeOf(w->outputs[0]);
    size_t rank = out.size();
    auto offset = [&](const std::vector<int64_t>& shape, const std::vector<int64_t>& index) {
      int64_t flat = 0;
      for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + (shape[d] == 1 ? 0 : index[d + rank - shape.size()]);
      return flat;
    };
    std::vector<int64_t> index(rank, 0);
    for (size_t i = 0; i < got.size(); ++i) {
      float x = in[0][offset(aShape, index)], y = in[1][offset(bShape, index)];
      float expected = 0;
      switch (BinaryOp(op)) {
        case BinaryOp::Add: expected = x + y; break;
        case BinaryOp::Sub: expected = x - y; break;
        case BinaryOp::Mul: expected = x * y; break;
        case BinaryOp::Div: expected = x / y; break;
        case BinaryOp::Max: expected = std::max(x, y); break;
        case BinaryOp::Min: expected = std::min(x, y); break;
      }
      if (std::fabs(got[i] - expected) > 1e-6f * (1 + std::fabs(expected)))
        QFAIL(qPrintable(QString("element %1: got %2, expected %3").arg(i).arg(got[i]).arg(expected)));
      for (int d = int(rank) - 1; d >= 0 && ++index[d] == out[d]; --d) index[d] = 0;
    }
  }

  void binaryRejectsShapesThatDoNotBroadcast() {
    auto w = binaryElementwise(BinaryOp::Add, {4, 3}, {4, 5});
    QVERIFY(!w.ok());
    QVERIFY(QString::fromStdString(w.error().toString()).contains("do not broadcast"));
  }

  void perChannelOperandIsReadOncePerRow() {
    // A batch norm's scale on [1, C, 14, 14]: fused flat, a vector would straddle two channels
    // and read the scale by a gather; by rows, each channel's plane is contiguous vectors and
    // the scale one scalar.
    Target target;
    target.vectorBits = 32 * 8;
    target.cores = 2;
    auto w = binaryElementwise(BinaryOp::Mul, {1, 256, 14, 14}, {256, 1, 1});
    QVERIFY(w.ok());
    auto schedule = defaultElementwiseSchedule(*w, target);
    QVERIFY(schedule.ok());
    QString text = loweredText(*w, *schedule);
    QVERIFY2(text.contains("parallel for (rows") && text.contains("broadcast(b[rows], 8)") &&
                 !text.contains("//broadcast("),
             qPrintable(text));
  }

  void fusedRelayoutKeepsRowsAndVectorsOfTheBlock() {
    // A squeeze-and-excitation Mul with the NCHW to NCHW16c transform of its activation fused
    // in (RegNetY's): fused flat, each vector's reads were gathers at indices divided out of
    // the flat loop; by rows, the block's 16 channels are the vector lanes, read at one stride.
    Target target;
    target.vectorBits = 32 * 8;
    target.cores = 2;
    const int64_t channels = 208, height = 14, width = 14, block = 16;
    te::Tensor a = te::placeholder({Expr(1), Expr(channels), Expr(height), Expr(width)}, DataType::float32(), "a");
    te::Tensor scale = te::placeholder({Expr(1), Expr(channels / block), Expr(1), Expr(1), Expr(block)},
                                       DataType::float32(), "scale");
    te::Tensor out = te::compute(
        {Expr(1), Expr(channels / block), Expr(height), Expr(width), Expr(block)},
        [&](const std::vector<Var>& v) {
          Expr n = v[0], co = v[1], y = v[2], x = v[3], ci = v[4];
          return scale(n, co, Expr(0), Expr(0), ci) * a(n, co * block + ci, y, x);
        },
        "out", {"ax0", "ax1", "ax2", "ax3", "ax4"}, "elemwise");
    Workload w;
    w.name = "relayout_mul";
    w.inputs = {a, scale};
    w.outputs = {out};
    auto schedule = defaultElementwiseSchedule(w, target);
    QVERIFY(schedule.ok());
    QString text = loweredText(w, *schedule);
    QVERIFY2(text.contains("parallel for (rows, 0, 182)") && text.contains(", 196, 16)]") &&
                 text.contains("out[ramp(rows*224 + ax3*16, 1, 16)]"),
             qPrintable(text));
    std::vector<std::vector<float>> inputs;
    std::vector<float> got = run(w, *schedule, inputs);
    std::vector<float> expected(got.size());
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t y = 0; y < height; ++y)
        for (int64_t x = 0; x < width; ++x)
          expected[size_t((((c / block) * height + y) * width + x) * block + c % block)] =
              inputs[1][size_t(c)] * inputs[0][size_t((c * height + y) * width + x)];
    compareAll(got, expected, 1e-6f);
  }

  void blockedPerChannelOperandKeepsRowsOfTheBlock() {
    // DenseNet's batch norm after a blocked Concat (fused(Concat+Mul+Add+Relu) over NCHW16c):
    // fused flat, every vector divided the per-channel operand's index out of the flat loop
    // and tested which input it reads; by rows, both change once per row, the Concat's tests
    // become one branch per input, and the block's lanes are the vector.
    Target target;
    target.vectorBits = 32 * 8;
    target.cores = 2;
    const int64_t height = 28, width = 28, block = 16;
    const std::vector<int64_t> blocks = {2, 1};
    te::Tensor a = te::placeholder({Expr(1), Expr(blocks[0]), Expr(height), Expr(width), Expr(block)},
                                   DataType::float32(), "a");
    te::Tensor b = te::placeholder({Expr(1), Expr(blocks[1]), Expr(height), Expr(width), Expr(block)},
                                   DataType::float32(), "b");
    te::Tensor scale = te::placeholder({Expr(3), Expr(1), Expr(1), Expr(block)}, DataType::float32(), "scale");
    te::Tensor out = te::compute(
        {Expr(1), Expr(3), Expr(height), Expr(width), Expr(block)},
        [&](const std::vector<Var>& v) {
          Expr n = v[0], co = v[1], y = v[2], x = v[3], ci = v[4];
          Expr joined = select(likely(co < Expr(blocks[0])), a(n, min(co, Expr(blocks[0] - 1)), y, x, ci),
                               b(n, max(co - Expr(blocks[0]), Expr(0)), y, x, ci));
          return joined * scale(co, Expr(0), Expr(0), ci);
        },
        "out", {"ax0", "ax1", "ax2", "ax3", "ax4"}, "elemwise");
    Workload w;
    w.name = "blocked_concat_scale";
    w.inputs = {a, b, scale};
    w.outputs = {out};
    auto schedule = defaultElementwiseSchedule(w, target);
    QVERIFY(schedule.ok());
    QString text = loweredText(w, *schedule);
    QVERIFY2(text.contains("parallel for (rows, 0, 84)") && text.contains("if (rows < 56)") &&
                 text.contains("out[ramp(rows*448 + ax3*16, 1, 16)]") && !text.contains("select"),
             qPrintable(text));
    std::vector<std::vector<float>> inputs;
    std::vector<float> got = run(w, *schedule, inputs);
    std::vector<float> expected(got.size());
    int64_t plane = height * width * block;
    for (int64_t co = 0; co < 3; ++co)
      for (int64_t i = 0; i < plane; ++i) {
        float value = co < blocks[0] ? inputs[0][size_t(co * plane + i)] : inputs[1][size_t((co - blocks[0]) * plane + i)];
        expected[size_t(co * plane + i)] = value * inputs[2][size_t(co * block + i % block)];
      }
    compareAll(got, expected, 1e-6f);
  }

  void blockedActivationKeepsRowsOfTheBlock() {
    // EfficientNet's x * sigmoid(x) over NCHW16c: fused flat (split into vectors and parallel
    // tasks), every vector's index was divided back out of the flat index, some 50 integer
    // instructions per 8 floats; by rows it is one multiply-add per row and pixel.
    Target target;
    target.vectorBits = 32 * 8;
    target.cores = 2;
    Workload w = unaryElementwise(UnaryOp::Sigmoid, {1, 2, 56, 56, 16});
    auto schedule = defaultElementwiseSchedule(w, target);
    QVERIFY(schedule.ok());
    QString text = loweredText(w, *schedule);
    QVERIFY2(text.contains("parallel for (rows, 0, 112)") && text.contains("ramp(rows*896 + ax3*16, 1, 16)") &&
                 !text.contains("//"),
             qPrintable(text));
    std::vector<std::vector<float>> inputs;
    std::vector<float> got = run(w, *schedule, inputs);
    std::vector<float> expected(got.size());
    for (size_t i = 0; i < got.size(); ++i) expected[i] = 1.0f / (1.0f + std::exp(-inputs[0][i]));
    compareAll(got, expected, 1e-5f);
  }

  void elementwiseScheduleVectorizesAndParallelizes() {
    Target target;
    target.vectorBits = 32 * 16;
    target.cores = 2;
    Workload w = unaryElementwise(UnaryOp::Relu, {64, 1024});
    auto schedule = defaultElementwiseSchedule(w, target);
    QVERIFY(schedule.ok());
    QString text = loweredText(w, *schedule);
    QVERIFY2(text.contains("parallel for") && text.contains("ramp("), qPrintable(text));
  }
};

QTEST_GUILESS_MAIN(TestOps)
#include "test_ops.moc"
