// storageFlatten: golden IR for parameters, realized intermediates and explicit strides.
#include <QtTest>

#include "compiler/transform/StorageFlatten.h"
#include "core/ir/IR.h"

using namespace tessel;

namespace {
QString printed(const PrimFunc& f) { return QString::fromStdString(toString(f)); }
Stmt loop(const Var& v, Expr min, Expr extent, Stmt body, ForKind kind = ForKind::Serial) {
  return ForNode::make(v, min, extent, kind, body);
}
const BufferLoadNode* firstLoad(const Stmt& s) {
  const BufferLoadNode* found = nullptr;
  postOrderVisit(s, [&](const Expr& e) {
    if (!found) found = e.as<BufferLoadNode>();
  });
  return found;
}
}  // namespace

class TestStorageFlatten : public QObject {
  Q_OBJECT
private slots:
  void flattensParametersRowMajor() {
    Var i("i"), j("j");
    Buffer A("A", DataType::float32(), {Expr(64), Expr(32)});
    Buffer B("B", DataType::float32(), {Expr(64), Expr(32)});
    Stmt body = loop(i, 0, 64, loop(j, 0, 32, BufferStoreNode::make(B, BufferLoadNode::make(A, {i, j}) * 2.0f, {i, j})));
    PrimFunc flat = storageFlatten(PrimFunc("scale", {A, B}, body));
    QCOMPARE(printed(flat), QString(R"(func scale(A: float32[64, 32], B: float32[64, 32]) {
  for (i, 0, 64) {
    for (j, 0, 32) {
      B[i*32 + j] = A[i*32 + j]*2.0f
    }
  }
}
)"));
    // Codegen finds memory through the data variable: the flat view must share it, and
    // the parameters keep the shapes that describe the interface.
    const BufferLoadNode* load = firstLoad(flat->body);
    QVERIFY(load);
    QVERIFY(load->buffer->data.same(A->data));
    QCOMPARE(load->buffer.shape().size(), size_t(1));
    QCOMPARE(*asConstInt(load->buffer.shape()[0]), int64_t(2048));
    QVERIFY(flat->params[0].same(A));
    QCOMPARE(flat->params[0].shape().size(), size_t(2));
  }

  void flattensSymbolicShapes() {
    Var n("n"), m("m"), i("i"), j("j");
    Buffer A("A", DataType::float32(), {n, m});
    Stmt body = loop(i, 0, n, loop(j, 0, m, BufferStoreNode::make(A, 0.0f, {i, j})));
    QCOMPARE(printed(storageFlatten(PrimFunc("zero", {A}, body))), QString(R"(func zero(A: float32[n, m]) {
  for (i, 0, n) {
    for (j, 0, m) {
      A[i*m + j] = 0.0f
    }
  }
}
)"));
  }

  void realizedIntermediateWithNonZeroMinsBecomesAllocation() {
    Var i("i"), j("j");
    Buffer A("A", DataType::float32(), {Expr(10), Expr(20)});
    Buffer B("B", DataType::float32(), {Expr(8), Expr(16)});
    Buffer T("T", DataType::float32(), {Expr(10), Expr(20)}, "local");
    // T holds rows 1..8 and columns 2..17 of its logical 10x20 extent.
    Stmt produce = loop(i, 1, 8, loop(j, 2, 16, BufferStoreNode::make(T, BufferLoadNode::make(A, {i, j}) + 1.0f, {i, j})));
    Stmt consume = loop(i, 0, 8, loop(j, 0, 16,
        BufferStoreNode::make(B, BufferLoadNode::make(T, {i + 1, j + 2}), {i, j})));
    Stmt body = BufferRealizeNode::make(T, {Range{1, 8}, Range{2, 16}}, SeqStmtNode::make({produce, consume}));
    PrimFunc flat = storageFlatten(PrimFunc("shifted", {A, B}, body));
    QCOMPARE(printed(flat), QString(R"(func shifted(A: float32[10, 20], B: float32[8, 16]) {
  allocate T: float32[128] in local
  for (i, 1, 8) {
    for (j, 2, 16) {
      T[(i - 1)*16 + (j - 2)] = A[i*20 + j] + 1.0f
    }
  }
  for (i, 0, 8) {
    for (j, 0, 16) {
      B[i*16 + j] = T[i*16 + j]
    }
  }
}
)"));
    auto* allocate = flat->body.as<AllocateNode>();
    QVERIFY(allocate);
    QVERIFY(allocate->buffer->data.same(T->data));
    QCOMPARE(allocate->buffer->scope, std::string("local"));
  }

