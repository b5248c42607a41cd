// loopPartition: golden IR for split tails, padding conditions and loops left alone.
#include <QtTest>

#include "compiler/transform/LoopPartition.h"
#include "core/ir/IR.h"

using namespace tessel;

namespace {
QString printed(const PrimFunc& f) { return QString::fromStdString(toString(f)); }
Stmt serial(const Var& v, Expr min, Expr extent, Stmt body) { return ForNode::make(v, min, extent, ForKind::Serial, body); }
Expr load(const Buffer& b, const Expr& index) { return BufferLoadNode::make(b, {index}); }
}  // namespace

class TestLoopPartition : public QObject {
  Q_OBJECT
private slots:
  void nonDivisibleSplitGetsATailWithoutTheHotLoopCondition() {
    Var io("io"), ii("ii");
    Buffer A("A", DataType::float32(), {Expr(100)}), B("B", DataType::float32(), {Expr(100)});
    Expr index = io * 32 + ii;
    Stmt guarded = IfThenElseNode::make(likely(index < 100), BufferStoreNode::make(B, load(A, index) + 1.0f, {index}));
    PrimFunc f("inc", {A, B}, serial(io, 0, 4, serial(ii, 0, 32, guarded)));
    QCOMPARE(printed(loopPartition(f)), QString(R"(func inc(A: float32[100], B: float32[100]) {
  for (io, 0, 3) {
    for (ii, 0, 32) {
      B[io*32 + ii] = A[io*32 + ii] + 1.0f
    }
  }
  for (io, 3, 1) {
    for (ii, 0, 4) {
      B[io*32 + ii] = A[io*32 + ii] + 1.0f
    }
  }
}
)"));
  }

  // The tail narrows only when the guarded statement is all its body does: here the body
  // also clears a row of C on every iteration, so the tail keeps its 32 iterations and its test.
  void tailLoopDoingMoreThanTheGuardedStatementKeepsItsRange() {
    Var io("io"), ii("ii");
    Buffer A("A", DataType::float32(), {Expr(100)}), B("B", DataType::float32(), {Expr(100)}),
        C("C", DataType::float32(), {Expr(32)});
    Expr index = io * 32 + ii;
    Stmt guarded = IfThenElseNode::make(likely(index < 100), BufferStoreNode::make(B, load(A, index) + 1.0f, {index}));
    Stmt body = SeqStmtNode::make({guarded, BufferStoreNode::make(C, 0.0f, {Expr(ii)})});
    PrimFunc f("inc", {A, B, C}, serial(io, 0, 4, serial(ii, 0, 32, body)));
    QCOMPARE(printed(loopPartition(f)), QString(R"(func inc(A: float32[100], B: float32[100], C: float32[32]) {
  for (io, 0, 3) {
    for (ii, 0, 32) {
      B[io*32 + ii] = A[io*32 + ii] + 1.0f
      C[ii] = 0.0f
    }
  }
  for (io, 3, 1) {
    for (ii, 0, 32) {
      if (likely(io*32 + ii < 100)) {
        B[io*32 + ii] = A[io*32 + ii] + 1.0f
      }
      C[ii] = 0.0f
    }
  }
}
)"));
  }

  void parallelLoopStaysOneLaunch() {
    // Parts of a parallel loop would be launches of their own, and the one-iteration tail
    // part would run on one thread: the parts become branches of one parallel body.
    Var io("io"), ii("ii");
    Buffer B("B", DataType::float32(), {Expr(100)});
    Expr index = io * 8 + ii;
    Stmt guarded = IfThenElseNode::make(likely(index < 100), BufferStoreNode::make(B, 0.0f, {index}));
    PrimFunc f("zero", {B}, ForNode::make(io, 0, 13, ForKind::Parallel,
                                          ForNode::make(ii, 0, 8, ForKind::Vectorized, guarded)));
    QCOMPARE(printed(loopPartition(f)), QString(R"(func zero(B: float32[100]) {
  parallel for (io, 0, 13) {
    if (io < 12) {
      vectorized for (ii, 0, 8) {
        B[io*8 + ii] = 0.0f
      }
    } else {
      vectorized for (ii, 0, 4) {
        B[io*8 + ii] = 0.0f
      }
    }
  }
}
)"));
  }

