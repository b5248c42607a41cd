// GPU modules (.tgpu): every malformed field is a clear error naming the file and the field;
// OpenCL modules run (through PoCL where no GPU is installed) and compute what a CPU loop does;
// a CUDA module on a machine without the NVIDIA driver says so; tessel-deploy-run --gpu-module
// runs a module from the command line. Tests that need an OpenCL device report SKIP with
// "no OpenCL platform" (CTest counts them skipped) when there is none.
#include <QtTest>

#include <dlfcn.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

#include "runtime/CudaDriver.h"
#include "runtime/GpuModule.h"
#include "runtime/Npy.h"
#include "tests/GpuTestSupport.h"

using namespace tessel::runtime;
using namespace tessel::testing;

namespace {

// A valid OpenCL module: C = A + B over 1000 elements, 64 work-items per group. Rows of
// rejectsMalformedModules replace one piece of it.
const char* kVectorAdd = R"({
  "format": "tessel-gpu-module", "version": 1, "target": "opencl", "device": "opencl",
  "code_format": "opencl-c",
  "code": "__kernel void vector_add(__global const float* restrict A, __global const float* restrict B, __global float* restrict C) { int i = get_global_id(0); if (i < 1000) C[i] = A[i] + B[i]; }",
  "params": [{"name": "A", "dtype": "float32", "shape": [1000]},
             {"name": "B", "dtype": "float32", "shape": [1000]},
             {"name": "C", "dtype": "float32", "shape": [1000]}],
  "outputs": ["C"], "flops": 1000,
  "kernels": [{"name": "vector_add", "grid": [16, 1, 1], "block": [64, 1, 1], "shared_bytes": 0, "args": [0, 1, 2]}]
})";

// C[M][N] = A[M][K] * B[K][N] with a 2-D grid of 8x8 work-groups; M and N are not multiples
// of 8, so the guard against the padded work-items matters.
constexpr int kM = 37, kK = 29, kN = 45;
QByteArray matmulModule() {
  QByteArray code = "#define M " + QByteArray::number(kM) + "\\n#define K " + QByteArray::number(kK) + "\\n#define N " +
                    QByteArray::number(kN) + "\\n" +
                    "__kernel void matmul_kernel0(__global const float* restrict A, __global const float* restrict B, "
                    "__global float* restrict C) {\\n"
                    "  int col = get_global_id(0); int row = get_global_id(1);\\n"
                    "  if (row >= M || col >= N) return;\\n"
                    "  float sum = 0.0f;\\n"
                    "  for (int k = 0; k < K; ++k) sum += A[row * K + k] * B[k * N + col];\\n"
                    "  C[row * N + col] = sum;\\n"
                    "}";
  return R"({"format": "tessel-gpu-module", "version": 1, "device": "opencl", "code_format": "opencl-c",
  "code": ")" + code + R"(",
  "params": [{"name": "A", "dtype": "float32", "shape": [)" + QByteArray::number(kM) + ", " + QByteArray::number(kK) + R"(]},
             {"name": "B", "dtype": "float32", "shape": [)" + QByteArray::number(kK) + ", " + QByteArray::number(kN) + R"(]},
             {"name": "C", "dtype": "float32", "shape": [)" + QByteArray::number(kM) + ", " + QByteArray::number(kN) + R"(]}],
  "outputs": ["C"],
  "kernels": [{"name": "matmul_kernel0", "grid": [6, 5, 1], "block": [8, 8, 1], "args": [0, 1, 2]}]})";
}

// The vector add as PTX ISA 7.0 for sm_50, so any CUDA 11+ driver JIT-compiles it for its GPU.
const char* kVectorAddPtx = R"(.version 7.0
.target sm_50
.address_size 64
.visible .entry vector_add(.param .u64 vector_add_param_0, .param .u64 vector_add_param_1, .param .u64 vector_add_param_2)
{
  .reg .pred %p<2>;
  .reg .f32 %f<4>;
  .reg .b32 %r<5>;
  .reg .b64 %rd<11>;
  ld.param.u64 %rd1, [vector_add_param_0];
  ld.param.u64 %rd2, [vector_add_param_1];
  ld.param.u64 %rd3, [vector_add_param_2];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r1, %r2, %r3, %r4;
  setp.gt.s32 %p1, %r1, 999;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd4, %rd1;
  mul.wide.s32 %rd5, %r1, 4;
  add.s64 %rd6, %rd4, %rd5;
  cvta.to.global.u64 %rd7, %rd2;
  add.s64 %rd8, %rd7, %rd5;
  ld.global.f32 %f1, [%rd8];
  ld.global.f32 %f2, [%rd6];
  add.f32 %f3, %f2, %f1;
  cvta.to.global.u64 %rd9, %rd3;
  add.s64 %rd10, %rd9, %rd5;
  st.global.f32 [%rd10], %f3;
DONE:
  ret;
}
)";

