// unrollLoops: golden IR for constant, offset and symbolic unrolled loops.
#include <QtTest>

#include "compiler/transform/UnrollLoops.h"
#include "core/ir/IR.h"

using namespace tessel;

namespace {
QString printed(const PrimFunc& f) { return QString::fromStdString(toString(f)); }
}  // namespace

class TestUnrollLoops : public QObject {
  Q_OBJECT
private slots:
  void unrolledLoopBecomesCopiesWithTheVariableReplaced() {
    Var i("i"), k("k");
    Buffer A("A", DataType::float32(), {Expr(3)});
    Buffer B("B", DataType::float32(), {Expr(12)});
    Stmt store = BufferStoreNode::make(B, BufferLoadNode::make(A, {k}) * 2.0f, {i * 3 + k});
    Stmt body = ForNode::make(i, 0, 4, ForKind::Serial, ForNode::make(k, 0, 3, ForKind::Unrolled, store));
    QCOMPARE(printed(unrollLoops(PrimFunc("f", {A, B}, body))), QString(R"(func f(A: float32[3], B: float32[12]) {
  for (i, 0, 4) {
    B[i*3] = A[0]*2.0f
    B[i*3 + 1] = A[1]*2.0f
    B[i*3 + 2] = A[2]*2.0f
  }
}
)"));
  }

  void loopMinIsAddedToEachCopy() {
    Var m("m"), k("k");
    Buffer B("B", DataType::float32(), {Expr(16)});
    Stmt offset = ForNode::make(k, 5, 2, ForKind::Unrolled, BufferStoreNode::make(B, 1.0f, {k}));
    Stmt symbolic = ForNode::make(k, m, 2, ForKind::Unrolled, BufferStoreNode::make(B, 2.0f, {k - 1}));
    QCOMPARE(printed(unrollLoops(PrimFunc("f", {B}, SeqStmtNode::make({offset, symbolic})))),
             QString(R"(func f(B: float32[16]) {
  B[5] = 1.0f
  B[6] = 1.0f
  B[m - 1] = 2.0f
  B[m] = 2.0f
}
)"));
  }

  void nestedUnrolledLoopsMultiplyOut() {
    Var a("a"), b("b"), j("j");
    Buffer B("B", DataType::float32(), {Expr(16)});
    // The inner serial loop is copied twice; both copies define the same variable j.
    Stmt inner = ForNode::make(j, 0, 4, ForKind::Serial, BufferStoreNode::make(B, 0.0f, {a * 8 + b * 4 + j}));
    Stmt body = ForNode::make(a, 0, 2, ForKind::Unrolled, ForNode::make(b, 0, 2, ForKind::Unrolled, inner));
    QCOMPARE(printed(unrollLoops(PrimFunc("f", {B}, body))), QString(R"(func f(B: float32[16]) {
  for (j, 0, 4) {
    B[j] = 0.0f
  }
  for (j, 0, 4) {
    B[j + 4] = 0.0f
  }
  for (j, 0, 4) {
    B[j + 8] = 0.0f
  }
  for (j, 0, 4) {
    B[j + 12] = 0.0f
  }
}
)"));
  }

  void nonConstantExtentStaysSerial() {
    Var n("n"), k("k");
    Buffer B("B", DataType::float32(), {n});
    PrimFunc f("f", {B}, ForNode::make(k, 0, n, ForKind::Unrolled, BufferStoreNode::make(B, 0.0f, {k})));
    QCOMPARE(printed(unrollLoops(f)), QString(R"(func f(B: float32[n]) {
  for (k, 0, n) {
    B[k] = 0.0f
  }
}
)"));
  }

  void functionWithoutUnrolledLoopsIsReturnedAsIs() {
    Var i("i");
    Buffer B("B", DataType::float32(), {Expr(8)});
    PrimFunc f("f", {B}, ForNode::make(i, 0, 8, ForKind::Parallel, BufferStoreNode::make(B, 0.0f, {i})));
    QVERIFY(unrollLoops(f).same(f));
  }
};

QTEST_GUILESS_MAIN(TestUnrollLoops)
#include "test_transform_unroll_loops.moc"
