// Models using operators Tessel does not implement: refused with every such node named at once,
// imported with placeholders for viewing, and never compiled from there.
#include <QTemporaryDir>
#include <QtTest>

#include "tests/compiler/UnsupportedOperatorsModel.h"

#include "compiler/driver/Driver.h"
#include "compiler/frontend/onnx/OnnxImporter.h"
#include "compiler/graph/InferTypes.h"
#include "compiler/opdefs/OpRegistry.h"
#include "core/graph/UnsupportedOperations.h"

using namespace tessel;
using namespace tessel::frontend;

namespace {

const std::string kExpectedList =
    "uses 3 unsupported operators in 4 nodes: StringNormalizerX (node 'normalize'), ImaginaryOp (nodes 'imagine_1', "
    "'imagine_2'), CustomGelu from domain 'com.example' (node 'gelu')";

template <class T>
QString errorText(const Expected<T>& result) {
  return result ? QString("(no error)") : QString::fromStdString(result.error().toString());
}

Expected<graph::Graph> importForViewing(const std::string& bytes) {
  OnnxImportOptions options;
  options.unsupportedAsPlaceholders = true;
  return importOnnxBytes(bytes, "model.onnx", options);
}

// A chain of `operators` made-up operators, each used by `nodesEach` nodes in a row: "Op0"
// by n0_0, n0_1, ..., then "Op1", ...
std::string chainOfUnknownOperators(int operators, int nodesEach) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  auto* opset = model.add_opset_import();
  opset->set_version(13);
  onnx::GraphProto& graph = *model.mutable_graph();
  auto* input = graph.add_input();
  input->set_name("x");
  input->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  input->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(4);
  std::string previous = "x";
  for (int op = 0; op < operators; ++op)
    for (int i = 0; i < nodesEach; ++i) {
      std::string name = "n" + std::to_string(op) + "_" + std::to_string(i);
      auto* node = graph.add_node();
      node->set_op_type("Op" + std::to_string(op));
      node->set_name(name);
      node->add_input(previous);
      node->add_output(name);
      previous = name;
    }
  graph.add_output()->set_name(previous);
  return model.SerializeAsString();
}

}  // namespace

class OnnxUnsupportedTest : public QObject {
  Q_OBJECT

private slots:
  // The refusal names every node Tessel cannot compile, grouped by operator, at once.
  void namesEveryUnsupportedNodeAtOnce() {
    auto graph = importOnnxBytes(testing::unsupportedOperatorsModel(), "model.onnx");
    QVERIFY(!graph.ok());
    QCOMPARE(graph.error().location, std::string("model.onnx"));
    QCOMPARE(QString::fromStdString(graph.error().message), QString::fromStdString(kExpectedList));
    QVERIFY2(graph.error().hint.find("`tessel ops` lists the operators it supports") != std::string::npos,
             qPrintable(errorText(graph)));
    QVERIFY2(graph.error().hint.find("only operators of the default ONNX domain") != std::string::npos,
             qPrintable(errorText(graph)));
  }

  // Every command loads models through loadModel, so each of them names them all.
  void loadModelNamesEveryUnsupportedNode() {
    QTemporaryDir directory;
    std::string path = directory.filePath("unsupported.onnx").toStdString();
    QVERIFY(testing::writeUnsupportedOperatorsModel(path));
    auto graph = driver::loadModel(path);
    QVERIFY(!graph.ok());
    QString text = errorText(graph);
    QVERIFY2(text.startsWith(QString::fromStdString(path + ": error: " + kExpectedList)), qPrintable(text));
  }

  void singleUnsupportedNodeReadsNaturally() {
    auto graph = importOnnxBytes(chainOfUnknownOperators(1, 1), "one.onnx");
    QCOMPARE(errorText(graph), QString("one.onnx: error: uses 1 unsupported operator: Op0 (node 'n0_0') (Tessel does "
                                       "not implement it; `tessel ops` lists the operators it supports)"));
  }

  // Dozens of such nodes still make one readable line: the list stops and counts the rest.
  void longListsAreCutShort() {
    auto graph = importOnnxBytes(chainOfUnknownOperators(12, 6), "many.onnx");
    QVERIFY(!graph.ok());
    QString message = QString::fromStdString(graph.error().message);
    QVERIFY2(message.startsWith("uses 12 unsupported operators in 72 nodes: Op0 (nodes 'n0_0', 'n0_1', 'n0_2', "
                                "'n0_3' and 2 more), Op1 ("),
             qPrintable(message));
    QVERIFY2(message.endsWith("Op7 (nodes 'n7_0', 'n7_1', 'n7_2', 'n7_3' and 2 more) and 4 more operators in 24 "
                              "nodes"),
             qPrintable(message));
    QVERIFY2(!message.contains("Op8"), qPrintable(message));
    QVERIFY2(message.size() < 800, qPrintable(message));
  }

