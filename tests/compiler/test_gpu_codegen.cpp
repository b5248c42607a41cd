// GPU code generation end to end: default GPU schedules lowered for OpenCL run on the CPU
// through PoCL and match a plain C++ matmul; the same functions printed as CUDA compile with
// NVRTC for sm_80 and sm_90; every GPU schedule mistake has its diagnostic at its line.
// Tests that need PoCL or NVRTC say SKIP with the reason where they are missing (CTest counts
// them skipped), never pass silently.
#include <QtTest>

#include <random>

#include "compiler/codegen/c/CodeGenC.h"
#include "compiler/codegen/c/Nvrtc.h"
#include "compiler/export/GpuModuleExport.h"
#include "compiler/lower/Build.h"
#include "compiler/lower/Lower.h"
#include "compiler/ops/Conv2d.h"
#include "compiler/ops/Elementwise.h"
#include "compiler/ops/GpuSchedules.h"
#include "compiler/ops/Matmul.h"
#include "compiler/ops/Normalization.h"
#include "compiler/ops/Pooling.h"
#include "compiler/ops/Reduction.h"
#include "compiler/ops/Softmax.h"
#include "compiler/schedule/TraceText.h"
#include "runtime/Error.h"
#include "runtime/GpuModule.h"
#include "runtime/NDArray.h"
#include "runtime/Value.h"
#include "tests/GpuTestSupport.h"

using namespace tessel;
using namespace tessel::testing;

namespace {
Target gpuTarget(const char* text) { return *Target::parse(text); }



// Lowers `workload` under `schedule` for `target`, or fails the test with the diagnostic.
PrimFunc lowerFor(const Workload& workload, const Schedule& schedule, const Target& target) {
  auto lowered = lower(schedule, workload.args(), workload.name, target);
  if (!lowered) qFatal("lowering failed: %s", lowered.error().toString().c_str());
  return lowered->func;
}

// The .tgpu text of `workload` under `schedule` for `target`, its outputs named as the workload's.
Expected<std::string> moduleText(const Workload& workload, const Schedule& schedule, const Target& target) {
  GpuModuleOptions options;
  for (const te::Tensor& output : workload.outputs) options.outputs.push_back(output.name());
  return exportGpuModule(lowerFor(workload, schedule, target), target, options);
}

// The diagnostic of lowering `text` (a schedule) for matmul MxNxK on a CUDA target.
Diagnostic scheduleProblem(const std::string& text, int64_t m = 64, int64_t n = 64, int64_t k = 32) {
  Workload workload = matmul(m, n, k, DataType::float32(), gpuTarget("cuda -arch=sm_90"));
  auto trace = parseTraceText(text);
  if (!trace) return trace.error();
  auto schedule = Schedule::replay(workload.outputs, *trace);
  if (!schedule) return schedule.error();
  auto lowered = lower(*schedule, workload.args(), workload.name, gpuTarget("cuda -arch=sm_90"));
  if (!lowered) return lowered.error();
  auto source = generateGpuSource(lowered->func, gpuTarget("cuda -arch=sm_90"));
  if (!source) return source.error();
  return Diagnostic{"(no error)", "", 0, 0, ""};
}

// Runs the product `text` (a .tgpu module of matmul or dense, inputs A and B) on random
// inputs from `seed` through OpenCL; the largest difference from a plain loop.
double worstProductDifference(const std::string& text, int m, int n, int k, bool dense, unsigned seed) {
  runtime::GpuModuleRunner runner(runtime::GpuModule::parse(text, "product.tgpu"));
  std::vector<float> a = randomFloats(size_t(m) * k, seed), b = randomFloats(size_t(k) * n, seed + 1);
  runner.setInput("A", a.data(), a.size() * sizeof(float));
  runner.setInput("B", b.data(), b.size() * sizeof(float));
  runner.run();
  std::vector<float> c(size_t(m) * n);
  runner.getOutput("C", c.data(), c.size() * sizeof(float));
  double worst = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int p = 0; p < k; ++p)
        sum += double(a[size_t(i) * k + p]) * (dense ? b[size_t(j) * k + p] : b[size_t(p) * n + j]);
      worst = std::max(worst, std::abs(sum - c[size_t(i) * n + j]));
    }
  return worst;
}

