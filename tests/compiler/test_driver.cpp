// The graph compiler end to end on hand-built graphs: passes, kernels, plan, the JIT executor
// and an exported module all compute what a C++ reference computes; outputs that are inputs,
// constants or repeated values still come out; failures name the node and op.
#include <QtTest>

#include <cmath>
#include <filesystem>

#include "NDArrayTestSupport.h"
#include "compiler/driver/Driver.h"
#include "compiler/driver/ModelProfile.h"
#include "core/graph/Graph.h"
#include "runtime/GraphExecutor.h"

using namespace tessel;
using namespace tessel::graph;
using runtime::NDArray;
using testing::randomFloatArray;

namespace {

TensorType floats(std::vector<int64_t> shape) { return TensorType{DataType::float32(), std::move(shape), ""}; }

/// An operation with unknown output types, as the importer makes them; InferTypes types it.
Value op(const std::string& name, const std::string& opType, std::vector<Value> inputs, Attributes attributes = {},
         int outputs = 1) {
  return makeOperation(name, opType, std::move(inputs), std::move(attributes),
                       std::vector<TensorType>(size_t(outputs)), {{name, opType, 13}})[0];
}

driver::CompiledModel compileOrFail(const Graph& graph, int optLevel = 3) {
  driver::CompileOptions options;
  options.passes.optLevel = optLevel;
  auto compiled = driver::compileGraph(graph, options);
  if (!compiled) qFatal("%s", compiled.error().toString().c_str());
  return std::move(*compiled);
}

std::unique_ptr<runtime::GraphExecutor> executorOrFail(const driver::CompiledModel& model) {
  auto executor = driver::createExecutor(model);
  if (!executor) qFatal("%s", executor.error().toString().c_str());
  return std::move(*executor);
}

void compareFloats(const NDArray& got, const std::vector<float>& expected) {
  auto values = got.values<float>();
  QCOMPARE(qsizetype(values.size()), qsizetype(expected.size()));
  for (size_t i = 0; i < expected.size(); ++i)
    if (std::fabs(values[i] - expected[i]) > 1e-5f + 1e-5f * std::fabs(expected[i]))
      QFAIL(qPrintable(QString("element %1: got %2, expected %3").arg(i).arg(values[i]).arg(expected[i])));
}

}  // namespace

class DriverTest : public QObject {
  Q_OBJECT

private slots:
  // y = relu(x * w + b): a matmul with an epilogue, through every pass, JIT and export.
  void matmulBiasReluRunsThroughJitAndExport() {
    const int64_t m = 5, k = 7, n = 33;
    NDArray w = randomFloatArray({k, n}, 2), b = randomFloatArray({n}, 3), x = randomFloatArray({m, k}, 1);
    Value input = makeInput("x", floats({m, k}));
    Value product = op("mm", "MatMul", {input, makeConstant("w", w)});
    Value biased = op("add", "Add", {product, makeConstant("b", b)});
    Value y = op("relu", "Relu", {biased});
    Graph graph{{input}, {y}, {"y"}};

    std::vector<float> expected(size_t(m * n));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float sum = b.values<float>()[size_t(j)];
        for (int64_t r = 0; r < k; ++r) sum += x.values<float>()[size_t(i * k + r)] * w.values<float>()[size_t(r * n + j)];
        expected[size_t(i * n + j)] = std::max(sum, 0.0f);
      }

    for (int optLevel : {0, 3}) {
      driver::CompiledModel model = compileOrFail(graph, optLevel);
      QCOMPARE(model.plan.inputs, std::vector<std::string>{"x"});
      QCOMPARE(model.plan.outputs, std::vector<std::string>{"y"});
      auto executor = executorOrFail(model);
      executor->setInput("x", x);
      executor->run();
      compareFloats(executor->getOutput("y"), expected);
      QCOMPARE(int(executor->nodeTimings().size()), int(model.plan.nodes.size()));
    }

