// ONNX control flow (If, Loop, Scan, SequenceMap), sequences and optional values: expanded
// while importing where the deciding values are known, run through the same path as `tessel
// run`; where they are known only while the model runs, interpreted (InterpretedModel.h).
#include <QTemporaryDir>
#include <QtTest>

#include "tests/compiler/OnnxModelBuilder.h"

#include <fstream>

#include "compiler/driver/InterpretedModel.h"
#include "compiler/driver/RunModel.h"
#include "compiler/frontend/onnx/OnnxImporter.h"
#include "core/graph/UnsupportedOperations.h"

using namespace tessel;
using namespace tessel::frontend;
using tessel::testing::addAttribute;
using tessel::testing::addSubgraph;
using tessel::testing::GraphBuilder;
using tessel::testing::ModelBuilder;

namespace {

template <class T>
QString errorText(const Expected<T>& result) {
  return result ? QString("(no error)") : QString::fromStdString(result.error().toString());
}

runtime::NDArray floats(std::vector<int64_t> shape, const std::vector<float>& values) {
  auto array = runtime::NDArray::empty(std::move(shape), runtime::DataType::float32());
  array.copyFrom(values);
  return array;
}
runtime::NDArray boolScalar(bool value) {
  auto array = runtime::NDArray::empty({}, runtime::DataType::boolean());
  unsigned char byte = value;
  array.copyFrom(&byte, 1);
  return array;
}
std::vector<float> valuesOf(const runtime::NDArray& array) { return array.toVector<float>(); }

// Writes the model to a file of the test's own; its path.
std::string saved(const ModelBuilder& model) {
  static QTemporaryDir directory;
  const std::string path = directory.filePath("model.onnx").toStdString();
  std::ofstream(path, std::ios::binary | std::ios::trunc) << model.bytes();
  return path;
}

// Runs the model as `tessel run` does (inputs known before compiling).
Expected<driver::RunResult> run(const ModelBuilder& model, std::vector<driver::InputValue> inputs) {
  const std::string path = saved(model);
  driver::RunRequest request;
  request.model = path;
  request.positionalInputs = std::move(inputs);
  return driver::runModel(request);
}

bool hasOperation(const graph::Graph& graph, const std::string& op) {
  for (auto* operation : graph.operations())
    if (operation->op == op) return true;
  return false;
}

void setInt(onnx::NodeProto* node, const std::string& name, int64_t value) {
  addAttribute(node, name, onnx::AttributeProto::INT)->set_i(value);
}

// y = If(cond) { Neg(x) } else { Relu(x) }: both branches read x from the graph around them.
void addNegOrRelu(ModelBuilder& model, const std::string& cond) {
  auto* node = model.node("If", {cond}, {"y"}, "choose");
  GraphBuilder then = addSubgraph(node, "then_branch");
  then.node("Neg", {"x"}, {"negated"}, "negate");
  then.output("negated");
  GraphBuilder otherwise = addSubgraph(node, "else_branch");
  otherwise.node("Relu", {"x"}, {"rectified"}, "rectify");
  otherwise.output("rectified");
  model.output("y");
}

// A Loop over `x` carrying v (doubled each iteration) and scanning v and the iteration number.
// The body's condition is `iteration < stopAfter` when stopAfter >= 0, else the condition in.
ModelBuilder doublingLoop(int64_t tripCount, int64_t stopAfter) {
  ModelBuilder model;
  model.input("x", {2});
  model.int64Initializer("trip_count", {}, {tripCount});
  auto* condition = model.node("Constant", {}, {"keep_going"});
  auto* tensor = addAttribute(condition, "value", onnx::AttributeProto::TENSOR)->mutable_t();
  tensor->set_data_type(onnx::TensorProto::BOOL);
  tensor->add_int32_data(1);
  auto* loop = model.node("Loop", {"trip_count", "keep_going", "x"}, {"v", "vs", "iterations"}, "loop");
  GraphBuilder body = addSubgraph(loop, "body");
  body.input("i", {}, onnx::TensorProto::INT64);
  body.input("cond_in", {}, onnx::TensorProto::BOOL);
  body.input("v_in", {2});
  body.initializer("two", {}, {2.0f});
  body.int64Initializer("last", {}, {stopAfter});
  if (stopAfter >= 0) body.node("Less", {"i", "last"}, {"cond_out"});
  else body.node("Identity", {"cond_in"}, {"cond_out"});
  body.node("Mul", {"v_in", "two"}, {"v_out"});
  body.node("Identity", {"v_out"}, {"scan_v"});
  setInt(body.node("Cast", {"i"}, {"scan_i"}), "to", onnx::TensorProto::FLOAT);
  for (const char* output : {"cond_out", "v_out", "scan_v", "scan_i"}) body.output(output);
  for (const char* output : {"v", "vs", "iterations"}) model.output(output);
  return model;
}

// Input x[3] and positive = ReduceSum(x) > 0, computed from the data.
void addSignOfSum(ModelBuilder& model) {
  model.input("x", {3});
  model.node("ReduceSum", {"x"}, {"sum"});
  model.initializer("zero", {}, {0.0f});
  model.node("Greater", {"sum", "zero"}, {"positive"});
}

// y = If(ReduceSum(x) > 0) { Neg(x) } else { Relu(x) }: decided by the data.
ModelBuilder negOrReluBySign() {
  ModelBuilder model;
  addSignOfSum(model);
  addNegOrRelu(model, "positive");
  return model;
}

// A while loop: v doubles until its sum reaches 100 (the condition is computed from the data
// before the loop and by the body), giving the last v and every v; with `collect`, the vs are
// also inserted into a sequence the loop carries, concatenated after it into "stacked", and
// counted into "count".
ModelBuilder doublingUntilHundred(bool collect) {
  ModelBuilder model(13);
  model.input("x", {2});
  model.node("ReduceSum", {"x"}, {"start_sum"});
  model.initializer("limit", {}, {100.0f});
  model.node("Less", {"start_sum", "limit"}, {"go"});
  std::vector<std::string> inputs = {"", "go", "x"}, outputs = {"v"};
  if (collect) {
    model.node("SequenceEmpty", {}, {"empty"});
    inputs.push_back("empty");
    outputs.push_back("collected");
  }
  outputs.push_back("vs");
  auto* loop = model.node("Loop", inputs, outputs, "loop");
  GraphBuilder body = addSubgraph(loop, "body");
  body.input("i", {}, onnx::TensorProto::INT64);
  body.input("cond_in", {}, onnx::TensorProto::BOOL);
  body.input("v_in", {2});
  if (collect) body.sequenceInput("seq_in");
  body.initializer("two", {}, {2.0f});
  body.initializer("body_limit", {}, {100.0f});
  body.node("Mul", {"v_in", "two"}, {"v_out"});
  body.node("ReduceSum", {"v_out"}, {"sum"});
  body.node("Less", {"sum", "body_limit"}, {"cond_out"});
  body.node("Identity", {"v_out"}, {"scan_v"});
  if (collect) body.node("SequenceInsert", {"seq_in", "v_out"}, {"seq_out"});
  body.output("cond_out");
  body.output("v_out");
  if (collect) body.output("seq_out");
  body.output("scan_v");
  model.output("v");
  model.output("vs");
  if (collect) {
    auto* concat = model.node("ConcatFromSequence", {"collected"}, {"stacked"});
    setInt(concat, "axis", 0);
    setInt(concat, "new_axis", 1);
    model.node("SequenceLength", {"collected"}, {"count"});
    model.output("stacked");
    model.output("count");
  }
  return model;
}

}  // namespace