// A small instance of an operator family for the generic GPU schedule.
Expected<Workload> familyWorkload(const QString& family) {
  Expected<Workload> workload = Diagnostic{"unknown family", "", 0, 0, ""};
  if (family == "relu") workload = unaryElementwise(UnaryOp::Relu, {3, 50, 7});
  if (family == "sigmoid") workload = unaryElementwise(UnaryOp::Sigmoid, {1000});
  if (family == "softmax" || family == "log_softmax" || family == "softmax_long" || family == "softmax_rows") {
    SoftmaxParams p;
    p.shape = family == "softmax_long"   ? std::vector<int64_t>{2, 3001}
              : family == "softmax_rows" ? std::vector<int64_t>{300, 1000}
                                         : std::vector<int64_t>{6, 37};
    p.logSoftmax = family == "log_softmax";
    workload = softmax(p);
  }
  if (family == "layer_norm" || family == "layer_norm_rows") {
    NormParams p;
    p.shape = family == "layer_norm" ? std::vector<int64_t>{4, 5, 24} : std::vector<int64_t>{2, 150, 200};
    workload = normalization(p);
  }
  if (family == "max_pool" || family == "avg_pool_padded") {
    PoolParams p;
    p.kind = family == "max_pool" ? PoolKind::Max : PoolKind::Average;
    p.inputShape = {2, 3, 11, 9};
    p.kernel = {3, 3};
    p.strides = {2, 2};
    if (family == "avg_pool_padded") p.padsBegin = p.padsEnd = {1, 1};
    workload = pool(p);
  }
  // A mean over two axes (fused, then spread over a block), 7x9 pixels of 300 channels.
  if (family == "global_mean") {
    ReduceParams p;
    p.kind = ReduceKind::Mean;
    p.shape = {1, 300, 7, 9};
    p.axes = {2, 3};
    p.keepDims = true;
    workload = reduce(p);
  }
  if (family == "reduce_sum" || family == "reduce_mean_keepdims") {
    ReduceParams p;
    p.kind = family == "reduce_sum" ? ReduceKind::Sum : ReduceKind::Mean;
    p.shape = {5, 6, 7};
    p.axes = {1};
    p.keepDims = family != "reduce_sum";
    workload = reduce(p);
  }
  // Few outputs of long sums: split into partial sums across threads (a stage NAME.rf).
  if (family == "reduce_mean_long" || family == "reduce_mean_all") {
    ReduceParams p;
    p.kind = ReduceKind::Mean;
    p.shape = family == "reduce_mean_long" ? std::vector<int64_t>{3, 5003} : std::vector<int64_t>{64, 70};
    p.axes = family == "reduce_mean_long" ? std::vector<int64_t>{1} : std::vector<int64_t>{0, 1};
    workload = reduce(p);
  }
  return workload;
}

const char* kFamilies[] = {"relu",         "sigmoid",         "softmax",          "log_softmax",
                           "layer_norm",   "max_pool",        "avg_pool_padded",  "reduce_sum",
                           "reduce_mean_keepdims", "softmax_long", "reduce_mean_long", "reduce_mean_all",
                           "softmax_rows", "layer_norm_rows", "global_mean"};

// Families whose reductions are long enough to be spread over a block's threads.
bool reducesAcrossThreads(const QString& family) {
  return family.endsWith("_long") || family.endsWith("_all") || family.endsWith("_rows") || family == "global_mean";
}
}  // namespace