  void paddingConditionLeavesOnlyTheInterior() {
    Var i("i");
    Buffer A("A", DataType::float32(), {Expr(16)}), B("B", DataType::float32(), {Expr(20)});
    Stmt guarded = IfThenElseNode::make(likely(i >= 2 && i < 18), BufferStoreNode::make(B, load(A, i - 2), {i}),
                                        BufferStoreNode::make(B, 0.0f, {i}));
    QCOMPARE(printed(loopPartition(PrimFunc("pad", {A, B}, serial(i, 0, 20, guarded)))),
             QString(R"(func pad(A: float32[16], B: float32[20]) {
  for (i, 0, 2) {
    B[i] = 0.0f
  }
  for (i, 2, 16) {
    B[i] = A[i - 2]
  }
  for (i, 18, 2) {
    B[i] = 0.0f
  }
}
)"));
  }

  void likelySelectIsPartitionedToo() {
    Var i("i");
    Buffer A("A", DataType::float32(), {Expr(16)}), B("B", DataType::float32(), {Expr(16)});
    Expr shifted = select(likely(i >= 1), load(A, i - 1), Expr(0.0f));
    QCOMPARE(printed(loopPartition(PrimFunc("shift", {A, B}, serial(i, 0, 16, BufferStoreNode::make(B, shifted, {i}))))),
             QString(R"(func shift(A: float32[16], B: float32[16]) {
  for (i, 0, 1) {
    B[i] = 0.0f
  }
  for (i, 1, 15) {
    B[i] = A[i - 1]
  }
}
)"));
  }

  void concatOfThreeInParallelCopiesEachInputInItsOwnBranch() {
    // Concat's select chain on the parallel channel loop: one launch, and each branch reads
    // one input with no select left (K reads per element otherwise).
    Var c("c"), x("x");
    Buffer A("A", DataType::float32(), {Expr(32)}), B("B", DataType::float32(), {Expr(16)}),
        C("C", DataType::float32(), {Expr(16)}), D("D", DataType::float32(), {Expr(64)});
    Expr value = select(likely(c < 2), load(A, c * 16 + x),
                        select(likely(c < 3), load(B, (c - 2) * 16 + x), load(C, (c - 3) * 16 + x)));
    Stmt loop = ForNode::make(c, 0, 4, ForKind::Parallel, serial(x, 0, 16, BufferStoreNode::make(D, value, {c * 16 + x})));
    QCOMPARE(printed(loopPartition(PrimFunc("concat", {A, B, C, D}, loop))),
             QString(R"(func concat(A: float32[32], B: float32[16], C: float32[16], D: float32[64]) {
  parallel for (c, 0, 4) {
    if (c < 2) {
      for (x, 0, 16) {
        D[c*16 + x] = A[c*16 + x]
      }
    } else if (c < 3) {
      for (x, 0, 16) {
        D[c*16 + x] = B[(c - 2)*16 + x]
      }
    } else {
      for (x, 0, 16) {
        D[c*16 + x] = C[(c - 3)*16 + x]
      }
    }
  }
}
)"));
  }

  void conditionOnAnInnerLoopIsPartitionedThere() {
    Var io("io"), ii("ii");
    Buffer B("B", DataType::float32(), {Expr(128)});
    Stmt guarded = IfThenElseNode::make(likely(ii < 20), BufferStoreNode::make(B, 1.0f, {io * 32 + ii}));
    QCOMPARE(printed(loopPartition(PrimFunc("f", {B}, serial(io, 0, 4, serial(ii, 0, 32, guarded))))),
             QString(R"(func f(B: float32[128]) {
  for (io, 0, 4) {
    for (ii, 0, 20) {
      B[io*32 + ii] = 1.0f
    }
  }
}
)"));
  }

  void loopsWhereNothingIsProvableAreLeftAlone_data() {
    QTest::addColumn<int>("which");
    QTest::newRow("symbolic bound") << 0;
    QTest::newRow("symbolic extent") << 1;
    QTest::newRow("condition never decidable") << 2;
    QTest::newRow("no likely") << 3;
  }
  void loopsWhereNothingIsProvableAreLeftAlone() {
    QFETCH(int, which);
    Var io("io"), ii("ii"), n("n");
    Buffer A("A", DataType::float32(), {n}), B("B", DataType::float32(), {n});
    Expr index = io * 32 + ii;
    Expr conditions[] = {likely(index < n), likely(index < 100), likely(load(A, index) > 0.0f), index < 100};
    Stmt guarded = IfThenElseNode::make(conditions[which], BufferStoreNode::make(B, load(A, index), {index}));
    Expr outerExtent = which == 1 ? floordiv(n + 31, 32) : Expr(4);
    PrimFunc f("f", {A, B}, serial(io, 0, outerExtent, serial(ii, 0, 32, guarded)));
    PrimFunc result = loopPartition(f);
    QVERIFY2(result.same(f), qPrintable(printed(result)));
  }
};

QTEST_GUILESS_MAIN(TestLoopPartition)
#include "test_transform_loop_partition.moc"