class OnnxControlFlowTest : public QObject {
  Q_OBJECT

private slots:
  // A condition known while importing leaves only the branch taken.
  void ifWithConstantConditionBecomesItsBranch() {
    ModelBuilder model;
    model.input("x", {3});
    auto* condition = model.node("Constant", {}, {"cond"});
    auto* tensor = addAttribute(condition, "value", onnx::AttributeProto::TENSOR)->mutable_t();
    tensor->set_data_type(onnx::TensorProto::BOOL);
    tensor->add_int32_data(1);
    addNegOrRelu(model, "cond");
    auto graph = model.import();
    QVERIFY2(graph, qPrintable(errorText(graph)));
    QVERIFY(hasOperation(*graph, "Neg"));
    QVERIFY(!hasOperation(*graph, "Relu"));
    QCOMPARE(graph->operations()[0]->name, std::string("choose/then_branch/negate"));
    auto result = run(model, {floats({3}, {-1, 2, -3})});
    QVERIFY2(result, qPrintable(errorText(result)));
    QCOMPARE(valuesOf(result->outputs[0]), (std::vector<float>{1, -2, 3}));
  }

  // An input deciding an If is compiled for its value when the value is known (tessel run);
  // without it the message names the input and how to give it.
  void ifDecidedByAnInputCompilesForItsValue() {
    ModelBuilder model;
    model.input("x", {3});
    model.input("cond", {}, onnx::TensorProto::BOOL);
    addNegOrRelu(model, "cond");
    auto chosenElse = run(model, {floats({3}, {-1, 2, -3}), boolScalar(false)});
    QVERIFY2(chosenElse, qPrintable(errorText(chosenElse)));
    QCOMPARE(valuesOf(chosenElse->outputs[0]), (std::vector<float>{0, 2, 0}));
    auto chosenThen = run(model, {floats({3}, {-1, 2, -3}), boolScalar(true)});
    QVERIFY2(chosenThen, qPrintable(errorText(chosenThen)));
    QCOMPARE(valuesOf(chosenThen->outputs[0]), (std::vector<float>{1, -2, 3}));

    auto unknown = model.import();
    QVERIFY(!unknown);
    QVERIFY2(unknown.error().message.find("node 'choose' (If) needs its condition 'cond' while compiling, but it comes "
                                          "from the graph input 'cond'") != std::string::npos,
             qPrintable(errorText(unknown)));
    QVERIFY2(unknown.error().hint.find("tessel run --input") != std::string::npos, qPrintable(errorText(unknown)));
  }

