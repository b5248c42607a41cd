// The graph view on an int8 model (resources/examples/tiny_resnet.int8.onnx, written by
// `tessel quantize`): boxes carry where the model enters int8, computes in it and leaves it;
// 8-bit tensors' edges are marked; the properties panel shows scales and zero points.
#include <QtTest>

#include "compiler/driver/Driver.h"
#include "views/graph/GraphLayout.h"
#include "views/graph/NodePropertiesModel.h"
#include "views/graph/QuantizationInfo.h"

using namespace tessel;
using namespace tessel::views;

namespace {

std::shared_ptr<const graph::Graph> quantizedExample(bool optimized) {
  auto graph = driver::loadModel(TESSEL_SOURCE_DIR "/resources/examples/tiny_resnet.int8.onnx");
  if (!graph) qFatal("%s", graph.error().toString().c_str());
  if (!optimized) return std::make_shared<const graph::Graph>(*graph);
  auto compiled = driver::compileGraph(*graph);
  if (!compiled) qFatal("%s", compiled.error().toString().c_str());
  return std::make_shared<const graph::Graph>(compiled->optimized);
}

GraphLayout layOut(std::shared_ptr<const graph::Graph> graph) {
  JobContext job;
  GraphLayoutOptions options;
  options.expandAllFused = true;
  auto layout = layoutGraph(std::move(graph), options, job);
  if (!layout) qFatal("%s", layout.error().toString().c_str());
  return std::move(*layout);
}

const LayoutNode* boxOf(const GraphLayout& layout, const QString& op, const QString& nameContains = {}) {
  for (const auto& node : layout.nodes)
    if (node.op == op && node.name.contains(nameContains)) return &node;
  return nullptr;
}

QString valueOf(const NodePropertiesModel& model, const QString& key, const QModelIndex& parent = {}) {
  return model.findRow(key, parent).siblingAtColumn(1).data().toString();
}

}  // namespace

class TestGraphQuantization : public QObject {
  Q_OBJECT
private slots:
  // As imported: QuantizeLinear enters int8, DequantizeLinear leaves it, and the edges
  // between them carry 8-bit tensors.
  void theImportedModelShowsWhereInt8Begins() {
    GraphLayout layout = layOut(quantizedExample(false));
    const LayoutNode* quantize = boxOf(layout, "QuantizeLinear", "image");
    const LayoutNode* dequantize = boxOf(layout, "DequantizeLinear", "image");
    const LayoutNode* conv = boxOf(layout, "Conv");
    QVERIFY(quantize && dequantize && conv);
    QCOMPARE(quantize->quantizationTag, QString("→ int8"));
    QCOMPARE(dequantize->quantizationTag, QString("int8 →"));
    QCOMPARE(conv->quantizationTag, QString());  // a float Conv between dequantized operands
    int quantizedEdges = 0, floatEdges = 0;
    for (const auto& edge : layout.edges) {
      bool fromQuantize = layout.nodes[size_t(edge.from)].op == "QuantizeLinear";
      if (fromQuantize) QVERIFY2(edge.quantized, qPrintable(edge.tensor));
      quantizedEdges += edge.quantized;
      floatEdges += !edge.quantized;
    }
    QVERIFY(quantizedEdges > 0 && floatEdges > 0);
  }

  // Compiled: the convolutions are int8 kernels; the dense head reads int8.
  void theCompiledModelMarksItsInt8Kernels() {
    GraphLayout layout = layOut(quantizedExample(true));
    int integerKernels = 0;
    for (const auto& node : layout.nodes)
      if (node.op == "QLinearConvPrepacked") {
        QCOMPARE(node.quantizationTag, QString("int8"));
        ++integerKernels;
      }
    QCOMPARE(integerKernels, 3);
    const LayoutNode* head = boxOf(layout, "QDensePrepacked");
    QVERIFY(head);
    QVERIFY(!head->quantizationTag.isEmpty());
  }

  // The properties panel: a QuantizeLinear's scale and zero point, a DequantizeLinear of
  // per-filter weights with its axis, and the folded scales of a compiled int8 kernel.
  void thePropertiesShowScalesAndZeroPoints() {
    auto imported = quantizedExample(false);
    NodePropertiesModel model;
    const graph::OperationNode* quantize = nullptr;
    const graph::OperationNode* weights = nullptr;
    for (const auto* op : imported->operations()) {
      if (op->op == "QuantizeLinear" && !quantize) quantize = op;
      if (op->op == "DequantizeLinear" && op->inputs[1].type().elementCount() > 1 && !weights) weights = op;
    }
    QVERIFY(quantize && weights);
    model.setNode(imported, quantize);
    QModelIndex group = model.findRow("Quantization");
    QVERIFY(group.isValid());
    QCOMPARE(group.siblingAtColumn(1).data().toString(), QString("→ int8"));
    bool parsed = false;
    double scale = valueOf(model, "scale", group).toDouble(&parsed);
    QVERIFY2(parsed && scale > 0, qPrintable(valueOf(model, "scale", group)));
    QCOMPARE(valueOf(model, "integer type", group), QString("uint8"));

    model.setNode(imported, weights);
    group = model.findRow("Quantization");
    QVERIFY2(valueOf(model, "scale", group).contains(" values, "), qPrintable(valueOf(model, "scale", group)));
    QCOMPARE(valueOf(model, "axis", group), QString("0"));
    QCOMPARE(valueOf(model, "integer type", group), QString("int8"));

    auto compiled = quantizedExample(true);
    const graph::OperationNode* kernel = nullptr;
    for (const auto* op : compiled->operations())
      if (op->op == "QLinearConvPrepacked") kernel = op;
    QVERIFY(kernel);
    model.setNode(compiled, kernel);
    group = model.findRow("Quantization");
    QVERIFY(group.isValid());
    QVERIFY2(valueOf(model, "scale (x·w/y, folded)", group).contains(" values, "),
             qPrintable(valueOf(model, "scale (x·w/y, folded)", group)));
    QCOMPARE(valueOf(model, "output type", group), QString("uint8"));

    // A float operation has no such group.
    for (const auto* op : imported->operations())
      if (op->op == "Softmax") model.setNode(imported, op);
    QVERIFY(!model.findRow("Quantization").isValid());
  }
};

QTEST_MAIN(TestGraphQuantization)
#include "test_graph_quantization.moc"
