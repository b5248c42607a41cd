// Symbolic interval evaluation for bound inference: which values an index takes while some
// loop variables range over their intervals and others stay symbolic.
#include <QtTest>

#include "compiler/arith/IntervalSet.h"
#include "core/ir/IR.h"

using namespace tessel;

namespace {

QString text(const Interval& interval) {
  auto end = [](const Expr& e, const char* infinity) {
    return e.defined() ? QString::fromStdString(toString(e)) : QString(infinity);
  };
  return "[" + end(interval.min, "-inf") + ", " + end(interval.max, "+inf") + "]";
}

// Loop variables: j in [0, 3], k in [0, 7], r in [-2, 2], s in [0, n - 1]; i and n stay
// symbolic.
struct Domains {
  Var i{"i"}, j{"j"}, k{"k"}, r{"r"}, s{"s"}, n{"n"};
  IntervalMap map() const {
    return {{j.get(), {Expr(0), Expr(3)}},
            {k.get(), {Expr(0), Expr(7)}},
            {r.get(), {Expr(-2), Expr(2)}},
            {s.get(), {Expr(0), n - 1}}};
  }
};
const Domains& domains() {
  static Domains instance;
  return instance;
}

struct ExprRow {
  Expr expr;
};

}  // namespace

Q_DECLARE_METATYPE(ExprRow)

class TestArithInterval : public QObject {
  Q_OBJECT
private slots:
  void evaluates_data() {
    QTest::addColumn<ExprRow>("input");
    QTest::addColumn<QString>("expected");
    const Domains& d = domains();
    Buffer A("A", DataType::int64(), {Expr(16)});
    QTest::newRow("symbolic outer, ranging inner") << ExprRow{d.i * 4 + d.j} << "[i*4, i*4 + 3]";
    QTest::newRow("no domain variable is a point") << ExprRow{d.i * 4 + 1} << "[i*4 + 1, i*4 + 1]";
    QTest::newRow("sum of ranges") << ExprRow{d.j + d.k} << "[0, 10]";
    QTest::newRow("difference of ranges") << ExprRow{d.j - d.k} << "[-7, 3]";
    QTest::newRow("scaled by a constant") << ExprRow{d.k * 8 + d.j * 2} << "[0, 62]";
    QTest::newRow("scaled by a negative constant") << ExprRow{d.r * -3} << "[-6, 6]";
    QTest::newRow("range times range, non-negative") << ExprRow{d.j * d.k} << "[0, 21]";
    QTest::newRow("range times range, mixed signs") << ExprRow{d.j * d.r} << "[-6, 6]";
    QTest::newRow("symbolic end") << ExprRow{d.s + 1} << "[1, n]";
    QTest::newRow("symbolic end scaled") << ExprRow{d.s * 2 + d.j} << "[0, n*2 + 1]";
    QTest::newRow("floordiv by constant") << ExprRow{floordiv(d.i * 8 + d.k, 4)} << "[i*2, i*2 + 1]";
    QTest::newRow("floordiv negative divisor") << ExprRow{floordiv(d.k, -2)} << "[-4, 0]";
    QTest::newRow("floormod within a period") << ExprRow{floormod(d.i * 8 + d.j, 8)} << "[0, 3]";
    QTest::newRow("floormod across periods") << ExprRow{floormod(d.j + d.k, 8)} << "[0, 7]";
    QTest::newRow("floormod already small") << ExprRow{floormod(d.j, 8)} << "[0, 3]";
    QTest::newRow("min") << ExprRow{min(d.k, 5)} << "[0, 5]";
    QTest::newRow("max with symbolic") << ExprRow{max(d.j, d.i)} << "[max(i, 0), max(i, 3)]";
    QTest::newRow("select unions") << ExprRow{select(d.j < 2, d.k, d.j + 10)} << "[0, 13]";
    QTest::newRow("widening cast") << ExprRow{cast(DataType::int64(), cast(DataType::int32(), d.k))} << "[0, 7]";
    QTest::newRow("let") << ExprRow{LetNode::make(Var("t"), d.j * 2, Var("u") + 0)} << "[u, u]";
    QTest::newRow("load of a ranging index is unbounded") << ExprRow{BufferLoadNode::make(A, {Expr(d.j)})} << "[-inf, +inf]";
    QTest::newRow("load of a fixed index is a point") << ExprRow{BufferLoadNode::make(A, {Expr(d.i)})} << "[A[i], A[i]]";
    QTest::newRow("product with unknown sign") << ExprRow{d.i * d.j} << "[-inf, +inf]";
    QTest::newRow("ramp") << ExprRow{RampNode::make(d.i * 8, Expr(1), 8)} << "[i*8, i*8 + 7]";
  }
  void evaluates() {
    QFETCH(ExprRow, input);
    QFETCH(QString, expected);
    QCOMPARE(text(evalInterval(input.expr, domains().map())), expected);
  }