  // Control flow decided by data computed while the model runs is refused with that reason.
  void ifDecidedByComputedDataIsRefused() {
    auto graph = negOrReluBySign().import();
    QVERIFY(!graph);
    QVERIFY2(graph.error().message.find("whose value is known only when the model runs") != std::string::npos,
             qPrintable(errorText(graph)));
  }

  // The same model runs: its If is interpreted, each run taking the branch its data asks for,
  // and the operations around it compiled once for all runs.
  void ifDecidedByDataRunsInterpreted() {
    ModelBuilder model = negOrReluBySign();
    auto positive = run(model, {floats({3}, {-1, 2, 3})});
    QVERIFY2(positive, qPrintable(errorText(positive)));
    QCOMPARE(valuesOf(positive->outputs[0]), (std::vector<float>{1, -2, -3}));

    auto interpreted = driver::InterpretedModel::create(saved(model));
    QVERIFY2(interpreted, qPrintable(errorText(interpreted)));
    driver::InterpretedModel& program = **interpreted;
    QVERIFY(program.run({{"x", floats({3}, {-1, 2, 3})}}).ok());
    QCOMPARE(valuesOf(program.outputs()[0]), (std::vector<float>{1, -2, -3}));
    QVERIFY(program.run({{"x", floats({3}, {-1, -2, 1})}}).ok());
    QCOMPARE(valuesOf(program.outputs()[0]), (std::vector<float>{0, 0, 1}));
    QVERIFY(program.run({{"x", floats({3}, {4, -2, 1})}}).ok());
    QCOMPARE(valuesOf(program.outputs()[0]), (std::vector<float>{-4, 2, -1}));
    // The sum and comparison, the then branch and the else branch: compiled once each.
    QCOMPARE(program.statistics().segmentCompiles, 3);
    QCOMPARE(program.statistics().controlSteps, int64_t(3));
  }

