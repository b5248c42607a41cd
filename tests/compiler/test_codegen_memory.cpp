// LLVM backend: vector loads and stores, gathers and scatters, allocations, leftover loop kinds.
#include <QtTest>

#include <cstdlib>
#include <cstring>
#include <numeric>

#include "compiler/codegen/llvm/CodeGenLLVM.h"
#include "core/ir/IR.h"

#include "CodegenTestSupport.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

}  // namespace

class TestCodegenMemory : public QObject {
  Q_OBJECT
private slots:
  void contiguousVectorAccess_data() {
    QTest::addColumn<int>("lanes");
    for (int lanes : {4, 8, 16, 32}) QTest::newRow(qPrintable(QString("x%1").arg(lanes))) << lanes;
  }
  void contiguousVectorAccess() {
    QFETCH(int, lanes);
    const int64_t n = 128;
    Buffer A("A", DataType::float32(), {Expr(n)}), S("S", DataType::float32(), {Expr(n / lanes)}),
        C("C", DataType::float32(), {Expr(n)});
    Var i("i");
    Expr ramp = RampNode::make(i * lanes, Expr(1), lanes);
    // C[ramp] = A[ramp] * broadcast(S[i]) + A[broadcast(i)]: a vector load, a scalar load
    // broadcast, and a load whose index repeats one element.
    Expr value = load(A, ramp) * BroadcastNode::make(load(S, i), lanes) + load(A, BroadcastNode::make(i, lanes));
    auto module = compile(PrimFunc("vector", {A, S, C}, loop(i, 0, n / lanes, store(C, value, ramp))));
    QVERIFY(module);
    AlignedArray<float> a(n), s(n / lanes), c(n);
    for (int k = 0; k < n; ++k) a[k] = float(k) * 0.5f;
    for (int k = 0; k < n / lanes; ++k) s[k] = float(k + 1);
    QCOMPARE(run(*module, "vector", {a.data(), s.data(), c.data()}), 0);
    for (int k = 0; k < n; ++k) QCOMPARE(c[k], a[k] * s[k / lanes] + a[k / lanes]);
  }

  void unsimplifiedRampSumsStayContiguous() {
    // ramp(0, 1, 8) + broadcast(i * 8): what vectorization produces before simplification.
    const int64_t n = 64;
    Buffer A("A", DataType::int32(), {Expr(n)}), C("C", DataType::int32(), {Expr(n)});
    Var i("i");
    Expr index = RampNode::make(Expr(0), Expr(1), 8) + BroadcastNode::make(i * 8, 8);
    Expr doubled = MulNode::make(RampNode::make(i * 4, Expr(1), 8), BroadcastNode::make(Expr(2), 8));  // stride 2
    Stmt body = SeqStmtNode::make({store(C, load(A, index) + load(A, doubled) * 100, index)});
    auto module = compile(PrimFunc("sum_index", {A, C}, loop(i, 0, n / 8 / 2, body)));
    QVERIFY(module);
    AlignedArray<int32_t> a(n), c(n);
    std::iota(a.data(), a.data() + n, 0);
    QCOMPARE(run(*module, "sum_index", {a.data(), c.data()}), 0);
    for (int k = 0; k < n / 2; ++k) QCOMPARE(c[k], a[k] + a[(k / 8) * 8 + (k % 8) * 2] * 100);
    for (int k = n / 2; k < n; ++k) QCOMPARE(c[k], -7);
  }

  void gathersAndScatters() {
    const int64_t n = 96;
    Buffer A("A", DataType::float64(), {Expr(n)}), C("C", DataType::float64(), {Expr(n)}),
        P("P", DataType::int32(), {Expr(8)});
    Var i("i");
    // C[ramp(i*24, 3, 8)] = A[ramp(i*8, 1, 8)]: a scatter with stride 3;
    // C[ramp(i*24+1, 3, 8)] = A[P[ramp(0,1,8)] + i*8]: a gather through loaded indices.
    Expr scatterIndex = RampNode::make(i * 24, Expr(3), 8);
    Expr permuted = load(P, RampNode::make(Expr(0), Expr(1), 8));
    Expr gatherIndex = CastNode::make(DataType::int64(8), permuted) + BroadcastNode::make(i * 8, 8);
    Stmt body = SeqStmtNode::make({store(C, load(A, RampNode::make(i * 8, Expr(1), 8)), scatterIndex),
                                   store(C, load(A, gatherIndex), RampNode::make(i * 24 + 1, Expr(3), 8))});
    auto module = compile(PrimFunc("gather", {A, C, P}, loop(i, 0, 4, body)));
    QVERIFY(module);
    AlignedArray<double> a(n), c(n);
    AlignedArray<int32_t> p(8);
    const int32_t permutation[8] = {7, 0, 3, 3, 1, 6, 2, 5};
    for (int k = 0; k < 8; ++k) p[k] = permutation[k];
    for (int k = 0; k < n; ++k) a[k] = k * 1.25;
    QCOMPARE(run(*module, "gather", {a.data(), c.data(), p.data()}), 0);
    for (int row = 0; row < 4; ++row)
      for (int lane = 0; lane < 8; ++lane) {
        QCOMPARE(c[row * 24 + lane * 3], a[row * 8 + lane]);
        QCOMPARE(c[row * 24 + lane * 3 + 1], a[row * 8 + permutation[lane]]);
        QCOMPARE(c[row * 24 + lane * 3 + 2], -7.0);
      }
  }

