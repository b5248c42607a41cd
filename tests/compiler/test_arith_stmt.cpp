// Statement simplification over loop nests: provable conditions go, undecidable ones stay,
// trivial loops disappear, and every expression is simplified with the loop ranges known.
#include <QtTest>

#include "compiler/arith/Simplify.h"
#include "core/ir/IR.h"

using namespace tessel;

namespace {

QString text(const Stmt& s) { return QString::fromStdString(toString(s)); }
QString text(const PrimFunc& f) { return QString::fromStdString(toString(f)); }

Stmt loop(const Var& v, Expr min, Expr extent, Stmt body, ForKind kind = ForKind::Serial) {
  return ForNode::make(v, std::move(min), std::move(extent), kind, std::move(body));
}

// for (io, 0, outerExtent) for (ii, 0, 32) if (likely(io*32 + ii < limit)) C[io*32 + ii] = A[io*32 + ii]*2
struct SplitNest {
  Var io{"io"}, ii{"ii"};
  Buffer A{"A", DataType::float32(), {Expr(1024)}};
  Buffer C{"C", DataType::float32(), {Expr(1024)}};
  Stmt build(Expr outerExtent, Expr limit) const {
    Expr index = io * 32 + ii;
    Stmt store = BufferStoreNode::make(C, BufferLoadNode::make(A, {index}) * 2.0f, {index});
    Stmt guarded = IfThenElseNode::make(likely(index < limit), store);
    return loop(io, 0, outerExtent, loop(ii, 0, 32, guarded));
  }
};

}  // namespace

class TestArithStmt : public QObject {
  Q_OBJECT
private slots:
  void removesProvableTailCondition() {
    SplitNest nest;
    QCOMPARE(text(simplify(nest.build(32, 1024))),
             QString("for (io, 0, 32) {\n"
                     "  for (ii, 0, 32) {\n"
                     "    C[io*32 + ii] = A[io*32 + ii]*2.0f\n"
                     "  }\n"
                     "}\n"));
  }

  void keepsUnprovableTailCondition() {
    SplitNest nest;
    QCOMPARE(text(simplify(nest.build(32, 1000))),
             QString("for (io, 0, 32) {\n"
                     "  for (ii, 0, 32) {\n"
                     "    if (likely(io*32 + ii < 1000)) {\n"
                     "      C[io*32 + ii] = A[io*32 + ii]*2.0f\n"
                     "    }\n"
                     "  }\n"
                     "}\n"));
  }

  void keepsSymbolicTailCondition() {
    // ceil(n / 32) outer iterations: the last one runs past n, so the check must stay.
    SplitNest nest;
    Var n("n");
    Stmt simplified = simplify(nest.build(floordiv(n + 31, 32), n));
    QVERIFY(text(simplified).contains("if (likely(io*32 + ii < n))"));
  }

  void removesConditionProvenBySymbolicRange() {
    Var i("i"), n("n");
    Buffer B("B", DataType::float32(), {n});
    Stmt s = loop(i, 0, n, IfThenElseNode::make(i < n, BufferStoreNode::make(B, Expr(0.0f), {i})));
    QCOMPARE(text(simplify(s)), QString("for (i, 0, n) {\n"
                                        "  B[i] = 0.0f\n"
                                        "}\n"));
  }

  void branchConditionNarrowsTheLoopRange() {
    // Inside if (i < 50) the loop variable is below 50; in its else branch at least 50.
    Var i("i"), n("n");
    Buffer B("B", DataType::int64(), {Expr(100)});
    Stmt thenCase = BufferStoreNode::make(B, select(i < 60, Expr(1), Expr(2)), {i});
    Stmt elseCase = IfThenElseNode::make(i >= 40, BufferStoreNode::make(B, Expr(3), {i}));
    Stmt s = loop(i, 0, 100, IfThenElseNode::make(likely(i < 50), thenCase, elseCase));
    QCOMPARE(text(simplify(s)), QString("for (i, 0, 100) {\n"
                                        "  if (likely(i < 50)) {\n"
                                        "    B[i] = 1\n"
                                        "  } else {\n"
                                        "    B[i] = 3\n"
                                        "  }\n"
                                        "}\n"));
    // Symbolic bounds narrow too: past i >= 4, i - 4 is never negative.
    Stmt shifted = IfThenElseNode::make(i >= 4, IfThenElseNode::make(i - 4 >= 0, BufferStoreNode::make(B, Expr(0), {i - 4})));
    QCOMPARE(text(simplify(loop(i, 0, n, shifted))), QString("for (i, 0, n) {\n"
                                                             "  if (i >= 4) {\n"
                                                             "    B[i - 4] = 0\n"
                                                             "  }\n"
                                                             "}\n"));
    // A condition on something else than a loop variable narrows nothing.
    Stmt other = IfThenElseNode::make(n < 50, IfThenElseNode::make(i < 50, BufferStoreNode::make(B, Expr(0), {i})));
    QVERIFY(text(simplify(loop(i, 0, 100, other))).contains("if (i < 50)"));
  }

