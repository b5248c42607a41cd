// The Analyzer: constant bounds of expressions over bound variables, proofs (and the
// claims it must refuse to prove), and how bindings nest.
#include <QtTest>

#include "compiler/arith/Analyzer.h"
#include "core/ir/IR.h"

using namespace tessel;

namespace {

// The loop nest every case is asked about:
//   i in [0, 32), j in [0, 8), k in [-4, 4), n unknown, m in [0, n), l in [i, i + 4),
//   t = i*2 (a let).
struct Nest {
  Var i{"i"}, j{"j"}, k{"k"}, n{"n"}, m{"m"}, l{"l"}, t{"t"};
  Analyzer bound() const {
    Analyzer analyzer;
    analyzer.bind(i, Range::fromMinExtent(0, 32));
    analyzer.bind(j, Range::fromMinExtent(0, 8));
    analyzer.bind(k, Range::fromMinExtent(-4, 8));
    analyzer.bind(m, Range::fromMinExtent(0, n));
    analyzer.bind(l, Range::fromMinExtent(i, 4));
    analyzer.bind(t, i * 2);
    return analyzer;
  }
};
const Nest& nest() {
  static Nest instance;
  return instance;
}

// A table cell holding an expression (Expr's operator< builds IR, so Qt cannot hold it).
struct ExprRow {
  Expr expr;
};

}  // namespace

Q_DECLARE_METATYPE(ExprRow)

class TestArithAnalyzer : public QObject {
  Q_OBJECT
private slots:
  void constIntBound_data() {
    QTest::addColumn<ExprRow>("input");
    QTest::addColumn<QString>("expected");
    const Nest& v = nest();
    QTest::newRow("loop variable") << ExprRow{v.i} << "[0, 31]";
    QTest::newRow("split index") << ExprRow{v.i * 32 + v.j} << "[0, 999]";
    QTest::newRow("difference") << ExprRow{v.i - v.j} << "[-7, 31]";
    QTest::newRow("product of mixed signs") << ExprRow{v.i * v.k} << "[-124, 93]";
    QTest::newRow("negative scale") << ExprRow{v.j * -3 + 1} << "[-20, 1]";
    QTest::newRow("floordiv") << ExprRow{floordiv(v.i, 4)} << "[0, 7]";
    QTest::newRow("floordiv of negative range") << ExprRow{floordiv(v.k, 2)} << "[-2, 1]";
    QTest::newRow("truncdiv of negative range") << ExprRow{truncdiv(v.k, 3)} << "[-1, 1]";
    QTest::newRow("floormod across periods") << ExprRow{floormod(v.k, 8)} << "[0, 7]";
    QTest::newRow("floormod within a period") << ExprRow{floormod(v.i + 64, 32)} << "[0, 31]";
    QTest::newRow("floormod of small value") << ExprRow{floormod(v.j, 100)} << "[0, 7]";
    QTest::newRow("truncmod keeps sign") << ExprRow{truncmod(v.k, 3)} << "[-2, 2]";
    QTest::newRow("min") << ExprRow{min(v.i, 10)} << "[0, 10]";
    QTest::newRow("max") << ExprRow{max(v.i, v.j + 40)} << "[40, 47]";
    QTest::newRow("select takes both sides") << ExprRow{select(v.i < 5, v.j, Expr(100))} << "[0, 100]";
    QTest::newRow("unbound variable") << ExprRow{v.n} << "[-inf, +inf]";
    QTest::newRow("symbolic extent") << ExprRow{v.m} << "[0, +inf]";
    QTest::newRow("symbolic min") << ExprRow{v.l} << "[0, 34]";
    QTest::newRow("let value") << ExprRow{v.t + 1} << "[1, 63]";
    QTest::newRow("cancellation after simplify") << ExprRow{v.i * 32 + v.j - v.i * 32} << "[0, 7]";
    QTest::newRow("widening cast") << ExprRow{cast(DataType::int32(), v.i)} << "[0, 31]";
    QTest::newRow("narrowing cast that wraps") << ExprRow{cast(DataType::int8(), v.i * 10)} << "[-128, 127]";
    QTest::newRow("int32 variable") << ExprRow{Var("w", DataType::int32())} << "[-2147483648, 2147483647]";
    QTest::newRow("uint8 variable") << ExprRow{Var("u", DataType::uint8())} << "[0, 255]";
    QTest::newRow("undecided comparison") << ExprRow{v.i < 5} << "[0, 1]";
    QTest::newRow("decided comparison") << ExprRow{v.i < 40} << "[1, 1]";
    QTest::newRow("ramp lanes") << ExprRow{RampNode::make(Expr(v.i), Expr(2), 4)} << "[0, 37]";
    QTest::newRow("float is unbounded") << ExprRow{cast(DataType::float32(), v.i)} << "[-inf, +inf]";
    QTest::newRow("load is its type's range") << ExprRow{BufferLoadNode::make(Buffer("A", DataType::int8(), {Expr(4)}), {Expr(v.j)})}
                                              << "[-128, 127]";
  }
  void constIntBound() {
    QFETCH(ExprRow, input);
    QFETCH(QString, expected);
    Analyzer analyzer = nest().bound();
    QCOMPARE(QString::fromStdString(analyzer.constIntBound(input.expr).toString()), expected);
  }

