// Graph layout: the example model gets a box per operation, fused groups become clusters when
// expanded, weights are folded into their consumers, edges carry shapes and run downward.
#include <QtTest>

#include "ExampleModelSupport.h"
#include "ModularGraphSupport.h"
#include "compiler/driver/Driver.h"
#include "views/graph/GraphLayout.h"
#include "views/graph/ModuleGroups.h"
#include "views/graph/NodeCategory.h"

using namespace tessel;
using namespace tessel::views;

namespace {

using testing::importedExample;
using testing::optimizedExample;
using testing::modularGraph;

GraphLayout layOut(std::shared_ptr<const graph::Graph> graph, GraphLayoutOptions options = {}) {
  JobContext job;
  auto layout = layoutGraph(std::move(graph), options, job);
  if (!layout) qFatal("%s", layout.error().toString().c_str());
  return std::move(*layout);
}

// What a reader would see as a broken drawing: boxes on top of each other at one level, or
// data flowing upward in a top-to-bottom layout.
void verifyReadable(const GraphLayout& layout) {
  for (size_t i = 0; i < layout.nodes.size(); ++i) {
    QVERIFY2(layout.bounds.contains(layout.nodes[i].box), qPrintable(layout.nodes[i].id));
    for (size_t j = i + 1; j < layout.nodes.size(); ++j)
      QVERIFY2(!layout.nodes[i].box.intersects(layout.nodes[j].box),
               qPrintable(layout.nodes[i].id + " overlaps " + layout.nodes[j].id));
  }
  for (const auto& edge : layout.edges) {
    const auto& from = layout.nodes[size_t(edge.from)];
    const auto& to = layout.nodes[size_t(edge.to)];
    QVERIFY2(from.box.center().y() < to.box.center().y(), qPrintable(from.id + " -> " + to.id));
    QVERIFY(edge.spline.size() >= 4 && (edge.spline.size() - 1) % 3 == 0);
    // The arrow ends at the consumer's box.
    QVERIFY2(to.box.adjusted(-3, -3, 3, 3).contains(edge.arrowTip), qPrintable(from.id + " -> " + to.id));
  }
}


}  // namespace

class TestGraphLayout : public QObject {
  Q_OBJECT
private slots:
  void optimizedExampleHasABoxPerOperation() {
    auto graph = optimizedExample();
    GraphLayout layout = layOut(graph);
    QCOMPARE(layout.engine, QStringLiteral("dot"));
    int fused = 0;
    for (const auto* op : graph->operations()) {
      const LayoutNode* box = layout.findNode(QString::fromStdString(op->name));
      QVERIFY2(box, op->name.c_str());
      QCOMPARE(box->source, op);
      QCOMPARE(box->collapsedFused, op->isFused());
      if (op->isFused()) {
        ++fused;
        QCOMPARE(box->category, NodeCategory::Fused);
      }
    }
    QVERIFY(fused >= 3);
    QVERIFY(layout.clusters.empty());
    // One box per operation, one per input and one per output: constants are not boxes.
    QCOMPARE(layout.nodes.size(), graph->operations().size() + graph->inputs.size() + graph->outputs.size());
    QVERIFY(layout.findNode("image"));
    QCOMPARE(layout.findNode("image")->category, NodeCategory::InputOutput);
    verifyReadable(layout);
  }

  void expandedFusedOperationsBecomeClusters() {
    auto graph = optimizedExample();
    GraphLayout layout = layOut(graph, GraphLayoutOptions{.expandAllFused = true});
    int fused = 0;
    for (const auto* op : graph->operations()) {
      if (!op->isFused()) continue;
      ++fused;
      QString name = QString::fromStdString(op->name);
      QVERIFY2(!layout.findNode(name), "an expanded fused op has no box of its own");
      const LayoutCluster* cluster = layout.findCluster(name);
      QVERIFY(cluster);
      // The frame's title names what was fused, in order.
      for (const auto* inner : op->body->operations())
        QVERIFY2(cluster->title.contains(QString::fromStdString(inner->op)), qPrintable(cluster->title));
      // Every operation of the body is a box inside the frame.
      for (const auto* inner : op->body->operations()) {
        const LayoutNode* box = nullptr;
        for (const auto& node : layout.nodes)
          if (node.source == inner) box = &node;
        QVERIFY2(box, inner->name.c_str());
        QCOMPARE(box->clusterId, name);
        QVERIFY(cluster->box.contains(box->box));
      }
    }
    QCOMPARE(int(layout.clusters.size()), fused);
    verifyReadable(layout);
  }

