// CPU feature checks: what a module compiled elsewhere needs that this machine lacks.
#include <QtTest>

#include "runtime/CpuFeatures.h"
#include "runtime/Error.h"
#include "runtime/GraphPlan.h"

using namespace tessel::runtime;

class TestCpuFeatures : public QObject {
  Q_OBJECT
private slots:
  void missingFeaturesAreThoseTheHostLacks() {
    auto onlyAvx2 = [](const std::string& feature) { return feature == "avx2" || feature == "fma"; };
    std::vector<std::string> missing = missingCpuFeatures({"avx2", "avx512f", "fma", "avx512bw"}, onlyAvx2);
    QCOMPARE(missing, (std::vector<std::string>{"avx512f", "avx512bw"}));
  }

  void uncheckableFeaturesAreTrusted() {
    QVERIFY(!isCheckableCpuFeature("cx16"));
    QVERIFY(missingCpuFeatures({"cx16", "movbe"}, [](const std::string&) { return false; }).empty());
  }

  void hostAgreesWithItsOwnList() {
#if defined(__x86_64__)
    QVERIFY(hostHasCpuFeature("sse4.1") || !hostHasCpuFeature("avx2"));  // no AVX2 machine lacks SSE4.1
    QVERIFY(missingCpuFeatures({"sse4.1"}).empty() == hostHasCpuFeature("sse4.1"));
    QVERIFY(checkableCpuFeatures().size() > 10);
#endif
  }

  void targetRoundTripsThroughGraphJson() {
    GraphPlan plan;
    plan.storages = {{0, 64}};
    plan.tensors = {{"x", DataType::float32(), {16}, 0, 0}};
    plan.inputs = plan.outputs = {"x"};
    plan.target = {"x86_64-pc-linux-gnu", "skylake-avx512", {"avx2", "avx512f"}};
    GraphPlan back = parseGraphJson(writeGraphJson(plan), "graph.json");
    QCOMPARE(back.target.triple, plan.target.triple);
    QCOMPARE(back.target.cpu, plan.target.cpu);
    QCOMPARE(back.target.features, plan.target.features);
    // Files written before the target was recorded still load.
    plan.target = {};
    QVERIFY(!QString::fromStdString(writeGraphJson(plan)).contains("target"));
    QVERIFY(parseGraphJson(writeGraphJson(plan), "graph.json").target.features.empty());
  }

  void mistypedTargetNamesTheField() {
    std::string text = R"({"format": "tessel-graph", "version": 1, "library": "kernels.so",
      "target": {"triple": "x", "cpu": "y", "features": "avx2"},
      "storages": [], "tensors": [], "inputs": [], "outputs": [], "params": [], "nodes": []})";
    QString message;
    try {
      parseGraphJson(text, "graph.json");
    } catch (const Error& error) {
      message = error.what();
    }
    QVERIFY2(message.contains("target.features"), qPrintable(message));
  }
};

QTEST_GUILESS_MAIN(TestCpuFeatures)
#include "test_cpu_features.moc"
