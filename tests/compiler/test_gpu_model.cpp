// Whole models on a GPU target: compiled into one GPU module (one function per operation,
// weights as constants, intermediates as workspaces), run through OpenCL on the CPU (PoCL)
// and compared with the same model compiled for this CPU. SKIP where no OpenCL platform is
// installed (CTest counts it skipped), never a silent pass.
#include <QtTest>

#include <cstring>
#include <random>

#include "compiler/driver/Driver.h"
#include "compiler/codegen/c/Nvrtc.h"
#include "compiler/driver/GpuModel.h"
#include "runtime/Error.h"
#include "runtime/GpuModule.h"
#include "runtime/GraphExecutor.h"
#include "runtime/NDArray.h"
#include "tests/GpuTestSupport.h"
#include "tests/compiler/OnnxModelBuilder.h"

using namespace tessel;
using namespace tessel::testing;

namespace {

// x (float16[301]) -> y = x * x + 0.1 (float16) and b = bfloat16(sigmoid(float(x))).
Expected<graph::Graph> sixteenBitModel() {
  ModelBuilder builder(14);
  builder.input("x", {301}, onnx::TensorProto::FLOAT16);
  builder.initializer("c", {1}, {0.1f});
  addAttribute(builder.node("Cast", {"c"}, {"c16"}), "to", onnx::AttributeProto::INT)->set_i(onnx::TensorProto::FLOAT16);
  builder.node("Mul", {"x", "x"}, {"square"});
  builder.node("Add", {"square", "c16"}, {"y"});
  addAttribute(builder.node("Cast", {"x"}, {"wide"}), "to", onnx::AttributeProto::INT)->set_i(onnx::TensorProto::FLOAT);
  builder.node("Sigmoid", {"wide"}, {"gate"});
  addAttribute(builder.node("Cast", {"gate"}, {"b"}), "to", onnx::AttributeProto::INT)->set_i(onnx::TensorProto::BFLOAT16);
  builder.output("y");
  builder.output("b");
  return driver::loadModelBytes(builder.bytes(), "halves.onnx");
}

// A graph compiled for OpenCL (its runner) and for this CPU (its executor), to compare the two.
struct OnBothTargets {
  std::unique_ptr<runtime::GpuModuleRunner> gpu;
  std::unique_ptr<runtime::GraphExecutor> cpu;
};
Expected<OnBothTargets> compileForBoth(const graph::Graph& graph, const std::string& name) {
  auto gpu = driver::compileModelForGpu(graph, *Target::parse("opencl"));
  if (!gpu) return gpu.error();
  auto cpu = driver::compileGraph(graph);
  if (!cpu) return cpu.error();
  auto executor = driver::createExecutor(*cpu);
  if (!executor) return executor.error();
  return OnBothTargets{std::make_unique<runtime::GpuModuleRunner>(runtime::GpuModule::parse(gpu->moduleJson, name)),
                       std::move(*executor)};
}

}  // namespace

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
    if (model == "tiny_resnet.onnx") {
      // Fused as on the CPU: each convolution with what follows it (ReLU, the residual add) is
      // one function under the convolution's own GPU schedule, not the generic one.
      graph::PassOptions unfused;
      unfused.optLevel = 0;
      auto plain = driver::standardPasses(*Target::parse("opencl")).run(*graph, unfused);
      QVERIFY(plain && !plain->empty());
      size_t plainOperations = 0, convolutions = 0;
      for (const graph::OperationNode* op : plain->back().graph.operations()) {
        ++plainOperations;
        convolutions += op->op == "Conv";
      }
      QVERIFY2(gpu->operations < plainOperations,
               qPrintable(QString("%1 functions for %2 operations").arg(gpu->operations).arg(plainOperations)));
      QVERIFY2(gpu->operations - gpu->genericSchedules >= convolutions,
               qPrintable(QString("%1 of %2 functions generic, %3 convolutions")
                              .arg(gpu->genericSchedules).arg(gpu->operations).arg(convolutions)));
    }
    runtime::GpuModuleRunner runner(runtime::GpuModule::parse(gpu->moduleJson, model.toStdString() + ".tgpu"));

    auto cpu = driver::compileGraph(*graph);
    QVERIFY2(cpu, cpu ? "" : cpu.error().toString().c_str());
    auto created = driver::createExecutor(*cpu);
    QVERIFY2(created, created ? "" : created.error().toString().c_str());
    runtime::GraphExecutor* executor = created->get();

    std::mt19937 rng(3);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (const std::string& name : runner.module().inputNames()) {
      const runtime::GpuModuleParam& param = runner.module().params[runner.module().paramIndex(name)];
      auto array = runtime::NDArray::empty(param.shape, param.dtype);
      for (float& value : array.values<float>()) value = uniform(rng);
      runner.setInput(name, array);
      executor->setInput(name, array);
    }
    runner.run();
    executor->run();
    for (const std::string& name : runner.module().outputNames()) {
      runtime::NDArray got = runner.getOutput(name);
      runtime::NDArray expected = executor->getOutput(name);
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

  // The bitwise operators and BitShift in OpenCL C: the same results as the CPU, shifts by
  // the width or more included (C leaves those undefined; Tessel gives 0).
  void bitwiseOperatorsMatchTheCpu() {
    SKIP_WITHOUT_OPENCL();
    ModelBuilder builder(18);
    builder.input("a", {301}, onnx::TensorProto::INT32);
    builder.input("b", {301}, onnx::TensorProto::INT32);
    builder.input("u", {301}, onnx::TensorProto::UINT8);
    builder.input("n", {301}, onnx::TensorProto::UINT8);
    builder.node("BitwiseAnd", {"a", "b"}, {"and"});
    builder.node("BitwiseXor", {"and", "a"}, {"xor"});
    builder.node("BitwiseNot", {"b"}, {"not"});
    builder.node("BitwiseOr", {"xor", "not"}, {"y"});
    addAttribute(builder.node("BitShift", {"u", "n"}, {"left"}), "direction", onnx::AttributeProto::STRING)->set_s("LEFT");
    builder.output("y");
    builder.output("left");
    auto graph = driver::loadModelBytes(builder.bytes(), "bitwise.onnx");
    QVERIFY2(graph, graph ? "" : graph.error().toString().c_str());
    auto both = compileForBoth(*graph, "bitwise.tgpu");
    QVERIFY2(both, both ? "" : both.error().toString().c_str());
    runtime::GpuModuleRunner& runner = *both->gpu;
    runtime::GraphExecutor* executor = both->cpu.get();

    std::vector<int32_t> a(301), b(301);
    std::vector<uint8_t> u(301), n(301);
    for (size_t i = 0; i < a.size(); ++i) {
      a[i] = int32_t(uint32_t(i) * 2654435761u);
      b[i] = int32_t(uint32_t(i + 5) * 2246822519u);
      u[i] = uint8_t(i * 37 + 11);
      n[i] = uint8_t(i % 11);  // 8 and beyond shift everything out
    }
    auto set = [&](const char* name, const void* data, size_t bytes, runtime::DataType type) {
      runner.setInput(name, data, bytes);
      auto array = runtime::NDArray::empty({301}, type);
      array.copyFrom(data, bytes);
      executor->setInput(name, array);
    };
    set("a", a.data(), a.size() * 4, runtime::DataType::int32());
    set("b", b.data(), b.size() * 4, runtime::DataType::int32());
    set("u", u.data(), u.size(), runtime::DataType::uint8());
    set("n", n.data(), n.size(), runtime::DataType::uint8());
    runner.run();
    executor->run();
    std::vector<int32_t> y(301);
    std::vector<uint8_t> left(301);
    runner.getOutput("y", y.data(), y.size() * 4);
    runner.getOutput("left", left.data(), left.size());
    QCOMPARE(y, executor->getOutput("y").toVector<int32_t>());
    QCOMPARE(left, executor->getOutput("left").toVector<uint8_t>());
    for (size_t i = 0; i < a.size(); ++i) {
      QCOMPARE(y[i], ((a[i] & b[i]) ^ a[i]) | ~b[i]);
      QCOMPARE(left[i], n[i] >= 8 ? uint8_t(0) : uint8_t(u[i] << n[i]));
    }
  }

  // float16 and bfloat16 tensors on a GPU: stored as their 16 bits, computed in float and
  // rounded after each operation as the CPU code does, so float16 arithmetic matches the CPU
  // bit for bit (the constant 0.1 included, which float16 holds as 0.0999755859375).
  void sixteenBitFloatsMatchTheCpu() {
    SKIP_WITHOUT_OPENCL();
    auto graph = sixteenBitModel();
    QVERIFY2(graph, graph ? "" : graph.error().toString().c_str());
    auto both = compileForBoth(*graph, "halves.tgpu");
    QVERIFY2(both, both ? "" : both.error().toString().c_str());
    runtime::GpuModuleRunner& runner = *both->gpu;
    runtime::GraphExecutor* executor = both->cpu.get();

    // Every float16 from -8 to 8 in steps of 1/32, and the bits of a few awkward ones.
    std::vector<uint16_t> x(301);
    for (size_t i = 0; i < x.size(); ++i) {
      float value = -8.0f + float(i) / 32.0f;
      uint32_t bits;
      std::memcpy(&bits, &value, 4);
      // Multiples of 1/32 below 8 in magnitude: exact in float16, so truncating the float32 bits converts.
      uint32_t sign = (bits >> 16) & 0x8000, exponent = (bits >> 23) & 0xFF, mantissa = bits & 0x7FFFFF;
      x[i] = value == 0 ? 0 : uint16_t(sign | ((exponent - 112) << 10) | (mantissa >> 13));
    }
    x[0] = 0x7BFF;  // 65504, the largest: its square overflows to infinity
    x[1] = 0x0001;  // the smallest subnormal
    auto array = runtime::NDArray::empty({301}, runtime::DataType::float16());
    array.copyFrom(x.data(), x.size() * 2);
    runner.setInput("x", array);
    executor->setInput("x", array);
    runner.run();
    executor->run();
    auto bits = [](const runtime::NDArray& halves) {
      std::vector<uint16_t> out(size_t(halves.numElements()));
      halves.copyTo(out.data(), out.size() * 2);
      return out;
    };
    std::vector<uint16_t> y = bits(runner.getOutput("y")), expectedY = bits(executor->getOutput("y"));
    QCOMPARE(y, expectedY);
    QCOMPARE(y[0], uint16_t(0x7C00));  // infinity
    std::vector<uint16_t> b = bits(runner.getOutput("b")), expectedB = bits(executor->getOutput("b"));
    for (size_t i = 0; i < b.size(); ++i)  // sigmoid's last float bits may differ: one bfloat16 step at most
      QVERIFY2(std::abs(int(b[i]) - int(expectedB[i])) <= 1,
               qPrintable(QString("b[%1]: 0x%2 on the GPU, 0x%3 on the CPU").arg(i).arg(b[i], 0, 16).arg(expectedB[i], 0, 16)));
  }

  // The same model's CUDA source (the PTX conversions in kHalfHelpersCuda) compiles with NVRTC.
  void sixteenBitFloatsCompileForCuda() {
    std::string where;
    if (!nvrtcAvailable(&where)) QSKIP(qPrintable("no NVRTC on this machine (tried " + QString::fromStdString(where) + ")"));
    auto graph = sixteenBitModel();
    QVERIFY2(graph, graph ? "" : graph.error().toString().c_str());
    for (const char* target : {"cuda -arch=sm_80", "cuda -arch=sm_90"}) {
      auto gpu = driver::compileModelForGpu(*graph, *Target::parse(target));
      QVERIFY2(gpu, gpu ? "" : gpu.error().toString().c_str());
      runtime::GpuModule module = runtime::GpuModule::parse(gpu->moduleJson, "halves.tgpu");
      QCOMPARE(int(module.codeFormat), int(runtime::GpuCodeFormat::Cubin));
      QVERIFY(module.source.find("cvt.rn.f16.f32") != std::string::npos);
    }
  }

  // An empty tensor (a slice past the end) has a buffer and no kernel; the rest runs as usual,
  // and a model of nothing but empty outputs runs no kernel at all.
  void emptyTensorsRunNoKernel() {
    SKIP_WITHOUT_OPENCL();
    ModelBuilder builder(13);
    builder.input("x", {4, 5});
    builder.int64Initializer("starts", {1}, {10});
    builder.int64Initializer("ends", {1}, {20});
    builder.int64Initializer("axes", {1}, {1});
    builder.node("Slice", {"x", "starts", "ends", "axes"}, {"empty"});
    builder.node("Relu", {"x"}, {"y"});
    builder.output("empty");
    builder.output("y");
    auto graph = driver::loadModelBytes(builder.bytes(), "empty.onnx");
    QVERIFY2(graph, graph ? "" : graph.error().toString().c_str());
    auto both = compileForBoth(*graph, "empty.tgpu");
    QVERIFY2(both, both ? "" : both.error().toString().c_str());
    std::vector<float> x = randomFloats(20, 4);
    both->gpu->setInput("x", x.data(), x.size() * sizeof(float));
    both->gpu->run();
    runtime::NDArray empty = both->gpu->getOutput("empty");
    QCOMPARE(empty.shape(), (std::vector<int64_t>{4, 0}));
    std::vector<float> y = both->gpu->getOutput("y").toVector<float>();
    for (size_t i = 0; i < x.size(); ++i) QCOMPARE(y[i], std::max(x[i], 0.0f));

    ModelBuilder nothing(13);
    nothing.input("x", {4, 5});
    nothing.int64Initializer("starts", {1}, {10});
    nothing.int64Initializer("ends", {1}, {20});
    nothing.int64Initializer("axes", {1}, {1});
    nothing.node("Slice", {"x", "starts", "ends", "axes"}, {"empty"});
    nothing.output("empty");
    auto onlyEmpty = driver::loadModelBytes(nothing.bytes(), "nothing.onnx");
    QVERIFY2(onlyEmpty, onlyEmpty ? "" : onlyEmpty.error().toString().c_str());
    auto gpu = driver::compileModelForGpu(*onlyEmpty, *Target::parse("opencl"));
    QVERIFY2(gpu, gpu ? "" : gpu.error().toString().c_str());
    QCOMPARE(gpu->kernels, size_t(0));
    runtime::GpuModuleRunner runner(runtime::GpuModule::parse(gpu->moduleJson, "nothing.tgpu"));
    runner.setInput("x", x.data(), x.size() * sizeof(float));
    runner.run();
    QCOMPARE(runner.getOutput("empty").numElements(), int64_t(0));
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