  // A while loop (no trip count; the body computes its condition) runs until the data stops it.
  void whileLoopRunsUntilItsConditionTurnsFalse() {
    ModelBuilder model = doublingUntilHundred(/*collect=*/false);
    auto interpreted = driver::InterpretedModel::create(saved(model));
    QVERIFY2(interpreted, qPrintable(errorText(interpreted)));
    driver::InterpretedModel& program = **interpreted;
    Status status = program.run({{"x", floats({2}, {1, 2})}});
    QVERIFY2(status.ok(), qPrintable(QString::fromStdString(status.ok() ? "" : status.error().toString())));
    QCOMPARE(program.outputNames(), (std::vector<std::string>{"v", "vs"}));
    QCOMPARE(valuesOf(program.outputs()[0]), (std::vector<float>{64, 128}));  // sums 6, 12, ..., 192
    QCOMPARE(program.outputs()[1].shape(), (std::vector<int64_t>{6, 2}));
    QCOMPARE(valuesOf(program.outputs()[1])[0], 2.0f);
    // The body is compiled once and run six times.
    QCOMPARE(program.statistics().segmentCompiles, 2);
    QCOMPARE(program.statistics().segmentRuns, int64_t(7));

    auto viaRun = run(model, {floats({2}, {30, 40})});  // 70 < 100: one doubling
    QVERIFY2(viaRun, qPrintable(errorText(viaRun)));
    QCOMPARE(valuesOf(viaRun->outputs[0]), (std::vector<float>{60, 80}));
    QCOMPARE(viaRun->outputs[1].shape(), (std::vector<int64_t>{1, 2}));
  }

  // A loop too long to unroll runs interpreted instead of being refused.
  void loopTooLongToUnrollRunsInterpreted() {
    ModelBuilder model = doublingLoop(5000, -1);
    auto result = run(model, {floats({2}, {0, -0.0f})});
    QVERIFY2(result, qPrintable(errorText(result)));
    QCOMPARE(result->outputs[1].shape(), (std::vector<int64_t>{5000, 2}));
    QCOMPARE(result->outputs[2].shape(), (std::vector<int64_t>{5000}));
    QCOMPARE(valuesOf(result->outputs[2])[4999], 4999.0f);
  }

  // Sequences carried through an interpreted loop: inserted into each iteration, then
  // concatenated and counted after it.
  void sequencesFlowThroughAnInterpretedLoop() {
    auto result = run(doublingUntilHundred(/*collect=*/true), {floats({2}, {1, 2})});
    QVERIFY2(result, qPrintable(errorText(result)));
    QCOMPARE(result->outputNames, (std::vector<std::string>{"v", "vs", "stacked", "count"}));
    QCOMPARE(result->outputs[2].shape(), (std::vector<int64_t>{6, 2}));
    QCOMPARE(valuesOf(result->outputs[2]), valuesOf(result->outputs[1]));
    QCOMPARE(result->outputs[3].toVector<int64_t>(), (std::vector<int64_t>{6}));
  }