    driver::CompiledModel model = compileOrFail(graph);
    QTemporaryDir directory;
    Status exported = driver::exportModel(model, directory.path().toStdString());
    QVERIFY2(exported.ok(), exported.ok() ? "" : exported.error().toString().c_str());
    auto loaded = runtime::GraphExecutor::load(directory.path().toStdString());
    loaded->setInput("x", x);
    loaded->run();
    compareFloats(loaded->getOutput("y"), expected);
  }

  // Outputs that no kernel of their own computes: an input passed through (Identity is
  // removed), a constant, and one value returned under two names.
  void outputsThatAreInputsConstantsOrRepeatsAreCopied() {
    NDArray x = randomFloatArray({3, 4}, 5), c = randomFloatArray({2}, 6);
    Value input = makeInput("x", floats({3, 4}));
    Value passed = op("id", "Identity", {input});
    Value relu = op("relu", "Relu", {input});
    Graph graph{{input}, {passed, makeConstant("c", c), relu, relu}, {"same", "constant", "r1", "r2"}};
    driver::CompiledModel model = compileOrFail(graph);
    auto executor = executorOrFail(model);
    executor->setInput("x", x);
    executor->run();
    compareFloats(executor->getOutput(model.plan.outputs[0]), x.toVector<float>());
    compareFloats(executor->getOutput(model.plan.outputs[1]), c.toVector<float>());
    std::vector<float> relued = x.toVector<float>();
    for (float& v : relued) v = std::max(v, 0.0f);
    compareFloats(executor->getOutput(model.plan.outputs[2]), relued);
    compareFloats(executor->getOutput(model.plan.outputs[3]), relued);
    QCOMPARE(model.plan.outputs[0], std::string("same"));
    QCOMPARE(model.plan.outputs[3], std::string("r2"));
  }

  // A long elementwise chain: at opt level 0 nothing fuses and memory planning reuses
  // storages, so the planned bytes are well under the naive sum.
  void memoryPlanningReusesStoragesAlongAChain() {
    Value input = makeInput("x", floats({64, 64}));
    Value v = input;
    for (int i = 0; i < 6; ++i) v = op("t" + std::to_string(i), i % 2 ? "Relu" : "Neg", {v});
    Graph graph{{input}, {v}, {"y"}};
    driver::CompiledModel model = compileOrFail(graph, 0);
    QCOMPARE(int(model.plan.nodes.size()), 6);
    QVERIFY(model.memory.naiveBytes == 5 * 64 * 64 * 4);
    QVERIFY2(model.memory.plannedBytes <= 2 * 64 * 64 * 4,
             qPrintable(QString("planned %1 bytes").arg(model.memory.plannedBytes)));
    NDArray x = randomFloatArray({64, 64}, 9);
    auto executor = executorOrFail(model);
    executor->setInput("x", x);
    executor->run();
    std::vector<float> expected = x.toVector<float>();
    for (int i = 0; i < 6; ++i)
      for (float& e : expected) e = i % 2 ? std::max(e, 0.0f) : -e;
    compareFloats(executor->getOutput("y"), expected);
  }

  void unsupportedOperatorNamesNodeAndOp() {
    Value input = makeInput("x", floats({2}));
    Value y = op("mystery_node", "NoSuchOp", {input});
    Graph graph{{input}, {y}, {"y"}};
    auto compiled = driver::compileGraph(graph);
    QVERIFY(!compiled);
    std::string message = compiled.error().toString();
    QVERIFY2(message.find("NoSuchOp") != std::string::npos, message.c_str());
    QVERIFY2(message.find("mystery_node") != std::string::npos, message.c_str());
  }

  void wrongArityIsADiagnostic() {
    Value input = makeInput("x", floats({2}));
    Value y = op("add_one", "Add", {input});
    Graph graph{{input}, {y}, {"y"}};
    auto compiled = driver::compileGraph(graph);
    QVERIFY(!compiled);
    QVERIFY2(compiled.error().toString().find("add_one") != std::string::npos, compiled.error().toString().c_str());
  }

  // A profile: every plan node's median over the runs, in plan order; its JSON reads back as
  // it was written, and a damaged file is a Diagnostic naming the file and the field.
  void profileMeasuresEveryNodeAndReadsBack() {
    Value input = makeInput("x", floats({64, 64}));
    Value product = op("mm", "MatMul", {input, makeConstant("w", randomFloatArray({64, 64}, 2))});
    Value y = op("relu", "Relu", {op("add", "Add", {product, makeConstant("b", randomFloatArray({64}, 3))})});
    driver::CompiledModel model = compileOrFail(Graph{{input}, {y}, {"y"}});
    auto executor = executorOrFail(model);
    executor->setInput("x", randomFloatArray({64, 64}, 1));
    driver::ProfileOptions options;
    options.minRuns = 5;
    options.minSeconds = 0;
    int reported = 0;
    options.progress = [&](int runs, int) { reported = runs; };
    auto profile = driver::profileExecutor(*executor, options);
    QVERIFY2(profile, profile ? "" : profile.error().toString().c_str());
    QCOMPARE(profile->runs, 5);
    QCOMPARE(reported, 5);
    QCOMPARE(profile->nodes.size(), model.plan.nodes.size());
    for (size_t i = 0; i < model.plan.nodes.size(); ++i) {
      QCOMPARE(profile->nodes[i].node, model.plan.nodes[i].name);
      QCOMPARE(profile->nodes[i].kernel, model.plan.nodes[i].kernel);
      QVERIFY(profile->nodes[i].milliseconds > 0);
    }
    QVERIFY(profile->latencyMs >= profile->minMs && profile->minMs > 0);
    auto byKernel = profile->millisecondsByKernel();
    QCOMPARE(byKernel.size(), model.plan.nodes.size());
    QCOMPARE(byKernel.at(model.plan.nodes[0].kernel), profile->nodes[0].milliseconds);
    QVERIFY(!byKernel.count("no_such_kernel"));

    profile->model = "mm.onnx";
    std::string text = driver::modelProfileJson(*profile);
    auto back = driver::parseModelProfile(text, "p.json");
    QVERIFY2(back, back ? "" : back.error().toString().c_str());
    QCOMPARE(back->runs, profile->runs);
    QCOMPARE(back->model, profile->model);
    QCOMPARE(back->createdAt, profile->createdAt);
    QCOMPARE(back->nodes.size(), profile->nodes.size());
    for (size_t i = 0; i < profile->nodes.size(); ++i) {
      QCOMPARE(back->nodes[i].kernel, profile->nodes[i].kernel);
      QCOMPARE(back->nodes[i].milliseconds, profile->nodes[i].milliseconds);
    }

    // Cancelled between runs: the isCancellation() Diagnostic, no profile.
    options.cancelled = [] { return true; };
    auto cancelled = driver::profileExecutor(*executor, options);
    QVERIFY(!cancelled && driver::isCancellation(cancelled.error()));

    const std::vector<std::pair<std::string, std::string>> damaged = {
        {"", "not one JSON object"},
        {text.substr(0, text.size() / 2), "not one JSON object"},
        {R"({"format": "something else"})", "\"format\""},
        {R"({"format": "tessel-profile", "version": 99})", "version 99"},
        {R"({"format": "tessel-profile", "version": 1, "runs": -1})", "\"runs\""},
        {R"({"format": "tessel-profile", "version": 1, "runs": 1, "threads": 1, "latency_ms": 1, "min_ms": 1,
            "tuned_kernels": 0, "nodes": [{"node": "a", "kernel": "k", "ms": "fast"}]})",
         "node 1"},
    };
    for (const auto& [contents, expected] : damaged) {
      auto read = driver::parseModelProfile(contents, "p.json");
      QVERIFY2(!read, contents.c_str());
      QCOMPARE(read.error().location, std::string("p.json"));
      QVERIFY2(read.error().message.find(expected) != std::string::npos, read.error().toString().c_str());
      QVERIFY(!read.error().hint.empty());
    }
  }
};

QTEST_GUILESS_MAIN(DriverTest)
#include "test_driver.moc"