  void boolAndBfloat16Vectors() {
    const int64_t n = 32;
    Buffer A("A", DataType::bfloat16(), {Expr(n)}), M("M", DataType::boolean(), {Expr(n)}),
        C("C", DataType::bfloat16(), {Expr(n)}), G("G", DataType::boolean(), {Expr(n)});
    Var i("i");
    Expr ramp = RampNode::make(i * 16, Expr(1), 16);
    Expr a = load(A, ramp);
    Stmt body = SeqStmtNode::make({store(C, select(load(M, ramp), a * 2.0f, a), ramp),
                                   store(G, a > BroadcastNode::make(FloatImmNode::make(DataType::bfloat16(), 3.0), 16), ramp)});
    auto module = compile(PrimFunc("masked", {A, M, C, G}, loop(i, 0, n / 16, body)));
    QVERIFY(module);
    AlignedArray<uint16_t> a_(n), c_(n);
    AlignedArray<uint8_t> m_(n), g_(n);
    auto toBits = [](float v) {
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      return uint16_t(bits >> 16);
    };
    for (int k = 0; k < n; ++k) a_[k] = toBits(float(k) * 0.25f), m_[k] = k % 3 == 0;
    QCOMPARE(run(*module, "masked", {a_.data(), m_.data(), c_.data(), g_.data()}), 0);
    for (int k = 0; k < n; ++k) {
      QCOMPARE(c_[k], toBits(float(k) * 0.25f * (k % 3 == 0 ? 2 : 1)));
      QCOMPARE(int(g_[k]), k * 0.25 > 3.0 ? 1 : 0);
    }
  }

  void smallAllocationInsideLoop() {
    // Per row: a 4-element local scratch written and read with constant indices.
    const int64_t rows = 50;
    Buffer A("A", DataType::float32(), {Expr(rows * 4)}), C("C", DataType::float32(), {Expr(rows)});
    Buffer local("local", DataType::float32(), {Expr(4)}, "local");
    Var i("i"), k("k");
    Stmt fill = loop(k, 0, 4, store(local, load(A, i * 4 + k) * float(2), k), ForKind::Unrolled);
    Expr sum = load(local, Expr(0)) + load(local, Expr(1)) + load(local, Expr(2)) + load(local, Expr(3));
    Stmt body = AllocateNode::make(local, SeqStmtNode::make({fill, store(C, sum, i)}));
    auto module = compile(PrimFunc("local_scratch", {A, C}, loop(i, 0, rows, body)));
    QVERIFY(module);
    AlignedArray<float> a(rows * 4), c(rows);
    for (int e = 0; e < rows * 4; ++e) a[e] = float(e % 17);
    QCOMPARE(run(*module, "local_scratch", {a.data(), c.data()}), 0);
    for (int r = 0; r < rows; ++r) QCOMPARE(c[r], 2 * (a[r * 4] + a[r * 4 + 1] + a[r * 4 + 2] + a[r * 4 + 3]));
  }

  void largeAndSymbolicAllocationsInsideLoops() {
    // A 1 MiB buffer (workspace memory) and one sized by the loop variable, both per iteration.
    const int64_t big = 1 << 18, rows = 6;
    Buffer C("C", DataType::int64(), {Expr(rows * 2)});
    Buffer scratch("scratch", DataType::float32(), {Expr(big)});
    Var i("i"), j("j"), t("t");
    Buffer sized("sized", DataType::int64(), {i + 1});
    Stmt fillBig = loop(j, 0, big, store(scratch, cast(DataType::float32(), j + i), j));
    Stmt readBig = store(C, cast(DataType::int64(), load(scratch, Expr(big - 1)) - load(scratch, Expr(0))), i * 2);
    Stmt fillSized = loop(t, 0, i + 1, store(sized, t * t, t));
    Stmt readSized = store(C, load(sized, i), i * 2 + 1);
    Stmt body = SeqStmtNode::make({AllocateNode::make(scratch, SeqStmtNode::make({fillBig, readBig})),
                                   AllocateNode::make(sized, SeqStmtNode::make({fillSized, readSized}))});
    auto module = compile(PrimFunc("workspace", {C}, loop(i, 0, rows, body)));
    QVERIFY(module);
    AlignedArray<int64_t> c(rows * 2);
    QCOMPARE(run(*module, "workspace", {c.data()}), 0);
    for (int r = 0; r < rows; ++r) {
      QCOMPARE(c[r * 2], big - 1);
      QCOMPARE(c[r * 2 + 1], int64_t(r) * r);
    }
  }

