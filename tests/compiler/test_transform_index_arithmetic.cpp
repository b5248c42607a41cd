// Index arithmetic builders: the folds that keep flattened and vectorized IR readable.
#include <QtTest>

#include "compiler/transform/IndexArithmetic.h"
#include "core/ir/IR.h"

using namespace tessel;

class TestIndexArithmetic : public QObject {
  Q_OBJECT
private slots:
  void foldsWhileBuilding_data() {
    QTest::addColumn<int>("which");
    QTest::addColumn<QString>("expected");
    QTest::newRow("constants") << 0 << "14";
    QTest::newRow("zero and one vanish") << 1 << "i";
    QTest::newRow("constant goes right") << 2 << "i*32 + 1";
    QTest::newRow("negative constant subtracts") << 3 << "i - 3";
    QTest::newRow("constant chains fold") << 4 << "i + 1";
    QTest::newRow("scalar joins the ramp base") << 5 << "ramp(i*32 + 8, 1, 8)";
    QTest::newRow("ramp times stride") << 6 << "ramp(j*32, 32, 4)";
    QTest::newRow("ramp minus a broadcast") << 7 << "ramp(j - i, 1, 4)";
    QTest::newRow("two broadcasts") << 8 << "broadcast(i*j, 4)";
    QTest::newRow("product chain") << 9 << "i*40";
    QTest::newRow("gather index stays general") << 10 << "ramp(0, 1, 4)//broadcast(2, 4) + broadcast(i, 4)";
  }
  void foldsWhileBuilding() {
    QFETCH(int, which);
    QFETCH(QString, expected);
    Var i("i"), j("j");
    Expr ramp8 = RampNode::make(Expr(8), Expr(1), 8), rampJ = RampNode::make(j, Expr(1), 4);
    Expr results[] = {
        addIndex(mulIndex(Expr(3), Expr(4)), Expr(2)),
        mulIndex(addIndex(i, Expr(0)), Expr(1)),
        addIndex(Expr(1), mulIndex(Expr(32), i)),
        addIndex(i, Expr(-3)),
        subIndex(addIndex(i, Expr(4)), Expr(3)),
        addIndex(mulIndex(i, Expr(32)), ramp8),
        mulIndex(rampJ, Expr(32)),
        subIndex(rampJ, BroadcastNode::make(i, 4)),
        mulIndex(BroadcastNode::make(i, 4), BroadcastNode::make(j, 4)),
        mulIndex(mulIndex(i, Expr(2)), Expr(20)),
        addIndex(floordiv(RampNode::make(Expr(0), Expr(1), 4), Expr(2)), i),
    };
    QCOMPARE(QString::fromStdString(toString(results[which])), expected);
  }

  void vectorResultsHaveTheLanesOfTheWiderOperand() {
    Var i("i");
    Expr ramp = RampNode::make(Expr(0), Expr(1), 8);
    QCOMPARE(addIndex(i, ramp).dtype(), DataType::int64(8));
    QCOMPARE(mulIndex(Expr(0), ramp).dtype(), DataType::int64(8));
    QCOMPARE(addIndex(Expr(0), BroadcastNode::make(i, 8)).dtype(), DataType::int64(8));
  }

  void substituteAndFoldCleansUpReplacedConstants() {
    Var i("i"), j("j");
    Expr index = (i * 4 + j) * 8;
    QCOMPARE(QString::fromStdString(toString(substituteAndFold(index, VarMap{{i.get(), Expr(0)}}))), QString("j*8"));
    QCOMPARE(QString::fromStdString(toString(substituteAndFold(index, VarMap{{j.get(), Expr(0)}}))), QString("i*32"));
    QVERIFY(substituteAndFold(index, VarMap{}).same(index));
  }
};

QTEST_GUILESS_MAIN(TestIndexArithmetic)
#include "test_transform_index_arithmetic.moc"
