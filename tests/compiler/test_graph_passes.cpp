// Graph passes and the pass manager: what each pass changes, snapshots, options.
#include <QtTest>

#include "compiler/graph/EliminateCommonSubexpr.h"
#include "compiler/graph/GraphRewriter.h"
#include "compiler/graph/PassManager.h"
#include "compiler/graph/SimplifyInference.h"

using namespace tessel;
using namespace tessel::graph;

namespace {
TensorType f32(std::vector<int64_t> shape) { return TensorType{DataType::float32(), std::move(shape), ""}; }
Value op(const std::string& name, const std::string& kind, std::vector<Value> inputs, Attributes attributes = {}) {
  return makeOperation(name, kind, std::move(inputs), std::move(attributes), {f32({4})},
                       {{name + "_onnx", kind}})[0];
}
// A pass with two options that records the values it was run with.
Pass recordingPass(std::map<std::string, std::string>* seen) {
  return Pass("Record", 0,
              {PassOption::flag("keep", true, "keep things"), PassOption{"mode", "fast", "how", {"fast", "small", "exact"}}},
              [seen](const Graph& g, const PassConfig& config) -> Expected<Graph> {
                (*seen)["keep"] = config.flag("keep") ? "yes" : "no";
                (*seen)["mode"] = config.get("mode");
                return g;
              });
}

runtime::NDArray filled(float value) {
  auto array = runtime::NDArray::empty({4}, runtime::DataType::float32());
  for (float& v : array.values<float>()) v = value;
  return array;
}
}  // namespace

class TestGraphPasses : public QObject {
  Q_OBJECT
private slots:
  void rewriteWithNoChangeKeepsTheGraph() {
    Value x = makeInput("x", f32({4}));
    Value y = op("relu", "Relu", {x});
    Graph g{{x}, {y}, {"y"}};
    Graph same = rewriteGraph(g, [](const OperationNode&, const std::vector<Value>&) { return std::nullopt; });
    QVERIFY(same.outputs[0] == g.outputs[0]);
  }

  void commonSubexpressionsMerge() {
    Value x = makeInput("x", f32({4}));
    Value a = op("a", "Relu", {x});
    Value b = op("b", "Relu", {x});
    Value c = op("c", "LeakyRelu", {x}, {{"alpha", 0.1}});
    Value d = op("d", "LeakyRelu", {x}, {{"alpha", 0.2}});  // other attribute: stays
    Value w1 = makeConstant("w1", filled(2.0f)), w2 = makeConstant("w2", filled(2.0f));
    Value e = op("e", "Mul", {a, w1});
    Value f = op("f", "Mul", {b, w2});  // same after a=b and w1=w2
    Value sum = op("sum", "Add", {op("s1", "Add", {e, f}), op("s2", "Add", {c, d})});
    Graph g{{x}, {sum}, {"out"}};
    Graph merged = eliminateCommonSubexpr(g);
    QCOMPARE(int(g.operationCount()), 9);
    QCOMPARE(int(merged.operationCount()), 7);
    QString text = QString::fromStdString(printGraph(merged));
    QVERIFY2(text.contains("%s1 = Add(%e, %e)"), qPrintable(text));
    QVERIFY2(text.contains("alpha=0.1") && text.contains("alpha=0.2"), qPrintable(text));
  }

  void inferenceNoOpsDisappear() {
    Value x = makeInput("x", f32({4}));
    Value id = op("id", "Identity", {x});
    Value dropped = op("drop", "Dropout", {id});
    Value y = op("relu", "Relu", {dropped});
    Graph g = *simplifyInference(Graph{{x}, {y}, {"y"}});
    QCOMPARE(int(g.operationCount()), 1);
    QVERIFY(QString::fromStdString(printGraph(g)).contains("%relu = Relu(%x)"));
  }

  void passManagerSnapshotsEveryPass() {
    PassManager manager({{"SimplifyInference", 0, simplifyInference},
                         {"EliminateCommonSubexpr", 1,
                          [](const Graph& g) -> Expected<Graph> { return eliminateCommonSubexpr(g); }}});
    Value x = makeInput("x", f32({4}));
    Value y = op("sum", "Add", {op("a", "Relu", {op("id", "Identity", {x})}), op("b", "Relu", {x})});
    Graph g{{x}, {y}, {"y"}};

    auto all = manager.run(g, {});
    QVERIFY(all.ok());
    QCOMPARE(int(all->size()), 2);
    QCOMPARE(QString::fromStdString((*all)[0].passName), QString("SimplifyInference"));
    QCOMPARE(int((*all)[0].graph.operationCount()), 3);  // Identity gone
    QCOMPARE(int((*all)[1].graph.operationCount()), 2);  // the two Relus merged
    QVERIFY((*all)[1].milliseconds >= 0 && !(*all)[1].skipped);

    auto levelZero = manager.run(g, {0, {}});
    QVERIFY(levelZero.ok());
    QVERIFY((*levelZero)[1].skipped);
    QCOMPARE(int(levelZero->back().graph.operationCount()), 3);

    auto disabled = manager.run(g, {3, {"SimplifyInference"}});
    QVERIFY(disabled.ok());
    QVERIFY((*disabled)[0].skipped);
    QCOMPARE(int((*disabled)[0].graph.operationCount()), 4);
  }