  // A branch Tessel cannot compile is named before anything runs, though no run would take it.
  void unsupportedOperatorInABranchIsNamedBeforeRunning() {
    ModelBuilder model;
    addSignOfSum(model);
    auto* node = model.node("If", {"positive"}, {"y"}, "choose");
    GraphBuilder then = addSubgraph(node, "then_branch");
    then.node("NoSuchOperator", {"x"}, {"odd"}, "mystery");
    then.output("odd");
    GraphBuilder otherwise = addSubgraph(node, "else_branch");
    otherwise.node("Relu", {"x"}, {"rectified"});
    otherwise.output("rectified");
    model.output("y");
    auto failed = run(model, {floats({3}, {-1, -2, 1})});
    QVERIFY(!failed);
    QVERIFY2(failed.error().message.find("uses 1 unsupported operator: NoSuchOperator (node 'mystery')") !=
                 std::string::npos,
             qPrintable(errorText(failed)));
  }

  // Strings are interpreted too: StringNormalizer runs on them; a compiled operator given them
  // is named, with what Tessel runs on strings.
  void stringsRunInterpretedAndStayOutOfKernels() {
    ModelBuilder model;
    model.input("words", {3}, onnx::TensorProto::STRING);
    auto* normalizer = model.node("StringNormalizer", {"words"}, {"normalized"}, "normalize");
    auto* action = addAttribute(normalizer, "case_change_action", onnx::AttributeProto::STRING);
    action->set_s("UPPER");
    auto* stopwords = addAttribute(normalizer, "stopwords", onnx::AttributeProto::STRINGS);
    stopwords->add_strings("the");
    model.output("normalized");
    auto result = run(model, {driver::InputValue::ofStrings({{3}, {"The", "quick", "fox"}})});
    QVERIFY2(result, qPrintable(errorText(result)));
    QCOMPARE(result->stringOutputs.size(), size_t(1));
    QVERIFY(result->stringOutputs[0].has_value());
    QCOMPARE(result->stringOutputs[0]->shape, (std::vector<int64_t>{2}));
    QCOMPARE(result->stringOutputs[0]->elements, (std::vector<std::string>{"QUICK", "FOX"}));

    ModelBuilder identity;
    identity.input("words", {2}, onnx::TensorProto::STRING);
    identity.node("Identity", {"words"}, {"same"}, "copy");
    identity.output("same");
    auto refused = run(identity, {driver::InputValue::ofStrings({{2}, {"a", "b"}})});
    QVERIFY(!refused);
    QVERIFY2(refused.error().message.find("node 'copy' on read 'words', a tensor of strings, where a tensor of numbers "
                                          "is needed") != std::string::npos,
             qPrintable(errorText(refused)));
  }

  // A graph only to be viewed keeps an If it cannot expand, as a placeholder.
  void viewingKeepsAnUndecidedIfAsPlaceholder() {
    ModelBuilder model;
    model.input("x", {3});
    model.input("cond", {}, onnx::TensorProto::BOOL);
    addNegOrRelu(model, "cond");
    OnnxImportOptions options;
    options.unsupportedAsPlaceholders = true;
    auto graph = model.import(options);
    QVERIFY2(graph, qPrintable(errorText(graph)));
    auto placeholders = graph::unsupportedOperations(*graph);
    QCOMPARE(placeholders.size(), size_t(1));
    QCOMPARE(placeholders[0]->provenance[0].opType, std::string("If"));
  }

  // A branch may read a value the file produces after the If: nodes are ordered by what
  // their subgraphs read too.
  void subgraphReadsAreOrderedLikeInputs() {
    ModelBuilder model;
    model.input("h", {3});
    model.initializer("yes", {}, {1.0f});
    setInt(model.node("Cast", {"yes"}, {"cond"}), "to", onnx::TensorProto::BOOL);
    addNegOrRelu(model, "cond");  // reads x, which the next node makes
    model.node("Abs", {"h"}, {"x"}, "make_x");
    auto result = run(model, {floats({3}, {-1, 2, -3})});
    QVERIFY2(result, qPrintable(errorText(result)));
    QCOMPARE(valuesOf(result->outputs[0]), (std::vector<float>{-1, -2, -3}));
  }