/// kVectorAdd as a CUDA module with `codeFormat` code and `arch` (omitted when empty).
GpuModule cudaVectorAdd(const std::string& codeFormat, const std::string& code, const std::string& arch) {
  nlohmann::json module = nlohmann::json::parse(kVectorAdd);
  module["device"] = "cuda";
  module["code_format"] = codeFormat;
  module["code"] = code;
  if (!arch.empty()) module["arch"] = arch;
  return GpuModule::parse(module.dump(), "cuda_add.tgpu");
}

bool hasCudaDriver() {
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver) dlclose(driver);
  return driver != nullptr;
}

QString parseError(const QByteArray& text) {
  try {
    GpuModule::parse(text.toStdString(), "bad.tgpu");
  } catch (const Error& error) {
    return QString::fromStdString(error.what());
  }
  return "(parsed without error)";
}




struct ToolResult {
  int exitCode = -1;
  QString output;  // stdout and stderr together
};

ToolResult runDeployTool(const QStringList& arguments) {
  QProcess process;
  process.setProcessChannelMode(QProcess::MergedChannels);
  process.start(TESSEL_BINARY_DIR "/bin/tessel-deploy-run", arguments);
  if (!process.waitForFinished(120000)) process.kill();
  ToolResult result;
  result.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
  result.output = QString::fromUtf8(process.readAll());
  return result;
}

const QString kFixture = TESSEL_SOURCE_DIR "/tests/runtime/fixtures/scale_add_matmul_opencl.tgpu";

}  // namespace

class TestGpuModule : public QObject {
  Q_OBJECT
private slots:
  void parsesAValidModule() {
    GpuModule module = GpuModule::parse(kVectorAdd, "add.tgpu");
    QCOMPARE(module.device, GpuDeviceKind::OpenCL);
    QCOMPARE(module.codeFormat, GpuCodeFormat::OpenCLC);
    QCOMPARE(module.params.size(), size_t(3));
    QCOMPARE(module.params[2].byteSize(), int64_t(4000));
    QCOMPARE(module.inputNames(), (std::vector<std::string>{"A", "B"}));
    QCOMPARE(module.outputNames(), (std::vector<std::string>{"C"}));
    QCOMPARE(module.kernels[0].grid, (std::array<uint32_t, 3>{16, 1, 1}));
    QCOMPARE(module.kernels[0].args, (std::vector<size_t>{0, 1, 2}));
    QCOMPARE(*module.flops, 1000.0);
    QVERIFY_THROWS_EXCEPTION(Error, module.paramIndex("D"));
  }

  void decodesBase64Cubin() {
    QByteArray text = kVectorAdd;
    text.replace("\"device\": \"opencl\"", "\"device\": \"cuda\", \"arch\": \"sm_90\"");
    text.replace("\"code_format\": \"opencl-c\"", "\"code_format\": \"cubin\"");
    int start = text.indexOf("\"code\": \"") + 9;
    text.replace(start, text.indexOf("\",", start) - start, "f0VMRgIB\nAQ==");  // "\x7f" "ELF\x02\x01\x01", wrapped
    text.replace("\nAQ", "\\nAQ");
    GpuModule module = GpuModule::parse(text.toStdString(), "cubin.tgpu");
    QCOMPARE(module.code, std::string("\x7f" "ELF\x02\x01\x01"));
    QCOMPARE(module.arch, std::string("sm_90"));
  }