  void explicitStridesAreHonoured() {
    Var i("i"), j("j");
    // Column-major parameter and a row-padded intermediate (rows of 40 for 32 columns).
    Buffer P("P", DataType::float32(), {Expr(4), Expr(8)}, "global", {Expr(1), Expr(4)});
    Buffer T("T", DataType::float32(), {Expr(4), Expr(32)}, "global", {Expr(40), Expr(1)});
    Buffer Out("Out", DataType::float32(), {Expr(4), Expr(8)});
    Stmt produce = loop(i, 0, 4, loop(j, 0, 32, BufferStoreNode::make(T, 1.0f, {i, j})));
    Stmt consume = loop(i, 0, 4, loop(j, 0, 8,
        BufferStoreNode::make(Out, BufferLoadNode::make(P, {i, j}) + BufferLoadNode::make(T, {i, j}), {i, j})));
    Stmt body = BufferRealizeNode::make(T, {Range{0, 4}, Range{0, 32}}, SeqStmtNode::make({produce, consume}));
    QCOMPARE(printed(storageFlatten(PrimFunc("strided", {P, Out}, body))),
             QString(R"(func strided(P: float32[4, 8], Out: float32[4, 8]) {
  allocate T: float32[160]
  for (i, 0, 4) {
    for (j, 0, 32) {
      T[i*40 + j] = 1.0f
    }
  }
  for (i, 0, 4) {
    for (j, 0, 8) {
      Out[i*8 + j] = P[i + j*4] + T[i*40 + j]
    }
  }
}
)"));
  }

  void rampIndicesStayContiguousVectorAccesses() {
    Var i("i");
    Buffer A("A", DataType::float32(), {Expr(4), Expr(32)});
    Buffer B("B", DataType::float32(), {Expr(4), Expr(32)});
    Expr columns = RampNode::make(Expr(8), Expr(1), 8);
    Stmt body = loop(i, 0, 4, BufferStoreNode::make(B, BufferLoadNode::make(A, {i, columns}), {i, columns}));
    PrimFunc flat = storageFlatten(PrimFunc("copy", {A, B}, body));
    QCOMPARE(printed(flat), QString(R"(func copy(A: float32[4, 32], B: float32[4, 32]) {
  for (i, 0, 4) {
    B[ramp(i*32 + 8, 1, 8)] = A[ramp(i*32 + 8, 1, 8)]
  }
}
)"));
    QCOMPARE(firstLoad(flat->body)->dtype, DataType::float32(8));
  }

  void zeroDimensionalBufferHoldsOneElement() {
    Var k("k");
    Buffer A("A", DataType::float32(), {Expr(16)});
    Buffer Out("Out", DataType::float32(), {});
    Buffer Sum("Sum", DataType::float32(), {}, "local");
    Stmt body = BufferRealizeNode::make(Sum, {}, SeqStmtNode::make({
        BufferStoreNode::make(Sum, 0.0f, {}),
        ForNode::make(k, 0, 16, ForKind::Serial,
                      BufferStoreNode::make(Sum, BufferLoadNode::make(Sum, {}) + BufferLoadNode::make(A, {k}), {})),
        BufferStoreNode::make(Out, BufferLoadNode::make(Sum, {}), {}),
    }));
    QCOMPARE(printed(storageFlatten(PrimFunc("total", {A, Out}, body))), QString(R"(func total(A: float32[16], Out: float32[]) {
  allocate Sum: float32[1] in local
  Sum[0] = 0.0f
  for (k, 0, 16) {
    Sum[0] = Sum[0] + A[k]
  }
  Out[0] = Sum[0]
}
)"));
  }

  void alreadyFlatFunctionIsReturnedAsIs() {
    Var i("i");
    Buffer A("A", DataType::float32(), {Expr(16)});
    Buffer B("B", DataType::float32(), {Expr(16)});
    PrimFunc f("copy", {A, B}, loop(i, 0, 16, BufferStoreNode::make(B, BufferLoadNode::make(A, {i}), {i})));
    QVERIFY(storageFlatten(f).same(f));
    // Flattening is idempotent: a second run has nothing left to do.
    Buffer M("M", DataType::float32(), {Expr(4), Expr(4)});
    PrimFunc g("fill", {M}, loop(i, 0, 4, BufferStoreNode::make(M, 0.0f, {i, Expr(1)})));
    PrimFunc once = storageFlatten(g);
    QVERIFY(!once.same(g));
    QVERIFY(structuralEqual(storageFlatten(once), once));
  }
};

QTEST_GUILESS_MAIN(TestStorageFlatten)
#include "test_transform_storage_flatten.moc"
