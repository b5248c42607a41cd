// Expression simplification: canonical forms, index cleanup after split and fuse, vector
// rules, and the rule names a viewer shows. Expected results are the IR printer's text.
#include <QtTest>

#include "compiler/arith/Analyzer.h"
#include "compiler/arith/RewriteRules.h"
#include "compiler/arith/Simplify.h"
#include "core/ir/IR.h"

using namespace tessel;

namespace {

// A table cell holding an expression. Expr itself cannot be one: Qt would take its
// operator< (which builds an IR comparison) for an ordering.
struct ExprRow {
  tessel::Expr expr;
};


QString text(const Expr& e) { return QString::fromStdString(toString(e)); }

// Loop variables of a split (i = io*32 + ii) and of a fuse (f over i in [0, 16), j in [0, 64)).
struct Loops {
  Var io{"io"}, ii{"ii"}, f{"f"}, fo{"fo"}, fi{"fi"}, n{"n"};
  void bindAll(Analyzer& analyzer) const {
    analyzer.bind(io, Range::fromMinExtent(0, 32));
    analyzer.bind(ii, Range::fromMinExtent(0, 32));
    analyzer.bind(f, Range::fromMinExtent(0, 16 * 64));
    analyzer.bind(fo, Range::fromMinExtent(0, 128));
    analyzer.bind(fi, Range::fromMinExtent(0, 8));
  }
};
const Loops& loops() {
  static Loops instance;
  return instance;
}

}  // namespace

Q_DECLARE_METATYPE(ExprRow)