  void failedWorkspaceAllocationIsAStatusNotACrash_data() {
    QTest::addColumn<bool>("insideParallelLoop");
    QTest::newRow("serial") << false;
    QTest::newRow("inside a parallel loop") << true;
  }
  void failedWorkspaceAllocationIsAStatusNotACrash() {
    QFETCH(bool, insideParallelLoop);
    // The size comes from memory: 2^58 floats cannot be allocated anywhere.
    Buffer S("S", DataType::int64(), {Expr(1)}), C("C", DataType::float32(), {Expr(4)});
    Var i("i");
    Buffer huge("huge", DataType::float32(), {load(S, Expr(0))});
    Stmt body = AllocateNode::make(huge, SeqStmtNode::make({store(huge, Expr(1.0f), Expr(0)), store(C, load(huge, Expr(0)), i)}));
    auto module = compile(PrimFunc("too_big", {S, C}, loop(i, 0, 4, body, insideParallelLoop ? ForKind::Parallel : ForKind::Serial)));
    QVERIFY(module);
    AlignedArray<int64_t> s(1, int64_t(1) << 58);
    AlignedArray<float> c(4);
    QVERIFY(run(*module, "too_big", {s.data(), c.data()}) != 0);
    s[0] = 16;  // and the same kernel works when memory is available
    QCOMPARE(run(*module, "too_big", {s.data(), c.data()}), 0);
    for (int e = 0; e < 4; ++e) QCOMPARE(c[e], 1.0f);
  }

  void leftoverUnrolledAndVectorizedLoopsRunSerially() {
    const int64_t n = 40;
    Buffer A("A", DataType::int32(), {Expr(n)}), C("C", DataType::int32(), {Expr(n)});
    Var i("i"), j("j"), k("k");
    // A vectorized loop whose body could not become vector code (a data-dependent branch),
    // an unrolled loop with a constant extent, and a hinted loop with a variable extent.
    Stmt vectorized = loop(i, 0, 8,
                           IfThenElseNode::make(load(A, i) > IntImmNode::make(DataType::int32(), 3),
                                                store(C, load(A, i) * 2, i), store(C, load(A, i), i)),
                           ForKind::Vectorized);
    Stmt unrolled = loop(j, 8, 8, store(C, load(A, j) + 1, j), ForKind::Unrolled);
    Stmt hinted = AttrStmtNode::make("pragma_unroll", Expr(1), loop(k, 16, cast(DataType::int64(), load(A, Expr(0))) + 3,
                                                                     store(C, load(A, k) * 3, k)));
    auto module = compile(PrimFunc("leftover", {A, C}, SeqStmtNode::make({vectorized, unrolled, hinted})));
    QVERIFY(module);
    AlignedArray<int32_t> a(n), c(n);
    std::iota(a.data(), a.data() + n, 0);
    a[0] = 5;  // the hinted loop runs 5 + 3 = 8 iterations: 16..23
    QCOMPARE(run(*module, "leftover", {a.data(), c.data()}), 0);
    for (int e = 0; e < 8; ++e) QCOMPARE(c[e], a[e] > 3 ? a[e] * 2 : a[e]);
    for (int e = 8; e < 16; ++e) QCOMPARE(c[e], a[e] + 1);
    for (int e = 16; e < 24; ++e) QCOMPARE(c[e], a[e] * 3);
    for (int e = 24; e < n; ++e) QCOMPARE(c[e], -7);
  }

  void accessThroughAnotherBufferSharingTheData() {
    // Flattening may address a parameter through a new Buffer object with the same data Var.
    const int64_t n = 12;
    Buffer A("A", DataType::float32(), {Expr(3), Expr(4)});
    Buffer flat(new BufferNode("A_flat", A->data, DataType::float32(), {Expr(n)}, {}, "global"));
    Var i("i");
    auto module = compile(PrimFunc("alias", {A}, loop(i, 0, n, store(flat, load(flat, i) + 1.0f, i))));
    QVERIFY(module);
    AlignedArray<float> a(n, 1.5f);
    QCOMPARE(run(*module, "alias", {a.data()}), 0);
    for (int e = 0; e < n; ++e) QCOMPARE(a[e], 2.5f);
  }
};

QTEST_GUILESS_MAIN(TestCodegenMemory)
#include "test_codegen_memory.moc"