  void takesElseBranchOfFalseCondition() {
    Var i("i");
    Buffer B("B", DataType::int64(), {Expr(8)});
    Stmt branch = IfThenElseNode::make(i >= 8, BufferStoreNode::make(B, Expr(1), {i}),
                                       BufferStoreNode::make(B, Expr(2), {i}));
    QCOMPARE(text(simplify(loop(i, 0, 8, branch))), QString("for (i, 0, 8) {\n"
                                                            "  B[i] = 2\n"
                                                            "}\n"));
    // No else: the whole statement (and then the loop) goes.
    Stmt lonely = IfThenElseNode::make(i >= 8, BufferStoreNode::make(B, Expr(1), {i}));
    QCOMPARE(text(simplify(loop(i, 0, 8, lonely))), QString(""));
  }

  void dropsEmptyAndSubstitutesUnitLoops() {
    Var i("i"), j("j"), k("k");
    Buffer B("B", DataType::int64(), {Expr(64)});
    Stmt empty = loop(k, 0, 0, BufferStoreNode::make(B, Expr(7), {k}));
    Stmt unit = loop(i, 4, 1, loop(j, 0, 8, BufferStoreNode::make(B, i * 8 + j, {i * 8 + j})));
    QCOMPARE(text(simplify(SeqStmtNode::make({empty, unit}))), QString("for (j, 0, 8) {\n"
                                                                       "  B[j + 32] = j + 32\n"
                                                                       "}\n"));
  }

  void unitLoopSizingABufferStaysDefined() {
    // The allocation inside is sized by jo; replacing jo in the body cannot reach the
    // buffer's shape, so jo stays defined as a let.
    Var jo("jo"), n("n");
    Buffer T("T", DataType::float32(), {jo + 4}, "local");
    Buffer C("C", DataType::float32(), {Expr(4)});
    Stmt body = AllocateNode::make(T, SeqStmtNode::make({BufferStoreNode::make(T, Expr(1.0f), {jo}),
                                                          BufferStoreNode::make(C, BufferLoadNode::make(T, {jo}), {jo})}));
    QCOMPARE(text(simplify(loop(jo, 0, 1, body))), QString("let jo = 0\n"
                                                           "allocate T: float32[jo + 4] in local\n"
                                                           "T[0] = 1.0f\n"
                                                           "C[0] = T[0]\n"));
    // Likewise a let whose variable only a buffer shape mentions is kept.
    Stmt let = LetStmtNode::make(n, Expr(8), AllocateNode::make(Buffer("U", DataType::float32(), {n}, "local"),
                                                                BufferStoreNode::make(C, Expr(0.0f), {Expr(0)})));
    QVERIFY(text(simplify(let)).startsWith("let n = 8\n"));
  }

  void keepsUnitThreadBinding() {
    Var tx("tx");
    Buffer B("B", DataType::int64(), {Expr(1)});
    Stmt bound = ForNode::make(tx, 0, 1, ForKind::ThreadBinding, BufferStoreNode::make(B, tx + 1, {tx}), "threadIdx.x");
    QCOMPARE(text(simplify(bound)), QString("bind(threadIdx.x) for (tx, 0, 1) {\n"
                                            "  B[tx] = tx + 1\n"
                                            "}\n"));
  }

  void simplifiesIndicesWithLoopRanges() {
    Var io("io"), ii("ii");
    Buffer B("B", DataType::int64(), {Expr(32), Expr(32)});
    Expr fused = io * 32 + ii;
    Stmt s = loop(io, 0, 32, loop(ii, 0, 32, BufferStoreNode::make(B, min(ii, 100), {floordiv(fused, 32), floormod(fused, 32)})));
    QCOMPARE(text(simplify(s)), QString("for (io, 0, 32) {\n"
                                        "  for (ii, 0, 32) {\n"
                                        "    B[io, ii] = ii\n"
                                        "  }\n"
                                        "}\n"));
  }