class TestArithSimplify : public QObject {
  Q_OBJECT
private slots:
  void canonicalizes_data() {
    QTest::addColumn<ExprRow>("input");
    QTest::addColumn<QString>("expected");
    Var x("x"), y("y"), z("z"), flag("flag", DataType::boolean());
    QTest::newRow("constant moves right") << ExprRow{(Expr(3) + x)} << "x + 3";
    QTest::newRow("constant factor moves right") << ExprRow{(Expr(4) * x)} << "x*4";
    QTest::newRow("constant factors multiply") << ExprRow{(x * 4 * 8)} << "x*32";
    QTest::newRow("constant terms add") << ExprRow{((x + 3) + 5)} << "x + 8";
    QTest::newRow("constants gather outward") << ExprRow{((x + 3) + (y + 5))} << "x + y + 8";
    QTest::newRow("adding a negative is subtracting") << ExprRow{((x + 3) - 5)} << "x - 2";
    QTest::newRow("subtracting a negative is adding") << ExprRow{(x - Expr(-4))} << "x + 4";
    QTest::newRow("x - x") << ExprRow{(x - x)} << "0";
    QTest::newRow("x + 0") << ExprRow{(x + 0)} << "x";
    QTest::newRow("x*1") << ExprRow{(x * 1)} << "x";
    QTest::newRow("x*0") << ExprRow{(x * 0)} << "0";
    QTest::newRow("split term cancels") << ExprRow{((x * 32 + y) - x * 32)} << "y";
    QTest::newRow("like terms merge") << ExprRow{(x * 3 + y + x * 5)} << "x*8 + y";
    QTest::newRow("terms cancel across a sum") << ExprRow{((x + y + z) - (y + x))} << "z";
    QTest::newRow("distributes constant") << ExprRow{((x + 3) * 4)} << "x*4 + 12";
    QTest::newRow("distributed then cancels") << ExprRow{((x + 3) * 4 - x * 4)} << "12";
    QTest::newRow("x + x") << ExprRow{(x + x)} << "x*2";
    QTest::newRow("nested strides flatten") << ExprRow{((x * 16 + y) * 8 + z) * 4} << "x*512 + y*32 + z*4";
    QTest::newRow("sum times constant stays") << ExprRow{(x + y) * 4} << "(x + y)*4";
    QTest::newRow("subtraction goes last") << ExprRow{(x - y) + z} << "x + z - y";
    QTest::newRow("min of itself") << ExprRow{min(x, x)} << "x";
    QTest::newRow("min orders by offset") << ExprRow{min(x + 3, x)} << "x";
    QTest::newRow("max orders by offset") << ExprRow{max(x - 2, x + 5)} << "x + 5";
    QTest::newRow("nested min constants") << ExprRow{min(min(x, 5), 3)} << "min(x, 3)";
    QTest::newRow("comparison constant moves right") << ExprRow{(Expr(3) < x)} << "x > 3";
    QTest::newRow("comparison subtracts constant") << ExprRow{(x + 4 < 10)} << "x < 6";
    QTest::newRow("comparison cancels shared terms") << ExprRow{(x * 4 + y < x * 4 + 4)} << "y < 4";
    QTest::newRow("comparison constants move right") << ExprRow{(x + 3 < y + 5)} << "x < y + 2";
    QTest::newRow("comparison offset moves right") << ExprRow{(x + 1 <= y)} << "x <= y - 1";
    QTest::newRow("equality offset moves right") << ExprRow{eq(x - 2, y)} << "x == y + 2";
    QTest::newRow("scaled comparison") << ExprRow{(x * 4 < 10)} << "x < 3";
    QTest::newRow("x < x") << ExprRow{(x < x)} << "false";
    QTest::newRow("x <= x") << ExprRow{(x <= x)} << "true";
    QTest::newRow("negated comparison") << ExprRow{!(x < y)} << "x >= y";
    QTest::newRow("and with true") << ExprRow{((x < y) && (Expr(1) < Expr(2)))} << "x < y";
    QTest::newRow("or with true") << ExprRow{((x < y) || (Expr(1) < Expr(2)))} << "true";
    QTest::newRow("select constant condition") << ExprRow{select(Expr(2) > Expr(1), x, y)} << "x";
    QTest::newRow("select same branches") << ExprRow{select(x < y, z, z)} << "z";
    QTest::newRow("select negated condition") << ExprRow{select(!flag, y, z)} << "select(flag, z, y)";
    QTest::newRow("negated comparison in select") << ExprRow{select(!(x < y), y, z)} << "select(x >= y, y, z)";
    QTest::newRow("likely(true)") << ExprRow{likely(Expr(1) < Expr(2))} << "true";
    QTest::newRow("fused index rebuilt") << ExprRow{(floordiv(x, 64) * 64 + floormod(x, 64))} << "x";
    QTest::newRow("fused index of three axes rebuilt")
        << ExprRow{(floordiv(x, 196) * 196 + floordiv(floormod(x, 196), 14) * 14 + floormod(x, 14))} << "x";
    QTest::newRow("inner digits rebuilt") << ExprRow{(floordiv(floormod(x, 196), 14) * 14 + floormod(x, 14))}
                                          << "x % 196";
    QTest::newRow("floormod is the remainder") << ExprRow{(x - floordiv(x, 8) * 8)} << "x % 8";
    QTest::newRow("nested floordiv") << ExprRow{floordiv(floordiv(x, 4), 8)} << "x//32";
    QTest::newRow("floordiv of multiple") << ExprRow{floordiv(x * 64, 16)} << "x*4";
    QTest::newRow("floormod of multiple") << ExprRow{floormod(x * 64, 16)} << "0";
    QTest::newRow("floormod of period shift") << ExprRow{floormod(x + 35, 32)} << "(x + 3) % 32";
    QTest::newRow("floordiv by one") << ExprRow{floordiv(x, 1)} << "x";
    QTest::newRow("stays when nothing applies") << ExprRow{(x * y + z)} << "x*y + z";
  }
  void canonicalizes() {
    QFETCH(ExprRow, input);
    QFETCH(QString, expected);
    QCOMPARE(text(simplify(input.expr)), expected);
  }