  void rejectsMalformedModules_data() {
    QTest::addColumn<QByteArray>("from");
    QTest::addColumn<QByteArray>("to");
    QTest::addColumn<QStringList>("expected");
    auto row = [](const char* name, QByteArray from, QByteArray to, QStringList expected) {
      QTest::newRow(name) << from << to << expected;
    };
    row("malformed JSON", "\"outputs\": [\"C\"],", "\"outputs\": [\"C\",", {"bad.tgpu", "not a valid JSON"});
    row("wrong format", "tessel-gpu-module", "tessel-graph", {"bad.tgpu: format", "tessel-graph"});
    row("wrong version", "\"version\": 1", "\"version\": 2", {"bad.tgpu: version", "version 2"});
    row("version not an integer", "\"version\": 1", "\"version\": \"1\"", {"version", "expected an integer"});
    row("unknown device", "\"device\": \"opencl\"", "\"device\": \"vulkan\"", {"device", "vulkan"});
    row("unknown code format", "\"opencl-c\"", "\"spirv\"", {"code_format", "spirv"});
    row("code for another device", "\"code_format\": \"opencl-c\"", "\"code_format\": \"ptx\"",
        {"code_format", "cannot run on device \"opencl\""});
    row("missing code", "\"code\":", "\"kode\":", {"bad.tgpu", "missing field \"code\""});
    row("empty code", "\"code\": \"__kernel", "\"code\": \"\", \"x\": \"", {"code", "empty"});
    row("cubin without arch", "\"device\": \"opencl\",\n  \"code_format\": \"opencl-c\",\n  \"code\": \"__kernel",
        "\"device\": \"cuda\", \"code_format\": \"cubin\", \"code\": \"AAAA\", \"x\": \"", {"missing field \"arch\""});
    row("bad arch", "\"device\": \"opencl\",\n  \"code_format\": \"opencl-c\",\n  \"code\": \"__kernel",
        "\"device\": \"cuda\", \"arch\": \"hopper\", \"code_format\": \"cubin\", \"code\": \"AAAA\", \"x\": \"",
        {"arch", "hopper"});
    row("bad base64", "\"device\": \"opencl\",\n  \"code_format\": \"opencl-c\",\n  \"code\": \"__kernel",
        "\"device\": \"cuda\", \"arch\": \"sm_90\", \"code_format\": \"cubin\", \"code\": \"AA*A\", \"x\": \"",
        {"bad.tgpu: code", "base64"});
    row("truncated base64", "\"device\": \"opencl\",\n  \"code_format\": \"opencl-c\",\n  \"code\": \"__kernel",
        "\"device\": \"cuda\", \"arch\": \"sm_90\", \"code_format\": \"cubin\", \"code\": \"AAA\", \"x\": \"",
        {"bad.tgpu: code", "base64"});
    row("params not an array", "\"params\": [", "\"params\": {\"a\": 1}, \"p\": [", {"params", "expected an array"});
    row("no params", "\"params\": [", "\"params\": [], \"p\": [", {"params", "at least one param"});
    row("unknown dtype", "\"dtype\": \"float32\", \"shape\": [1000]},\n             {\"name\": \"B\"",
        "\"dtype\": \"float33\", \"shape\": [1000]},\n             {\"name\": \"B\"", {"params[0].dtype", "float33"});
    row("negative extent", "\"shape\": [1000]},\n             {\"name\": \"C\"", "\"shape\": [-1]},\n             {\"name\": \"C\"",
        {"params[1].shape[0]", "is negative"});
    row("non-integer extent", "\"shape\": [1000]}]", "\"shape\": [10.5]}]", {"params[2].shape[0]", "expected an integer"});
    row("duplicate param", "{\"name\": \"B\"", "{\"name\": \"A\"", {"params[1].name", "duplicate"});
    row("output not a param", "\"outputs\": [\"C\"]", "\"outputs\": [\"D\"]", {"outputs[0]", "no param is named \"D\""});
    row("no outputs", "\"outputs\": [\"C\"]", "\"outputs\": []", {"outputs", "at least one output"});
    row("negative flops", "\"flops\": 1000", "\"flops\": -1", {"flops", "non-negative"});
    row("kernel without name", "{\"name\": \"vector_add\",", "{", {"kernels[0]", "missing field \"name\""});
    row("zero grid", "\"grid\": [16, 1, 1]", "\"grid\": [16, 0, 1]", {"kernels[0].grid[1]", "not positive"});
    row("negative block", "\"block\": [64, 1, 1]", "\"block\": [-64, 1, 1]", {"kernels[0].block[0]", "not positive"});
    row("four grid extents", "\"grid\": [16, 1, 1]", "\"grid\": [16, 1, 1, 1]", {"kernels[0].grid", "1 to 3 extents"});
    row("negative shared bytes", "\"shared_bytes\": 0", "\"shared_bytes\": -4", {"kernels[0].shared_bytes"});
    row("arg out of range", "\"args\": [0, 1, 2]", "\"args\": [0, 1, 3]", {"kernels[0].args[2]", "out of range", "3 params"});
    row("negative arg", "\"args\": [0, 1, 2]", "\"args\": [0, -1, 2]", {"kernels[0].args[1]", "out of range"});
  }