class TestGpuCodegen : public QObject {
  Q_OBJECT
private slots:
  // The default GPU matmul and dense, lowered for OpenCL and run through PoCL, against a
  // plain loop; shapes the tiles do not divide exercise the guards.
  void defaultSchedulesComputeTheProduct_data() {
    QTest::addColumn<QString>("op");
    QTest::addColumn<int>("m");
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("k");
    QTest::newRow("matmul 64x64x64") << "matmul" << 64 << 64 << 64;
    QTest::newRow("matmul 256x128x48") << "matmul" << 256 << 128 << 48;
    QTest::newRow("matmul 100x60x30 (partial tiles)") << "matmul" << 100 << 60 << 30;
    QTest::newRow("matmul 7x5x3 (odd)") << "matmul" << 7 << 5 << 3;
    QTest::newRow("matmul 1x256x128 (one row)") << "matmul" << 1 << 256 << 128;
    QTest::newRow("dense 96x160x64") << "dense" << 96 << 160 << 64;
    QTest::newRow("dense 33x17x9 (odd)") << "dense" << 33 << 17 << 9;
    QTest::newRow("dense 2x2x2 (tiny)") << "dense" << 2 << 2 << 2;
    QTest::newRow("matmul 1x1x1") << "matmul" << 1 << 1 << 1;
  }
  void defaultSchedulesComputeTheProduct() {
    SKIP_WITHOUT_OPENCL();
    QFETCH(QString, op);
    QFETCH(int, m);
    QFETCH(int, n);
    QFETCH(int, k);
    Target target = gpuTarget("opencl");
    bool dense = op == "dense";
    Workload workload = dense ? tessel::dense(m, n, k, DataType::float32(), target)
                              : matmul(m, n, k, DataType::float32(), target);
    auto schedule = defaultMatmulSchedule(workload, target);
    QVERIFY2(schedule, schedule ? "" : schedule.error().toString().c_str());
    auto text = moduleText(workload, *schedule, target);
    QVERIFY2(text, text ? "" : text.error().toString().c_str());
    double worst = worstProductDifference(*text, m, n, k, dense, 1);
    QVERIFY2(worst < 1e-4, qPrintable(QString("largest difference %1").arg(worst)));
  }

