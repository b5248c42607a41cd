// vectorizeLoops: golden IR for widened bodies and for the loops that must stay serial.
#include <QtTest>

#include "compiler/transform/VectorizeLoops.h"
#include "core/ir/IR.h"

using namespace tessel;

namespace {
QString printed(const PrimFunc& f) { return QString::fromStdString(toString(f)); }
Stmt vectorized(const Var& v, Expr extent, Stmt body) { return ForNode::make(v, 0, extent, ForKind::Vectorized, body); }
}  // namespace

class TestVectorizeLoops : public QObject {
  Q_OBJECT
private slots:
  void elementwiseBodyBecomesContiguousVectorCode() {
    Var i("i"), j("j");
    Buffer A("A", DataType::float32(), {Expr(32)});
    Buffer B("B", DataType::float32(), {Expr(32)});
    Stmt store = BufferStoreNode::make(B, BufferLoadNode::make(A, {i * 8 + j}) * 2.0f + 1.0f, {i * 8 + j});
    Stmt body = ForNode::make(i, 0, 4, ForKind::Serial, vectorized(j, 8, store));
    PrimFunc result = vectorizeLoops(PrimFunc("axpb", {A, B}, body));
    QCOMPARE(printed(result), QString(R"(func axpb(A: float32[32], B: float32[32]) {
  for (i, 0, 4) {
    B[ramp(i*8, 1, 8)] = A[ramp(i*8, 1, 8)]*broadcast(2.0f, 8) + broadcast(1.0f, 8)
  }
}
)"));
    auto* storeNode = result->body.as<ForNode>()->body.as<BufferStoreNode>();
    QVERIFY(storeNode);
    QCOMPARE(storeNode->value.dtype(), DataType::float32(8));
  }

  void broadcastsSelectsCastsAndLetsAreWidened() {
    Var j("j"), t("t", DataType::float32()), n("n");
    Buffer A("A", DataType::float32(), {Expr(8)});
    Buffer C("C", DataType::float32(), {Expr(8)});
    Buffer Z("Z", DataType::float32(), {Expr(8)});
    Expr value = select(BufferLoadNode::make(A, {j}) > 0.0f, cast(DataType::float32(), j), BufferLoadNode::make(A, {Expr(0)}));
    Stmt body = SeqStmtNode::make({
        LetStmtNode::make(t, value, BufferStoreNode::make(C, exp(t) + cast(DataType::float32(), n), {j})),
        // A lane-invariant value stored to every lane's own element is broadcast.
        BufferStoreNode::make(Z, 0.0f, {j}),
        // A lane-invariant condition stays a scalar branch around vector code.
        IfThenElseNode::make(n > 0, BufferStoreNode::make(Z, BufferLoadNode::make(A, {j}), {j})),
    });
    QCOMPARE(printed(vectorizeLoops(PrimFunc("f", {A, C, Z}, vectorized(j, 8, body)))),
             QString(R"(func f(A: float32[8], C: float32[8], Z: float32[8]) {
  let t = select(A[ramp(0, 1, 8)] > broadcast(0.0f, 8), float32x8(ramp(0, 1, 8)), broadcast(A[0], 8))
  C[ramp(0, 1, 8)] = exp(t) + broadcast(float32(n), 8)
  Z[ramp(0, 1, 8)] = broadcast(0.0f, 8)
  if (n > 0) {
    Z[ramp(0, 1, 8)] = A[ramp(0, 1, 8)]
  }
}
)"));
  }

  void loopMinBecomesTheRampBase() {
    Var j("j"), m("m");
    Buffer A("A", DataType::float32(), {Expr(64)});
    Stmt body = ForNode::make(j, m, 4, ForKind::Vectorized, BufferStoreNode::make(A, 1.0f, {j * 2 + 1}));
    QCOMPARE(printed(vectorizeLoops(PrimFunc("f", {A}, body))), QString(R"(func f(A: float32[64]) {
  A[ramp(m*2 + 1, 2, 4)] = broadcast(1.0f, 4)
}
)"));
  }

