// GraphDiff: which nodes a pass left, added, removed, fused, re-laid-out or modified, as the
// Studio's pass comparison colours them (golden text of printGraphDiff).
#include <QtTest>

#include "GraphPassTestSupport.h"

#include "compiler/driver/Driver.h"
#include "compiler/graph/FuseOps.h"
#include "compiler/graph/GraphDiff.h"

using namespace tessel;
using namespace tessel::graph;

namespace {
using testing::f32;
using testing::filled;
using testing::op;

Attributes convAttributes() { return {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}; }

QString text(const GraphDiff& diff) { return QString::fromStdString(printGraphDiff(diff)); }

// x -> conv -> add(bias) -> relu: the graph FuseOps turns into one kernel.
struct ConvBlock {
  Value x, weight, bias, conv, add, relu;
  Graph graph;
};
ConvBlock convBlock() {
  ConvBlock block;
  block.x = makeInput("x", f32({1, 3, 8, 8}));
  block.weight = makeConstant("conv.w", filled({4, 3, 3, 3}, 0.5f));
  block.bias = makeConstant("bias", filled({4, 1, 1}, 0.25f));
  block.conv = op("conv", "Conv", {block.x, block.weight}, f32({1, 4, 8, 8}), convAttributes());
  block.add = op("add", "Add", {block.conv, block.bias}, f32({1, 4, 8, 8}));
  block.relu = op("relu", "Relu", {block.add}, f32({1, 4, 8, 8}));
  block.graph = Graph{{block.x}, {block.relu}, {"y"}};
  return block;
}

QString example(const char* name) { return QStringLiteral(TESSEL_SOURCE_DIR "/resources/examples/") + name; }
}  // namespace

class TestGraphDiff : public QObject {
  Q_OBJECT
private slots:
  void sameGraphIsUnchanged() {
    auto block = convBlock();
    GraphDiff diff = diffGraphs(block.graph, block.graph);
    QCOMPARE(text(diff), QString("unchanged %x\n"
                                 "unchanged @conv.w\n"
                                 "unchanged %conv\n"
                                 "unchanged @bias\n"
                                 "unchanged %add\n"
                                 "unchanged %relu\n"
                                 "counts: 6 unchanged, 0 added, 0 removed, 0 fused, 0 relaid, 0 modified\n"));
    QCOMPARE(QString::fromStdString(diff.summary()), QString("no change"));
  }

  void equalNodesRebuiltUnderTheSameNamesAreUnchanged() {
    // A pass that rebuilds a node without changing it must not show up as a change.
    auto first = convBlock();
    auto second = convBlock();
    GraphDiff diff = diffGraphs(first.graph, second.graph);
    QCOMPARE(diff.count(NodeChange::Unchanged), 6);
    QCOMPARE(QString::fromStdString(diff.summary()), QString("no change"));
  }

  void fusionListsWhatTheFusedNodeAbsorbed() {
    auto block = convBlock();
    auto fused = fuseOps(block.graph);
    QVERIFY(fused.ok());
    GraphDiff diff = diffGraphs(block.graph, *fused);
    QCOMPARE(text(diff), QString("unchanged %x\n"
                                 "unchanged @conv.w\n"
                                 "unchanged @bias\n"
                                 "fused     %fused_Conv_Add_Relu <- %conv, %add, %relu\n"
                                 "counts: 3 unchanged, 0 added, 0 removed, 1 fused, 0 relaid, 0 modified\n"));
    QCOMPARE(QString::fromStdString(diff.summary()), QString("-2 nodes, 1 fused"));
    QCOMPARE(diff.absorbedCount(), 3);
    // Each absorbed node leads to the fused node (what the comparison view selects).
    const NodeDiff* entry = diff.forBefore(block.add.node());
    QVERIFY(entry);
    QCOMPARE(entry->change, NodeChange::Fused);
    QCOMPARE(QString::fromStdString(entry->after->name), QString("fused_Conv_Add_Relu"));
  }