  void rejectsMalformedModules() {
    QFETCH(QByteArray, from);
    QFETCH(QByteArray, to);
    QFETCH(QStringList, expected);
    QByteArray text = kVectorAdd;
    QVERIFY2(text.contains(from), from.constData());
    text.replace(from, to);
    QString message = parseError(text);
    for (const QString& part : expected) QVERIFY2(message.contains(part), qPrintable(message));
  }

  void rejectsUnreadableFiles() {
    try {
      GpuModule::load("/nonexistent/module.tgpu");
      QFAIL("loaded a missing file");
    } catch (const Error& error) {
      QVERIFY(QString(error.what()).contains("/nonexistent/module.tgpu"));
    }
    QVERIFY(parseError("").contains("not a valid JSON"));
    QVERIFY(parseError("[1, 2]").contains("bad.tgpu: expected an object"));
    QVERIFY(parseError(R"({"format": "tessel-gpu-module", "version": 1, "device": "cuda", "arch": "sm_90",
        "code_format": "ptx", "code": "x", "params": [{"name": "A", "dtype": "float32", "shape": [4]}],
        "outputs": ["A"], "kernels": [{"name": "k", "grid": [1], "block": [4], "args": [0]}]})") == "(parsed without error)");
    QVERIFY(parseError("\x01\xff garbage").contains("bad.tgpu"));
  }

  void readsCudaArchitectures() {
    QCOMPARE(parseCudaArch("sm_90")->major, 9);
    QCOMPARE(parseCudaArch("sm_86")->minor, 6);
    QCOMPARE(parseCudaArch("sm_100")->major, 10);
    QVERIFY(parseCudaArch("sm_90a")->archSpecific);
    QCOMPARE(parseCudaArch("compute_80")->major, 8);
    QVERIFY(!parseCudaArch("sm_9"));
    QVERIFY(!parseCudaArch("sm_x0"));
    QVERIFY(!parseCudaArch("90"));
    // cubin runs within its major version, on the same or a later minor.
    QVERIFY(cubinRunsOn(*parseCudaArch("sm_80"), *parseCudaArch("sm_86")));
    QVERIFY(!cubinRunsOn(*parseCudaArch("sm_86"), *parseCudaArch("sm_80")));
    QVERIFY(!cubinRunsOn(*parseCudaArch("sm_80"), *parseCudaArch("sm_90")));
    QVERIFY(!cubinRunsOn(*parseCudaArch("sm_90a"), *parseCudaArch("sm_91")));
  }

  void cudaModuleWithoutDriverSaysSo() {
    GpuModule module = cudaVectorAdd("ptx", kVectorAddPtx, "");
    if (hasCudaDriver()) QSKIP("this machine has a CUDA driver (libcuda.so.1), so the no-driver message cannot be checked");
    try {
      GpuModuleRunner runner(std::move(module));
      QFAIL("a CUDA module ran without a driver");
    } catch (const Error& error) {
      QVERIFY2(QString(error.what()).contains("no CUDA driver (libcuda.so.1) on this machine"), error.what());
      QVERIFY(QString(error.what()).contains("--target opencl"));
    }
  }

  void cudaPtxVectorAddMatchesCpu() {
    if (!hasCudaDriver()) QSKIP("no CUDA driver (libcuda.so.1) on this machine");
    GpuModuleRunner runner(cudaVectorAdd("ptx", kVectorAddPtx, ""));
    std::vector<float> a = randomFloats(1000, 7), b = randomFloats(1000, 8), c(1000);
    runner.setInput("A", a.data(), a.size() * sizeof(float));
    runner.setInput("B", b.data(), b.size() * sizeof(float));
    runner.run();
    runner.getOutput("C", c.data(), c.size() * sizeof(float));
    for (size_t i = 0; i < c.size(); ++i) QCOMPARE(c[i], a[i] + b[i]);
    double milliseconds = runner.timeMilliseconds(5);
    QVERIFY(milliseconds > 0 && std::isfinite(milliseconds));
    qInfo("CUDA device: %s, vector add %.4f ms", runner.deviceName().c_str(), milliseconds);
  }

