// DecomposeConvTranspose: a transposed convolution becomes one Conv per stride phase and an
// interleave, computing the same numbers as the direct ConvTranspose kernel; the cases it
// cannot decompose are left alone.
#include <QtTest>

#include "GraphPassTestSupport.h"
#include "compiler/graph/DecomposeConvTranspose.h"

using namespace tessel;
using namespace tessel::graph;
using namespace tessel::testing;

namespace {

int count(const std::vector<std::string>& kinds, const std::string& kind) {
  return int(std::count(kinds.begin(), kinds.end(), kind));
}

Graph decomposed(const Graph& graph) {
  auto result = decomposeConvTranspose(graph);
  if (!result) qFatal("decomposeConvTranspose failed: %s", result.error().toString().c_str());
  return *result;
}

struct Case {
  std::vector<int64_t> input;   ///< N, C, spatial...
  std::vector<int64_t> weight;  ///< C, M / group, kernel...
  Attributes attributes;
  bool bias = false;
};

// y = ConvTranspose(x, w[, b]) over constants, so FoldConstant evaluates it with the kernels.
Graph convTransposeGraph(const Case& c) {
  Value x = makeConstant("x", variedArray(c.input, 1));
  std::vector<Value> inputs = {x, makeConstant("w", variedArray(c.weight, 2))};
  int64_t group = c.attributes.count("group") ? std::get<int64_t>(c.attributes.at("group")) : 1;
  if (c.bias) inputs.push_back(makeConstant("b", variedArray({c.weight[1] * group}, 3)));
  Graph graph;
  graph.outputs = {typed("up", "ConvTranspose", inputs, c.attributes)};
  graph.outputNames = {"y"};
  return graph;
}

}  // namespace

class DecomposeConvTransposeTest : public QObject {
  Q_OBJECT

private slots:
  // UNet's upsampling (2x2, stride 2) is four 1x1 convolutions and an interleave.
  void twoByTwoStrideTwoIsFourPointwiseConvolutions() {
    Graph graph = convTransposeGraph({{1, 8, 5, 6}, {8, 4, 2, 2}, {{"strides", std::vector<int64_t>{2, 2}}}, true});
    Graph rewritten = decomposed(graph);
    auto kinds = opKinds(rewritten);
    QCOMPARE(count(kinds, "ConvTranspose"), 0);
    QCOMPARE(count(kinds, "Conv"), 4);
    QCOMPARE(count(kinds, "Slice"), 0);  // no pads: nothing to crop
    for (const OperationNode* node : rewritten.operations())
      if (node->op == "Conv") {
        QVERIFY(node->name.rfind("up/phase", 0) == 0);
        QCOMPARE(node->outputTypes[0].shape, (std::vector<int64_t>{1, 4, 5, 6}));
        QCOMPARE(node->provenance, graph.operations()[0]->provenance);
      }
    QCOMPARE(rewritten.outputs[0].type(), graph.outputs[0].type());
  }

  // Every case decomposes and matches the direct kernel.
  void phasesComputeWhatTheDirectKernelComputes_data() {
    QTest::addColumn<int>("index");
    for (int i = 0; i < 8; ++i) QTest::newRow(std::to_string(i).c_str()) << i;
  }
  void phasesComputeWhatTheDirectKernelComputes() {
    QFETCH(int, index);
    using Ints = std::vector<int64_t>;
    const std::vector<Case> cases = {
        {{1, 8, 5, 6}, {8, 4, 2, 2}, {{"strides", Ints{2, 2}}}, true},                             // UNet
        {{1, 3, 4, 5}, {3, 2, 3, 3}, {{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}},
                                      {"output_padding", Ints{1, 1}}}, false},                      // 3x3 s2 "same"
        {{2, 4, 4, 4}, {4, 3, 4, 4}, {{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}, {"group", int64_t(2)}}, true},
        {{1, 3, 7}, {3, 5, 3}, {{"strides", Ints{3}}}, true},                                       // 1-D, stride 3
        {{1, 3, 5, 5}, {3, 4, 3, 3}, {{"pads", Ints{1, 1, 1, 1}}}, false},                          // stride 1
        {{1, 2, 3, 4, 3}, {2, 3, 2, 2, 2}, {{"strides", Ints{2, 2, 2}}}, false},                   // 3-D
        {{1, 3, 4, 5}, {3, 2, 3, 2}, {{"strides", Ints{2, 1}}, {"pads", Ints{0, 1, 1, 0}},
                                      {"output_padding", Ints{1, 0}}}, true},                       // mixed
        {{1, 3, 4, 4}, {3, 2, 3, 3}, {{"strides", Ints{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}}, false},
    };
    const Case& c = cases[size_t(index)];
    Graph graph = convTransposeGraph(c);
    Graph rewritten = decomposed(graph);
    QCOMPARE(count(opKinds(rewritten), "ConvTranspose"), 0);
    QCOMPARE(rewritten.outputs[0].type(), graph.outputs[0].type());
    const double error = rewriteError(rewritten, graph);
    QVERIFY2(error < 1e-5, qPrintable(QString("relative error %1").arg(error)));
  }

  // What the phases cannot express stays a ConvTranspose: dilation, a stride larger than the
  // kernel (some phases would have no taps), weights that are not constant.
  void undecomposableCasesAreLeftAlone() {
    using Ints = std::vector<int64_t>;
    for (const Case& c : {Case{{1, 2, 4, 4}, {2, 2, 3, 3}, {{"strides", Ints{2, 2}}, {"dilations", Ints{2, 2}}}},
                          Case{{1, 2, 4, 4}, {2, 2, 1, 1}, {{"strides", Ints{2, 2}}}}}) {
      Graph graph = convTransposeGraph(c);
      QCOMPARE(count(opKinds(decomposed(graph)), "ConvTranspose"), 1);
    }
    Value x = makeInput("x", f32({1, 2, 4, 4}));
    Value w = makeInput("w", f32({2, 2, 2, 2}));
    Graph graph;
    graph.inputs = {x, w};
    graph.outputs = {typed("up", "ConvTranspose", {x, w}, {{"strides", Ints{2, 2}}})};
    QCOMPARE(count(opKinds(decomposed(graph)), "ConvTranspose"), 1);
  }
};

QTEST_GUILESS_MAIN(DecomposeConvTransposeTest)
#include "test_decompose_conv_transpose.moc"
