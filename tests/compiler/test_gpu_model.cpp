// Whole models on a GPU target: compiled into one GPU module (one function per operation,
// weights as constants, intermediates as workspaces), run through OpenCL on the CPU (PoCL)
// and compared with the same model compiled for this CPU. SKIP where no OpenCL platform is
// installed (CTest counts it skipped), never a silent pass.
#include <QtTest>

#include <random>

#include "compiler/driver/Driver.h"
#include "compiler/driver/GpuModel.h"
#include "runtime/Error.h"
#include "runtime/GpuModule.h"
#include "runtime/GraphExecutor.h"
#include "runtime/NDArray.h"
#include "tests/GpuTestSupport.h"

using namespace tessel;
using namespace tessel::testing;

class TestGpuModel : public QObject {
  Q_OBJECT
private slots:
  void exampleModelsMatchTheCpu_data() {
    QTest::addColumn<QString>("model");
    QTest::newRow("tiny_resnet (conv, pool, residual add, gemm, softmax)") << "tiny_resnet.onnx";
    QTest::newRow("tiny_resnet int8 (quantize, integer conv, dequantize)") << "tiny_resnet.int8.onnx";
  }
  void exampleModelsMatchTheCpu() {
    SKIP_WITHOUT_OPENCL();
    QFETCH(QString, model);
    std::string path = std::string(TESSEL_SOURCE_DIR) + "/resources/examples/" + model.toStdString();
    auto graph = driver::loadModel(path);
    QVERIFY2(graph, graph ? "" : graph.error().toString().c_str());
    auto gpu = driver::compileModelForGpu(*graph, *Target::parse("opencl"));
    QVERIFY2(gpu, gpu ? "" : gpu.error().toString().c_str());
    QVERIFY(gpu->operations > 0 && gpu->kernels >= gpu->operations);
    runtime::GpuModuleRunner runner(runtime::GpuModule::parse(gpu->moduleJson, model.toStdString() + ".tgpu"));

    auto cpu = driver::compileGraph(*graph);
    QVERIFY2(cpu, cpu ? "" : cpu.error().toString().c_str());
    auto executor = driver::createExecutor(*cpu);
    QVERIFY2(executor, executor ? "" : executor.error().toString().c_str());

    std::mt19937 rng(3);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (const std::string& name : runner.module().inputNames()) {
      const runtime::GpuModuleParam& param = runner.module().params[runner.module().paramIndex(name)];
      auto array = runtime::NDArray::empty(param.shape, param.dtype);
      for (float& value : array.values<float>()) value = uniform(rng);
      runner.setInput(name, array);
      (*executor)->setInput(name, array);
    }
    runner.run();
    (*executor)->run();
    for (const std::string& name : runner.module().outputNames()) {
      runtime::NDArray got = runner.getOutput(name);
      runtime::NDArray expected = (*executor)->getOutput(name);
      QCOMPARE(got.numElements(), expected.numElements());
      double worst = 0, scale = 1e-6;
      for (int64_t i = 0; i < got.numElements(); ++i) {
        worst = std::max(worst, double(std::abs(got.dataAs<float>()[i] - expected.dataAs<float>()[i])));
        scale = std::max(scale, double(std::abs(expected.dataAs<float>()[i])));
      }
      QVERIFY2(worst <= 1e-4 * scale, qPrintable(QString("%1: largest difference %2 (largest value %3)")
                                                      .arg(QString::fromStdString(name)).arg(worst).arg(scale)));
    }
  }

  // A model whose output no operation computes (an input passed through, a model folded to
  // a constant): a kernel copies it into the output.
  void outputsThatAreInputsOrConstantsAreCopied() {
    SKIP_WITHOUT_OPENCL();
    graph::Graph model;
    graph::Value x = graph::makeInput("x", {DataType::float32(), {2, 3}, ""});
    auto values = runtime::NDArray::empty({3}, runtime::DataType::float32());
    for (int i = 0; i < 3; ++i) values.dataAs<float>()[i] = float(i) + 0.5f;
    graph::Value constant = graph::makeConstant("c", values);
    model.inputs = {x};
    model.outputs = {x, constant};
    model.outputNames = {"same", "folded"};
    auto gpu = driver::compileModelForGpu(model, *Target::parse("opencl"));
    QVERIFY2(gpu, gpu ? "" : gpu.error().toString().c_str());
    runtime::GpuModuleRunner runner(runtime::GpuModule::parse(gpu->moduleJson, "pass_through.tgpu"));
    std::vector<float> input = randomFloats(6, 9);
    runner.setInput("x", input.data(), input.size() * sizeof(float));
    runner.run();
    std::vector<float> same(6), folded(3);
    runner.getOutput("same", same.data(), same.size() * sizeof(float));
    runner.getOutput("folded", folded.data(), folded.size() * sizeof(float));
    QCOMPARE(same, input);
    QCOMPARE(folded, (std::vector<float>{0.5f, 1.5f, 2.5f}));
  }
};

QTEST_GUILESS_MAIN(TestGpuModel)
#include "test_gpu_model.moc"
