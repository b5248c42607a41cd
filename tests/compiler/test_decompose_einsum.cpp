// DecomposeEinsum: a two-operand Einsum that is a matrix product becomes Transpose/Reshape and a
// MatMul, computing the same numbers as the Einsum kernel; other Einsums are left alone.
#include <QtTest>

#include "GraphPassTestSupport.h"
#include "compiler/graph/DecomposeEinsum.h"

using namespace tessel;
using namespace tessel::graph;
using namespace tessel::testing;

namespace {

// "2x3x4 4" as {{2, 3, 4}, {4}}.
std::vector<std::vector<int64_t>> parseShapes(const QString& text) {
  std::vector<std::vector<int64_t>> shapes;
  for (const QString& shape : text.split(' ')) {
    std::vector<int64_t> dims;
    for (const QString& dim : shape.split('x')) dims.push_back(dim.toLongLong());
    shapes.push_back(dims);
  }
  return shapes;
}

Graph decomposed(const Graph& graph) {
  auto result = decomposeEinsum(graph);
  if (!result) qFatal("decomposeEinsum failed: %s", result.error().toString().c_str());
  return *result;
}

// y = Einsum(equation, operands...) over varied constants.
Graph einsumGraph(const std::string& equation, const std::vector<std::vector<int64_t>>& shapes) {
  std::vector<Value> operands;
  for (size_t i = 0; i < shapes.size(); ++i)
    operands.push_back(makeConstant("in" + std::to_string(i), variedArray(shapes[i], int(i) + 1)));
  Graph graph;
  graph.outputs = {typed("product", "Einsum", operands, {{"equation", equation}})};
  graph.outputNames = {"y"};
  return graph;
}

}  // namespace

class DecomposeEinsumTest : public QObject {
  Q_OBJECT

private slots:
  // MaxViT's attention scores (the equation as torch.onnx writes it, spaces included): the
  // second operand transposed, then one batched MatMul.
  void attentionScoresAreATransposeAndAMatMul() {
    Graph graph = einsumGraph("B G H I D, B G H J D -> B G H I J", {{1, 2, 3, 5, 4}, {1, 2, 3, 6, 4}});
    Graph rewritten = decomposed(graph);
    QCOMPARE(opKinds(rewritten), (std::vector<std::string>{"Transpose", "MatMul"}));
    QCOMPARE(rewritten.outputs[0].type(), graph.outputs[0].type());
    QCOMPARE(rewritten.operations()[1]->name, std::string("product/matmul"));
    QCOMPARE(rewritten.operations()[1]->provenance, graph.operations()[0]->provenance);
  }

  void matrixProductsMatchTheEinsumKernel_data() {
    QTest::addColumn<QString>("equation");
    QTest::addColumn<QString>("shapes");
    QTest::newRow("attention values") << "bhij,bhjd->bhid" << "2x3x4x5 2x3x5x6";
    QTest::newRow("plain") << "ij,jk->ik" << "3x4 4x5";
    QTest::newRow("second transposed") << "ij,kj->ik" << "3x4 5x4";
    QTest::newRow("output transposed") << "ji,jk->ki" << "4x3 4x5";
    QTest::newRow("two summed letters") << "abc,bcd->da" << "2x3x4 3x4x5";
    QTest::newRow("matrix times vector") << "ij,j->i" << "3x4 4";
    QTest::newRow("outer product") << "i,j->ij" << "3 4";
    QTest::newRow("batch in the middle") << "ibj,jbk->bik" << "3x2x4 4x2x5";
  }
  void matrixProductsMatchTheEinsumKernel() {
    QFETCH(QString, equation);
    QFETCH(QString, shapes);
    Graph graph = einsumGraph(equation.toStdString(), parseShapes(shapes));
    Graph rewritten = decomposed(graph);
    auto kinds = opKinds(rewritten);
    QCOMPARE(std::count(kinds.begin(), kinds.end(), std::string("Einsum")), 0);
    QCOMPARE(std::count(kinds.begin(), kinds.end(), std::string("MatMul")), 1);
    const double error = rewriteError(rewritten, graph);
    QVERIFY2(error < 1e-5, qPrintable(QString("relative error %1").arg(error)));
  }

  void otherEinsumsAreLeftAlone_data() {
    QTest::addColumn<QString>("equation");
    QTest::addColumn<QString>("shapes");
    QTest::newRow("diagonal") << "ii,ij->ij" << "3x3 3x4";
    QTest::newRow("ellipsis") << "...ij,...jk->...ik" << "2x3x4 2x4x5";
    QTest::newRow("summed in one operand") << "ij,jk->i" << "3x4 4x5";
    QTest::newRow("implicit output") << "ij,jk" << "3x4 4x5";
    QTest::newRow("three operands") << "ij,jk,kl->il" << "2x3 3x4 4x5";
  }
  void otherEinsumsAreLeftAlone() {
    QFETCH(QString, equation);
    QFETCH(QString, shapes);
    Graph graph = einsumGraph(equation.toStdString(), parseShapes(shapes));
    QCOMPARE(opKinds(decomposed(graph)), (std::vector<std::string>{"Einsum"}));
  }
};

QTEST_GUILESS_MAIN(DecomposeEinsumTest)
#include "test_decompose_einsum.moc"
