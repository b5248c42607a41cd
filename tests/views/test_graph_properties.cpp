// The node properties model and panel: a well-formed tree (QAbstractItemModelTester) with the
// op, attributes, typed inputs/outputs, provenance and absorbed ops; weight statistics.
#include <QtTest>

#include <QAbstractItemModelTester>
#include <QTreeView>

#include <qcustomplot.h>

#include "ExampleModelSupport.h"
#include "compiler/driver/Driver.h"
#include "views/graph/NodeCategory.h"
#include "views/graph/NodePropertiesModel.h"
#include "views/graph/NodePropertiesPanel.h"
#include "views/graph/TensorStatistics.h"

using namespace tessel;
using namespace tessel::views;

namespace {

using testing::importedExample;
using testing::optimizedExample;

const graph::OperationNode* firstOp(const graph::Graph& graph, const std::function<bool(const graph::OperationNode&)>& pick) {
  for (const auto* op : graph.operations())
    if (pick(*op)) return op;
  return nullptr;
}

QString valueOf(const NodePropertiesModel& model, const QString& key, const QModelIndex& parent = {}) {
  return model.findRow(key, parent).siblingAtColumn(1).data().toString();
}

runtime::NDArray floats(const std::vector<float>& values) {
  auto array = runtime::NDArray::empty({int64_t(values.size())}, runtime::DataType::float32());
  array.copyFrom(values);
  return array;
}

}  // namespace

class TestGraphProperties : public QObject {
  Q_OBJECT
private slots:
  void convolutionShowsEverythingAReaderAsksFor() {
    auto graph = importedExample();
    const auto* conv = firstOp(*graph, [](auto& op) { return op.op == "Conv"; });
    QVERIFY(conv);
    NodePropertiesModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setNode(graph, conv);
    QCOMPARE(valueOf(model, "Operator"), QStringLiteral("Conv"));
    QCOMPARE(valueOf(model, "Name"), QString::fromStdString(conv->name));
    QCOMPARE(valueOf(model, "Category"), categoryDisplayName(NodeCategory::Compute));

    QModelIndex attributes = model.findRow("Attributes");
    QVERIFY(attributes.isValid());
    QCOMPARE(model.rowCount(attributes), int(conv->attributes.size()));
    QCOMPARE(valueOf(model, "kernel_shape", attributes),
             QString::fromStdString(graph::attributeToString(conv->attributes.at("kernel_shape"))));

    QModelIndex inputs = model.findRow("Inputs");
    QCOMPARE(model.rowCount(inputs), int(conv->inputs.size()));
    QModelIndex weight = model.findRow("input 1", inputs);
    QVERIFY(weight.siblingAtColumn(1).data().toString().contains(QString::fromStdString(conv->inputs[1].name())));
    QCOMPARE(valueOf(model, "dtype", weight), QStringLiteral("float32"));
    QCOMPARE(valueOf(model, "producer", weight), QStringLiteral("constant"));
    QCOMPARE(model.constantAt(weight), graph::asConstant(conv->inputs[1].node()));
    QCOMPARE(model.data(weight, NodePropertiesModel::ConstantNameRole).toString(),
             QString::fromStdString(conv->inputs[1].node()->name));
    // The data input is no constant.
    QVERIFY(!model.constantAt(model.findRow("input 0", inputs)));

    QModelIndex outputs = model.findRow("Outputs");
    QModelIndex output = model.findRow("output 0", outputs);
    QStringList extents;
    for (int64_t e : conv->outputTypes[0].shape) extents << QString::number(e);
    QCOMPARE(valueOf(model, "shape", output), "[" + extents.join(", ") + "]");

    QModelIndex provenance = model.findRow("Provenance");
    QVERIFY(provenance.isValid());
    QModelIndex origin = model.findRow(QString::fromStdString(conv->provenance[0].nodeName), provenance);
    QCOMPARE(valueOf(model, "ONNX op", origin), QStringLiteral("Conv"));
    QVERIFY(valueOf(model, "opset", origin).toInt() > 0);
  }