  // For viewing, every node is there: the unsupported ones as placeholders with what the
  // model says about them.
  void importsPlaceholdersForViewing() {
    auto graph = importForViewing(testing::unsupportedOperatorsModel());
    QVERIFY2(graph.ok(), qPrintable(errorText(graph)));
    QCOMPARE(int(graph->operationCount()), testing::kUnsupportedModelOperations);
    auto placeholders = graph::unsupportedOperations(*graph);
    QCOMPARE(placeholders.size(), testing::kUnsupportedNodes.size());
    for (size_t i = 0; i < placeholders.size(); ++i) {
      const testing::UnsupportedNode& expected = testing::kUnsupportedNodes[i];
      QCOMPARE(placeholders[i]->name, expected.name);
      QCOMPARE(placeholders[i]->op, std::string(graph::kUnsupportedOp));
      graph::OnnxOperatorName onnx = graph::unsupportedOperator(*placeholders[i]);
      QCOMPARE(onnx.opType, expected.opType);
      QCOMPARE(onnx.domain, expected.domain);
    }
    // Attributes: what the IR can hold as is, the rest described.
    const graph::OperationNode& normalize = *placeholders[0];
    QCOMPARE(normalize.attribute<int64_t>("mode", 0), int64_t(3));
    QCOMPARE(normalize.attribute<std::string>("body", ""), std::string("subgraph 'inner' (0 nodes)"));
    // The wiring, through supported and unsupported nodes alike.
    QCOMPARE(placeholders[1]->inputs.at(0).node(), static_cast<const graph::GraphNode*>(&normalize));
    QCOMPARE(graph::asOperation(normalize.inputs.at(0).node())->op, std::string("Relu"));
    // Types: only those the model declares (value_info).
    QVERIFY(!normalize.outputTypes[0].known());
    QCOMPARE(QString::fromStdString(placeholders[3]->outputTypes[0].toString()), QString("float32[2, 3]"));
    QCOMPARE(graph->outputNames, std::vector<std::string>{"y"});
    QVERIFY(graph::printGraph(*graph).find("Unsupported(%relu)") != std::string::npos);
  }

  // A model Tessel supports imports the same either way.
  void supportedModelsHaveNoPlaceholders() {
    auto strict = importOnnxBytes(chainOfUnknownOperators(0, 0), "empty.onnx");
    auto viewed = importForViewing(chainOfUnknownOperators(0, 0));
    QVERIFY2(strict.ok() && viewed.ok(), qPrintable(errorText(strict) + errorText(viewed)));
    QVERIFY(graph::unsupportedOperations(*viewed).empty());
    QCOMPARE(graph::structuralHash(*strict), graph::structuralHash(*viewed));
  }

  // A graph with placeholders can be looked at, never compiled: type inference, the whole
  // pipeline and kernel building refuse it, naming the nodes.
  void placeholdersNeverCompile() {
    auto graph = importForViewing(testing::unsupportedOperatorsModel());
    QVERIFY2(graph.ok(), qPrintable(errorText(graph)));
    auto typed = graph::inferTypes(*graph);
    QVERIFY(!typed.ok());
    QCOMPARE(QString::fromStdString(typed.error().message),
             QString::fromStdString("cannot be compiled: the graph " + kExpectedList));
    auto compiled = driver::compileGraph(*graph);
    QVERIFY(!compiled.ok());
    QVERIFY2(errorText(compiled).contains(QString::fromStdString(kExpectedList)), qPrintable(errorText(compiled)));
    const graph::OperationNode& placeholder = *graph::unsupportedOperations(*graph).at(1);
    auto kernel = graph::buildOpKernel(graph::makeOpCall(placeholder));
    QVERIFY(!kernel.ok());
    QVERIFY2(errorText(kernel).contains("'imagine_1': stands for an operator Tessel does not implement"),
             qPrintable(errorText(kernel)));
    auto types = graph::inferOpTypes(graph::makeOpCall(placeholder));
    QVERIFY2(!types.ok() && errorText(types).contains("'imagine_1'"), qPrintable(errorText(types)));
  }
};

QTEST_GUILESS_MAIN(OnnxUnsupportedTest)
#include "test_onnx_unsupported.moc"