  void prepackedConvolutionAndLayoutTransformAreRelaid() {
    // What AlterLayout does: the weight packed (OIHW4o), the output channel-blocked (NCHW4c)
    // and a LayoutTransform back to NCHW before the Relu.
    auto block = convBlock();
    Value x = makeInput("x", f32({1, 3, 8, 8}));
    Value packed = makeConstant("conv.w.OIHW4o", filled({1, 3, 3, 3, 4}, 0.5f), "OIHW4o");
    Attributes attributes = convAttributes();
    attributes["out_layout"] = std::string("NCHW4c");
    Value conv = op("conv", "ConvPrepacked", {x, packed}, f32({1, 1, 8, 8, 4}, "NCHW4c"), attributes, "conv_onnx");
    Value bias = makeConstant("bias", filled({4, 1, 1}, 0.25f));
    Value back = makeOperation("conv.NCHW", "LayoutTransform", {conv},
                               {{"src_layout", std::string("NCHW4c")}, {"dst_layout", std::string("NCHW")}},
                               {f32({1, 4, 8, 8})})[0];
    Value add = op("add", "Add", {back, bias}, f32({1, 4, 8, 8}));
    Value relu = op("relu", "Relu", {add}, f32({1, 4, 8, 8}));
    GraphDiff diff = diffGraphs(block.graph, Graph{{x}, {relu}, {"y"}});
    QCOMPARE(text(diff),
             QString("unchanged %x\n"
                     "relaid    @conv.w.OIHW4o  (was @conv.w; layout OIHW4o)\n"
                     "relaid    %conv  (op Conv -> ConvPrepacked; output layout NCHW4c; input 1 layout OIHW4o; "
                     "out_layout \"NCHW4c\")\n"
                     "relaid    %conv.NCHW  (layout NCHW4c -> plain)\n"
                     "unchanged @bias\n"
                     "unchanged %add\n"
                     "unchanged %relu\n"
                     "counts: 4 unchanged, 0 added, 0 removed, 0 fused, 3 relaid, 0 modified\n"));
    QCOMPARE(QString::fromStdString(diff.summary()), QString("+1 node, 2 relaid"));
  }

  void foldedBatchNormModifiesTheConvolution() {
    // What SimplifyInference + FoldConstant do to Conv -> BatchNormalization: the
    // normalization disappears into the convolution's weight (new values) and a new bias.
    Value x = makeInput("x", f32({1, 3, 8, 8}));
    Value weight = makeConstant("conv.w", filled({4, 3, 3, 3}, 0.5f));
    Value conv = op("conv", "Conv", {x, weight}, f32({1, 4, 8, 8}), convAttributes());
    std::vector<Value> statistics;
    for (const char* name : {"bn.scale", "bn.bias", "bn.mean", "bn.var"})
      statistics.push_back(makeConstant(name, filled({4}, 1.0f)));
    Value bn = op("bn", "BatchNormalization", {conv, statistics[0], statistics[1], statistics[2], statistics[3]},
                  f32({1, 4, 8, 8}));
    Graph before{{x}, {bn}, {"y"}};

    Value folded = makeConstant("conv.w.folded", filled({4, 3, 3, 3}, 0.25f));
    Value foldedBias = makeConstant("conv.b.folded", filled({4}, 0.125f));
    Value newConv = op("conv", "Conv", {x, folded, foldedBias}, f32({1, 4, 8, 8}), convAttributes());
    GraphDiff diff = diffGraphs(before, Graph{{x}, {newConv}, {"y"}});
    QCOMPARE(text(diff), QString("unchanged %x\n"
                                 "modified  @conv.w.folded  (was @conv.w; values changed)\n"
                                 "added     @conv.b.folded\n"
                                 "modified  %conv  (2 -> 3 inputs)\n"
                                 "removed   @bn.scale\n"
                                 "removed   @bn.bias\n"
                                 "removed   @bn.mean\n"
                                 "removed   @bn.var\n"
                                 "removed   %bn\n"
                                 "counts: 1 unchanged, 1 added, 5 removed, 0 fused, 0 relaid, 2 modified\n"));
    QCOMPARE(QString::fromStdString(diff.summary()), QString("-1 node, 1 modified, 1 removed"));
  }

  void mergedDuplicateConstantsLeaveTheirReadersUnchanged() {
    // EliminateCommonSubexpr: two equal constants become one; the operation that read the
    // duplicate reads the same values and is not a change.
    Value x = makeInput("x", f32({4}));
    Value one = makeConstant("one", filled({4}, 1.0f));
    Value duplicate = makeConstant("one_again", filled({4}, 1.0f));
    Value add = op("add", "Add", {x, one}, f32({4}));
    Value mul = op("mul", "Mul", {add, duplicate}, f32({4}));
    Value merged = op("mul", "Mul", {add, one}, f32({4}));
    GraphDiff diff = diffGraphs(Graph{{x}, {mul}, {"y"}}, Graph{{x}, {merged}, {"y"}});
    QCOMPARE(text(diff), QString("unchanged %x\n"
                                 "unchanged @one\n"
                                 "unchanged %add\n"
                                 "unchanged %mul\n"
                                 "removed   @one_again\n"
                                 "counts: 4 unchanged, 0 added, 1 removed, 0 fused, 0 relaid, 0 modified\n"));
    QCOMPARE(QString::fromStdString(diff.summary()), QString("constants changed"));
  }