  // The default GPU convolution (direct, NCHW) through PoCL against plain loops: padding,
  // strides, dilation, groups (depthwise included), bias, shapes the tiles do not divide.
  void defaultConvolutionComputesTheConvolution_data() {
    QTest::addColumn<QString>("spec");  // n c h w k r s stride pad dilation groups bias
    QTest::newRow("3x3 pad 1") << "1 8 14 14 16 3 3 1 1 1 1 0";
    QTest::newRow("3x3 stride 2, bias") << "2 6 15 13 12 3 3 2 1 1 1 1";
    QTest::newRow("1x1") << "1 16 7 7 32 1 1 1 0 1 1 0";
    QTest::newRow("7x7 stride 2 pad 3") << "1 3 23 23 8 7 7 2 3 1 1 0";
    QTest::newRow("dilated") << "1 4 12 12 4 3 3 1 2 2 1 0";
    QTest::newRow("grouped") << "1 8 9 9 12 3 3 1 1 1 4 1";
    QTest::newRow("depthwise") << "1 16 10 10 16 3 3 1 1 1 16 0";
  }
  void defaultConvolutionComputesTheConvolution() {
    SKIP_WITHOUT_OPENCL();
    QFETCH(QString, spec);
    QStringList v = spec.split(' ');
    Conv2dParams p;
    p.batch = v[0].toInt(), p.channels = v[1].toInt(), p.height = v[2].toInt(), p.width = v[3].toInt();
    p.filters = v[4].toInt(), p.kernelH = v[5].toInt(), p.kernelW = v[6].toInt(), p.stride = v[7].toInt();
    p.pad = v[8].toInt(), p.dilationH = p.dilationW = v[9].toInt(), p.groups = v[10].toInt(), p.bias = v[11] == "1";
    QVERIFY2(p.validate().empty(), p.validate().c_str());
    Target target = gpuTarget("opencl");
    Workload workload = conv2d(p, DataType::float32(), target);
    auto schedule = defaultConv2dSchedule(workload, p, target);
    QVERIFY2(schedule, schedule ? "" : schedule.error().toString().c_str());
    auto text = moduleText(workload, *schedule, target);
    QVERIFY2(text, text ? "" : text.error().toString().c_str());
    runtime::GpuModuleRunner runner(runtime::GpuModule::parse(*text, workload.name + ".tgpu"));
    int64_t cpg = p.channelsPerGroup(), fpg = p.filtersPerGroup(), oh = p.outHeight(), ow = p.outWidth();
    std::vector<float> data = randomFloats(size_t(p.batch * p.channels * p.height * p.width), 3);
    std::vector<float> weight = randomFloats(size_t(p.filters * cpg * p.kernelH * p.kernelW), 4);
    std::vector<float> bias = randomFloats(size_t(p.filters), 5);
    runner.setInput("data", data.data(), data.size() * sizeof(float));
    runner.setInput("weight", weight.data(), weight.size() * sizeof(float));
    if (p.bias) runner.setInput("bias", bias.data(), bias.size() * sizeof(float));
    runner.run();
    std::vector<float> out(size_t(p.batch * p.filters * oh * ow));
    runner.getOutput(workload.outputs[0].name(), out.data(), out.size() * sizeof(float));
    double worst = 0;
    for (int64_t n = 0; n < p.batch; ++n)
      for (int64_t f = 0; f < p.filters; ++f)
        for (int64_t y = 0; y < oh; ++y)
          for (int64_t x = 0; x < ow; ++x) {
            double sum = p.bias ? bias[f] : 0.0;
            for (int64_t c = 0; c < cpg; ++c)
              for (int64_t r = 0; r < p.kernelH; ++r)
                for (int64_t s = 0; s < p.kernelW; ++s) {
                  int64_t iy = y * p.stride + r * p.dilationH - p.pad, ix = x * p.stride + s * p.dilationW - p.pad;
                  if (iy < 0 || iy >= p.height || ix < 0 || ix >= p.width) continue;
                  int64_t channel = f / fpg * cpg + c;
                  sum += double(data[((n * p.channels + channel) * p.height + iy) * p.width + ix]) *
                         weight[((f * cpg + c) * p.kernelH + r) * p.kernelW + s];
                }
            worst = std::max(worst, std::abs(sum - out[((n * p.filters + f) * oh + y) * ow + x]));
          }
    QVERIFY2(worst < 1e-4, qPrintable(QString("largest difference %1").arg(worst)));
  }