  // A Loop becomes its iterations: carried values flow from one to the next, scan outputs
  // are stacked, and the iteration number counts from zero.
  void loopUnrollsItsIterations() {
    ModelBuilder model = doublingLoop(3, -1);
    auto result = run(model, {floats({2}, {1, -0.5f})});
    QVERIFY2(result, qPrintable(errorText(result)));
    QCOMPARE(valuesOf(result->outputs[0]), (std::vector<float>{8, -4}));
    QCOMPARE(result->outputs[1].shape(), (std::vector<int64_t>{3, 2}));
    QCOMPARE(valuesOf(result->outputs[1]), (std::vector<float>{2, -1, 4, -2, 8, -4}));
    QCOMPARE(valuesOf(result->outputs[2]), (std::vector<float>{0, 1, 2}));
  }

  // The condition its body computes ends the loop before the trip count does.
  void loopStopsWhenItsConditionTurnsFalse() {
    ModelBuilder model = doublingLoop(10, 1);  // iterations 0 and 1 say go on, then 1 < 1 is false
    auto result = run(model, {floats({2}, {1, 3})});
    QVERIFY2(result, qPrintable(errorText(result)));
    QCOMPARE(valuesOf(result->outputs[2]), (std::vector<float>{0, 1}));
    QCOMPARE(valuesOf(result->outputs[0]), (std::vector<float>{4, 12}));
  }

  void loopTooLongToUnrollIsRefused() {
    ModelBuilder model = doublingLoop(100000, -1);
    auto graph = model.import();
    QVERIFY(!graph);
    QVERIFY2(graph.error().message.find("node 'loop' (Loop) runs more than 4096 iterations") != std::string::npos,
             qPrintable(errorText(graph)));
  }

  // Scan (opset 9+) steps along the scanned axis, here backwards, and stacks its outputs.
  void scanRunsInTheDirectionAsked() {
    ModelBuilder model(11);
    model.input("initial", {2});
    model.input("x", {3, 2});
    auto* scan = model.node("Scan", {"initial", "x"}, {"total", "partial_sums"}, "scan");
    setInt(scan, "num_scan_inputs", 1);
    auto* directions = addAttribute(scan, "scan_input_directions", onnx::AttributeProto::INTS);
    directions->add_ints(1);
    GraphBuilder body = addSubgraph(scan, "body");
    body.input("sum_in", {2});
    body.input("next", {2});
    body.node("Add", {"sum_in", "next"}, {"sum_out"});
    body.node("Identity", {"sum_out"}, {"scan_out"});
    body.output("sum_out");
    body.output("scan_out");
    model.output("total");
    model.output("partial_sums");
    auto result = run(model, {floats({2}, {0, 100}), floats({3, 2}, {1, 2, 3, 4, 5, 6})});
    QVERIFY2(result, qPrintable(errorText(result)));
    QCOMPARE(valuesOf(result->outputs[0]), (std::vector<float>{9, 112}));
    QCOMPARE(valuesOf(result->outputs[1]), (std::vector<float>{5, 106, 8, 110, 9, 112}));

    // Interpreted (as it is inside a model whose other control flow is decided while it runs),
    // the Scan gives the same: its body is compiled once and run three times.
    auto interpreted = driver::InterpretedModel::create(saved(model));
    QVERIFY2(interpreted, qPrintable(errorText(interpreted)));
    Status status = (*interpreted)->run({{"initial", floats({2}, {0, 100})}, {"x", floats({3, 2}, {1, 2, 3, 4, 5, 6})}});
    QVERIFY2(status.ok(), qPrintable(QString::fromStdString(status.ok() ? "" : status.error().toString())));
    QCOMPARE(valuesOf((*interpreted)->outputs()[0]), (std::vector<float>{9, 112}));
    QCOMPARE(valuesOf((*interpreted)->outputs()[1]), (std::vector<float>{5, 106, 8, 110, 9, 112}));
    QCOMPARE((*interpreted)->statistics().segmentCompiles, 1);
    QCOMPARE((*interpreted)->statistics().segmentRuns, int64_t(3));
  }