  void renamedNodeIsMatchedByProvenance() {
    // A pass that renames a node but keeps where it came from: the same node, with what
    // changed in it, not a removal and an addition.
    Value x = makeInput("x", f32({1, 4}));
    Value relu = op("relu", "Relu", {x}, f32({1, 4}), {}, "Relu_0");
    Value renamed = op("relu.rewritten", "Clip", {x}, f32({1, 4}), {{"min", 0.0}}, "Relu_0");
    GraphDiff diff = diffGraphs(Graph{{x}, {relu}, {"y"}}, Graph{{x}, {renamed}, {"y"}});
    QCOMPARE(text(diff), QString("unchanged %x\n"
                                 "modified  %relu.rewritten  (was %relu; op Relu -> Clip; attribute min added)\n"
                                 "counts: 1 unchanged, 0 added, 0 removed, 0 fused, 0 relaid, 1 modified\n"));
  }

  void addedAndRemovedOperations() {
    Value x = makeInput("x", f32({1, 4}));
    Value relu = op("relu", "Relu", {x}, f32({1, 4}));
    Value sigmoid = op("sigmoid", "Sigmoid", {x}, f32({1, 4}));
    Value tanh = op("tanh", "Tanh", {relu}, f32({1, 4}));
    GraphDiff diff = diffGraphs(Graph{{x}, {sigmoid}, {"y"}}, Graph{{x}, {tanh}, {"y"}});
    QCOMPARE(text(diff), QString("unchanged %x\n"
                                 "added     %relu  (from relu_onnx)\n"
                                 "added     %tanh  (from tanh_onnx)\n"
                                 "removed   %sigmoid\n"
                                 "counts: 1 unchanged, 2 added, 1 removed, 0 fused, 0 relaid, 0 modified\n"));
    QCOMPARE(QString::fromStdString(diff.summary()), QString("+1 node, 2 added, 1 removed"));
    QVERIFY(diff.forBefore(tanh.node()) == nullptr);
    QCOMPARE(diff.forAfter(tanh.node())->change, NodeChange::Added);
  }

  void exampleModelFusionReportsTheAbsorbedReluAndAdd() {
    // The imported example against the standard pipeline's FuseOps snapshot. AlterLayout is
    // off so the operators keep their ONNX names (its own rewrite is tested above).
    auto imported = driver::loadModel(example("tiny_resnet.onnx").toStdString());
    QVERIFY2(imported.ok(), imported.ok() ? "" : imported.error().toString().c_str());
    PassOptions options;
    options.disabledPasses = {"AlterLayout"};
    auto snapshots = driver::standardPasses().run(*imported, options);
    QVERIFY(snapshots.ok());
    QCOMPARE(QString::fromStdString(snapshots->back().passName), QString("FuseOps"));
    GraphDiff diff = diffGraphs(*imported, snapshots->back().graph);
    QString fusedLines;
    for (const QString& line : text(diff).split('\n'))
      if (!line.startsWith("unchanged")) fusedLines += line + "\n";
    QCOMPARE(fusedLines,
             QString("fused     %fused_Conv_Relu <- %/stem/stem.0/Conv, %/stem/stem.2/Relu\n"
                     "fused     %fused_Conv_Relu_1 <- %/block/block.0/Conv, %/block/block.2/Relu\n"
                     "fused     %fused_Conv_Add_Relu <- %/block/block.3/Conv, %/Add, %/Relu\n"
                     "counts: 14 unchanged, 0 added, 0 removed, 3 fused, 0 relaid, 0 modified\n"
                     "\n"));
  }

  void exampleModelAlterLayoutStepIsRelaid() {
    // The AlterLayout step of the standard pipeline, compared with the step before it: every
    // convolution it prepacked shows as re-laid-out, nothing as removed or fused.
    auto imported = driver::loadModel(example("tiny_resnet.onnx").toStdString());
    QVERIFY(imported.ok());
    auto snapshots = driver::standardPasses().run(*imported, PassOptions{});
    QVERIFY(snapshots.ok());
    auto alter = std::find_if(snapshots->begin(), snapshots->end(),
                              [](const PassSnapshot& s) { return s.passName == "AlterLayout"; });
    QVERIFY(alter != snapshots->end() && alter != snapshots->begin());
    GraphDiff diff = diffGraphs(std::prev(alter)->graph, alter->graph);
    int prepacked = 0;
    for (const NodeDiff& entry : diff.entries) {
      auto* op = asOperation(entry.after);
      if (!op || op->op != "ConvPrepacked") continue;
      ++prepacked;
      QCOMPARE(entry.change, NodeChange::Relaid);
      QVERIFY2(entry.detail.find("op Conv -> ConvPrepacked") != std::string::npos, entry.detail.c_str());
    }
    QCOMPARE(prepacked, 3);
    QCOMPARE(diff.count(NodeChange::Removed, true), 0);
    QCOMPARE(diff.count(NodeChange::Fused), 0);
  }
};

QTEST_GUILESS_MAIN(TestGraphDiff)
#include "test_graph_diff.moc"
