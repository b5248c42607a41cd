// Loop IR construction, printing, structural equality and hashing.
#include <QtTest>

#include "core/ir/IR.h"

using namespace tessel;

class TestIR : public QObject {
  Q_OBJECT
private slots:
  void printsLoopNestReadably() {
    Var i("i"), j("j");
    Buffer A("A", DataType::float32(), {Expr(64), Expr(32)});
    Buffer C("C", DataType::float32(), {Expr(64), Expr(32)});
    Stmt store = BufferStoreNode::make(C, BufferLoadNode::make(A, {i, j}) * 2.0f + 1.0f, {i, j});
    Stmt nest = ForNode::make(i, 0, 64, ForKind::Parallel, ForNode::make(j, 0, 32, ForKind::Vectorized, store));
    QCOMPARE(QString::fromStdString(toString(PrimFunc("scale", {A, C}, nest))),
             QString("func scale(A: float32[64, 32], C: float32[64, 32]) {\n"
                     "  parallel for (i, 0, 64) {\n"
                     "    vectorized for (j, 0, 32) {\n"
                     "      C[i, j] = A[i, j]*2.0f + 1.0f\n"
                     "    }\n"
                     "  }\n"
                     "}\n"));
  }

  void printsMinimalParentheses_data() {
    QTest::addColumn<QString>("expected");
    QTest::addColumn<int>("which");
    QTest::newRow("sub keeps right parens") << "i*32 + j - (k - 1)" << 0;
    QTest::newRow("floordiv and mod") << "i//4 % 3 < j && !(k > 2)" << 1;
    QTest::newRow("mul of sum") << "(i + j)*k" << 2;
  }
  void printsMinimalParentheses() {
    QFETCH(QString, expected);
    QFETCH(int, which);
    Var i("i"), j("j"), k("k");
    Expr e = which == 0 ? (i * 32 + j) - (k - 1) : which == 1 ? (floordiv(i, 4) % 3 < j && !(k > 2)) : (i + j) * k;
    QCOMPARE(QString::fromStdString(toString(e)), expected);
  }

  void printsSixteenBitFloatConstantsWithTheirType() {
    QCOMPARE(QString::fromStdString(toString(FloatImmNode::make(DataType::bfloat16(), 1.5))), QString("bfloat16(1.5)"));
    QCOMPARE(QString::fromStdString(toString(FloatImmNode::make(DataType::float16(), 2.0))), QString("float16(2.0)"));
  }

  void distinctVariablesWithOneNameGetDistinctNames() {
    Var a("i"), b("i");
    QCOMPARE(QString::fromStdString(toString(a + b)), QString("i + i_1"));
  }

  void equalityIsUpToRenaming() {
    Var i("i"), j("j"), x("x");
    Buffer A("A", DataType::float32(), {Expr(8)});
    auto loop = [&](Var v) {
      return ForNode::make(v, 0, 8, ForKind::Serial, BufferStoreNode::make(A, 1.0f, {v}));
    };
    QVERIFY(structuralEqual(loop(i), loop(j)));
    QCOMPARE(structuralHash(loop(i)), structuralHash(loop(j)));
    QVERIFY(!structuralEqual(i + j, x + x));
    // Free variables are themselves only: a condition on x is not a condition on y.
    QVERIFY(!structuralEqual(i + j, x + i));
    QVERIFY(!structuralEqual(i >= 1 && i < 5, j >= 1 && j < 5));
    QVERIFY(structuralEqual(i + j, i + j));
    // A variable defined inside (here a let) may have another name.
    QVERIFY(structuralEqual(LetNode::make(x, i, x * 2), LetNode::make(j, i, j * 2)));
    QVERIFY(!structuralEqual(LetNode::make(x, i, x * 2), LetNode::make(j, i, i * 2)));
    QVERIFY(!structuralEqual(i + 1, i + 2));
    QVERIFY(structuralHash(i + 1) != structuralHash(i * 1));
  }

  void buildersMatchTypes() {
    Var i("i", DataType::int32());
    Expr sum = i + 1;
    QCOMPARE(sum.dtype(), DataType::int32());
    Var f("f", DataType::float32());
    QCOMPARE((f * 2).dtype(), DataType::float32());
    QCOMPARE((i < 3).dtype(), DataType::boolean());
    QCOMPARE((f + RampNode::make(Expr(0), Expr(1), 8)).dtype(), DataType::float32(8));
  }

  void mutatorReturnsSameHandleWhenUnchanged() {
    Var i("i"), j("j");
    Expr e = i * 4 + j;
    QVERIFY(substitute(e, {}).same(e));
    VarMap map{{j.get(), Expr(7)}};
    Expr replaced = substitute(e, map);
    QCOMPARE(QString::fromStdString(toString(replaced)), QString("i*4 + 7"));
    QVERIFY(usesVar(e, j));
    QVERIFY(!usesVar(replaced, j));
  }

  void dataTypeTextRoundTrips_data() {
    QTest::addColumn<QString>("text");
    for (const char* t : {"float32", "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "bool",
                          "float32x8", "handle"})
      QTest::newRow(t) << QString(t);
  }
  void dataTypeTextRoundTrips() {
    QFETCH(QString, text);
    auto parsed = DataType::parse(text.toStdString());
    QVERIFY(parsed.has_value());
    QCOMPARE(QString::fromStdString(parsed->toString()), text);
  }
  void dataTypeRejectsNonsense() {
    QVERIFY(!DataType::parse("float13").has_value());
    QVERIFY(!DataType::parse("banana").has_value());
  }

  void internalCheckNamesFileAndLine() {
    bool threw = false;
    try {
      Var i("i");
      BufferStoreNode::make(Buffer("A", DataType::float32(), {Expr(4)}), Expr(1.0f), {Expr(1.5f)});
    } catch (const InternalError& error) {
      threw = true;
      QVERIFY(QString(error.what()).contains("Stmt.cpp:"));
    }
    QVERIFY(threw);
  }
};

QTEST_GUILESS_MAIN(TestIR)
#include "test_ir.moc"