  void passManagerRejectsBadOptions() {
    PassManager manager({{"A", 0, [](const Graph& g) -> Expected<Graph> { return g; }}});
    Graph g{{makeInput("x", f32({4}))}, {}, {}};
    auto unknown = manager.run(g, {3, {"FoldConstants"}});
    QVERIFY(!unknown.ok());
    QVERIFY(QString::fromStdString(unknown.error().toString()).contains("no pass named 'FoldConstants'"));
    QVERIFY(QString::fromStdString(unknown.error().toString()).contains("passes: A"));
    QVERIFY(!manager.run(g, {4, {}}).ok());
  }

  void passOptionsReachTheirPass() {
    std::map<std::string, std::string> seen;
    PassManager manager({recordingPass(&seen), {"Plain", 0, [](const Graph& g) -> Expected<Graph> { return g; }}});
    QCOMPARE(manager.configKeys(), (std::vector<std::string>{"Record.keep", "Record.mode"}));
    Graph g{{makeInput("x", f32({4}))}, {}, {}};
    QVERIFY(manager.run(g, {}).ok());
    QCOMPARE(seen["keep"], std::string("yes"));  // the defaults
    QCOMPARE(seen["mode"], std::string("fast"));
    PassOptions options;
    options.config = {{"Record.keep", "false"}, {"Record.mode", "exact"}};
    QVERIFY(manager.run(g, options).ok());
    QCOMPARE(seen["keep"], std::string("no"));
    QCOMPARE(seen["mode"], std::string("exact"));
  }

  void passManagerRejectsBadConfig_data() {
    QTest::addColumn<QString>("key");
    QTest::addColumn<QString>("value");
    QTest::addColumn<QStringList>("mentions");
    QTest::newRow("misspelled option") << "Record.kep" << "true"
                                       << QStringList{"no pass option 'Record.kep'", "Record.keep, Record.mode"};
    QTest::newRow("option of a pass without options")
        << "Plain.keep" << "true" << QStringList{"'Plain.keep'", "Record.keep, Record.mode"};
    QTest::newRow("no pass name") << "keep" << "true" << QStringList{"'keep'", "Record.keep"};
    QTest::newRow("flag that is not true or false") << "Record.keep" << "1"
                                                    << QStringList{"Record.keep", "'1'", "true or false"};
    QTest::newRow("value not among the choices") << "Record.mode" << "slow"
                                                 << QStringList{"Record.mode", "'slow'", "fast, small or exact"};
  }
  void passManagerRejectsBadConfig() {
    QFETCH(QString, key);
    QFETCH(QString, value);
    QFETCH(QStringList, mentions);
    std::map<std::string, std::string> seen;
    PassManager manager({recordingPass(&seen), {"Plain", 0, [](const Graph& g) -> Expected<Graph> { return g; }}});
    PassOptions options;
    options.config[key.toStdString()] = value.toStdString();
    Status checked = manager.checkOptions(options);
    QVERIFY(!checked);
    QString message = QString::fromStdString(checked.error().toString());
    for (const QString& mention : mentions) QVERIFY2(message.contains(mention), qPrintable(message));
    // Running refuses the same way, before any pass sees the graph.
    auto ran = manager.run(Graph{{makeInput("x", f32({4}))}, {}, {}}, options);
    QVERIFY(!ran.ok());
    QCOMPARE(QString::fromStdString(ran.error().toString()), message);
    QVERIFY(seen.empty());
  }

  void aFailingPassNamesItself() {
    PassManager manager({{"Broken", 0, [](const Graph&) -> Expected<Graph> {
                            return Diagnostic{"cannot handle op Foo", "node n1", 0, 0, ""};
                          }}});
    Graph g{{makeInput("x", f32({4}))}, {}, {}};
    auto result = manager.run(g, {});
    QVERIFY(!result.ok());
    QVERIFY(QString::fromStdString(result.error().message).startsWith("Broken: cannot handle op Foo"));
  }
};

QTEST_GUILESS_MAIN(TestGraphPasses)
#include "test_graph_passes.moc"
