// compute_at of a producer with several readers, all computed inside the chosen loop: a
// softmax computed row by row, each intermediate only one row long.
#include <QtTest>

#include <cmath>
#include <random>

#include "compiler/lower/Build.h"
#include "core/ir/IROperators.h"
#include "core/ir/IRPrinter.h"
#include "runtime/NDArray.h"

using namespace tessel;

namespace {
struct Softmax {
  int64_t rows, cols;
  te::Tensor A, M, E, S, O;
  Softmax(int64_t r, int64_t c) : rows(r), cols(c) {
    A = te::placeholder({Expr(rows), Expr(cols)}, DataType::float32(), "A");
    IterVar j1 = te::reduceAxis(Expr(cols), "j");
    M = te::compute({Expr(rows)}, [&](Var i) { return te::maximum(A(i, j1), {j1}); }, "M");
    E = te::compute({Expr(rows), Expr(cols)}, [&](Var i, Var j) { return exp(A(i, j) - M(i)); }, "E");
    IterVar j2 = te::reduceAxis(Expr(cols), "j");
    S = te::compute({Expr(rows)}, [&](Var i) { return te::sum(E(i, j2), {j2}); }, "S");
    O = te::compute({Expr(rows), Expr(cols)}, [&](Var i, Var j) { return E(i, j) / S(i); }, "O");
  }
};
}  // namespace

class TestComputeAtShared : public QObject {
  Q_OBJECT
private slots:
  void softmaxRunsRowByRow() {
    Softmax sm(37, 53);
    Schedule s({sm.O});
    // Readers first: E is read by S and O, so S goes inside O's row loop before E does.
    for (Status status : {s.computeAt("S", "O", "i"), s.computeAt("E", "O", "i"), s.computeAt("M", "O", "i")})
      QVERIFY2(status.ok(), status.ok() ? "" : status.error().toString().c_str());

    auto built = build(s, {sm.A, sm.O}, "softmax");
    QVERIFY2(built.ok(), built.ok() ? "" : built.error().toString().c_str());
    // Every intermediate is one row (or one element) long.
    QString text = QString::fromStdString(toString(built->lowered.func));
    QVERIFY2(text.contains("allocate E: float32[53]") && text.contains("allocate M: float32[1]") &&
                 text.contains("allocate S: float32[1]"),
             qPrintable(text));

    std::mt19937 rng(3);
    std::uniform_real_distribution<float> uniform(-20.0f, 20.0f);
    auto a = runtime::NDArray::empty({37, 53}, runtime::DataType::float32());
    auto o = runtime::NDArray::empty({37, 53}, runtime::DataType::float32());
    for (float& v : a.values<float>()) v = uniform(rng);
    built->function(a, o);
    const float* in = a.dataAs<float>();
    const float* out = o.dataAs<float>();
    for (int i = 0; i < 37; ++i) {
      float m = -INFINITY;
      for (int j = 0; j < 53; ++j) m = std::max(m, in[i * 53 + j]);
      double sum = 0;
      for (int j = 0; j < 53; ++j) sum += std::exp(double(in[i * 53 + j]) - m);
      for (int j = 0; j < 53; ++j) {
        double expected = std::exp(double(in[i * 53 + j]) - m) / sum;
        QVERIFY2(std::fabs(out[i * 53 + j] - expected) <= 1e-6 + 1e-5 * expected,
                 qPrintable(QString("row %1 column %2: %3 vs %4").arg(i).arg(j).arg(out[i * 53 + j]).arg(expected)));
      }
    }
  }

  void aReaderOutsideTheLoopIsStillRefused() {
    Softmax sm(4, 8);
    Schedule s({sm.O});
    // S is still computed at root, so E cannot move inside O's rows yet.
    Status status = s.computeAt("E", "O", "i");
    QVERIFY(!status.ok());
    QVERIFY2(QString::fromStdString(status.error().toString()).contains("E is also read by S, which is outside loop i of O"),
             status.error().toString().c_str());
    QVERIFY(QString::fromStdString(status.error().hint).contains("compute S at O, i"));
  }
};

QTEST_GUILESS_MAIN(TestComputeAtShared)
#include "test_compute_at_shared.moc"
