// Models older than opset 7: converted by ONNX's version converter while importing, run with the
// results of their old definitions, the conversion reported as an import step; failures explained.
#include <QTemporaryDir>
#include <QtTest>

#include "tests/compiler/OnnxProto.h"

#include <fstream>

#include "compiler/driver/RunModel.h"
#include "compiler/frontend/onnx/OnnxImporter.h"

using namespace tessel;
using namespace tessel::frontend;

namespace {

// A model of `opset` as PyTorch's exporter of the time wrote one: IR version 3, initializers
// listed among the graph inputs too, no value_info.
struct OldModel {
  onnx::ModelProto model;

  explicit OldModel(int opset) {
    model.set_ir_version(3);
    model.set_producer_name("tessel-test");
    auto* opsetImport = model.add_opset_import();
    opsetImport->set_domain("");
    opsetImport->set_version(opset);
    model.mutable_graph()->set_name("old");
  }
  onnx::GraphProto& graph() { return *model.mutable_graph(); }

  void declare(onnx::ValueInfoProto* info, const std::string& name, const std::vector<int64_t>& dims) {
    info->set_name(name);
    auto* type = info->mutable_type()->mutable_tensor_type();
    type->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t dim : dims) type->mutable_shape()->add_dim()->set_dim_value(dim);
  }
  void input(const std::string& name, const std::vector<int64_t>& dims) { declare(graph().add_input(), name, dims); }
  void output(const std::string& name, const std::vector<int64_t>& dims) { declare(graph().add_output(), name, dims); }
  void initializer(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& values) {
    auto* tensor = graph().add_initializer();
    tensor->set_name(name);
    tensor->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t dim : dims) tensor->add_dims(dim);
    for (float value : values) tensor->add_float_data(value);
    input(name, dims);
  }
  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& inputs, const std::string& output,
                        const std::string& name) {
    auto* node = graph().add_node();
    node->set_op_type(op);
    node->set_name(name);
    for (auto& in : inputs) node->add_input(in);
    node->add_output(output);
    return node;
  }
  static void setInt(onnx::NodeProto* node, const std::string& name, int64_t value) {
    auto* attribute = node->add_attribute();
    attribute->set_name(name);
    attribute->set_type(onnx::AttributeProto::INT);
    attribute->set_i(value);
  }
  Expected<graph::Graph> import() const { return importOnnxBytes(model.SerializeAsString(), "old.onnx"); }
  std::string save(const QTemporaryDir& directory) const {
    std::string path = directory.filePath("old.onnx").toStdString();
    std::ofstream(path, std::ios::binary) << model.SerializeAsString();
    return path;
  }
};

// y = PRelu(x + bias, slope) at opset 6: Add-6 broadcasts `bias` only with broadcast=1, and
// PRelu-6 takes one slope per channel as a [C] tensor. Opset 7 and later read both differently,
// so the model only computes the right thing once converted.
OldModel addPReluModel() {
  OldModel old(6);
  old.input("x", {1, 2, 2, 3});
  old.initializer("bias", {3}, {1, 2, 3});
  old.initializer("slope", {2}, {0.5f, 0.25f});
  OldModel::setInt(old.node("Add", {"x", "bias"}, "sum", "add"), "broadcast", 1);
  old.node("PRelu", {"sum", "slope"}, "y", "prelu");
  old.output("y", {1, 2, 2, 3});
  return old;
}

QString errorText(const Diagnostic& diagnostic) { return QString::fromStdString(diagnostic.toString()); }

}  // namespace

class TestOnnxOpsetConversion : public QObject {
  Q_OBJECT
private slots:
  void oldModelIsConvertedAndTheStepReported() {
    auto graph = addPReluModel().import();
    QVERIFY2(graph.ok(), graph.ok() ? "" : qPrintable(errorText(graph.error())));
    QCOMPARE(graph->importSteps.size(), size_t(1));
    const graph::ImportStep& step = graph->importSteps[0];
    QCOMPARE(QString::fromStdString(step.name), QString("ConvertOpset 6→7"));
    QVERIFY(step.milliseconds > 0);
    QVERIFY2(QString::fromStdString(step.description).contains("version converter"), step.description.c_str());
    // The operations are those of the opset the model was converted to.
    for (const graph::OperationNode* op : graph->operations()) QCOMPARE(op->provenance[0].opset, 7);
  }

  // Compiled and run, the converted model computes what the opset-6 definitions say.
  void convertedModelRunsWithTheOldSemantics() {
    QTemporaryDir directory;
    QVERIFY(directory.isValid());
    driver::RunRequest request;
    request.model = addPReluModel().save(directory);
    std::vector<float> x(12);
    for (size_t i = 0; i < x.size(); ++i) x[i] = float(i) - 8;  // -8 .. 3
    auto input = runtime::NDArray::empty({1, 2, 2, 3}, runtime::DataType::float32());
    input.copyFrom(x);
    request.positionalInputs = {input};
    auto result = driver::runModel(request);
    QVERIFY2(result.ok(), result.ok() ? "" : qPrintable(errorText(result.error())));
    QCOMPARE(result->outputs.size(), size_t(1));
    QCOMPARE(result->outputs[0].shape(), (std::vector<int64_t>{1, 2, 2, 3}));
    std::vector<float> got = result->outputs[0].toVector<float>();
    const float bias[3] = {1, 2, 3}, slope[2] = {0.5f, 0.25f};
    for (size_t i = 0; i < x.size(); ++i) {
      float sum = x[i] + bias[i % 3];  // broadcast over the last dimension
      float expected = sum >= 0 ? sum : sum * slope[i / 6];  // one slope per channel (dimension 1)
      QVERIFY2(std::abs(got[i] - expected) < 1e-6f,
               qPrintable(QString("element %1: got %2, expected %3").arg(i).arg(got[i]).arg(expected)));
    }
  }

