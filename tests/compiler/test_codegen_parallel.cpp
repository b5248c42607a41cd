// LLVM backend: parallel loops on the runtime thread pool, nested and with captured values.
#include <QtTest>

#include <cstdlib>
#include <numeric>
#include <thread>

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

#include "compiler/codegen/llvm/CodeGenLLVM.h"
#include "core/ir/IR.h"
#include "runtime/ThreadPool.h"

#include "CodegenTestSupport.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

}  // namespace

class TestCodegenParallel : public QObject {
  Q_OBJECT
private slots:
  void parallelRowSumsAreExact() {
    // Integer sums: any lost, repeated or misplaced iteration changes the result.
    const int64_t rows = 1000, columns = 37;
    Buffer A("A", DataType::int64(), {Expr(rows * columns)}), C("C", DataType::int64(), {Expr(rows)});
    Var i("i"), j("j");
    Stmt body = SeqStmtNode::make({store(C, Expr(int64_t(0)), i),
                                   loop(j, 0, columns, store(C, load(C, i) + load(A, i * columns + j), i))});
    auto module = compile(PrimFunc("row_sums", {A, C}, loop(i, 0, rows, body, ForKind::Parallel)));
    QVERIFY(module);
    AlignedArray<int64_t> a(rows * columns), c(rows);
    for (int64_t e = 0; e < rows * columns; ++e) a[e] = (e * 7919) % 1009;
    QCOMPARE(run(*module, "row_sums", {a.data(), c.data()}), 0);
    for (int64_t r = 0; r < rows; ++r) {
      int64_t expected = 0;
      for (int64_t col = 0; col < columns; ++col) expected += a[r * columns + col];
      QCOMPARE(c[r], expected);
    }
  }

  void parallelLoopCapturesOuterValues() {
    // A nonzero minimum, a let-bound scalar, an outer serial loop variable, a float and a
    // vector value defined outside the parallel loop all reach the outlined body.
    const int64_t n = 300, rounds = 3;
    Buffer C("C", DataType::float32(), {Expr(n + 10)}), V("V", DataType::int64(), {Expr((n + 10) * 4)});
    Var t("t"), i("i"), offset("offset"), scale("scale", DataType::float32()), lanes("lanes", DataType::int64(4));
    Expr value = cast(DataType::float32(), i + offset + t) * scale;
    Stmt parallel = loop(i, 10, n,
                         SeqStmtNode::make({store(C, load(C, i) + value, i),
                                            store(V, lanes + BroadcastNode::make(i, 4), RampNode::make(i * 4, Expr(1), 4))}),
                         ForKind::Parallel);
    Stmt body = LetStmtNode::make(
        offset, t * 100,
        LetStmtNode::make(scale, Expr(0.5f), LetStmtNode::make(lanes, RampNode::make(t * 10, Expr(1), 4), parallel)));
    auto module = compile(PrimFunc("captures", {C, V}, loop(t, 0, rounds, body)));
    QVERIFY(module);
    AlignedArray<float> c(n + 10, 0.0f);
    AlignedArray<int64_t> v((n + 10) * 4);
    QCOMPARE(run(*module, "captures", {c.data(), v.data()}), 0);
    for (int64_t e = 0; e < 10; ++e) QCOMPARE(c[e], 0.0f);
    for (int64_t e = 10; e < n + 10; ++e) {
      float expected = 0;
      for (int64_t r = 0; r < rounds; ++r) expected += float(e + r * 100 + r) * 0.5f;
      QCOMPARE(c[e], expected);
      for (int64_t l = 0; l < 4; ++l) QCOMPARE(v[e * 4 + l], (rounds - 1) * 10 + l + e);
    }
  }

  void nestedParallelLoopsRunInnerSerially() {
    const int64_t rows = 64, columns = 48;
    Buffer C("C", DataType::int32(), {Expr(rows * columns)});
    Var i("i"), j("j");
    Stmt inner = loop(j, 0, columns, store(C, cast(DataType::int32(), i * columns + j), i * columns + j), ForKind::Parallel);
    auto module = compile(PrimFunc("nested", {C}, loop(i, 0, rows, inner, ForKind::Parallel)));
    QVERIFY(module);
    AlignedArray<int32_t> c(rows * columns);
    QCOMPARE(run(*module, "nested", {c.data()}), 0);
    for (int64_t e = 0; e < rows * columns; ++e) QCOMPARE(c[e], int32_t(e));
  }