  void letsAreTrackedAndUnusedOnesDropped() {
    Var i("i"), t("t"), u("u");
    Buffer B("B", DataType::int64(), {Expr(64)});
    // t = i*2 stays (it is used) and tells the simplifier that t < 64.
    Stmt body = LetStmtNode::make(t, i * 2, IfThenElseNode::make(t < 64, BufferStoreNode::make(B, t, {t})));
    // u = 5 is substituted and its let disappears.
    Stmt constant = LetStmtNode::make(u, Expr(5), BufferStoreNode::make(B, u + 1, {u}));
    QCOMPARE(text(simplify(loop(i, 0, 32, SeqStmtNode::make({body, constant})))),
             QString("for (i, 0, 32) {\n"
                     "  let t = i*2\n"
                     "  B[t] = t\n"
                     "  B[5] = 6\n"
                     "}\n"));
  }

  void unchangedFunctionKeepsItsHandle() {
    Var i("i"), n("n");
    Buffer B("B", DataType::float32(), {n});
    PrimFunc f("fill", {B}, loop(i, 0, n, BufferStoreNode::make(B, Expr(1.0f), {i})));
    QVERIFY(simplify(f).same(f));
    PrimFunc g("fill", {B}, loop(i, 0, n, BufferStoreNode::make(B, Expr(1.0f), {i + 0})));
    QCOMPARE(text(simplify(g)), QString("func fill(B: float32[n]) {\n"
                                        "  for (i, 0, n) {\n"
                                        "    B[i] = 1.0f\n"
                                        "  }\n"
                                        "}\n"));
  }

  void leavesUnknownStatementsAlone() {
    // Allocations, attributes, realizations and reductions pass through with their
    // expressions simplified; nothing is dropped that does work.
    Var i("i"), k("k");
    Buffer T("T", DataType::float32(), {Expr(8)}, "local");
    Buffer A("A", DataType::float32(), {Expr(8), Expr(8)});
    IterVar axis(k, Range::fromMinExtent(0, 8), IterVarType::Reduce);
    Expr reduction = ReduceNode::make(Reducer::Sum, BufferLoadNode::make(A, {Expr(i), Expr(k)}), {axis});
    Stmt store = BufferStoreNode::make(T, reduction, {i + 0});
    Stmt realize = BufferRealizeNode::make(T, {Range::fromMinExtent(0, Expr(4) + 4)}, loop(i, 0, 8, store));
    Stmt s = AllocateNode::make(T, AttrStmtNode::make("pragma_unroll", Expr(1) + 1, realize));
    QCOMPARE(text(simplify(s)), QString("allocate T: float32[8] in local\n"
                                        "attr pragma_unroll = 2\n"
                                        "realize T: float32[0:8] in local {\n"
                                        "  for (i, 0, 8) {\n"
                                        "    T[i] = sum(A[i, k], over k in [0, 8))\n"
                                        "  }\n"
                                        "}\n"));
  }

  void largeLoopNestIsFast() {
    // 200 sibling nests of depth 3 with index arithmetic: must finish quickly (no
    // exponential behaviour); the check is that it completes and cleans every index.
    Buffer B("B", DataType::int64(), {Expr(1 << 20)});
    std::vector<Stmt> nests;
    for (int n = 0; n < 200; ++n) {
      Var a("a"), b("b"), c("c");
      Expr index = (a * 64 + b * 8 + c) * 1 + 0;
      Stmt body = IfThenElseNode::make(likely(index < 512), BufferStoreNode::make(B, index - a * 64, {index}));
      nests.push_back(loop(a, 0, 8, loop(b, 0, 8, loop(c, 0, 8, body))));
    }
    QString result = text(simplify(SeqStmtNode::make(nests)));
    QVERIFY(!result.contains("if"));
    // The printer tells the 200 a's apart as a, a_1, a_2, ...
    QRegularExpression cleaned(R"(B\[a(_\d+)?\*64 \+ b(_\d+)?\*8 \+ c(_\d+)?\] = b(_\d+)?\*8 \+ c(_\d+)?\n)");
    QCOMPARE(result.count(cleaned), 200);
  }
};

QTEST_GUILESS_MAIN(TestArithStmt)
#include "test_arith_stmt.moc"