  void onlyTheRequestedGroupExpands() {
    auto graph = optimizedExample();
    QString first;
    for (const auto* op : graph->operations())
      if (op->isFused() && first.isEmpty()) first = QString::fromStdString(op->name);
    GraphLayout layout = layOut(graph, GraphLayoutOptions{.expandedFusedNodes = {first}});
    QCOMPARE(layout.clusters.size(), size_t(1));
    QCOMPARE(layout.clusters[0].id, first);
    QVERIFY(!layout.findNode(first));
  }

  void weightsAreFoldedIntoTheirConsumer() {
    auto graph = importedExample();
    GraphLayout layout = layOut(graph);
    const graph::OperationNode* conv = nullptr;
    for (const auto* op : graph->operations())
      if (op->op == "Conv" && !conv) conv = op;
    QVERIFY(conv);
    const LayoutNode* box = layout.findNode(QString::fromStdString(conv->name));
    QVERIFY(box);
    QCOMPARE(box->category, NodeCategory::Compute);
    const auto& weightShape = conv->inputs[1].type().shape;
    QVERIFY2(box->details.contains("W " + shapeText(weightShape)), qPrintable(box->details.join(" | ")));
    for (const auto& node : layout.nodes) QVERIFY(!graph::asConstant(node.source));
    // The weight's tensor name is still findable on its consumer.
    QVERIFY(box->tensorNames.contains(QString::fromStdString(conv->inputs[1].node()->name)));
  }

  void edgesCarryShapesAndTypes() {
    auto graph = importedExample();
    GraphLayout layout = layOut(graph);
    const LayoutNode* image = layout.findNode("image");
    QVERIFY(image);
    int fromImage = 0;
    for (const auto& edge : layout.edges) {
      if (layout.nodes[size_t(edge.from)].id != "image") continue;
      ++fromImage;
      QCOMPARE(edge.shapeText, QStringLiteral("1x3x32x32"));
      QCOMPARE(edge.dtypeText, QStringLiteral("float32"));
      QCOMPARE(edge.tensor, QStringLiteral("image"));
    }
    QVERIFY(fromImage >= 1);
  }

  void layeredFallbackIsReadableToo() {
    auto graph = optimizedExample();
    GraphLayout layout = layOut(graph, GraphLayoutOptions{.expandAllFused = true, .dotNodeLimit = 0});
    QCOMPARE(layout.engine, QStringLiteral("layered"));
    verifyReadable(layout);
    for (const auto& cluster : layout.clusters)
      for (const auto& node : layout.nodes)
        if (node.clusterId == cluster.id) QVERIFY(cluster.box.contains(node.box));
  }

  // Names are module paths: a group is worth a box when it holds more than one operation and
  // less than what encloses it.
  void moduleGroupsFollowTheNames() {
    auto graph = modularGraph(3);
    ModuleGroups groups(*graph);
    QCOMPARE(groups.groups(), (QStringList{"module:/features", "module:/features/block1", "module:/features/block1/layer1",
                                           "module:/features/block1/layer2", "module:/features/block1/layer3",
                                           "module:/features/block2", "module:/features/block2/layer1",
                                           "module:/features/block2/layer2", "module:/features/block2/layer3"}));
    for (const auto* op : graph->operations()) {
      QString name = QString::fromStdString(op->name);
      if (name == "/features/block2/layer3/conv/Conv")  // "/conv" holds one operation: looked through
        QCOMPARE(groups.groupsOf(op), (QStringList{"module:/features", "module:/features/block2",
                                                   "module:/features/block2/layer3"}));
      if (name == "/features/conv0/Conv") QCOMPARE(groups.groupsOf(op), QStringList{"module:/features"});
      if (name == "/classifier/Gemm") QVERIFY(groups.groupsOf(op).isEmpty());
    }
    QCOMPARE(groups.operationCount("module:/features/block1"), 9);
    QCOMPARE(groups.summary("module:/features/block1"), QString("9 operations: 3 Concat, 3 Conv, 3 Relu"));
    QCOMPARE(ModuleGroups::titleOf("module:/features/block1"), QString("block1"));

    // A model wrapped in one module: that module holds everything and is looked through.
    graph::TensorType type{DataType::float32(), {4}};
    graph::Value x = graph::makeInput("x", type);
    graph::Value a = graph::makeOperation("model/dense/MatMul", "MatMul", {x, x}, {}, {type})[0];
    graph::Value b = graph::makeOperation("model/dense/Relu", "Relu", {a}, {}, {type})[0];
    graph::Value c = graph::makeOperation("model/out/Relu", "Relu", {b}, {}, {type})[0];
    ModuleGroups wrapped(graph::Graph{{x}, {c}, {"y"}});
    QCOMPARE(wrapped.groups(), QStringList{"module:model/dense"});
  }