  void cudaCubinForAnotherArchitectureNamesBoth() {
    if (!hasCudaDriver()) QSKIP("no CUDA driver (libcuda.so.1) on this machine");
    // No real device is sm_10, so the check before loading refuses it whatever the GPU.
    try {
      GpuModuleRunner runner(cudaVectorAdd("cubin", "f0VMRgIBAQ==", "sm_10"));
      QFAIL("loaded a cubin for sm_10");
    } catch (const Error& error) {
      QString message = error.what();
      QVERIFY2(message.contains("module cuda_add.tgpu holds code for sm_10 but device 0 (") &&
                   message.contains("compile it with --target \"cuda -arch=sm_"),
               error.what());
    }
  }

  void openCLVectorAddMatchesCpu() {
    SKIP_WITHOUT_OPENCL();
    GpuModuleRunner runner(GpuModule::parse(kVectorAdd, "add.tgpu"));
    QVERIFY(!runner.deviceName().empty());
    std::vector<float> a = randomFloats(1000, 1), b = randomFloats(1000, 2), c(1000);
    runner.setInput("A", a.data(), a.size() * sizeof(float));
    runner.setInput(1, b.data(), b.size() * sizeof(float));
    runner.run();
    runner.getOutput("C", c.data(), c.size() * sizeof(float));
    for (size_t i = 0; i < c.size(); ++i) QCOMPARE(c[i], a[i] + b[i]);
    // Buffers persist: a second run with one input changed sees the other one still set.
    std::vector<float> ones(1000, 1.0f);
    runner.setInput("B", ones.data(), ones.size() * sizeof(float));
    runner.run();
    NDArray output = runner.getOutput("C");
    QCOMPARE(output.shape(), (std::vector<int64_t>{1000}));
    std::vector<float> second = output.toVector<float>();
    for (size_t i = 0; i < second.size(); ++i) QCOMPARE(second[i], a[i] + 1.0f);
    double milliseconds = runner.timeMilliseconds(3);
    QVERIFY(milliseconds >= 0 && std::isfinite(milliseconds));
    QVERIFY_THROWS_EXCEPTION(Error, runner.timeMilliseconds(0));
  }

  void openCLMatmulWithTwoDimensionalGridMatchesCpu() {
    SKIP_WITHOUT_OPENCL();
    GpuModuleRunner runner(GpuModule::parse(matmulModule().toStdString(), "matmul.tgpu"));
    std::vector<float> a = randomFloats(kM * kK, 3), b = randomFloats(kK * kN, 4);
    NDArray inputA = NDArray::empty({kM, kK}, DataType::float32());
    inputA.copyFrom(a);
    runner.setInput("A", inputA);
    runner.setInput("B", b.data(), b.size() * sizeof(float));
    runner.run();
    std::vector<float> c = runner.getOutput("C").toVector<float>();
    for (int row = 0; row < kM; ++row)
      for (int col = 0; col < kN; ++col) {
        float expected = 0;
        for (int k = 0; k < kK; ++k) expected += a[row * kK + k] * b[k * kN + col];
        float actual = c[row * kN + col];
        QVERIFY2(std::fabs(actual - expected) <= 1e-4f * (1 + std::fabs(expected)),
                 qPrintable(QString("C[%1][%2] = %3, expected %4").arg(row).arg(col).arg(actual).arg(expected)));
      }
  }

  void setInputChecksSizeShapeAndType() {
    SKIP_WITHOUT_OPENCL();
    GpuModuleRunner runner(GpuModule::parse(kVectorAdd, "add.tgpu"));
    std::vector<float> small(10);
    QVERIFY_THROWS_EXCEPTION(Error, runner.setInput("A", small.data(), small.size() * sizeof(float)));
    QVERIFY_THROWS_EXCEPTION(Error, runner.setInput(7, small.data(), 40));
    QVERIFY_THROWS_EXCEPTION(Error, runner.setInput("Z", small.data(), 40));
    QVERIFY_THROWS_EXCEPTION(Error, runner.setInput("A", NDArray::empty({10, 100}, DataType::float32())));
    try {
      runner.setInput("A", NDArray::empty({1000}, DataType::int32()));
      QFAIL("accepted an int32 array for a float32 param");
    } catch (const Error& error) {
      QVERIFY2(QString(error.what()).contains("float32[1000]"), error.what());
    }
    QVERIFY_THROWS_EXCEPTION(Error, runner.getOutput("C", small.data(), 40));
  }

