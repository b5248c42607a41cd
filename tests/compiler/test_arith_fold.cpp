// Constant folding for every type: integers wrap at their width, the four integer divisions
// round as documented, floats round to their precision, nothing undefined is folded.
#include <QtTest>

#include <cmath>
#include <limits>

#include "compiler/arith/ConstantFold.h"
#include "compiler/arith/Simplify.h"
#include "core/ir/IR.h"

using namespace tessel;

namespace {

// A table cell holding an expression (Expr's operator< builds IR, so Qt cannot hold it).
struct ExprRow {
  Expr expr;
};

Expr c(DataType t, double v) { return makeConst(t, v); }
QString text(const Expr& e) { return QString::fromStdString(toString(e)); }

}  // namespace

Q_DECLARE_METATYPE(ExprRow)

class TestArithFold : public QObject {
  Q_OBJECT
private slots:
  void folds_data() {
    QTest::addColumn<ExprRow>("input");
    QTest::addColumn<QString>("expected");
    const DataType i8 = DataType::int8(), i32 = DataType::int32(), u8 = DataType::uint8();
    const DataType u64 = DataType(DataType::Code::UInt, 64), f32 = DataType::float32(), f64 = DataType::float64();
    const DataType f16 = DataType::float16();
    const int64_t int64Max = std::numeric_limits<int64_t>::max();

    // Index (int64) arithmetic and the four divisions.
    QTest::newRow("add") << ExprRow{Expr(7) + Expr(5)} << "12";
    QTest::newRow("sub") << ExprRow{Expr(7) - Expr(12)} << "-5";
    QTest::newRow("mul") << ExprRow{Expr(-7) * Expr(6)} << "-42";
    QTest::newRow("floordiv rounds down") << ExprRow{floordiv(Expr(-7), Expr(2))} << "-4";
    QTest::newRow("floormod takes divisor's sign") << ExprRow{floormod(Expr(-7), Expr(2))} << "1";
    QTest::newRow("floordiv negative divisor") << ExprRow{floordiv(Expr(7), Expr(-2))} << "-4";
    QTest::newRow("floormod negative divisor") << ExprRow{floormod(Expr(7), Expr(-2))} << "-1";
    QTest::newRow("truncdiv rounds toward zero") << ExprRow{truncdiv(Expr(-7), Expr(2))} << "-3";
    QTest::newRow("truncmod takes dividend's sign") << ExprRow{truncmod(Expr(-7), Expr(2))} << "-1";
    QTest::newRow("truncmod negative divisor") << ExprRow{truncmod(Expr(7), Expr(-2))} << "1";
    QTest::newRow("exact division") << ExprRow{floordiv(Expr(-8), Expr(2))} << "-4";
    QTest::newRow("no floordiv by zero") << ExprRow{floordiv(Expr(7), Expr(0))} << "7//0";
    QTest::newRow("no floormod by zero") << ExprRow{floormod(Expr(7), Expr(0))} << "7 % 0";
    QTest::newRow("no truncdiv by zero") << ExprRow{truncdiv(Expr(7), Expr(0))} << "7/0";
    QTest::newRow("no truncmod by zero") << ExprRow{truncmod(Expr(7), Expr(0))} << "truncmod(7, 0)";
    QTest::newRow("int64 wraps around") << ExprRow{Expr(int64Max) + Expr(1)} << "-9223372036854775808";
    QTest::newRow("min") << ExprRow{min(Expr(3), Expr(-4))} << "-4";
    QTest::newRow("max") << ExprRow{max(Expr(3), Expr(-4))} << "3";

    // Narrow integers wrap at their width.
    QTest::newRow("int8 wraps") << ExprRow{c(i8, 100) + c(i8, 100)} << "int8(-56)";
    QTest::newRow("int8 min / -1 wraps") << ExprRow{truncdiv(c(i8, -128), c(i8, -1))} << "int8(-128)";
    QTest::newRow("int8 floordiv") << ExprRow{floordiv(c(i8, -128), c(i8, 3))} << "int8(-43)";
    QTest::newRow("int32 wraps") << ExprRow{c(i32, 2147483647) + c(i32, 1)} << "int32(-2147483648)";
    QTest::newRow("int32 mul wraps") << ExprRow{c(i32, 65536) * c(i32, 65536)} << "int32(0)";
    QTest::newRow("uint8 wraps up") << ExprRow{c(u8, 250) + c(u8, 10)} << "uint8(4)";
    QTest::newRow("uint8 wraps down") << ExprRow{c(u8, 3) - c(u8, 5)} << "uint8(254)";
    QTest::newRow("uint8 compares unsigned") << ExprRow{(c(u8, 3) - c(u8, 5)) > c(u8, 100)} << "true";
    QTest::newRow("uint8 division is unsigned") << ExprRow{floordiv(c(u8, 3) - c(u8, 5), c(u8, 2))} << "uint8(127)";
    QTest::newRow("uint64 wraps to zero") << ExprRow{maxValue(u64) + c(u64, 1)} << "uint64(0)";
    QTest::newRow("uint64 max is large") << ExprRow{maxValue(u64) > c(u64, 1)} << "true";

    // Floats round to their own precision.
    QTest::newRow("float32 rounds") << ExprRow{Expr(0.1f) + Expr(0.2f)} << "0.3f";
    QTest::newRow("float64 rounds") << ExprRow{Expr(0.1) + Expr(0.2)} << "0.30000000000000004";
    QTest::newRow("float32 division") << ExprRow{Expr(1.0f) / Expr(3.0f)} << "0.33333334f";
    QTest::newRow("float no division by zero") << ExprRow{Expr(1.0f) / Expr(0.0f)} << "1.0f/0.0f";
    QTest::newRow("float16 loses small addend") << ExprRow{c(f16, 1.0) + c(f16, 0.0001)} << "float16(1.0)";
    QTest::newRow("float16 overflows to inf") << ExprRow{c(f16, 65504) + c(f16, 32)} << "float16(inf)";
    QTest::newRow("float16 keeps max") << ExprRow{c(f16, 65504) + c(f16, 8)} << "float16(65504.0)";
    QTest::newRow("float floordiv") << ExprRow{floordiv(c(f32, -7), c(f32, 2))} << "-4.0f";
    QTest::newRow("float compare") << ExprRow{Expr(1.5f) < Expr(2.5f)} << "true";
    QTest::newRow("float min") << ExprRow{min(Expr(1.5), Expr(-2.5))} << "-2.5";

    // Bools.
    QTest::newRow("and") << ExprRow{(Expr(1) < Expr(2)) && (Expr(3) < Expr(2))} << "false";
    QTest::newRow("or") << ExprRow{(Expr(1) < Expr(2)) || (Expr(3) < Expr(2))} << "true";
    QTest::newRow("not") << ExprRow{!(Expr(1) < Expr(2))} << "false";
    QTest::newRow("equal") << ExprRow{eq(Expr(4), Expr(4))} << "true";
    QTest::newRow("select") << ExprRow{select(ne(Expr(4), Expr(4)), Expr(1), Expr(2))} << "2";

    // Casts.
    QTest::newRow("cast narrows with wraparound") << ExprRow{CastNode::make(i8, Expr(300))} << "int8(44)";
    QTest::newRow("cast signed to unsigned") << ExprRow{CastNode::make(u8, c(i8, -1))} << "uint8(255)";
    QTest::newRow("cast unsigned widens") << ExprRow{CastNode::make(i32, c(u8, 255))} << "int32(255)";
    QTest::newRow("cast float truncates") << ExprRow{CastNode::make(i32, Expr(2.7f))} << "int32(2)";
    QTest::newRow("cast negative float truncates") << ExprRow{CastNode::make(i32, Expr(-2.7f))} << "int32(-2)";
    QTest::newRow("cast out of range stays") << ExprRow{CastNode::make(i32, Expr(1e10f))} << "int32(1e+10f)";
    QTest::newRow("cast int to float") << ExprRow{CastNode::make(f32, Expr(3))} << "3.0f";
    QTest::newRow("cast large int rounds") << ExprRow{CastNode::make(f32, Expr(16777217))} << "16777216.0f";
    QTest::newRow("cast to bool") << ExprRow{CastNode::make(DataType::boolean(), Expr(5))} << "true";
    QTest::newRow("cast double to float") << ExprRow{CastNode::make(f32, Expr(0.1))} << "0.1f";
    QTest::newRow("cast float to double") << ExprRow{CastNode::make(f64, Expr(0.1f))} << "0.10000000149011612";

    // Intrinsics that every backend computes exactly; others stay.
    QTest::newRow("floor") << ExprRow{call(Intrinsic::Floor, {Expr(2.5f)})} << "2.0f";
    QTest::newRow("sqrt") << ExprRow{sqrt(Expr(4.0))} << "2.0";
    QTest::newRow("no sqrt of negative") << ExprRow{sqrt(Expr(-4.0))} << "sqrt(-4.0)";
    QTest::newRow("exp stays") << ExprRow{exp(Expr(1.0f))} << "exp(1.0f)";
  }
  void folds() {
    QFETCH(ExprRow, input);
    QFETCH(QString, expected);
    Expr folded = simplify(input.expr);
    QCOMPARE(text(folded), expected);
    QCOMPARE(folded.dtype(), input.expr.dtype());
  }