  // Operator families under the generic GPU schedule (defaultGpuSchedule), through PoCL,
  // against the same operator compiled for this CPU: elementwise, reductions that become
  // kernels of their own (softmax, layer normalization), pooling, reductions over axes.
  void operatorFamiliesMatchTheCpu_data() {
    QTest::addColumn<QString>("family");
    for (const char* family : kFamilies) QTest::newRow(family) << family;
  }
  void operatorFamiliesMatchTheCpu() {
    SKIP_WITHOUT_OPENCL();
    QFETCH(QString, family);
    Expected<Workload> workload = familyWorkload(family);
    QVERIFY2(workload, workload ? "" : workload.error().toString().c_str());
    Target target = gpuTarget("opencl");
    auto schedule = defaultGpuSchedule(*workload, target);
    QVERIFY2(schedule, schedule ? "" : schedule.error().toString().c_str());
    bool partialSums = false;
    for (const Stage& stage : schedule->stages()) partialSums |= stage.name.size() > 3 && stage.name.ends_with(".rf");
    QCOMPARE(partialSums, family.endsWith("_long") || family.endsWith("_all"));
    auto text = moduleText(*workload, *schedule, target);
    QVERIFY2(text, text ? "" : text.error().toString().c_str());
    // A long reduction is folded in the block's shared memory, barriers between the steps.
    auto source = generateGpuSource(lowerFor(*workload, *schedule, target), target);
    QVERIFY2(source, source ? "" : source.error().toString().c_str());
    QCOMPARE(source->code.find("__local ") != std::string::npos, reducesAcrossThreads(family));
    QCOMPARE(source->code.find("barrier(CLK_LOCAL_MEM_FENCE)") != std::string::npos, reducesAcrossThreads(family));
    runtime::GpuModuleRunner runner(runtime::GpuModule::parse(*text, workload->name + ".tgpu"));

    // The CPU: the operator's loops as written, compiled by LLVM.
    auto cpu = build(Schedule(workload->outputs), workload->args(), workload->name);
    QVERIFY2(cpu, cpu ? "" : cpu.error().toString().c_str());
    std::vector<runtime::NDArray> arrays;
    unsigned seed = 7;
    for (const te::Tensor& input : workload->inputs) {
      std::vector<int64_t> shape;
      for (auto& extent : input.shape()) shape.push_back(*asConstInt(extent));
      auto array = runtime::NDArray::empty(shape, runtime::DataType::float32());
      std::vector<float> values = randomFloats(size_t(array.numElements()), seed++);
      // Positive values where an operator needs them (scales near 1 keep norms well-conditioned).
      std::copy(values.begin(), values.end(), array.dataAs<float>());
      runner.setInput(input.name(), array);
      arrays.push_back(array);
    }
    for (const te::Tensor& output : workload->outputs) {
      std::vector<int64_t> shape;
      for (auto& extent : output.shape()) shape.push_back(*asConstInt(extent));
      arrays.push_back(runtime::NDArray::empty(shape, runtime::DataType::float32()));
    }
    std::vector<runtime::Value> args(arrays.begin(), arrays.end());
    cpu->function.callPacked(args);
    runner.run();
    for (size_t o = 0; o < workload->outputs.size(); ++o) {
      runtime::NDArray gpu = runner.getOutput(workload->outputs[o].name());
      const runtime::NDArray& expected = arrays[workload->inputs.size() + o];
      QCOMPARE(gpu.numElements(), expected.numElements());
      double worst = 0;
      for (int64_t i = 0; i < gpu.numElements(); ++i)
        worst = std::max(worst, double(std::abs(gpu.dataAs<float>()[i] - expected.dataAs<float>()[i])));
      QVERIFY2(worst < 1e-4, qPrintable(QString("output %1: largest difference %2").arg(o).arg(worst)));
    }
  }

  // vectorize() on a GPU: each thread's vector statements are printed lane by lane (the
  // device compiler merges adjacent accesses), and the results are the same.
  void vectorizedLoopsRunLaneByLane() {
    SKIP_WITHOUT_OPENCL();
    Target target = gpuTarget("opencl");
    Workload workload = matmul(48, 40, 24, DataType::float32(), target);
    auto trace = parseTraceText(
        "CL = cache_write(C, local)\n"
        "io, ii = split(C, i, factor=8)\n"
        "jo, ji = split(C, j, factor=8)\n"
        "reorder(C, io, jo, ii, ji)\n"
        "bind(C, io, blockIdx.x)\n"
        "bind(C, jo, threadIdx.x)\n"
        "vectorize(C, ji)\n"
        "compute_at(CL, C, jo)\n"
        "reorder(CL, k, i, j)\n"
        "vectorize(CL, j)\n");
    QVERIFY2(trace, trace ? "" : trace.error().toString().c_str());
    auto schedule = Schedule::replay(workload.outputs, *trace);
    QVERIFY2(schedule, schedule ? "" : schedule.error().toString().c_str());
    auto text = moduleText(workload, *schedule, target);
    QVERIFY2(text, text ? "" : text.error().toString().c_str());
    QVERIFY2(text->find("lane7_") != std::string::npos, "expected the vector stores printed per lane");
    double worst = worstProductDifference(*text, 48, 40, 24, false, 11);
    QVERIFY2(worst < 1e-4, qPrintable(QString("largest difference %1").arg(worst)));
  }