  // An old model whose operators all kept their definitions is imported as it is.
  void oldModelWithUnchangedOperatorsIsNotConverted() {
    OldModel old(6);
    old.input("x", {2});
    old.node("Relu", {"x"}, "y", "relu");
    old.output("y", {2});
    auto graph = old.import();
    QVERIFY2(graph.ok(), graph.ok() ? "" : qPrintable(errorText(graph.error())));
    QVERIFY(graph->importSteps.empty());
    QCOMPARE(graph->operations()[0]->provenance[0].opset, 6);
  }

  // Add-6 broadcasting a [3] bias along axis 1 of a [2, 3, 4] input: ONNX 1.12's converter
  // unsqueezes it to [3, 1, 1] and then rejects its own result.
  void converterFailureIsExplained() {
    OldModel old(6);
    old.input("x", {2, 3, 4});
    old.initializer("bias", {3}, {1, 2, 3});
    auto* add = old.node("Add", {"x", "bias"}, "y", "add");
    OldModel::setInt(add, "broadcast", 1);
    OldModel::setInt(add, "axis", 1);
    old.output("y", {2, 3, 4});
    auto graph = old.import();
    QVERIFY(!graph.ok());
    QCOMPARE(graph.error().location, std::string("old.onnx"));
    QString text = errorText(graph.error());
    QVERIFY2(text.contains("old.onnx: error: cannot be converted from opset 6 to 7 by ONNX's version converter: "),
             qPrintable(text));
    QVERIFY2(text.contains("Dimension 0 of input 2 does not match"), qPrintable(text));
    QVERIFY2(!text.contains("helper.cc"), qPrintable(text));  // the converter's own source location is noise
    QVERIFY2(QString::fromStdString(graph.error().hint).contains("re-export the model at opset 7"), qPrintable(text));
  }

  void unknownOperatorOfAnOldModelIsNamed() {
    OldModel old(6);
    old.input("x", {2});
    old.node("Relux", {"x"}, "y", "typo");
    old.output("y", {2});
    auto graph = old.import();
    QVERIFY(!graph.ok());
    QCOMPARE(errorText(graph.error()),
             QString("old.onnx: error: cannot be converted from opset 6 to 7: node 'typo' (Relux) is no operator of "
                     "ONNX opset 6, so ONNX's version converter does not know how it changed (check the operator's "
                     "name, or the opset the model declares)"));
  }

  // A graph output no node computes: libonnx 1.12's converter dereferenced null on it and the
  // process died (found by fuzz_onnx_model). The name's control characters are escaped.
  void undefinedGraphOutputOfAnOldModelIsNamed() {
    OldModel old(6);
    old.input("a", {3, 7});
    old.input("b", {7, 3});
    old.input("c", {1});
    old.node("Gemm", {"a", "b", "c"}, "y", "gemm");
    old.output("y\n\x01", {3, 3});
    auto graph = old.import();
    QVERIFY(!graph.ok());
    QCOMPARE(errorText(graph.error()),
             QString("old.onnx: error: cannot be converted from opset 6 to 7: graph output 0 'y\\x0a\\x01' is no "
                     "graph input, initializer or node output (the model is malformed; re-export it, or name a value "
                     "the graph defines)"));
  }

  void undefinedNodeInputOfAnOldModelIsNamed() {
    OldModel old(6);
    old.input("a", {3, 7});
    old.input("b", {7, 3});
    old.node("Gemm", {"a", "b", "missing"}, "y", "gemm");
    old.output("y", {3, 3});
    auto graph = old.import();
    QVERIFY(!graph.ok());
    QVERIFY2(errorText(graph.error()).contains("input 'missing' of node 'gemm' (Gemm) is no graph input"),
             qPrintable(errorText(graph.error())));
  }

  // LSTM-1 with its first output omitted and no hidden_size: libonnx 1.12's shape inference
  // for it dereferences null (found by fuzz_onnx_model). The converter runs in a child
  // process, so the import fails with a message and this process goes on.
  void converterCrashCostsTheImportNotTheProcess() {
    OldModel old(3);
    old.input("X", {2, 1, 3});
    old.input("W", {1, 12, 3});
    old.input("R", {1, 12, 3});
    auto* lstm = old.graph().add_node();
    lstm->set_op_type("LSTM");
    lstm->set_name("lstm");
    for (const char* input : {"X", "W", "R"}) lstm->add_input(input);
    lstm->add_output("");
    lstm->add_output("Y_h");
    old.output("Y_h", {1, 1, 3});
    for (int attempt = 0; attempt < 2; ++attempt) {  // and again: nothing was left broken
      auto graph = old.import();
      QVERIFY(!graph.ok());
      QString text = errorText(graph.error());
      QVERIFY2(text.startsWith("old.onnx: error: cannot be converted from opset 3 to 7"), qPrintable(text));
    }
  }
};

QTEST_GUILESS_MAIN(TestOnnxOpsetConversion)
#include "test_onnx_opset_conversion.moc"