  // Above moduleGroupsAbove operations the graph opens by module: each outermost group is one
  // box with one edge per tensor crossing its border, and opening a group frames its members.
  void largeGraphsOpenByModule() {
    auto graph = modularGraph(3);
    GraphLayoutOptions options;
    options.moduleGroupsAbove = 10;
    GraphLayout closed = layOut(graph, options);
    QVERIFY(closed.groupedByModule());
    QStringList ids;
    for (const auto& node : closed.nodes) ids << node.id;
    QCOMPARE(ids, (QStringList{"x", "module:/features", "/classifier/Gemm", "output:logits"}));
    const LayoutNode* features = closed.findNode("module:/features");
    QVERIFY(features->collapsedModule);
    QCOMPARE(features->category, NodeCategory::Module);
    QCOMPARE(features->title, QString("features"));
    QVERIFY(features->tensorNames.contains("/features/block2/layer2/conv/Conv"));  // find reaches inside
    QCOMPARE(closed.edges.size(), size_t(3));
    QVERIFY(closed.clusters.empty());
    verifyReadable(closed);

    options.expandedModules = {"module:/features"};
    GraphLayout open = layOut(graph, options);
    const LayoutCluster* frame = open.findCluster("module:/features");
    QVERIFY(frame);
    QVERIFY(frame->title.startsWith("features"));
    for (const char* inside : {"/features/conv0/Conv", "/features/relu0/Relu", "module:/features/block1",
                               "module:/features/block2"}) {
      const LayoutNode* box = open.findNode(inside);
      QVERIFY2(box, inside);
      QCOMPARE(box->clusterId, QString("module:/features"));
      QVERIFY2(frame->box.contains(box->box), inside);
    }
    QVERIFY(!open.findNode("/features/block1/layer1/conv/Conv"));
    // block1 -> block2 is one tensor (block1's last Concat), drawn once though block2's first
    // Conv and Concat both read it.
    int blockToBlock = 0;
    for (const auto& edge : open.edges)
      if (open.nodes[size_t(edge.from)].id == "module:/features/block1" &&
          open.nodes[size_t(edge.to)].id == "module:/features/block2")
        ++blockToBlock;
    QCOMPARE(blockToBlock, 1);
    verifyReadable(open);

    // Small graphs stay as they are.
    options.moduleGroupsAbove = 100;
    QVERIFY(!layOut(graph, options).groupedByModule());
  }

  void categoriesFollowTheOperator_data() {
    QTest::addColumn<QString>("op");
    QTest::addColumn<int>("category");
    QTest::newRow("conv") << "Conv" << int(NodeCategory::Compute);
    QTest::newRow("matmul") << "MatMul" << int(NodeCategory::Compute);
    QTest::newRow("relu") << "Relu" << int(NodeCategory::Elementwise);
    QTest::newRow("add") << "Add" << int(NodeCategory::Elementwise);
    QTest::newRow("maxpool") << "MaxPool" << int(NodeCategory::Reduction);
    QTest::newRow("reducemean") << "ReduceMean" << int(NodeCategory::Reduction);
    QTest::newRow("reshape") << "Reshape" << int(NodeCategory::DataMovement);
    QTest::newRow("concat") << "Concat" << int(NodeCategory::DataMovement);
    QTest::newRow("batchnorm") << "BatchNormalization" << int(NodeCategory::Normalization);
    QTest::newRow("layout") << "LayoutTransform" << int(NodeCategory::LayoutTransform);
    QTest::newRow("unknown") << "MyCustomOp" << int(NodeCategory::Other);
  }
  void categoriesFollowTheOperator() {
    QFETCH(QString, op);
    QFETCH(int, category);
    QCOMPARE(int(categorizeOperator(op.toStdString())), category);
  }
};

QTEST_GUILESS_MAIN(TestGraphLayout)
#include "test_graph_layout.moc"