  // Sequences are lists of tensors known while importing: split, insert, erase, count and
  // concatenate them.
  void sequenceOperatorsEditAListOfTensors() {
    ModelBuilder model(12);
    model.input("x", {4, 2});
    model.input("y", {1, 2});
    model.int64Initializer("three", {}, {3});
    model.int64Initializer("before_last", {}, {-1});
    model.int64Initializer("first", {}, {0});
    model.node("SplitToSequence", {"x", "three"}, {"pieces"});  // rows 0-2, row 3
    model.node("SequenceInsert", {"pieces", "y", "before_last"}, {"inserted"});  // x[0:3], y, x[3:4]
    model.node("SequenceErase", {"inserted", "first"}, {"erased"});  // y, x[3:4]
    model.node("SequenceLength", {"erased"}, {"count"});
    setInt(model.node("ConcatFromSequence", {"erased"}, {"joined"}), "axis", 0);
    model.output("count");
    model.output("joined");
    auto result = run(model, {floats({4, 2}, {0, 1, 2, 3, 4, 5, 6, 7}), floats({1, 2}, {-1, -2})});
    QVERIFY2(result, qPrintable(errorText(result)));
    QCOMPARE(result->outputs[0].toVector<int64_t>(), (std::vector<int64_t>{2}));
    QCOMPARE(result->outputs[1].shape(), (std::vector<int64_t>{2, 2}));
    QCOMPARE(valuesOf(result->outputs[1]), (std::vector<float>{-1, -2, 6, 7}));
  }

  void positionOutsideTheSequenceIsNamed() {
    ModelBuilder model(12);
    model.input("x", {2});
    model.int64Initializer("five", {}, {5});
    model.node("SequenceConstruct", {"x", "x"}, {"pair"});
    model.node("SequenceAt", {"pair", "five"}, {"y"}, "pick");
    model.output("y");
    auto graph = model.import();
    QVERIFY(!graph);
    QVERIFY2(graph.error().message.find(
                 "node 'pick' (SequenceAt) has position 5 outside the sequence of 2 tensors (valid: -2 to 1)") !=
                 std::string::npos,
             qPrintable(errorText(graph)));
  }

  // A sequence input takes a list of tensors; each of a sequence output's tensors is an output
  // of its own, named by its place.
  void sequenceInputsAndOutputsAreTheirTensors() {
    ModelBuilder model(17);
    model.sequenceInput("s");
    model.initializer("one", {}, {1.0f});
    auto* map = model.node("SequenceMap", {"s", "one"}, {"plus_one"}, "map");
    GraphBuilder body = addSubgraph(map, "body");
    body.input("element", {-1});
    body.input("addend", {});
    body.node("Add", {"element", "addend"}, {"sum"});
    body.output("sum");
    auto* output = model.graph().add_output();
    output->set_name("plus_one");
    output->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(
        onnx::TensorProto::FLOAT);
    auto result = run(model, {driver::InputValue::ofSequence({floats({2}, {1, 2}), floats({3}, {3, 4, 5})})});
    QVERIFY2(result, qPrintable(errorText(result)));
    QCOMPARE(result->outputNames, (std::vector<std::string>{"plus_one[0]", "plus_one[1]"}));
    QCOMPARE(valuesOf(result->outputs[0]), (std::vector<float>{2, 3}));
    QCOMPARE(valuesOf(result->outputs[1]), (std::vector<float>{4, 5, 6}));

    auto withoutLength = model.import();
    QVERIFY(!withoutLength);
    QVERIFY2(withoutLength.error().message.find("input 's' is a sequence of tensors and its length was not given") !=
                 std::string::npos,
             qPrintable(errorText(withoutLength)));
  }
};

QTEST_GUILESS_MAIN(OnnxControlFlowTest)
#include "test_onnx_control_flow.moc"