  // A reduction loop bound to threadIdx.x is reduced across the block in shared memory:
  // the products' k split over 24 threads (not a power of two, so the first fold skips
  // partners past the last thread), two rows of C side by side (threadIdx.y), the columns a
  // serial loop in each block (the shared row reused pass after pass), k not a multiple of
  // 24. Matches a plain loop through PoCL, and CUDA's text compiles.
  void reductionBoundToThreadsIsReducedAcrossTheBlock_data() {
    QTest::addColumn<QString>("schedule");
    QTest::newRow("rows side by side, serial columns") << "ko, kt = split(C, k, factor=24)\n"
                                                          "io, ii = split(C, i, factor=2)\n"
                                                          "reorder(C, io, ii, j, kt, ko)\n"
                                                          "bind(C, io, blockIdx.x)\n"
                                                          "bind(C, ii, threadIdx.y)\n"
                                                          "bind(C, kt, threadIdx.x)\n";
    QTest::newRow("one output per block") << "ko, kt = split(C, k, factor=64)\n"
                                             "reorder(C, i, j, kt, ko)\n"
                                             "bind(C, i, blockIdx.y)\n"
                                             "bind(C, j, blockIdx.x)\n"
                                             "bind(C, kt, threadIdx.x)\n";
  }
  void reductionBoundToThreadsIsReducedAcrossTheBlock() {
    QFETCH(QString, schedule);
    const int m = 6, n = 5, k = 203;
    Workload workload = matmul(m, n, k, DataType::float32(), gpuTarget("opencl"));
    auto trace = parseTraceText(schedule.toStdString());
    QVERIFY2(trace, trace ? "" : trace.error().toString().c_str());
    auto replayed = Schedule::replay(workload.outputs, *trace);
    QVERIFY2(replayed, replayed ? "" : replayed.error().toString().c_str());
    Target cuda = gpuTarget("cuda -arch=sm_90");
    auto cudaSource = generateGpuSource(lowerFor(workload, *replayed, cuda), cuda);
    QVERIFY2(cudaSource, cudaSource ? "" : cudaSource.error().toString().c_str());
    QVERIFY2(cudaSource->code.find("__syncthreads()") != std::string::npos, cudaSource->code.c_str());
    if (nvrtcAvailable()) {
      auto compiled = compileWithNvrtc(cudaSource->code, "sm_90");
      QVERIFY2(compiled, compiled ? "" : compiled.error().message.c_str());
    }

    SKIP_WITHOUT_OPENCL();
    Target target = gpuTarget("opencl");
    auto text = moduleText(workload, *replayed, target);
    QVERIFY2(text, text ? "" : text.error().toString().c_str());
    double worst = worstProductDifference(*text, m, n, k, false, 21);
    QVERIFY2(worst < 1e-4, qPrintable(QString("largest difference %1").arg(worst)));
  }

  // The kernels' launch shapes come from the bound loops: the default 4096^3 matmul is
  // 32x32 blocks of 16x16 threads with two 16 KiB shared tiles.
  void launchShapeFollowsTheSchedule() {
    Target target = gpuTarget("cuda -arch=sm_90");
    Workload workload = matmul(4096, 4096, 4096, DataType::float32(), target);
    PrimFunc func = lowerFor(workload, *defaultMatmulSchedule(workload, target), target);
    auto source = generateGpuSource(func, target);
    QVERIFY2(source, source ? "" : source.error().toString().c_str());
    QCOMPARE(int(source->kernels.size()), 1);
    const KernelLaunch& launch = source->kernels[0];
    QCOMPARE(launch.grid[0], int64_t(32));
    QCOMPARE(launch.grid[1], int64_t(32));
    QCOMPARE(launch.block[0], int64_t(16));
    QCOMPARE(launch.block[1], int64_t(16));
    QCOMPARE(launch.sharedBytes, int64_t(2 * 128 * 32 * 4));
    QVERIFY(source->code.find("__syncthreads()") != std::string::npos);
    QVERIFY(source->code.find("__shared__ __align__(16) float A_shared[4096];") != std::string::npos);
    // 32-bit indices: every buffer has fewer than 2^31 elements.
    QVERIFY(source->code.find("long long") == std::string::npos);
  }