  void fusedOperationListsWhatItAbsorbed() {
    auto graph = optimizedExample();
    const auto* fused = firstOp(*graph, [](auto& op) { return op.isFused(); });
    QVERIFY(fused);
    NodePropertiesModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setNode(graph, fused);
    QCOMPARE(valueOf(model, "Category"), categoryDisplayName(NodeCategory::Fused));
    QModelIndex absorbed = model.findRow("Fused operations");
    auto inner = fused->body->operations();
    QCOMPARE(model.rowCount(absorbed), int(inner.size()));
    for (int i = 0; i < int(inner.size()); ++i) {
      QModelIndex row = model.index(i, 0, absorbed);
      QCOMPARE(row.data().toString(), QString::fromStdString(inner[size_t(i)]->op));
      QCOMPARE(row.siblingAtColumn(1).data().toString(), QString::fromStdString(inner[size_t(i)]->name));
    }
    QCOMPARE(model.rowCount(model.findRow("Provenance")), int(fused->provenance.size()));
    // Switching nodes and clearing keeps the model consistent (the tester watches resets).
    model.setNode(graph, graph->inputs[0].node());
    QCOMPARE(valueOf(model, "Operator"), QStringLiteral("Input"));
    model.setNode(nullptr, nullptr);
    QCOMPARE(model.rowCount(), 0);
  }

  void statisticsSummarizeTheData() {
    auto stats = computeTensorStatistics(floats({0.f, 1.f, 2.f, 3.f, 0.f, -2.f}), 5);
    QVERIFY(stats);
    QCOMPARE(stats->count, int64_t(6));
    QCOMPARE(stats->minimum, -2.0);
    QCOMPARE(stats->maximum, 3.0);
    QCOMPARE(stats->mean, 4.0 / 6.0);
    double variance = 0;
    for (float v : {0.f, 1.f, 2.f, 3.f, 0.f, -2.f}) variance += (v - 4.0 / 6.0) * (v - 4.0 / 6.0);
    QVERIFY(std::abs(stats->standardDeviation - std::sqrt(variance / 6)) < 1e-9);
    QCOMPARE(stats->zeroPercent, 100.0 * 2 / 6);
    int64_t total = 0;
    for (auto bin : stats->histogram) total += bin;
    QCOMPARE(total, int64_t(6));
    QCOMPARE(stats->histogram.front(), int64_t(1));  // -2 alone in [-2, -1)
    QCOMPARE(stats->histogram.back(), int64_t(2));   // 2 and 3: the last bin is closed

    auto withNan = computeTensorStatistics(floats({1.f, std::nanf(""), 3.f}), 4);
    QCOMPARE(withNan->count, int64_t(2));
    QCOMPARE(withNan->nonFinite, int64_t(1));
    QCOMPARE(withNan->mean, 2.0);

    auto half = runtime::NDArray::empty({2}, runtime::DataType::float16());
    QVERIFY(!computeTensorStatistics(half));
  }

  void panelShowsTheLargestWeightAndFollowsClicks() {
    auto graph = importedExample();
    const auto* conv = firstOp(*graph, [](auto& op) { return op.op == "Conv" && op.inputs.size() >= 3; });
    QVERIFY(conv);
    NodePropertiesPanel panel;
    panel.resize(400, 600);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    panel.setNode(graph, conv);
    // The weight (not the bias) is shown first: it is the larger constant.
    QCOMPARE(panel.statisticsTensor(), QString::fromStdString(conv->inputs[1].node()->name));
    QVERIFY(panel.statistics());
    auto values = graph::asConstant(conv->inputs[1].node())->data.toVector<float>();
    QCOMPARE(panel.statistics()->minimum, double(*std::min_element(values.begin(), values.end())));
    QCOMPARE(panel.statistics()->count, int64_t(values.size()));
    QCOMPARE(panel.histogramPlot()->plottableCount(), 1);
    // Clicking the bias input row switches the statistics to the bias.
    QModelIndex inputs = panel.model()->findRow("Inputs");
    QModelIndex bias = panel.model()->findRow("input 2", inputs);
    panel.treeView()->scrollTo(bias);
    QRect rect = panel.treeView()->visualRect(bias);
    QVERIFY(rect.isValid());
    QTest::mouseClick(panel.treeView()->viewport(), Qt::LeftButton, Qt::NoModifier, rect.center());
    QCOMPARE(panel.statisticsTensor(), QString::fromStdString(conv->inputs[2].node()->name));
    QCOMPARE(panel.statistics()->count, conv->inputs[2].type().elementCount());
    panel.grab().save(TESSEL_BINARY_DIR "/graph_properties_panel.png");
    // A node without weights hides the statistics.
    const auto* relu = firstOp(*graph, [](auto& op) { return op.op == "Relu"; });
    panel.setNode(graph, relu);
    QVERIFY(panel.statisticsTensor().isEmpty());
    QVERIFY(!panel.statistics());
  }
};

QTEST_MAIN(TestGraphProperties)
#include "test_graph_properties.moc"