  void cleansUpSplitAndFuseIndices_data() {
    QTest::addColumn<ExprRow>("input");
    QTest::addColumn<QString>("expected");
    const Loops& l = loops();
    Expr i = l.io * 32 + l.ii;  // split i by 32
    QTest::newRow("floordiv of split index") << ExprRow{floordiv(i, 32)} << "io";
    QTest::newRow("floormod of split index") << ExprRow{floormod(i, 32)} << "ii";
    QTest::newRow("floordiv by a divisor of the stride") << ExprRow{floordiv(i, 8)} << "io*4 + ii//8";
    QTest::newRow("split index in bounds") << ExprRow{(i < 1024)} << "true";
    QTest::newRow("split index not always below 1000") << ExprRow{(i < 1000)} << "io*32 + ii < 1000";
    QTest::newRow("floordiv of small value") << ExprRow{floordiv(l.ii, 64)} << "0";
    QTest::newRow("floormod of small value") << ExprRow{floormod(l.ii, 64)} << "ii";
    QTest::newRow("fused row") << ExprRow{floordiv(l.f, 64)} << "f//64";
    QTest::newRow("fused row bound") << ExprRow{(floordiv(l.f, 64) < 16)} << "true";
    QTest::newRow("fused column bound") << ExprRow{(floormod(l.f, 64) < 64)} << "true";
    QTest::newRow("fused then split: row") << ExprRow{floordiv(l.fo * 8 + l.fi, 64)} << "fo//8";
    QTest::newRow("fused then split: column") << ExprRow{floormod(l.fo * 8 + l.fi, 64)} << "fo % 8*8 + fi";
    QTest::newRow("three-level index: quotient") << ExprRow{floordiv(l.fo * 256 + l.ii * 8 + l.fi, 64)} << "fo*4 + ii//8";
    QTest::newRow("three-level index: remainder") << ExprRow{floormod(l.fo * 256 + l.ii * 8 + l.fi, 64)} << "ii % 8*8 + fi";
    QTest::newRow("flattened split index") << ExprRow{floordiv((l.io * 4 + l.fi) * 8, 32)} << "io + fi//4";
    QTest::newRow("inner range too wide to split") << ExprRow{floordiv(l.fi * 8 + l.ii, 32)} << "(fi*8 + ii)//32";
    QTest::newRow("min decided by bounds") << ExprRow{min(l.ii, 40)} << "ii";
    QTest::newRow("max decided by bounds") << ExprRow{max(l.ii + 1, 0)} << "ii + 1";
    QTest::newRow("truncdiv of non-negative") << ExprRow{truncdiv(i, 32)} << "io";
    QTest::newRow("truncmod of non-negative") << ExprRow{truncmod(i, 32)} << "ii";
    QTest::newRow("symbolic tail stays") << ExprRow{(i < l.n)} << "io*32 + ii < n";
  }
  void cleansUpSplitAndFuseIndices() {
    QFETCH(ExprRow, input);
    QFETCH(QString, expected);
    Analyzer analyzer;
    loops().bindAll(analyzer);
    QCOMPARE(text(analyzer.simplify(input.expr)), expected);
  }

  void vectorRules_data() {
    QTest::addColumn<ExprRow>("input");
    QTest::addColumn<QString>("expected");
    Var x("x"), y("y");
    Expr r1 = RampNode::make(x, Expr(1), 8), r2 = RampNode::make(y, Expr(2), 8);
    Expr bx = BroadcastNode::make(x, 8), b4 = BroadcastNode::make(Expr(4), 8);
    QTest::newRow("ramp + ramp") << ExprRow{(r1 + r2)} << "ramp(x + y, 3, 8)";
    QTest::newRow("ramp + broadcast") << ExprRow{(r1 + bx)} << "ramp(x*2, 1, 8)";
    QTest::newRow("broadcast + ramp") << ExprRow{(bx + r2)} << "ramp(x + y, 2, 8)";
    QTest::newRow("ramp * broadcast constant") << ExprRow{(r1 * b4)} << "ramp(x*4, 4, 8)";
    QTest::newRow("broadcast op broadcast") << ExprRow{(bx * b4)} << "broadcast(x*4, 8)";
    QTest::newRow("broadcast constants fold") << ExprRow{(b4 + b4)} << "broadcast(8, 8)";
    QTest::newRow("ramp of stride zero") << ExprRow{RampNode::make(x, Expr(0), 4)} << "broadcast(x, 4)";
    QTest::newRow("ramp - ramp") << ExprRow{(r2 - r1)} << "ramp(y - x, 1, 8)";
  }
  void vectorRules() {
    QFETCH(ExprRow, input);
    QFETCH(QString, expected);
    QCOMPARE(text(simplify(input.expr)), expected);
  }

  void vectorComparisonDecidedByLaneBounds() {
    Var i("i");
    Analyzer analyzer;
    analyzer.bind(i, Range::fromMinExtent(0, 4));
    // Lanes i*8 .. i*8 + 7 with i < 4 are all below 32.
    Expr lanes = RampNode::make(i * 8, Expr(1), 8);
    Expr inBounds = lanes < BroadcastNode::make(Expr(32), 8);
    QCOMPARE(text(analyzer.simplify(inBounds)), QString("broadcast(true, 8)"));
    QVERIFY(analyzer.canProve(inBounds));
  }