  // The OpenCL dialect of the same function: work-group ids and local memory.
  void openCLDialect() {
    Target target = gpuTarget("opencl");
    Workload workload = matmul(64, 64, 64, DataType::float32(), target);
    PrimFunc func = lowerFor(workload, *defaultMatmulSchedule(workload, target), target);
    auto source = generateGpuSource(func, target);
    QVERIFY(source);
    QVERIFY(source->code.find("__kernel void") != std::string::npos);
    QVERIFY(source->code.find("get_local_id(0)") != std::string::npos);
    QVERIFY(source->code.find("__local float A_shared") != std::string::npos);
    QVERIFY(source->code.find("barrier(CLK_LOCAL_MEM_FENCE)") != std::string::npos);
    QVERIFY(source->code.find("__syncthreads") == std::string::npos);
  }

  // CUDA source for matmul and dense compiles with NVRTC to cubin for sm_80 and sm_90.
  void cudaSourceCompilesWithNvrtc_data() {
    QTest::addColumn<QString>("arch");
    QTest::addColumn<QString>("op");
    for (const char* arch : {"sm_80", "sm_90"})
      for (const char* op : {"matmul", "dense"}) QTest::newRow((std::string(op) + " " + arch).c_str()) << arch << op;
  }
  void cudaSourceCompilesWithNvrtc() {
    std::string where;
    if (!nvrtcAvailable(&where)) QSKIP(qPrintable("no NVRTC on this machine (tried " + QString::fromStdString(where) + ")"));
    QFETCH(QString, arch);
    QFETCH(QString, op);
    Target target = gpuTarget(("cuda -arch=" + arch.toStdString()).c_str());
    Workload workload = op == "dense" ? dense(300, 200, 100, DataType::float32(), target)
                                      : matmul(300, 200, 100, DataType::float32(), target);
    PrimFunc func = lowerFor(workload, *defaultMatmulSchedule(workload, target), target);
    auto source = generateGpuSource(func, target);
    QVERIFY(source);
    auto compiled = compileWithNvrtc(source->code, arch.toStdString());
    QVERIFY2(compiled, compiled ? "" : compiled.error().toString().c_str());
    // An ELF file for the GPU.
    QVERIFY(compiled->cubin.size() > 1000);
    QCOMPARE(compiled->cubin.substr(1, 3), std::string("ELF"));
  }

  // The CUDA source of the other families (the convolution's default schedule and the
  // generic one) compiles with NVRTC too.
  void otherFamiliesCompileWithNvrtc_data() {
    QTest::addColumn<QString>("family");
    QTest::addColumn<QString>("arch");
    for (const char* arch : {"sm_80", "sm_90"}) {
      QTest::newRow((std::string("conv2d ") + arch).c_str()) << "conv2d" << arch;
      for (const char* family : kFamilies) QTest::newRow((std::string(family) + " " + arch).c_str()) << family << arch;
    }
  }
  void otherFamiliesCompileWithNvrtc() {
    std::string where;
    if (!nvrtcAvailable(&where)) QSKIP(qPrintable("no NVRTC on this machine (tried " + QString::fromStdString(where) + ")"));
    QFETCH(QString, family);
    QFETCH(QString, arch);
    Target target = gpuTarget(("cuda -arch=" + arch.toStdString()).c_str());
    Expected<Workload> workload = Diagnostic{"", "", 0, 0, ""};
    Expected<Schedule> schedule = Diagnostic{"", "", 0, 0, ""};
    if (family == "conv2d") {
      Conv2dParams p;
      p.batch = 1, p.channels = 32, p.height = p.width = 28, p.filters = 64, p.kernelH = p.kernelW = 3, p.pad = 1;
      p.bias = true;
      workload = conv2d(p, DataType::float32(), target);
      schedule = defaultConv2dSchedule(*workload, p, target);
    } else {
      workload = familyWorkload(family);
      QVERIFY(workload);
      schedule = defaultGpuSchedule(*workload, target);
    }
    QVERIFY2(schedule, schedule ? "" : schedule.error().toString().c_str());
    auto source = generateGpuSource(lowerFor(*workload, *schedule, target), target);
    QVERIFY2(source, source ? "" : source.error().toString().c_str());
    auto compiled = compileWithNvrtc(source->code, arch.toStdString());
    QVERIFY2(compiled, compiled ? "" : compiled.error().toString().c_str());
    QCOMPARE(compiled->cubin.substr(1, 3), std::string("ELF"));
  }

