// ONNX Runtime's quantized contrib operators (com.microsoft QLinearAdd, QLinearMul,
// QLinearSigmoid, QLinearLeakyRelu, QLinearAveragePool, QLinearGlobalAveragePool,
// QLinearConcat, QGemm with float and quantized output) against the NumPy reference that
// tests/compiler/data/contrib_quantized/make.py wrote; the QGemms run on the int8 dense
// kernel; a channels_last pool is refused by name.
#include <QtTest>

#include <cmath>

#include "compiler/driver/Driver.h"
#include "runtime/GraphExecutor.h"
#include "runtime/Npy.h"

using namespace tessel;

namespace {

const std::string kData = TESSEL_SOURCE_DIR "/tests/compiler/data/contrib_quantized/";

}  // namespace

class TestOnnxContribQuantized : public QObject {
  Q_OBJECT
private slots:
  void matchesTheNumPyReference() {
    auto graph = driver::loadModel(kData + "model.onnx");
    QVERIFY2(graph.ok(), graph.ok() ? "" : graph.error().toString().c_str());
    QCOMPARE(int(graph->importSteps.size()), 1);
    QCOMPARE(QString::fromStdString(graph->importSteps[0].name), QString("ExpandContribOps"));
    QVERIFY(graph->importSteps[0].description.find("9 ONNX Runtime") == 0);
    auto compiled = driver::compileGraph(*graph);
    QVERIFY2(compiled.ok(), compiled.ok() ? "" : compiled.error().toString().c_str());
    int dense = 0;
    for (const auto* op : compiled->optimized.operations()) dense += op->op == "QDensePrepacked";
    QCOMPARE(dense, 2);
    auto executor = driver::createExecutor(*compiled);
    QVERIFY(executor.ok());
    for (const char* input : {"a", "b", "m"}) (*executor)->setInput(input, runtime::readNpy(kData + input + ".npy"));
    (*executor)->run();
    for (const char* name : {"add", "mul", "sigmoid", "leaky", "avgpool", "gap", "concat", "gemm", "gemm_float"}) {
      runtime::NDArray got = (*executor)->getOutput(name);
      runtime::NDArray expected = runtime::readNpy(kData + "expected_" + name + ".npy");
      QCOMPARE(got.shape(), expected.shape());
      if (expected.dtype() == runtime::DataType::float32()) {
        for (int64_t i = 0; i < expected.numElements(); ++i) {
          float e = expected.dataAs<float>()[i], g = got.dataAs<float>()[i];
          QVERIFY2(std::fabs(g - e) <= 1e-5f * std::max(1.0f, std::fabs(e)),
                   qPrintable(QString("%1[%2]: %3 against %4").arg(name).arg(i).arg(g).arg(e)));
        }
        continue;
      }
      // NumPy's float32 exp and sums may round a value on a rounding boundary the other way.
      int differing = 0;
      for (int64_t i = 0; i < expected.numElements(); ++i) {
        int e = expected.dataAs<uint8_t>()[i], g = got.dataAs<uint8_t>()[i];
        QVERIFY2(std::abs(g - e) <= 1, qPrintable(QString("%1[%2]: %3 against %4").arg(name).arg(i).arg(g).arg(e)));
        differing += g != e;
      }
      QVERIFY2(differing * 20 <= expected.numElements(), qPrintable(QString("%1: %2 off by one").arg(name).arg(differing)));
    }
  }

  void aChannelsLastPoolIsRefusedByName() {
    auto graph = driver::loadModel(kData + "channels_last.onnx");
    QVERIFY(!graph.ok());
    QString message = QString::fromStdString(graph.error().toString());
    QVERIFY2(message.contains("QLinearGlobalAveragePool 'qgap'") && message.contains("channels_last"), qPrintable(message));
  }
};

QTEST_GUILESS_MAIN(TestOnnxContribQuantized)
#include "test_onnx_contrib_quantized.moc"