  void nanIsNotFoldedAway() {
    Expr nan = makeConst(DataType::float32(), std::numeric_limits<double>::quiet_NaN());
    QCOMPARE(text(simplify(eq(nan, nan))), QString("false"));
    QCOMPARE(text(simplify(nan < Expr(1.0f))), QString("false"));
    QCOMPARE(text(simplify(ne(nan, nan))), QString("true"));
    // Backends disagree on min(NaN, x): leave it to run time.
    QVERIFY(simplify(min(nan, Expr(1.0f))).as<MinNode>());
    QVERIFY(!simplify(CastNode::make(DataType::int32(), nan)).as<IntImmNode>());
  }

  void bfloat16RoundsToEightBits() {
    DataType bf16 = DataType::bfloat16();
    auto value = [](const Expr& e) { return e.as<FloatImmNode>() ? e.as<FloatImmNode>()->value : -1.0; };
    QCOMPARE(value(simplify(c(bf16, 256) + c(bf16, 1))), 256.0);  // 257 needs 9 bits
    QCOMPARE(value(simplify(c(bf16, 256) + c(bf16, 2))), 258.0);
    QCOMPARE(value(simplify(c(bf16, 1) + c(bf16, 0.001))), 1.0);
    QCOMPARE(simplify(c(bf16, 1) + c(bf16, 2)).dtype(), bf16);
  }