  void letVariableNeverEscapes() {
    // The let's variable takes its value's interval; endpoints must not mention it.
    Var t("t");
    const Domains& d = domains();
    Interval interval = evalInterval(LetNode::make(t, d.j * 2, t + d.i), domains().map());
    QCOMPARE(text(interval), QString("[i, i + 6]"));
  }

  void domainsMayReferToEachOther() {
    // b ranges up to a, which itself ranges over [0, 7]: b covers [0, 7].
    Var a("a"), b("b"), i("i");
    IntervalMap nested{{a.get(), {Expr(0), Expr(7)}}, {b.get(), {Expr(0), Expr(a)}}};
    QCOMPARE(text(evalInterval(i * 8 + b, nested)), QString("[i*8, i*8 + 7]"));
    // Ranges defined in terms of each other say nothing.
    IntervalMap cycle{{a.get(), {Expr(0), Expr(b)}}, {b.get(), {Expr(0), Expr(a)}}};
    QCOMPARE(text(evalInterval(a + 1, cycle)), QString("[1, +inf]"));
  }

  void sharedSubexpressionsAreCheap() {
    // 2^40 terms as a tree, 40 nodes as a DAG.
    Var j("j");
    Expr shared = j;
    for (int k = 0; k < 40; ++k) shared = shared + shared;
    IntervalMap domain{{j.get(), {Expr(0), Expr(1)}}};
    QCOMPARE(text(evalInterval(shared - shared, domain)).left(4), QString("[-10"));
  }

  void pointsAndRanges() {
    Var i("i");
    Interval p = Interval::point(i * 2);
    QVERIFY(p.isPoint());
    QVERIFY(p.isBounded());
    QVERIFY(!Interval::everything().isBounded());
    Interval fromRange = Interval::fromRange(Range::fromMinExtent(i * 4, 4));
    QCOMPARE(text(fromRange), QString("[i*4, i*4 + 3]"));
    Range back = fromRange.toRange();
    QCOMPARE(QString::fromStdString(toString(back.min)), QString("i*4"));
    QCOMPARE(QString::fromStdString(toString(back.extent)), QString("4"));
    QVERIFY(!fromRange.isPoint());
  }

  void unionAndIntersection() {
    Var i("i"), n("n");
    Interval a{i * 4, i * 4 + 3}, b{i * 4 + 2, i * 4 + 9};
    QCOMPARE(text(unionOf(a, b)), QString("[i*4, i*4 + 9]"));
    QCOMPARE(text(intersectionOf(a, b)), QString("[i*4 + 2, i*4 + 3]"));
    Interval c{Expr(0), n};
    QCOMPARE(text(unionOf(a, c)), QString("[min(i*4, 0), max(i*4 + 3, n)]"));
    QCOMPARE(text(unionOf(a, Interval::everything())), QString("[-inf, +inf]"));
    QCOMPARE(text(intersectionOf(c, Interval{Expr(), Expr(10)})), QString("[0, min(n, 10)]"));
    QCOMPARE(text(unionOf(Interval{Expr(0), Expr(3)}, Interval{Expr(8), Expr(9)})), QString("[0, 9]"));
  }
};

QTEST_GUILESS_MAIN(TestArithInterval)
#include "test_arith_interval.moc"