  // A CUDA syntax error comes back with NVRTC's log, naming the line.
  void nvrtcErrorsCarryTheLog() {
    if (!nvrtcAvailable()) QSKIP("no NVRTC on this machine");
    auto compiled = compileWithNvrtc("extern \"C\" __global__ void k(float* a) { a[0] = b; }\n", "sm_90");
    QVERIFY(!compiled);
    QVERIFY2(compiled.error().message.find("identifier \"b\" is undefined") != std::string::npos,
             compiled.error().message.c_str());
  }

  // Every GPU schedule mistake has a message at the line that caused it.
  void scheduleMistakesHaveDiagnostics_data() {
    QTest::addColumn<QString>("schedule");
    QTest::addColumn<int>("line");
    QTest::addColumn<QString>("message");
    QTest::newRow("too many threads") << "io, ii = split(C, i, factor=32)\n"
                                         "jo, ji = split(C, j, factor=64)\n"
                                         "reorder(C, io, jo, ii, ji)\n"
                                         "bind(C, ii, threadIdx.y)\n"
                                         "bind(C, ji, threadIdx.x)\n"
                                         "bind(C, io, blockIdx.y)\n"
                                         "bind(C, jo, blockIdx.x)\n"
                                      << 5 << "2048 threads per block";
    QTest::newRow("unbound loop") << "io, ii = split(C, i, factor=16)\n"
                                     "bind(C, ii, threadIdx.x)\n"
                                  << 1 << "loop 'io' is not bound to a GPU block or thread index";
    QTest::newRow("bind a reduction to blocks") << "bind(C, k, blockIdx.x)\n" << 1 << "cannot bind reduction loop 'k'";
    QTest::newRow("data-parallel loop inside a reduction bound to threads")
        << "ko, kt = split(C, k, factor=32)\n"
           "reorder(C, kt, ko, i, j)\n"
           "bind(C, kt, threadIdx.x)\n"
        << 3 << "data-parallel loop 'i' of C is inside 'kt'";
    QTest::newRow("reduction loop outside the one bound to threads")
        << "ko, kt = split(C, k, factor=32)\n"
           "bind(C, i, blockIdx.y)\n"
           "bind(C, j, blockIdx.x)\n"
           "bind(C, kt, threadIdx.x)\n"
        << 4 << "reduction loop 'ko' of C is outside 'kt'";
    QTest::newRow("shared memory over the limit")
        << "AS = cache_read(A, shared, [C])\n"
           "bind(C, i, blockIdx.x)\n"
           "compute_at(AS, C, i)\n"
           "bind(C, j, threadIdx.x)\n"
        << 1 << "bytes of shared memory per block";
    QTest::newRow("parallel inside a kernel") << "bind(C, i, blockIdx.x)\n"
                                                 "parallel(C, j)\n"
                                              << 2 << "is parallel inside a GPU kernel";
  }
  void scheduleMistakesHaveDiagnostics() {
    QFETCH(QString, schedule);
    QFETCH(int, line);
    QFETCH(QString, message);
    // Shared memory over the limit needs a big tile: all of A's rows of 16384 k.
    Diagnostic d = QTest::currentDataTag() == QString("shared memory over the limit")
                       ? scheduleProblem(schedule.toStdString(), 64, 64, 16384)
                       : scheduleProblem(schedule.toStdString());
    QVERIFY2(d.message.find(message.toStdString()) != std::string::npos, d.toString().c_str());
    if (line > 0) QCOMPARE(d.line, line);
  }
};

QTEST_GUILESS_MAIN(TestGpuCodegen)
#include "test_gpu_codegen.moc"