  void canProve_data() {
    QTest::addColumn<ExprRow>("condition");
    QTest::addColumn<bool>("provable");
    const Nest& v = nest();
    Expr split = v.i * 32 + v.j;
    // True for every value, and proven.
    QTest::newRow("upper bound") << ExprRow{v.i < 32} << true;
    QTest::newRow("lower bound") << ExprRow{v.i >= 0} << true;
    QTest::newRow("split index in buffer") << ExprRow{split < 1000} << true;
    QTest::newRow("split index at most") << ExprRow{split <= 999} << true;
    QTest::newRow("split quotient") << ExprRow{eq(floordiv(split, 32), v.i)} << true;
    QTest::newRow("split remainder") << ExprRow{eq(floormod(split, 32), v.j)} << true;
    QTest::newRow("symbolic extent") << ExprRow{v.m < v.n} << true;
    QTest::newRow("symbolic extent, offset") << ExprRow{v.m + 1 <= v.n} << true;
    QTest::newRow("symbolic min") << ExprRow{v.l >= v.i} << true;
    QTest::newRow("symbolic min and extent") << ExprRow{v.l < v.i + 4} << true;
    QTest::newRow("let value") << ExprRow{v.t <= v.i * 2} << true;
    QTest::newRow("likely hint") << ExprRow{likely(v.i < 32)} << true;
    QTest::newRow("conjunction") << ExprRow{v.i < 32 && v.j < 8} << true;
    QTest::newRow("disjunction with one true side") << ExprRow{v.i < 32 || v.n < 0} << true;
    QTest::newRow("negation") << ExprRow{!(v.i >= 32)} << true;
    QTest::newRow("tautology over unbound") << ExprRow{v.n - v.n < 1} << true;
    // Not always true: must not be proven.
    QTest::newRow("off by one") << ExprRow{v.i < 31} << false;
    QTest::newRow("strictly positive") << ExprRow{v.i > 0} << false;
    QTest::newRow("split index past 999") << ExprRow{split < 999} << false;
    QTest::newRow("scaled index") << ExprRow{v.i * 4 + v.j < 124} << false;
    QTest::newRow("unbound variable") << ExprRow{v.n > 0} << false;
    QTest::newRow("symbolic extent too tight") << ExprRow{v.m < v.n - 1} << false;
    QTest::newRow("remainder is not the value") << ExprRow{eq(floormod(v.i, 8), v.i)} << false;
    QTest::newRow("two loop variables may meet") << ExprRow{ne(v.i, v.j)} << false;
    QTest::newRow("disjunction of false sides") << ExprRow{v.i < 31 || v.j < 7} << false;
    QTest::newRow("negative side of k") << ExprRow{v.k >= 0} << false;
    QTest::newRow("tail check with symbolic n") << ExprRow{split < v.n} << false;
  }
  void canProve() {
    QFETCH(ExprRow, condition);
    QFETCH(bool, provable);
    Analyzer analyzer = nest().bound();
    QCOMPARE(analyzer.canProve(condition.expr), provable);
  }