  void vectorizedSplitIndices() {
    // ii of a split by 8 vectorized: the lanes of io*8 + ii stay within one block of 8.
    Var io("io"), k("k");
    Analyzer analyzer;
    analyzer.bind(k, Range::fromMinExtent(0, 4));
    Expr lanes = RampNode::make(io * 8, Expr(1), 8);
    Expr eight = BroadcastNode::make(Expr(8), 8);
    QCOMPARE(text(analyzer.simplify(floordiv(lanes, eight))), QString("broadcast(io, 8)"));
    QCOMPARE(text(analyzer.simplify(floormod(lanes, eight))), QString("ramp(0, 1, 8)"));
    // Starting at io*8 + k (k < 4) the lanes cross into the next block: nothing to do.
    Expr shifted = RampNode::make(io * 8 + k, Expr(1), 8);
    QCOMPARE(text(analyzer.simplify(floordiv(shifted, eight))), QString("ramp(io*8 + k, 1, 8)//broadcast(8, 8)"));
    // Four lanes from io*8 + k with k < 4 do fit.
    Expr four = RampNode::make(io * 8 + k, Expr(1), 4);
    QCOMPARE(text(analyzer.simplify(floormod(four, BroadcastNode::make(Expr(8), 4)))), QString("ramp(k, 1, 4)"));
  }

  void resultKeepsTheType() {
    Var x("x", DataType::int32());
    Expr e = simplify((x + 3) * 4 - x * 4);
    QCOMPARE(e.dtype(), DataType::int32());
    QCOMPARE(text(e), QString("int32(12)"));
    Var v("v", DataType::float32(4));
    QCOMPARE(simplify(v * 1.0f).dtype(), DataType::float32(4));
  }

  void unchangedExpressionKeepsItsHandle() {
    Var x("x"), y("y");
    Expr e = x * y + 1;
    QVERIFY(simplify(e).same(e));
  }

  void floatsAreNotReassociated() {
    // (x + 1) + 2 and x + 3 round differently for large x; float rules must not merge them.
    Var x("x", DataType::float32());
    QCOMPARE(text(simplify((x + 1.0f) + 2.0f)), QString("x + 1.0f + 2.0f"));
    QCOMPARE(text(simplify(x - x)), QString("x - x"));  // NaN and inf make it not 0
    QCOMPARE(text(simplify(x * 0.0f)), QString("x*0.0f"));
    QCOMPARE(text(simplify(x * 1.0f)), QString("x"));
    QCOMPARE(text(simplify(Expr(2.0f) * x)), QString("x*2.0f"));
  }

  void unsignedArithmeticKeepsWraparound() {
    // For uint8, x + 1 < 10 is not x < 9 (x = 255 wraps to 0): the signed rule must not fire.
    Var x("x", DataType::uint8());
    QCOMPARE(text(simplify(x + 1 < 10)), QString("x + uint8(1) < uint8(10)"));
    // Cancellation holds in wraparound arithmetic.
    QCOMPARE(text(simplify((x + 7) - x)), QString("uint8(7)"));
  }

  void ruleSetsAreNamedAndCounted() {
    resetRewriteRuleStats();
    Var x("x");
    RewriteTrace trace;
    simplify((x + 3) + 5);
    QVERIFY(!trace.firings().empty());
    bool sawAddRule = false;
    for (auto& firing : trace.firings())
      if (firing.ruleSet == "add" && firing.rule == "x + c0 + c1 -> x + (c0 + c1)") sawAddRule = true;
    QVERIFY2(sawAddRule, "the constant-gathering add rule should be reported by name");
    bool counted = false;
    for (auto& stat : rewriteRuleStats())
      if (stat.rule == "x + c0 + c1 -> x + (c0 + c1)" && stat.hits > 0) counted = true;
    QVERIFY(counted);
  }

  void ruleTextShowsConditions() {
    bool found = false;
    for (auto& stat : rewriteRuleStats()) {
      if (stat.ruleSet == "floordiv" && stat.rule.find("if c0 > 0 && lowerBound(x) >= 0") != std::string::npos)
        found = true;
    }
    QVERIFY(found);
  }

  void largeSumsStayFast() {
    // A long chain of additions and a deeply shared DAG must not blow up.
    Var x("x");
    Expr sum = x;
    for (int k = 0; k < 2000; ++k) sum = sum + (x * (k % 7) + 1);
    Expr simplified = simplify(sum);
    QVERIFY(simplified.defined());
    Expr shared = x;
    for (int k = 0; k < 40; ++k) shared = shared + shared;  // 2^40 terms as a tree
    QVERIFY(simplify(shared).defined());
  }
};

QTEST_GUILESS_MAIN(TestArithSimplify)
#include "test_arith_simplify.moc"
