// Graph layout: the example model gets a box per operation, fused groups become clusters when
// expanded, weights are folded into their consumers, edges carry shapes and run downward.
#include <QtTest>

#include <set>

#include "ExampleModelSupport.h"
#include "ModularGraphSupport.h"
#include "compiler/driver/Driver.h"
#include "views/graph/GraphBreadcrumbs.h"
#include "views/graph/GraphLayout.h"
#include "views/graph/LayoutQuality.h"
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

  // bench/graph_view.sh's readability counts: two edges crossing each other (counted once)
  // under a box (each counted), and an edge meeting the others only at their shared boxes.
  void layoutQualityCountsCrossingsAndHiddenEdges() {
    GraphLayout layout;
    auto box = [&](const char* id, double x, double y) {
      LayoutNode node;
      node.id = id;
      node.box = QRectF(x, y, 100, 40);
      layout.nodes.push_back(node);
    };
    box("a", 0, 0);
    box("b", 300, 0);
    box("c", 0, 300);
    box("d", 300, 300);
    box("middle", 150, 150);
    auto edge = [&](int from, int to, QPointF start, QPointF end) {
      LayoutEdge line;
      line.from = from;
      line.to = to;
      QPointF step = (end - start) / 3;
      line.spline = {start, start + step, start + 2 * step, end};
      layout.edges.push_back(line);
    };
    edge(0, 3, {50, 40}, {350, 300});  // a -> d and b -> c cross at (200, 170), inside "middle"
    edge(1, 2, {350, 40}, {50, 300});
    edge(0, 2, {50, 40}, {50, 300});   // a -> c touches both only where they share a box
    LayoutQuality quality = measureLayoutQuality(layout);
    QCOMPARE(quality.boxes, 5);
    QCOMPARE(quality.edges, 3);
    QCOMPARE(quality.edgeCrossings, int64_t(1));
    QCOMPARE(quality.boxesCrossed, int64_t(2));

    // Moved aside, "middle" hides nothing.
    layout.nodes[4].box.moveTo(500, 150);
    QCOMPARE(measureLayoutQuality(layout).boxesCrossed, int64_t(0));
  }

  // The layered layout's long edges go around boxes, never through them: a DenseNet block
  // drawn operation by operation (each concatenation reads every earlier layer) had its
  // concatenations' inputs drawn straight down the trunk, through every box between.
  void longEdgesOfTheLayeredLayoutGoAroundBoxes() {
    GraphLayoutOptions options;
    options.moduleGroupsAbove = 0;  // every operation a box
    options.dotNodeLimit = 0;       // the layered layout
    GraphLayout layout = layOut(modularGraph(6), options);
    QCOMPARE(layout.engine, QString("layered"));
    verifyReadable(layout);
    LayoutQuality quality = measureLayoutQuality(layout);
    QCOMPARE(quality.boxesCrossed, int64_t(0));
    // The concatenation of a block's last layer reads six tensors from six ranks above; all
    // but the nearest come down one lane, beside the boxes.
    int concat = layout.indexOf("/features/block1/layer6/Concat");
    QVERIFY(concat >= 0);
    std::set<double> lanes;
    int laneEdges = 0;
    for (const LayoutEdge& edge : layout.edges) {
      if (edge.to != concat || edge.spline.size() <= 4) continue;
      ++laneEdges;
      lanes.insert(edge.spline[7].x());  // the lane's top corner
    }
    QVERIFY2(laneEdges >= 4, qPrintable(QString::number(laneEdges)));
    QCOMPARE(lanes.size(), size_t(1));
  }

  // Into or out of a closed module, the tensors between two boxes are one edge that says how
  // many it carries.
  void tensorsBetweenClosedModulesAreOneBundle() {
    graph::TensorType type{DataType::float32(), {4}};
    auto op = [&](const std::string& name, std::vector<graph::Value> inputs) {
      return graph::makeOperation(name, name.substr(name.find_last_of('/') + 1), std::move(inputs), {}, {type})[0];
    };
    graph::Value x = graph::makeInput("x", type);
    graph::Value p = op("/a/p/Relu", {x}), q = op("/a/q/Relu", {x}), r = op("/a/r/Relu", {x});
    graph::Value joined = op("/b/Concat", {p, q, r});
    graph::Value y = op("/c/Relu", {op("/b/Relu", {joined, p})});
    auto graph = std::make_shared<graph::Graph>(graph::Graph{{x}, {y}, {"y"}});
    GraphLayoutOptions options;
    options.moduleGroupsAbove = 1;
    GraphLayout layout = layOut(graph, options);
    int a = layout.indexOf("module:/a"), b = layout.indexOf("module:/b");
    QVERIFY(a >= 0 && b >= 0);
    int between = 0;
    for (const LayoutEdge& edge : layout.edges) {
      if (edge.from != a || edge.to != b) continue;
      ++between;
      QCOMPARE(edge.tensorCount, 3);  // p (read twice inside /b: counted once), q and r
      QCOMPARE(edge.label(), QString("3 tensors"));
    }
    QCOMPARE(between, 1);
  }

  // An operation the exporter left without a path joins the module its consumers share (or,
  // feeding none, its producers): DenseNet-121's sixty "Identity_NN" otherwise stood beside
  // the modules as boxes of their own.
  void namelessOperationsJoinTheModuleTheyServe() {
    graph::TensorType type{DataType::float32(), {4}};
    auto op = [&](const std::string& name, std::vector<graph::Value> inputs) {
      return graph::makeOperation(name, name.substr(name.find_last_of('/') + 1), std::move(inputs), {}, {type})[0];
    };
    graph::Value x = graph::makeInput("x", type);
    graph::Value identity = op("Identity_1", {x});
    graph::Value a = op("/enc/a/Relu", {op("/enc/a/Conv", {identity})});
    graph::Value shared = op("Mul_4", {op("/enc/b/Conv", {a})});  // read by /enc/b and by /head
    graph::Value head = op("/head/Gemm", {op("/enc/b/Relu", {shared}), shared});
    graph::Value flat = op("Flatten_9", {head});  // the graph's output: it goes with its producer
    graph::Graph graph{{x}, {flat}, {"y"}};
    ModuleGroups groups(graph);
    QCOMPARE(groups.groups(), (QStringList{"module:/enc", "module:/enc/a", "module:/enc/b", "module:/head"}));
    for (const auto* node : graph.operations()) {
      if (node->name == "Identity_1") QCOMPARE(groups.groupsOf(node), (QStringList{"module:/enc", "module:/enc/a"}));
      if (node->name == "Mul_4") QVERIFY(groups.groupsOf(node).isEmpty());
      if (node->name == "Flatten_9") QCOMPARE(groups.groupsOf(node), QStringList{"module:/head"});
    }
    QCOMPARE(groups.operationCount("module:/enc"), 5);
  }

  // Above moduleGroupsAbove operations the graph opens by module: each outermost group is one
  // box with one edge per tensor crossing its border, and opening a group frames its members.
  void largeGraphsOpenByModule() {
    auto graph = modularGraph(3);
    GraphLayoutOptions options;
    options.moduleGroupsAbove = 10;
    options.openModulesHolding = 2;  // no group opens by default (see the next test)
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

  // A group holding nearly all of what encloses it opens by default (one box for almost the
  // whole model says nothing) until it is closed by name; the groups inside it stay closed.
  void aGroupHoldingNearlyEverythingOpensByDefault() {
    auto graph = modularGraph(3);  // "/features": 20 of the 21 operations
    GraphLayoutOptions options;
    options.moduleGroupsAbove = 10;
    GraphLayout layout = layOut(graph, options);
    QVERIFY(layout.modules->opensByDefault("module:/features"));
    QVERIFY(!layout.modules->opensByDefault("module:/features/block1"));  // half of features
    QVERIFY(layout.findCluster("module:/features"));
    QVERIFY(layout.findNode("module:/features/block1"));
    QVERIFY(layout.findNode("module:/features/block2"));
    options.collapsedModules = {"module:/features"};
    layout = layOut(graph, options);
    QVERIFY(layout.findNode("module:/features"));
    QVERIFY(!layout.findCluster("module:/features"));
  }

  // Fewer operations than moduleGroupsAbove, but densely connected (a compiled DenseNet-121:
  // 190 operations reading 3.8 computed tensors each): drawn by module too.
  void denseGraphsOpenByModuleSooner() {
    auto graph = modularGraph(8);  // 52 operations, the concatenations reading every earlier layer
    GraphLayoutOptions options;
    options.moduleGroupsAbove = 100;
    QVERIFY(layOut(graph, options).groupedByModule());
    options.denseInputsPerOperation = 100;
    QVERIFY(!layOut(graph, options).groupedByModule());
    options.denseInputsPerOperation = 2;
    options.moduleGroupsAbove = 200;  // 52 is under 40% of it: not even a dense graph is grouped
    QVERIFY(!layOut(graph, options).groupedByModule());
  }

  // A closed module's box and an open one's frame say what their operations cost together:
  // FLOPs from the compile, time and share of the run once profiled.
  void moduleBoxesSayWhatTheirOperationsCost() {
    auto graph = modularGraph(3);
    auto costs = std::make_shared<NodeCosts>();
    for (const graph::OperationNode* op : graph->operations())
      if (op->op == "Conv") costs->flops[op->name] = 1.5e9;  // the stem's and three per block
    GraphLayoutOptions options;
    options.moduleGroupsAbove = 10;
    options.openModulesHolding = 2;
    options.costs = costs;
    GraphLayout compiled = layOut(graph, options);
    const LayoutNode* features = compiled.findNode("module:/features");
    QVERIFY(features);
    QVERIFY2(features->details.contains("10.5 GFLOPs"), qPrintable(features->details.join(" | ")));
    QVERIFY(!features->details.join(" ").contains("ms"));  // not profiled yet

    for (const graph::OperationNode* op : graph->operations())
      costs->milliseconds[op->name] = op->name.rfind("/features/block2/", 0) == 0 ? 0.5 : 0.25;
    costs->totalMilliseconds = 10;
    options.expandedModules = {"module:/features"};
    GraphLayout profiled = layOut(graph, options);
    const LayoutNode* block2 = profiled.findNode("module:/features/block2");
    QVERIFY(block2);
    // 9 operations of 0.5 ms, 3 of them convolutions: 4.5 ms of the run's 10.
    QVERIFY2(block2->details.contains("4.5 GFLOPs · 4.500 ms (45.0%)"), qPrintable(block2->details.join(" | ")));
    const LayoutCluster* frame = profiled.findCluster("module:/features");
    QVERIFY(frame);
    QVERIFY2(frame->title.contains("10.5 GFLOPs") && frame->title.contains("ms"), qPrintable(frame->title));
    verifyReadable(profiled);
    QCOMPARE(flopsText(640e6), QString("640 MFLOPs"));
    QCOMPARE(flopsText(12), QString("12 FLOPs"));
  }

  // Breadcrumbs: the graph, each open group around a box (outermost first), the box itself,
  // named after what its innermost module's path leaves.
  void breadcrumbsFollowTheOpenGroups() {
    auto graph = modularGraph(3);
    GraphLayoutOptions options;
    options.moduleGroupsAbove = 10;
    options.expandedModules = {"module:/features", "module:/features/block2", "module:/features/block2/layer2"};
    GraphLayout layout = layOut(graph, options);
    auto titles = [](const std::vector<Breadcrumb>& path) {
      QStringList all;
      for (const Breadcrumb& crumb : path) all << crumb.title;
      return all;
    };
    auto path = breadcrumbPath(layout, "/features/block2/layer2/conv/Conv");
    QCOMPARE(titles(path), (QStringList{"Graph", "features", "block2", "layer2", "conv/Conv"}));
    QCOMPARE(path[2].id, QString("module:/features/block2"));
    QCOMPARE(path[0].id, QString());
    QCOMPARE(titles(breadcrumbPath(layout, "module:/features/block1")), (QStringList{"Graph", "features", "block1"}));
    QCOMPARE(titles(breadcrumbPath(layout, "module:/features/block2")), (QStringList{"Graph", "features", "block2"}));
    QCOMPARE(titles(breadcrumbPath(layout, "/classifier/Gemm")), (QStringList{"Graph", "/classifier/Gemm"}));
    QCOMPARE(titles(breadcrumbPath(layout, "no such box")), QStringList{"Graph"});
    QCOMPARE(layout.enclosingClusters("/features/block2/layer2/conv/Conv"),
             (QStringList{"module:/features", "module:/features/block2", "module:/features/block2/layer2"}));
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