  void openCLBuildErrorCarriesTheBuildLog() {
    SKIP_WITHOUT_OPENCL();
    QByteArray text = kVectorAdd;
    text.replace("C[i] = A[i] + B[i];", "C[i] = A[i] + undeclared_thing;");
    try {
      GpuModuleRunner runner(GpuModule::parse(text.toStdString(), "broken.tgpu"));
      QFAIL("a kernel with an error built");
    } catch (const Error& error) {
      QString message = error.what();
      QVERIFY2(message.contains("broken.tgpu") && message.contains("does not build"), error.what());
      QVERIFY2(message.contains("build log") && message.contains("undeclared_thing"), error.what());
    }
  }

  void openCLKernelMissingFromTheCodeIsNamed() {
    SKIP_WITHOUT_OPENCL();
    QByteArray text = kVectorAdd;
    text.replace("{\"name\": \"vector_add\"", "{\"name\": \"vector_sub\"");
    try {
      GpuModuleRunner runner(GpuModule::parse(text.toStdString(), "renamed.tgpu"));
      QFAIL("created a kernel the code does not define");
    } catch (const Error& error) {
      QVERIFY2(QString(error.what()).contains("\"vector_sub\""), error.what());
    }
  }

  void deployToolRunsAnOpenCLModule() {
    SKIP_WITHOUT_OPENCL();
    QTemporaryDir dir;
    // A and B from files, so C can be checked; X and W random.
    std::vector<float> a = randomFloats(1000, 5), b = randomFloats(1000, 6);
    NDArray arrayA = NDArray::empty({1000}, DataType::float32()), arrayB = NDArray::empty({1000}, DataType::float32());
    arrayA.copyFrom(a);
    arrayB.copyFrom(b);
    writeNpy((dir.path() + "/a.npy").toStdString(), arrayA);
    writeNpy((dir.path() + "/b.npy").toStdString(), arrayB);
    ToolResult result = runDeployTool({"--gpu-module", kFixture, "--input", "A=" + dir.path() + "/a.npy", "--input",
                                       "B=" + dir.path() + "/b.npy", "--random-inputs", "--repeat", "3",
                                       "--output-dir", dir.path() + "/out"});
    QVERIFY2(result.exitCode == 0, qPrintable(result.output));
    QVERIFY2(result.output.contains(QRegularExpression("^device: .+$", QRegularExpression::MultilineOption)),
             qPrintable(result.output));
    QVERIFY2(result.output.contains(QRegularExpression("^time_ms_median: [0-9.]+$", QRegularExpression::MultilineOption)),
             qPrintable(result.output));
    QVERIFY2(result.output.contains(QRegularExpression("^gflops: [0-9.]+$", QRegularExpression::MultilineOption)),
             qPrintable(result.output));
    std::vector<float> c = readNpy((dir.path() + "/out/C.npy").toStdString()).toVector<float>();
    QCOMPARE(c.size(), size_t(1000));
    for (size_t i = 0; i < c.size(); ++i) QCOMPARE(c[i], 2.0f * a[i] + b[i]);
    NDArray y = readNpy((dir.path() + "/out/Y.npy").toStdString());
    QCOMPARE(y.shape(), (std::vector<int64_t>{24, 40}));

    // Random inputs are the same every run, so outputs are too.
    ToolResult again = runDeployTool({"--gpu-module", kFixture, "--random-inputs", "--output-dir", dir.path() + "/again"});
    QVERIFY2(again.exitCode == 0, qPrintable(again.output));
    QVERIFY(!again.output.contains("time_ms_median"));
    ToolResult third = runDeployTool({"--gpu-module", kFixture, "--random-inputs", "--output-dir", dir.path() + "/third"});
    QCOMPARE(readNpy((dir.path() + "/again/Y.npy").toStdString()).toVector<float>(),
             readNpy((dir.path() + "/third/Y.npy").toStdString()).toVector<float>());
  }