  void notABoolIsNotProven() {
    Analyzer analyzer;
    QVERIFY(!analyzer.canProve(Expr(1)));
    QVERIFY(!analyzer.canProve(Expr()));
    QVERIFY(analyzer.canProve(Expr(1) < Expr(2)));
  }

  void bindingsNestAndUnbindRestores() {
    Var i("i");
    Analyzer analyzer;
    QVERIFY(!analyzer.canProve(i < 8));
    analyzer.bind(i, Range::fromMinExtent(0, 8));
    QVERIFY(analyzer.canProve(i < 8));
    analyzer.bind(i, Range::fromMinExtent(0, 100));  // shadows the first fact
    QVERIFY(!analyzer.canProve(i < 8));
    QCOMPARE(QString::fromStdString(analyzer.constIntBound(i).toString()), QString("[0, 99]"));
    analyzer.unbind(i);  // the first fact comes back
    QVERIFY(analyzer.canProve(i < 8));
    analyzer.unbind(i);
    QVERIFY(!analyzer.canProve(i < 8));
    analyzer.unbind(i);  // unbinding an unbound variable is harmless
  }

  void boundsFollowDependentBindings() {
    // j's range is given in terms of i; rebinding i changes what is known about j.
    Var i("i"), j("j");
    Analyzer analyzer;
    analyzer.bind(j, Range::fromMinExtent(i * 4, 4));
    analyzer.bind(i, Range::fromMinExtent(0, 8));
    QCOMPARE(QString::fromStdString(analyzer.constIntBound(j).toString()), QString("[0, 31]"));
    analyzer.unbind(i);
    analyzer.bind(i, Range::fromMinExtent(2, 1));
    QCOMPARE(QString::fromStdString(analyzer.constIntBound(j).toString()), QString("[8, 11]"));
  }

  void selfReferentialBindingDoesNotHang() {
    Var i("i");
    Analyzer analyzer;
    analyzer.bind(i, Range::fromMinExtent(i, 4));
    QCOMPARE(QString::fromStdString(analyzer.constIntBound(i).toString()), QString("[-inf, +inf]"));
    QVERIFY(!analyzer.canProve(i < 4));
  }

  void simplifyUsesBindings() {
    Var i("i"), j("j");
    Analyzer analyzer;
    analyzer.bind(i, Range::fromMinExtent(0, 16));
    analyzer.bind(j, Expr(3));
    QCOMPARE(QString::fromStdString(toString(analyzer.simplify(min(i, 20) + j))), QString("i + 3"));
    Analyzer copy = analyzer;  // copies carry the bindings
    analyzer.unbind(i);
    QCOMPARE(QString::fromStdString(toString(copy.simplify(min(i, 20)))), QString("i"));
    QCOMPARE(QString::fromStdString(toString(analyzer.simplify(min(i, 20)))), QString("min(i, 20)"));
  }

  void quickBoundIsStructural() {
    Var i("i");
    Analyzer analyzer;
    analyzer.bind(i, Range::fromMinExtent(0, 10));
    // Without simplifying, i - i is only known to lie in [-9, 9]; constIntBound sees 0.
    QCOMPARE(QString::fromStdString(analyzer.quickBound(i - i).toString()), QString("[-9, 9]"));
    QCOMPARE(QString::fromStdString(analyzer.constIntBound(i - i).toString()), QString("[0, 0]"));
  }
};

QTEST_GUILESS_MAIN(TestArithAnalyzer)
#include "test_arith_analyzer.moc"