  void allocationsInsideParallelBodiesArePerIteration() {
    // Each iteration fills its own scratch (stack and workspace) and reads it back; shared
    // scratch between threads would mix rows.
    const int64_t rows = 64, width = 16, wide = 20000;
    Buffer C("C", DataType::int64(), {Expr(rows * 2)});
    Buffer small("small", DataType::int64(), {Expr(width)}, "local");
    Buffer large("large", DataType::int64(), {Expr(wide)});
    Var i("i"), k("k"), m("m");
    Stmt fillSmall = loop(k, 0, width, store(small, i * 1000 + k, k));
    Stmt sumSmall = store(C, load(small, Expr(0)) + load(small, Expr(width - 1)), i * 2);
    Stmt fillLarge = loop(m, 0, wide, store(large, i + m, m));
    Stmt sumLarge = store(C, load(large, Expr(wide - 1)) - load(large, Expr(0)) + i, i * 2 + 1);
    Stmt body = SeqStmtNode::make({AllocateNode::make(small, SeqStmtNode::make({fillSmall, sumSmall})),
                                   AllocateNode::make(large, SeqStmtNode::make({fillLarge, sumLarge}))});
    auto module = compile(PrimFunc("scratch", {C}, loop(i, 0, rows, body, ForKind::Parallel)));
    QVERIFY(module);
    AlignedArray<int64_t> c(rows * 2);
    QCOMPARE(run(*module, "scratch", {c.data()}), 0);
    for (int64_t r = 0; r < rows; ++r) {
      QCOMPARE(c[r * 2], r * 2000 + width - 1);
      QCOMPARE(c[r * 2 + 1], wide - 1 + r);
    }
  }

  void parallelLoopWritesThroughAllocationOutsideIt() {
    // A buffer allocated outside the parallel loop is shared by all its iterations.
    const int64_t n = 500;
    Buffer C("C", DataType::int32(), {Expr(n)});
    Buffer shared("shared", DataType::int32(), {Expr(n)});
    Var i("i"), j("j");
    Stmt fill = loop(i, 0, n, store(shared, cast(DataType::int32(), i * 3), i), ForKind::Parallel);
    Stmt copy = loop(j, 0, n, store(C, load(shared, n - 1 - j), j), ForKind::Parallel);
    auto module = compile(PrimFunc("shared_scratch", {C}, AllocateNode::make(shared, SeqStmtNode::make({fill, copy}))));
    QVERIFY(module);
    AlignedArray<int32_t> c(n);
    QCOMPARE(run(*module, "shared_scratch", {c.data()}), 0);
    for (int64_t e = 0; e < n; ++e) QCOMPARE(c[e], int32_t((n - 1 - e) * 3));
  }

  void denormalsAreFlushedInsideKernelsOnly() {
#if defined(__x86_64__)
    // Kernels run with denormals flushed to zero (a denormal operand costs an x86 core about
    // a hundred cycles), in the caller's chunk and in the pool workers' chunks alike, and
    // give the caller its own floating-point mode back.
    runtime::ThreadPool::global().setNumThreads(4);
    const int64_t n = 4096;
    Buffer A("A", DataType::float32(), {Expr(n)}), B("B", DataType::float32(), {Expr(n)}),
        C("C", DataType::float32(), {Expr(n)});
    Var i("i"), j("j");
    for (ForKind kind : {ForKind::Serial, ForKind::Parallel}) {
      // C = A * B: a denormal A is read as zero, and a normal product too small for a
      // normal float is written as zero.
      auto module = compile(PrimFunc("scale", {A, B, C}, loop(i, 0, n, store(C, load(A, i) * load(B, i), i), kind)));
      QVERIFY(module);
      AlignedArray<float> a(n), b(n), c(n);
      for (int64_t e = 0; e < n; ++e) {
        bool denormalOperand = e % 2 == 0;
        a[e] = denormalOperand ? 1e-40f : 1e-20f;
        b[e] = denormalOperand ? 1.0f : 1e-20f;
      }
      unsigned callerMode = _mm_getcsr();
      QCOMPARE(run(*module, "scale", {a.data(), b.data(), c.data()}), 0);
      QCOMPARE(_mm_getcsr(), callerMode);
      for (int64_t e = 0; e < n; ++e) QCOMPARE(c[e], 0.0f);
      volatile float denormal = 1e-40f;
      QVERIFY(denormal * 1.0f != 0.0f);  // the caller's code still has IEEE denormals
    }
    runtime::ThreadPool::global().setNumThreads(0);
#else
    QSKIP("flushing denormals is an x86 MXCSR mode");
#endif
  }

  void kernelsRunFromSeveralThreadsAtOnce() {
    const int64_t n = 4096;
    Buffer A("A", DataType::float32(), {Expr(n)}), C("C", DataType::float32(), {Expr(n)});
    Var i("i");
    auto module = compile(PrimFunc("scale", {A, C}, loop(i, 0, n, store(C, load(A, i) * 3.0f, i), ForKind::Parallel)));
    QVERIFY(module);
    std::vector<std::thread> callers;
    std::vector<int> failures(4, 0);
    for (int caller = 0; caller < 4; ++caller)
      callers.emplace_back([&, caller] {
        AlignedArray<float> a(n), c(n);
        for (int64_t e = 0; e < n; ++e) a[e] = float(e + caller);
        for (int repeat = 0; repeat < 20; ++repeat) {
          if (run(*module, "scale", {a.data(), c.data()}) != 0) ++failures[caller];
          for (int64_t e = 0; e < n; ++e)
            if (c[e] != a[e] * 3.0f) ++failures[caller];
        }
      });
    for (auto& caller : callers) caller.join();
    QCOMPARE(std::accumulate(failures.begin(), failures.end(), 0), 0);
  }
};

QTEST_GUILESS_MAIN(TestCodegenParallel)
#include "test_codegen_parallel.moc"