  // --device says where to run, and a module of another kind is refused naming both;
  // --list-devices numbers the OpenCL devices for opencl:N.
  void deployToolChoosesTheDevice() {
    QTemporaryDir dir;
    ToolResult cuda = runDeployTool({"--gpu-module", kFixture, "--random-inputs", "--device", "cuda"});
    QCOMPARE(cuda.exitCode, 1);
    QVERIFY2(cuda.output.contains("holds opencl code") && cuda.output.contains("--device cuda was asked for"),
             qPrintable(cuda.output));
    ToolResult cpu = runDeployTool({"--gpu-module", kFixture, "--device", "cpu"});
    QCOMPARE(cpu.exitCode, 2);
    QVERIFY2(cpu.output.contains("is a GPU module"), qPrintable(cpu.output));
    ToolResult directory = runDeployTool({dir.path(), "--device", "opencl"});
    QCOMPARE(directory.exitCode, 2);
    QVERIFY2(directory.output.contains("is a module for the CPU"), qPrintable(directory.output));
    QCOMPARE(runDeployTool({"--gpu-module", kFixture, "--device", "gpu"}).exitCode, 2);
    QCOMPARE(runDeployTool({"--gpu-module", kFixture, "--device", "opencl:x"}).exitCode, 2);

    ToolResult listed = runDeployTool({"--list-devices"});
    QCOMPARE(listed.exitCode, 0);
    QVERIFY2(listed.output.contains(QRegularExpression("^cuda: ", QRegularExpression::MultilineOption)),
             qPrintable(listed.output));
    SKIP_WITHOUT_OPENCL();
    QVERIFY2(listed.output.contains(QRegularExpression("^opencl:0 .+", QRegularExpression::MultilineOption)),
             qPrintable(listed.output));
    ToolResult chosen = runDeployTool({"--gpu-module", kFixture, "--random-inputs", "--device", "opencl:0",
                                       "--output-dir", dir.path() + "/out"});
    QVERIFY2(chosen.exitCode == 0, qPrintable(chosen.output));
    ToolResult none = runDeployTool({"--gpu-module", kFixture, "--random-inputs", "--device", "opencl:99"});
    QCOMPARE(none.exitCode, 1);
    QVERIFY2(none.output.contains("--device opencl:99 names no device") && none.output.contains("opencl:0 "),
             qPrintable(none.output));
  }

  void deployToolReportsGpuModuleErrors() {
    QTemporaryDir dir;
    // Usage errors: 2.
    QCOMPARE(runDeployTool({"--gpu-module"}).exitCode, 2);
    QCOMPARE(runDeployTool({"--gpu-module", kFixture, "--repeat", "many"}).exitCode, 2);
    QCOMPARE(runDeployTool({dir.path(), "--gpu-module", kFixture}).exitCode, 2);
    QVERIFY(runDeployTool({"--help"}).output.contains("--gpu-module"));

    // Runtime errors: 1, with the message on stderr.
    QFile broken(dir.path() + "/broken.tgpu");
    QVERIFY(broken.open(QIODevice::WriteOnly));
    broken.write("{\"format\": \"tessel-gpu-module\", \"version\": 7}");
    broken.close();
    ToolResult malformed = runDeployTool({"--gpu-module", broken.fileName()});
    QCOMPARE(malformed.exitCode, 1);
    QVERIFY2(malformed.output.contains("broken.tgpu: version"), qPrintable(malformed.output));

    ToolResult unknownInput = runDeployTool({"--gpu-module", kFixture, "--input", "Q=" + dir.path() + "/q.npy"});
    QCOMPARE(unknownInput.exitCode, 1);
    QVERIFY2(unknownInput.output.contains("no param named \"Q\""), qPrintable(unknownInput.output));

    SKIP_WITHOUT_OPENCL();
    ToolResult missing = runDeployTool({"--gpu-module", kFixture, "--output-dir", dir.path()});
    QCOMPARE(missing.exitCode, 1);
    QVERIFY2(missing.output.contains("input 'A' was not given") && missing.output.contains("--random-inputs"),
             qPrintable(missing.output));

    NDArray wrong = NDArray::empty({999}, DataType::float32());
    wrong.copyFrom(std::vector<float>(999, 0.0f));
    writeNpy((dir.path() + "/wrong.npy").toStdString(), wrong);
    ToolResult wrongShape =
        runDeployTool({"--gpu-module", kFixture, "--input", "A=" + dir.path() + "/wrong.npy", "--random-inputs"});
    QCOMPARE(wrongShape.exitCode, 1);
    QVERIFY2(wrongShape.output.contains("\"A\" is float32[1000]"), qPrintable(wrongShape.output));
  }
};

QTEST_GUILESS_MAIN(TestGpuModule)
#include "test_gpu_module.moc"