  // Each case keeps its loop, now serial, with the body untouched.
  void unvectorizableBodiesStaySerial_data() {
    QTest::addColumn<int>("which");
    QTest::newRow("nested loop") << 0;
    QTest::newRow("lane-dependent if") << 1;
    QTest::newRow("allocation inside") << 2;
    QTest::newRow("vector value to one element") << 3;
    QTest::newRow("non-constant extent") << 4;
    QTest::newRow("body already holds vectors") << 5;
  }
  void unvectorizableBodiesStaySerial() {
    QFETCH(int, which);
    Var j("j"), k("k"), n("n");
    Buffer A("A", DataType::float32(), {Expr(64)});
    Buffer B("B", DataType::float32(), {Expr(64)});
    Buffer T("T", DataType::float32(), {Expr(4)}, "local");
    Stmt copy = BufferStoreNode::make(B, BufferLoadNode::make(A, {j}), {j});
    Stmt body;
    Expr extent = Expr(8);
    switch (which) {
      case 0: body = ForNode::make(k, 0, 4, ForKind::Serial, BufferStoreNode::make(B, 0.0f, {j * 4 + k})); break;
      case 1: body = IfThenElseNode::make(likely(j < n), copy); break;
      case 2: body = AllocateNode::make(T, SeqStmtNode::make({BufferStoreNode::make(T, 1.0f, {Expr(0)}), copy})); break;
      case 3: body = BufferStoreNode::make(B, BufferLoadNode::make(B, {Expr(0)}) + BufferLoadNode::make(A, {j}), {Expr(0)}); break;
      case 4: body = copy; extent = n; break;
      default:
        body = BufferStoreNode::make(B, BufferLoadNode::make(A, {RampNode::make(j * 4, Expr(1), 4)}),
                                     {RampNode::make(j * 4, Expr(1), 4)});
        break;
    }
    PrimFunc f("f", {A, B}, vectorized(j, extent, body));
    PrimFunc result = vectorizeLoops(f);
    auto* loop = result->body.as<ForNode>();
    QVERIFY2(loop, qPrintable(printed(result)));
    QCOMPARE(loop->forKind, ForKind::Serial);
    QVERIFY(loop->body.same(body));
    QVERIFY(printed(result).contains("  for (j, 0, "));
  }

  void innerVectorizedLoopIsWidenedInsideASerialOuterOne() {
    Var i("i"), j("j");
    Buffer B("B", DataType::float32(), {Expr(32)});
    Stmt inner = vectorized(j, 4, BufferStoreNode::make(B, 0.0f, {i * 4 + j}));
    QCOMPARE(printed(vectorizeLoops(PrimFunc("f", {B}, vectorized(i, 8, inner)))), QString(R"(func f(B: float32[32]) {
  for (i, 0, 8) {
    B[ramp(i*4, 1, 4)] = broadcast(0.0f, 4)
  }
}
)"));
  }

  void extentOneLoopIsItsBody() {
    Var j("j");
    Buffer B("B", DataType::float32(), {Expr(8)});
    Stmt body = ForNode::make(j, 3, 1, ForKind::Vectorized, BufferStoreNode::make(B, 0.0f, {j + 1}));
    QCOMPARE(printed(vectorizeLoops(PrimFunc("f", {B}, body))), QString("func f(B: float32[8]) {\n  B[4] = 0.0f\n}\n"));
  }

  void functionWithoutVectorizedLoopsIsReturnedAsIs() {
    Var i("i");
    Buffer B("B", DataType::float32(), {Expr(8)});
    PrimFunc f("f", {B}, ForNode::make(i, 0, 8, ForKind::Unrolled, BufferStoreNode::make(B, 0.0f, {i})));
    QVERIFY(vectorizeLoops(f).same(f));
  }
};

QTEST_GUILESS_MAIN(TestVectorizeLoops)
#include "test_transform_vectorize_loops.moc"