  void unnormalizedConstantsAreNormalized() {
    // The core cast() builder makes int8(300) without wrapping; simplify shows its real value.
    Expr raw = IntImmNode::make(DataType::int8(), 300);
    QCOMPARE(text(simplify(raw)), QString("int8(44)"));
  }

  void helpersWrapAndRound() {
    QCOMPARE(wrapToType(300, DataType::int8()), int64_t(44));
    QCOMPARE(wrapToType(-1, DataType::uint8()), int64_t(255));
    QCOMPARE(wrapToType(-1, DataType(DataType::Code::UInt, 64)), int64_t(-1));
    QCOMPARE(wrapToType(2, DataType::boolean()), int64_t(1));
    QCOMPARE(roundToFloatType(0.1, DataType::float32()), double(0.1f));
    QCOMPARE(roundToFloatType(65520.0, DataType::float16()), std::numeric_limits<double>::infinity());
    QCOMPARE(roundToFloatType(1e-8, DataType::float16()), std::ldexp(1.0, -24) * std::nearbyint(1e-8 / std::ldexp(1.0, -24)));
    QCOMPARE(text(makeIntConst(DataType::int32(4), 7)), QString("broadcast(int32(7), 4)"));
  }
};

QTEST_GUILESS_MAIN(TestArithFold)
#include "test_arith_fold.moc"
