// removeNoOp: which statements disappear and which survive.
#include <QtTest>

#include "compiler/transform/RemoveNoOp.h"
#include "core/ir/IR.h"

using namespace tessel;

class TestRemoveNoOp : public QObject {
  Q_OBJECT
private slots:
  void removesWhatDoesNothing_data() {
    QTest::addColumn<int>("which");
    QTest::addColumn<QString>("expected");
    QTest::newRow("evaluate of constants") << 0 << "B[0] = 1.0f\n";
    QTest::newRow("loop of extent 0") << 1 << "B[0] = 1.0f\n";
    QTest::newRow("loop with an empty body") << 2 << "B[0] = 1.0f\n";
    QTest::newRow("if with empty branches") << 3 << "B[0] = 1.0f\n";
    QTest::newRow("empty then keeps the else") << 4 << "if (!(n > 0)) {\n  B[0] = 2.0f\n}\n";
    QTest::newRow("empty else is dropped") << 5 << "if (n > 0) {\n  B[0] = 2.0f\n}\n";
    QTest::newRow("let and allocate around nothing") << 6 << "B[0] = 1.0f\n";
    QTest::newRow("nothing left") << 7 << "";
  }
  void removesWhatDoesNothing() {
    QFETCH(int, which);
    QFETCH(QString, expected);
    Var i("i"), n("n"), x("x");
    Buffer B("B", DataType::float32(), {Expr(8)});
    Buffer T("T", DataType::float32(), {Expr(8)});
    Stmt keep = BufferStoreNode::make(B, 1.0f, {Expr(0)});
    Stmt other = BufferStoreNode::make(B, 2.0f, {Expr(0)});
    Stmt nop = EvaluateNode::make(Expr(0));
    Stmt input;
    switch (which) {
      case 0: input = SeqStmtNode::make({nop, keep, EvaluateNode::make(Expr(1.5f))}); break;
      case 1: input = SeqStmtNode::make({ForNode::make(i, 0, 0, ForKind::Serial, keep), keep}); break;
      case 2: input = SeqStmtNode::make({ForNode::make(i, 0, n, ForKind::Serial, nop), keep}); break;
      case 3: input = SeqStmtNode::make({IfThenElseNode::make(n > 0, nop, nop), keep}); break;
      case 4: input = IfThenElseNode::make(n > 0, nop, other); break;
      case 5: input = IfThenElseNode::make(n > 0, other, SeqStmtNode::make({nop, nop})); break;
      case 6:
        input = SeqStmtNode::make({LetStmtNode::make(x, n + 1, AllocateNode::make(T, nop)), keep});
        break;
      default: input = ForNode::make(i, 0, 4, ForKind::Parallel, SeqStmtNode::make({nop, nop})); break;
    }
    QCOMPARE(QString::fromStdString(toString(removeNoOp(input))), expected);
  }

  void statementWithoutNoOpsIsReturnedAsIs() {
    Var i("i");
    Buffer B("B", DataType::float32(), {Expr(8)});
    Stmt loop = ForNode::make(i, 0, 8, ForKind::Serial,
                              SeqStmtNode::make({BufferStoreNode::make(B, 0.0f, {i}), BufferStoreNode::make(B, 1.0f, {i})}));
    QVERIFY(removeNoOp(loop).same(loop));
    PrimFunc f("f", {B}, loop);
    QVERIFY(removeNoOp(f).same(f));
  }

  void functionThatDoesNothingKeepsAnEmptyBody() {
    Var i("i");
    Buffer B("B", DataType::float32(), {Expr(8)});
    PrimFunc f("f", {B}, ForNode::make(i, 0, 8, ForKind::Serial, EvaluateNode::make(Expr(0))));
    PrimFunc cleaned = removeNoOp(f);
    QCOMPARE(QString::fromStdString(toString(cleaned)), QString("func f(B: float32[8]) {\n}\n"));
    QVERIFY(removeNoOp(cleaned).same(cleaned));
  }
};

QTEST_GUILESS_MAIN(TestRemoveNoOp)
#include "test_transform_remove_no_op.moc"
