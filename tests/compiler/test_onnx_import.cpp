// The ONNX importer: conformance models, every attribute kind, constants, dynamic shapes and bad models (tensor files: test_onnx_tensor_files.cpp).
#include <QTemporaryDir>
#include <QtTest>

#include "tests/compiler/OnnxImportTestSupport.h"
#include "tests/compiler/OnnxModelBuilder.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "compiler/frontend/onnx/OnnxImporter.h"

using namespace tessel;
using namespace tessel::frontend;
using tessel::testing::addAttribute;
using tessel::testing::ModelBuilder;
using namespace tessel::testing::onnx_import;

namespace {

QString printed(const graph::Graph& graph) { return QString::fromStdString(graph::printGraph(graph)); }

// A model worth corrupting: an initializer, a Constant node, attributes, two operations.
ModelBuilder convReluModel() {
  ModelBuilder builder;
  builder.input("x", {1, 1, 4, 4});
  builder.initializer("w", {1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  auto* conv = builder.node("Conv", {"x", "w"}, {"c"}, "conv");
  auto* pads = addAttribute(conv, "pads", onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  auto* constant = builder.node("Constant", {}, {"k"});
  addAttribute(constant, "value_float", onnx::AttributeProto::FLOAT)->set_f(0.5f);
  builder.node("Mul", {"c", "k"}, {"m"}, "scale");
  builder.node("Relu", {"m"}, {"y"}, "relu");
  builder.output("y");
  return builder;
}

const graph::OperationNode* onlyOperation(const graph::Graph& graph) {
  auto ops = graph.operations();
  return ops.size() == 1 ? ops[0] : nullptr;
}

}  // namespace

class TestOnnxImport : public QObject {
  Q_OBJECT
private slots:
  // ---- conformance models -------------------------------------------------------------

  void importsConvWithAttributesAndGeneratedName() {
    REQUIRE_CONFORMANCE_DATA();
    auto graph = importOnnxFile(conformanceModel("test_conv_with_strides_padding"));
    QVERIFY2(graph.ok(), qPrintable(errorText(graph)));
    QCOMPARE(printed(*graph), QString("graph(%x: float32[1, 1, 7, 5], %W: float32[1, 1, 3, 3]) {\n"
                                      "  %Conv_0 = Conv(%x, %W) {kernel_shape=[3, 3], pads=[1, 1, 1, 1], "
                                      "strides=[2, 2]} : ?  # Conv_0\n"
                                      "  return %Conv_0\n"
                                      "}\n"));
    const graph::OperationNode* conv = onlyOperation(*graph);
    QVERIFY(conv);
    QCOMPARE(conv->provenance.size(), size_t(1));
    QCOMPARE(conv->provenance[0].opType, std::string("Conv"));
    QVERIFY(conv->provenance[0].opset >= 7);
    QCOMPARE(graph->outputNames, std::vector<std::string>{"y"});
    QVERIFY(!conv->outputTypes[0].known());
  }

  void importsGemmWithThreeInputs() {
    REQUIRE_CONFORMANCE_DATA();
    auto graph = importOnnxFile(conformanceModel("test_gemm_default_matrix_bias"));
    QVERIFY2(graph.ok(), qPrintable(errorText(graph)));
    const graph::OperationNode* gemm = onlyOperation(*graph);
    QVERIFY(gemm);
    QCOMPARE(gemm->op, std::string("Gemm"));
    QCOMPARE(gemm->inputs.size(), size_t(3));
    for (size_t i = 0; i < 3; ++i) QCOMPARE(gemm->inputs[i], graph->inputs[i]);
    QVERIFY(gemm->attributes.empty());  // absent attributes stay absent: operators apply defaults
  }

  void importsOmittedOptionalInputOfResize() {
    REQUIRE_CONFORMANCE_DATA();
    auto graph = importOnnxFile(conformanceModel("test_resize_downsample_scales_linear"));
    QVERIFY2(graph.ok(), qPrintable(errorText(graph)));
    QCOMPARE(printed(*graph), QString("graph(%X: float32[1, 1, 2, 4], %scales: float32[4]) {\n"
                                      "  %Resize_0 = Resize(%X, none, %scales) {mode=\"linear\"} : ?  # Resize_0\n"
                                      "  return %Resize_0\n"
                                      "}\n"));
  }

  void importsMultiOutputSplit() {
    REQUIRE_CONFORMANCE_DATA();
    auto graph = importOnnxFile(conformanceModel("test_split_equal_parts_1d"));
    QVERIFY2(graph.ok(), qPrintable(errorText(graph)));
    QCOMPARE(printed(*graph), QString("graph(%input: float32[6]) {\n"
                                      "  %Split_0, %Split_0:1, %Split_0:2 = Split(%input) {axis=0} : (?, ?, ?)  # "
                                      "Split_0\n"
                                      "  return %Split_0, %Split_0:1, %Split_0:2\n"
                                      "}\n"));
    QCOMPARE(graph->outputNames, (std::vector<std::string>{"output_1", "output_2", "output_3"}));
  }

  void bindsReshapeShapeInputAsConstant() {
    REQUIRE_CONFORMANCE_DATA();
    const std::string test = "test_reshape_reordered_all_dims";
    auto shape = readTensorProtoFile(conformanceTensor(test, "input_1.pb"));
    QVERIFY2(shape.ok(), qPrintable(errorText(shape)));
    auto unbound = importOnnxFile(conformanceModel(test));
    QVERIFY2(unbound.ok(), qPrintable(errorText(unbound)));
    QCOMPARE(unbound->inputs.size(), size_t(2));

    OnnxImportOptions options;
    options.inputValues["shape"] = runtime::NDArray::empty({3}, runtime::DataType::int32());
    auto wrongType = importOnnxFile(conformanceModel(test), options);
    QCOMPARE(errorText(wrongType), QString::fromStdString(conformanceModel(test)) +
                                       ": error: the value given for input 'shape' is int32 but the model declares int64");
    options.inputValues["shape"] = *shape;
    auto bound = importOnnxFile(conformanceModel(test), options);
    QVERIFY2(bound.ok(), qPrintable(errorText(bound)));
    QCOMPARE(bound->inputs.size(), size_t(1));
    const graph::OperationNode* reshape = onlyOperation(*bound);
    QVERIFY(reshape);
    auto* constant = graph::asConstant(reshape->inputs[1].node());
    QVERIFY(constant);
    QCOMPARE(constant->data.toVector<int64_t>(), shape->toVector<int64_t>());
  }

  void readsInputsOfAModel() {
    REQUIRE_CONFORMANCE_DATA();
    auto inputs = readOnnxInputs(conformanceModel("test_conv_with_strides_padding"));
    QVERIFY2(inputs.ok(), qPrintable(errorText(inputs)));
    QCOMPARE(inputs->size(), size_t(2));
    QCOMPARE((*inputs)[0].name, std::string("x"));
    QCOMPARE((*inputs)[0].shape, (std::vector<int64_t>{1, 1, 7, 5}));
    QCOMPARE((*inputs)[1].dtype, DataType::float32());
  }

  void importsEveryConformanceModelOrExplains() {
    REQUIRE_CONFORMANCE_DATA();
    // Whatever a model uses, the importer either imports it or says why, naming the file.
    int imported = 0, total = 0;
    for (const auto& entry : std::filesystem::directory_iterator(kNodeTests)) {
      std::string path = entry.path().string() + "/model.onnx";
      if (!std::filesystem::exists(path)) continue;
      ++total;
      auto graph = importOnnxFile(path);
      if (graph.ok()) {
        ++imported;
        QCOMPARE(graph->outputs.size(), graph->outputNames.size());
        // readOnnxInputs reads the file without importing it; it must list the same inputs.
        auto inputs = readOnnxInputs(path);
        QVERIFY2(inputs.ok(), qPrintable(errorText(inputs)));
        QCOMPARE(inputs->size(), graph->inputs.size());
        for (size_t i = 0; i < inputs->size(); ++i) {
          QCOMPARE((*inputs)[i].name, graph->inputs[i].node()->name);
          QCOMPARE((*inputs)[i].shape, graph->inputs[i].type().shape);
          QCOMPARE((*inputs)[i].dtype, graph->inputs[i].type().dtype);
        }
      } else {
        QCOMPARE(graph.error().location, path);
        QVERIFY(!graph.error().message.empty());
      }
    }
    QVERIFY2(imported * 10 > total * 9, qPrintable(QString("%1 of %2 imported").arg(imported).arg(total)));
  }

  void readsInputDeclarationsWithoutImporting() {
    ModelBuilder builder(8);
    builder.input("image", {-1, 3, 8, 8});
    builder.input("w", {4, 3, 3, 3});  // an initializer listed among the inputs
    builder.initializer("w", {4, 3, 3, 3}, std::vector<float>(108, 0.5f));
    auto* mask = builder.graph().add_input();
    mask->set_name("mask");
    mask->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::BOOL);
    builder.node("Conv", {"image", "w"}, {"y"});
    builder.output("y");
    QTemporaryDir dir;
    std::string path = dir.filePath("model.onnx").toStdString();
    writeBytes(path, builder.bytes());
    auto inputs = readOnnxInputs(path);
    QVERIFY2(inputs.ok(), qPrintable(errorText(inputs)));
    QCOMPARE(inputs->size(), size_t(2));
    QCOMPARE((*inputs)[0].name, std::string("image"));
    QCOMPARE((*inputs)[0].shape, (std::vector<int64_t>{-1, 3, 8, 8}));
    QVERIFY((*inputs)[0].rankKnown);
    QCOMPARE((*inputs)[1].name, std::string("mask"));
    QCOMPARE((*inputs)[1].dtype, DataType::boolean());
    QVERIFY(!(*inputs)[1].rankKnown);

    writeBytes(path, builder.bytes().substr(0, 40));
    auto truncated = readOnnxInputs(path);
    QVERIFY2(errorText(truncated).startsWith(QString::fromStdString(path) + ": error: is not an ONNX model"),
             qPrintable(errorText(truncated)));
  }

  // ---- graph structure ---------------------------------------------------------------------

  void initializersListedAsInputsAreConstants() {
    ModelBuilder builder(8);
    builder.input("x", {1, 1, 4, 4});
    builder.input("w", {1, 1, 3, 3});  // opset < 9 exporters list initializers as inputs
    builder.initializer("w", {1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
    builder.node("Conv", {"x", "w"}, {"y"}, "conv");
    builder.output("y");
    auto graph = builder.import();
    QVERIFY2(graph.ok(), qPrintable(errorText(graph)));
    QCOMPARE(printed(*graph), QString("graph(%x: float32[1, 1, 4, 4]) {\n"
                                      "  const @w: float32[1, 1, 3, 3]\n"
                                      "  %conv = Conv(%x, @w) : ?  # conv\n"
                                      "  return %conv\n"
                                      "}\n"));
    auto* weight = graph::asConstant(onlyOperation(*graph)->inputs[1].node());
    QVERIFY(weight);
    QCOMPARE(weight->data.toVector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9}));
  }

  void readsExternalData() {
    QTemporaryDir dir;
    std::vector<float> weights = {0.5f, -1.0f, 2.0f, 4.0f};
    std::string payload = "HEADER__" + std::string(reinterpret_cast<const char*>(weights.data()), 16);
    std::filesystem::create_directory(dir.filePath("data").toStdString());
    writeBytes(dir.filePath("data/weights.bin").toStdString(), payload);
    ModelBuilder builder;
    builder.input("x", {4});
    auto* tensor = builder.graph().add_initializer();
    tensor->set_name("w");
    tensor->set_data_type(onnx::TensorProto::FLOAT);
    tensor->add_dims(4);
    tensor->set_data_location(onnx::TensorProto::EXTERNAL);
    auto entry = [&](const std::string& key, const std::string& value) {
      auto* pair = tensor->add_external_data();
      pair->set_key(key);
      pair->set_value(value);
    };
    entry("location", "data/weights.bin");
    entry("offset", "8");
    entry("length", "16");
    builder.node("Add", {"x", "w"}, {"y"});
    builder.output("y");
    std::string modelPath = dir.filePath("model.onnx").toStdString();
    writeBytes(modelPath, builder.bytes());
    auto graph = importOnnxFile(modelPath);
    QVERIFY2(graph.ok(), qPrintable(errorText(graph)));
    auto* constant = graph::asConstant(onlyOperation(*graph)->inputs[1].node());
    QVERIFY(constant);
    QCOMPARE(constant->data.toVector<float>(), weights);

    // The same bytes loaded from elsewhere resolve the file against the name they are given.
    QVERIFY(importOnnxBytes(builder.bytes(), modelPath).ok());
    auto elsewhere = importOnnxBytes(builder.bytes(), "/nonexistent/model.onnx");
    QVERIFY(!elsewhere.ok());
    QVERIFY2(errorText(elsewhere).contains("/nonexistent/data/weights.bin', which cannot be read"),
             qPrintable(errorText(elsewhere)));

    tensor->mutable_external_data(2)->set_value("12");
    auto wrongLength = importOnnxBytes(builder.bytes(), modelPath);
    QVERIFY2(errorText(wrongLength).contains("initializer tensor 'w' has external data of 12 bytes but its dims and "
                                             "type need 16"),
             qPrintable(errorText(wrongLength)));
    tensor->mutable_external_data(2)->set_value("16");
    tensor->mutable_external_data(1)->set_value("12");
    auto pastEnd = importOnnxBytes(builder.bytes(), modelPath);
    QVERIFY2(errorText(pastEnd).contains("needs bytes 12..28"), qPrintable(errorText(pastEnd)));
    tensor->mutable_external_data(0)->set_value("../weights.bin");
    auto escaping = importOnnxBytes(builder.bytes(), modelPath);
    QVERIFY2(errorText(escaping).contains("outside the model's directory"), qPrintable(errorText(escaping)));
  }

  void valueInfoWithSymbolicDimsIsAccepted() {
    ModelBuilder builder;
    builder.input("x", {2, 3});
    builder.node("Relu", {"x"}, {"r"});
    builder.node("Neg", {"r"}, {"y"});
    ModelBuilder::setType(builder.graph().add_value_info(), onnx::TensorProto::FLOAT, {-1, 3});
    builder.graph().mutable_value_info(0)->set_name("r");
    builder.output("y");
    auto graph = builder.import();
    QVERIFY2(graph.ok(), qPrintable(errorText(graph)));
    QCOMPARE(graph->operationCount(), size_t(2));
    for (auto* op : graph->operations()) QVERIFY(!op->outputTypes[0].known());  // InferTypes decides
  }

  void omittedOptionalInputsAreUndefined() {
    ModelBuilder builder;
    builder.input("x", {4});
    builder.input("hi", {});
    builder.node("Clip", {"x", "", "hi"}, {"y"}, "clip");
    builder.output("y");
    auto graph = builder.import();
    QVERIFY2(graph.ok(), qPrintable(errorText(graph)));
    const graph::OperationNode* clip = onlyOperation(*graph);
    QCOMPARE(clip->inputs.size(), size_t(3));
    QVERIFY(!clip->hasInput(1));
    QVERIFY(clip->hasInput(2));
    QVERIFY(printed(*graph).contains("Clip(%x, none, %hi)"));
  }

  void omittedOptionalOutputsKeepTheirPlace() {
    ModelBuilder builder;
    builder.input("x", {4});
    builder.node("Dropout", {"x"}, {"y", ""}, "dropout");
    builder.output("y");
    auto graph = builder.import();
    QVERIFY2(graph.ok(), qPrintable(errorText(graph)));
    QCOMPARE(onlyOperation(*graph)->outputTypes.size(), size_t(2));
  }

  void constantNodesBecomeConstants_data() {
    QTest::addColumn<QString>("attribute");
    QTest::addColumn<QString>("expectedType");
    QTest::addColumn<QVector<double>>("expectedValues");
    QTest::newRow("value") << "value" << "float32[2]" << QVector<double>{1.5, -2};
    QTest::newRow("value_float") << "value_float" << "float32[]" << QVector<double>{1.5};
    QTest::newRow("value_floats") << "value_floats" << "float32[2]" << QVector<double>{1.5, -2};
    QTest::newRow("value_int") << "value_int" << "int64[]" << QVector<double>{7};
    QTest::newRow("value_ints") << "value_ints" << "int64[3]" << QVector<double>{7, 8, -9};
  }
  void constantNodesBecomeConstants() {
    QFETCH(QString, attribute);
    QFETCH(QString, expectedType);
    QFETCH(QVector<double>, expectedValues);
    ModelBuilder builder;
    auto* node = builder.node("Constant", {}, {"c"}, "the_constant");
    std::string key = attribute.toStdString();
    if (key == "value") {
      auto* tensor = addAttribute(node, key, onnx::AttributeProto::TENSOR)->mutable_t();
      tensor->set_data_type(onnx::TensorProto::FLOAT);
      tensor->add_dims(2);
      for (double v : expectedValues) tensor->add_float_data(float(v));
    } else if (key == "value_float") {
      addAttribute(node, key, onnx::AttributeProto::FLOAT)->set_f(float(expectedValues[0]));
    } else if (key == "value_floats") {
      auto* a = addAttribute(node, key, onnx::AttributeProto::FLOATS);
      for (double v : expectedValues) a->add_floats(float(v));
    } else if (key == "value_int") {
      addAttribute(node, key, onnx::AttributeProto::INT)->set_i(int64_t(expectedValues[0]));
    } else {
      auto* a = addAttribute(node, key, onnx::AttributeProto::INTS);
      for (double v : expectedValues) a->add_ints(int64_t(v));
    }
    builder.node("Identity", {"c"}, {"y"});
    builder.output("y");
    auto graph = builder.import();
    QVERIFY2(graph.ok(), qPrintable(errorText(graph)));
    QVERIFY(graph->inputs.empty());
    auto* constant = graph::asConstant(onlyOperation(*graph)->inputs[0].node());
    QVERIFY(constant);
    QCOMPARE(QString::fromStdString(constant->outputTypes[0].toString()), expectedType);
    QVector<double> actual;
    if (constant->data.dtype() == runtime::DataType::float32())
      for (float v : constant->data.toVector<float>()) actual.push_back(v);
    else
      for (int64_t v : constant->data.toVector<int64_t>()) actual.push_back(double(v));
    QCOMPARE(actual, expectedValues);
  }

  void mapsEveryAttributeKind() {
    ModelBuilder builder;
    builder.input("x", {2});
    // An operator Tessel implements, given every kind of attribute (operators ignore the ones
    // they do not define).
    auto* node = builder.node("Identity", {"x"}, {"y"}, "n");
    addAttribute(node, "i", onnx::AttributeProto::INT)->set_i(-3);
    addAttribute(node, "f", onnx::AttributeProto::FLOAT)->set_f(0.25f);
    addAttribute(node, "s", onnx::AttributeProto::STRING)->set_s("SAME_UPPER");
    auto* ints = addAttribute(node, "is", onnx::AttributeProto::INTS);
    ints->add_ints(1);
    ints->add_ints(2);
    auto* floats = addAttribute(node, "fs", onnx::AttributeProto::FLOATS);
    floats->add_floats(0.5f);
    auto* strings = addAttribute(node, "ss", onnx::AttributeProto::STRINGS);
    strings->add_strings("a");
    strings->add_strings("b");
    auto* tensor = addAttribute(node, "value", onnx::AttributeProto::TENSOR)->mutable_t();
    tensor->set_data_type(onnx::TensorProto::INT32);
    tensor->add_dims(1);
    tensor->add_int32_data(42);
    // Old files leave the kind unset; the field holding the value says it.
    node->add_attribute()->set_name("untyped");
    node->mutable_attribute(node->attribute_size() - 1)->set_f(2.0f);
    builder.output("y");
    auto graph = builder.import();
    QVERIFY2(graph.ok(), qPrintable(errorText(graph)));
    QVERIFY2(printed(*graph).contains("%n = Identity(%x) {f=0.25, fs=[0.5], i=-3, is=[1, 2], s=\"SAME_UPPER\", "
                                      "ss=[\"a\", \"b\"], untyped=2, value=[42], value.dtype=\"int32\", "
                                      "value.shape=[1]} : ?  # n"),
             qPrintable(printed(*graph)));
    const graph::OperationNode* op = onlyOperation(*graph);
    QCOMPARE(op->attribute<double>("f", 0), 0.25);
    QCOMPARE(op->attribute<std::vector<int64_t>>("value", {}), std::vector<int64_t>{42});
  }

  void conformanceConstantOfShapeKeepsItsValueTensor() {
    REQUIRE_CONFORMANCE_DATA();
    auto graph = importOnnxFile(conformanceModel("test_constantofshape_float_ones"));
    QVERIFY2(graph.ok(), qPrintable(errorText(graph)));
    const graph::OperationNode* op = onlyOperation(*graph);
    QVERIFY(op);
    QCOMPARE(op->attribute<std::vector<double>>("value", {}), std::vector<double>{1.0});
    QCOMPARE(op->attribute<std::string>("value.dtype", ""), std::string("float32"));
  }

  void namesNodesUniquely() {
    ModelBuilder builder;
    builder.input("x", {2});
    builder.node("Relu", {"x"}, {"a"});             // unnamed: Relu_0
    builder.node("Relu", {"a"}, {"b"}, "twin");
    builder.node("Relu", {"b"}, {"c"}, "twin");      // a repeated ONNX name gets a suffix
    builder.node("Neg", {"c"}, {"d"}, "Relu_0");     // an explicit name keeps priority... once
    builder.output("d");
    auto graph = builder.import();
    QVERIFY2(graph.ok(), qPrintable(errorText(graph)));
    std::vector<std::string> names, provenance;
    for (auto* op : graph->operations()) {
      names.push_back(op->name);
      provenance.push_back(op->provenance.at(0).nodeName + "/" + op->provenance.at(0).opType);
    }
    QCOMPARE(names, (std::vector<std::string>{"Relu_0_1", "twin", "twin_1", "Relu_0"}));
    QCOMPARE(provenance, (std::vector<std::string>{"Relu_0_1/Relu", "twin/Relu", "twin_1/Relu", "Relu_0/Neg"}));
  }

  void keepsOnnxOutputNames() {
    ModelBuilder builder;
    builder.input("x", {2});
    builder.node("Relu", {"x"}, {"first"}, "r");
    builder.node("Neg", {"x"}, {"second"}, "n");
    builder.output("second");
    builder.output("first");
    builder.output("x");  // a graph input can be an output too
    auto graph = builder.import();
    QVERIFY2(graph.ok(), qPrintable(errorText(graph)));
    QCOMPARE(graph->outputNames, (std::vector<std::string>{"second", "first", "x"}));
    QCOMPARE(graph->outputs[0].node()->name, std::string("n"));
    QCOMPARE(graph->outputs[2], graph->inputs[0]);
  }

  void sortsNodesGivenOutOfOrder() {
    ModelBuilder builder;
    builder.input("x", {2});
    builder.node("Neg", {"r"}, {"y"}, "second");
    builder.node("Relu", {"x"}, {"r"}, "first");
    builder.output("y");
    auto graph = builder.import();
    QVERIFY2(graph.ok(), qPrintable(errorText(graph)));
    QCOMPARE(printed(*graph), QString("graph(%x: float32[2]) {\n"
                                      "  %first = Relu(%x) : ?  # first\n"
                                      "  %second = Neg(%first) : ?  # second\n"
                                      "  return %second\n"
                                      "}\n"));
  }

  void acceptsOldOpsetsForUnchangedOperators() {
    ModelBuilder builder(6);
    builder.input("x", {2});
    builder.node("Relu", {"x"}, {"y"}, "relu");
    builder.output("y");
    auto graph = builder.import();
    QVERIFY2(graph.ok(), qPrintable(errorText(graph)));
    QCOMPARE(onlyOperation(*graph)->provenance[0].opset, 6);
  }

  // ---- dynamic shapes ------------------------------------------------------------------

  void dynamicInputNeedsAShape() {
    ModelBuilder builder;
    builder.input("data", {-1, 3});
    builder.node("Relu", {"data"}, {"y"});
    builder.output("y");
    auto missing = builder.import();
    QVERIFY(!missing.ok());
    QCOMPARE(errorText(missing), QString("model.onnx: error: input 'data' has dynamic dimensions (declared [N, 3]) and "
                                         "no shape was given for it (pass --input-shape data:D0,D1)"));

    OnnxImportOptions options;
    options.inputShapes["data"] = {8, 3};
    auto given = builder.import(options);
    QVERIFY2(given.ok(), qPrintable(errorText(given)));
    QCOMPARE(QString::fromStdString(given->inputs[0].type().toString()), QString("float32[8, 3]"));

    options.inputShapes["data"] = {8, 4};
    auto disagreeing = builder.import(options);
    QCOMPARE(errorText(disagreeing), QString("model.onnx: error: --input-shape for input 'data' has shape [8, 4] but "
                                             "the model declares [N, 3]"));

    options.inputShapes = {{"date", {8, 3}}};
    auto misspelled = builder.import(options);
    QCOMPARE(errorText(misspelled),
             QString("model.onnx: error: --input-shape names 'date', which is not an input of the model (its inputs "
                     "are data)"));
  }

  void inputWithoutShapeNeedsAShape() {
    ModelBuilder builder;
    auto* info = builder.graph().add_input();
    info->set_name("x");
    info->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    builder.node("Relu", {"x"}, {"y"});
    builder.output("y");
    auto missing = builder.import();
    QVERIFY2(errorText(missing).contains("input 'x' declares no shape and no shape was given for it (pass "
                                         "--input-shape x:D0,D1,...)"),
             qPrintable(errorText(missing)));
    OnnxImportOptions options;
    options.inputShapes["x"] = {5};
    auto given = builder.import(options);
    QVERIFY2(given.ok(), qPrintable(errorText(given)));
    QCOMPARE(given->inputs[0].type().shape, std::vector<int64_t>{5});
  }

  void parsesInputShapes() {
    auto plain = parseInputShape("data:1,3,224,224");
    QVERIFY2(plain.ok(), qPrintable(errorText(plain)));
    QCOMPARE(plain->first, std::string("data"));
    QCOMPARE(plain->second, (std::vector<int64_t>{1, 3, 224, 224}));
    auto colonInName = parseInputShape("input:0:2, 5");
    QVERIFY(colonInName.ok());
    QCOMPARE(colonInName->first, std::string("input:0"));
    QCOMPARE(colonInName->second, (std::vector<int64_t>{2, 5}));
    auto scalar = parseInputShape("alpha:");
    QVERIFY(scalar.ok() && scalar->second.empty());
    QVERIFY(errorText(parseInputShape("data")).contains("has no ':'"));
    QVERIFY(errorText(parseInputShape("data:1,x")).contains("has 'x' where a dimension"));
    QVERIFY(errorText(parseInputShape("data:1,-1")).contains("has '-1' where a dimension"));
    QVERIFY(errorText(parseInputShape("data:1,,2")).contains("has '' where a dimension"));
    QVERIFY(errorText(parseInputShape(":1")).contains("names no input"));
  }

  // ---- errors ------------------------------------------------------------------------------

  void explainsBadModels_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("expected");
    auto row = [](const char* name, const ModelBuilder& builder, const QString& expected) {
      QTest::newRow(name) << QByteArray::fromStdString(builder.bytes()) << expected;
    };
    QTest::newRow("empty") << QByteArray() << "model.onnx: error: is empty; is not an ONNX model";
    QTest::newRow("text") << QByteArray("ir_version: 7\ngraph {}\n")
                          << "model.onnx: error: is not an ONNX model: it does not parse";
    {
      std::string truncated = convReluModel().bytes();
      truncated.resize(truncated.size() / 2);
      QTest::newRow("truncated") << QByteArray::fromStdString(truncated) << "is not an ONNX model";
    }
    {
      ModelBuilder b;
      b.input("x", {2});
      b.node("Add", {"x", "bias"}, {"y"}, "add");
      b.output("y");
      row("undefined value", b, "model.onnx: error: node 'add' (Add) reads 'bias', which no node, graph input or "
                                "initializer produces");
    }
    {
      ModelBuilder b;
      b.input("x", {2});
      b.node("Add", {"x", "b"}, {"a"}, "first");
      b.node("Relu", {"a"}, {"b"}, "second");
      b.output("b");
      row("cycle", b, "model.onnx: error: node 'first' (Add) reads a value before anything produces it: the nodes "
                      "form a cycle (node 'first' (Add) reads 'b', node 'second' (Relu) reads 'a') (ONNX requires "
                      "every value to be produced before it is used)");
    }
    {
      ModelBuilder b;
      b.input("x", {2});
      b.node("Relu", {"x"}, {"y"}, "one");
      b.node("Neg", {"x"}, {"y"}, "two");
      b.output("y");
      row("produced twice", b, "node 'two' (Neg) writes 'y', which node 'one' (Relu) writes too");
    }
    {
      ModelBuilder b;
      b.input("x", {2});
      b.initializer("w", {3}, {1, 2});
      b.node("Add", {"x", "w"}, {"y"}, "add");
      b.output("y");
      row("raw data size", b, "model.onnx: error: initializer tensor 'w' has 8 bytes of raw_data but its dims and type "
                              "need 12");
    }
    {
      ModelBuilder b;
      b.input("x", {2});
      b.initializer("w", {-2}, {});
      b.node("Add", {"x", "w"}, {"y"}, "add");
      b.output("y");
      row("negative initializer dim", b, "initializer tensor 'w' has a negative dimension (-2)");
    }
    {
      ModelBuilder b;
      b.input("x", {2, -7});
      b.graph().mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_value(-7);
      b.node("Relu", {"x"}, {"y"});
      b.output("y");
      row("negative input dim", b, "input 'x' declares a negative dimension (-7)");
    }
    {
      ModelBuilder b;
      b.input("x", {2});
      b.initializer("w", {2}, {1, 2})->set_data_type(99);
      b.node("Add", {"x", "w"}, {"y"}, "add");
      b.output("y");
      row("unknown element type", b, "initializer tensor 'w' has an unsupported element type: element type code 99 is "
                                     "not one Tessel knows");
    }
    {
      ModelBuilder b;
      b.input("x", {2}, onnx::TensorProto::COMPLEX64);
      b.node("Relu", {"x"}, {"y"});
      b.output("y");
      row("complex input", b, "input 'x' has an unsupported element type: complex tensors are not supported");
    }
    {
      ModelBuilder b;
      b.input("x", {2}, onnx::TensorProto::STRING);
      b.node("Identity", {"x"}, {"y"});
      b.output("y");
      row("string input", b, "input 'x' is a tensor of strings, which no compiled kernel takes");
    }
    {
      ModelBuilder b;
      b.input("x", {2});
      b.node("FusedGemm", {"x"}, {"y"}, "fused")->set_domain("com.microsoft");
      b.output("y");
      row("foreign domain", b, "model.onnx: error: uses 1 unsupported operator: FusedGemm from domain 'com.microsoft' "
                               "(node 'fused') (Tessel does not implement it; it implements only operators of the "
                               "default ONNX domain;");
    }
    {
      ModelBuilder b(19);
      b.input("x", {2});
      b.node("Relu", {"x"}, {"y"});
      b.output("y");
      row("opset too new", b, "model.onnx: error: uses opset 19 of the default ONNX domain; Tessel supports opsets 7 to "
                              "18 (convert the model with onnx.version_converter to opset 18)");
    }
    {
      ModelBuilder b;
      b.model.mutable_opset_import(0)->set_domain("ai.onnx.preview.training");
      b.input("x", {2});
      b.node("Adam", {"x"}, {"y"})->set_domain("ai.onnx.preview.training");
      b.output("y");
      row("only another domain", b, "model.onnx: error: declares no opset for the default ONNX domain (only for "
                                    "ai.onnx.preview.training); Tessel supports opsets 7 to 18 of the default domain "
                                    "only");
    }
    {
      // Old models are converted (test_onnx_opset_conversion.cpp); what the converter cannot
      // know is explained.
      ModelBuilder b(6);
      b.input("x", {2});
      b.node("Addd", {"x", "x"}, {"y"}, "add");
      b.output("y");
      row("old opset unknown operator", b, "model.onnx: error: cannot be converted from opset 6 to 7: node 'add' "
                                           "(Addd) is no operator of ONNX opset 6");
    }
    {
      ModelBuilder b;
      b.input("x", {2});
      auto* loop = b.node("Loop", {"", "", "x"}, {"y"}, "loop");
      addAttribute(loop, "body", onnx::AttributeProto::GRAPH)->mutable_g()->set_name("body");
      b.output("y");
      row("endless loop", b, "node 'loop' (Loop) has neither a trip count nor a condition, so it never ends");
    }
    {
      ModelBuilder b;
      b.input("x", {2});
      b.node("Relu", {"x"}, {"y"});
      b.output("z");
      row("missing output", b, "graph output 'z' is produced by no node, graph input or initializer");
    }
    {
      ModelBuilder b;
      b.input("x", {2});
      b.node("Relu", {"x"}, {"x"}, "overwrite");
      b.output("x");
      row("writes an input", b, "node 'overwrite' (Relu) writes 'x', which is already a graph input or initializer");
    }
    {
      ModelBuilder b;
      b.input("x", {2});
      b.initializer("w", {2}, {1, 2});
      b.initializer("w", {2}, {3, 4});
      b.node("Add", {"x", "w"}, {"y"});
      b.output("y");
      row("initializer twice", b, "model.onnx: error: has two initializers named 'w'");
    }
    {
      ModelBuilder b;
      b.model.set_ir_version(2);
      b.input("x", {2});
      b.node("Relu", {"x"}, {"y"});
      b.output("y");
      row("old IR", b, "model.onnx: error: has IR version 2; Tessel reads IR version 3 and newer");
    }
    {
      ModelBuilder b;
      b.input("x", {2});
      b.node("", {"x"}, {"y"}, "anonymous");
      b.output("y");
      row("no op type", b, "model.onnx: error: node 0 ('anonymous') has no op type");
    }
    {
      ModelBuilder b;
      auto* constant = b.node("Constant", {}, {"c"}, "k");
      addAttribute(constant, "value_string", onnx::AttributeProto::STRING)->set_s("hello");
      b.output("c");
      row("string constant", b, "node 'k' (Constant) holds strings; string tensors are not supported");
    }
  }
  void explainsBadModels() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, expected);
    auto graph = importOnnxBytes(bytes.toStdString(), "model.onnx");
    QVERIFY(!graph.ok());
    QCOMPARE(graph.error().location, std::string("model.onnx"));
    QVERIFY2(errorText(graph).contains(expected), qPrintable(errorText(graph)));
  }

  void explainsMissingFiles() {
    auto graph = importOnnxFile("/nonexistent/model.onnx");
    QCOMPARE(errorText(graph), QString("/nonexistent/model.onnx: error: cannot be opened (missing or unreadable)"));
    auto tensor = readTensorProtoFile("/nonexistent/input_0.pb");
    QVERIFY(errorText(tensor).startsWith("/nonexistent/input_0.pb: error: cannot be opened"));
    QTemporaryDir dir;
    auto inputs = readOnnxInputs(dir.path().toStdString());
    QVERIFY(errorText(inputs).contains("is a directory"));
  }

  void survivesCorruptedModels() {
    // Truncations and bit flips of a valid model: each imports or gives a Diagnostic naming
    // the source; none crashes or throws.
    const std::string valid = convReluModel().bytes();
    QVERIFY2(importOnnxBytes(valid, "fuzz.onnx").ok(), qPrintable(errorText(importOnnxBytes(valid, "fuzz.onnx"))));
    std::vector<std::pair<std::string, std::string>> variants;
    for (size_t length = 0; length < valid.size(); ++length)
      variants.push_back({"truncated to " + std::to_string(length), valid.substr(0, length)});
    std::mt19937 random(1234);
    for (int flip = 0; flip < 2000; ++flip) {
      std::string bytes = valid;
      size_t at = random() % bytes.size();
      bytes[at] = char(bytes[at] ^ (1 << (random() % 8)));
      variants.push_back({"bit flip at byte " + std::to_string(at), bytes});
    }
    int rejected = 0;
    for (auto& [what, bytes] : variants) {
      try {
        auto graph = importOnnxBytes(bytes, "fuzz.onnx");
        if (graph.ok()) {
          graph::printGraph(*graph);
          continue;
        }
        ++rejected;
        QVERIFY2(graph.error().location == "fuzz.onnx" && !graph.error().message.empty(), what.c_str());
      } catch (const std::exception& failure) {
        QFAIL(qPrintable(QString::fromStdString(what + " threw: " + failure.what())));
      }
    }
    QVERIFY(rejected > int(valid.size()) / 2);
  }
};

QTEST_GUILESS_MAIN(TestOnnxImport)
#include "test_onnx_import.moc"
