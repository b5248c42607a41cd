// tessel bench OP [flags]: checks the compiled operator against a plain C++ reference,
// then reports its median throughput next to the machine's measured FMA peak.
// (tessel bench MODEL is ModelBenchCommand.cpp.)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <random>

#include "app/cli/Commands.h"
#include "app/cli/ModelCommand.h"
#include "app/cli/OperatorSpec.h"
#include "compiler/driver/Roofline.h"
#include "compiler/export/GpuModuleExport.h"
#include "compiler/lower/Build.h"
#include "compiler/lower/Lower.h"
#include "runtime/BFloat16.h"
#include "runtime/Error.h"
#include "runtime/GpuModule.h"
#include "runtime/NDArray.h"
#include "runtime/PeakFlops.h"
#include "runtime/ThreadPool.h"
#include "runtime/Timer.h"

namespace tessel::cli {

namespace {
std::vector<int64_t> shapeOf(const te::Tensor& t) {
  std::vector<int64_t> shape;
  for (auto& e : t.shape()) shape.push_back(*asConstInt(e));
  return shape;
}

// Largest error relative to the tolerance; <= 1 means every element is within it.
struct Comparison {
  double worstRatio = 0;
  int64_t worstIndex = -1;
  float got = 0, expected = 0;
};
Comparison compare(const float* got, const float* expected, int64_t count, double rtol, double atol) {
  Comparison c;
  for (int64_t i = 0; i < count; ++i) {
    double tolerance = atol + rtol * std::fabs(double(expected[i]));
    double error = std::fabs(double(got[i]) - double(expected[i]));
    double ratio = std::isnan(got[i]) ? INFINITY : error / tolerance;
    if (ratio > c.worstRatio || c.worstIndex < 0) {
      c.worstRatio = ratio;
      c.worstIndex = i;
      c.got = got[i];
      c.expected = expected[i];
    }
  }
  return c;
}

// tessel bench OP --target cuda|opencl: the kernels as a GPU module on the device the runtime
// finds (OpenCL through PoCL on a CPU, or a GPU), checked against the reference, then the
// median of device-timed runs. There is no measured peak to hold a GPU kernel to.
int benchOnGpu(const OperatorCommand& command) {
  const Workload& w = command.spec->workload;
  const Target& target = command.spec->target;
  auto lowered = lower(*command.schedule, w.args(), w.name, target);
  if (!lowered) {
    std::cerr << command.locate(lowered.error()).toString() << "\n";
    return kExitError;
  }
  GpuModuleOptions options;
  for (const te::Tensor& output : w.outputs) options.outputs.push_back(output.name());
  options.flops = w.flops;
  auto module = exportGpuModule(lowered->func, target, options);
  if (!module) {
    std::cerr << module.error().toString() << "\n";
    return kExitError;
  }
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<std::vector<float>> values;
  std::vector<const float*> inputs;
  values.reserve(w.inputs.size());
  try {
    runtime::GpuModuleRunner runner(runtime::GpuModule::parse(*module, w.name + ".tgpu"));
    for (const te::Tensor& input : w.inputs) {
      std::vector<float>& data = values.emplace_back(size_t(runtime::NDArray::empty(shapeOf(input), runtime::DataType::float32()).numElements()));
      for (float& v : data) v = uniform(rng);
      runner.setInput(input.name(), data.data(), data.size() * sizeof(float));
      inputs.push_back(data.data());
    }
    runner.run();
    auto output = runner.getOutput(w.outputs[0].name());
    std::vector<float> expected(size_t(output.numElements()));
    command.spec->reference(inputs, expected.data());
    Comparison check = compare(output.dataAs<float>(), expected.data(), output.numElements(), 1e-3, 1e-3);
    if (check.worstRatio > 1) {
      std::cerr << "tessel bench: " << w.name << " gives wrong results on " << runner.deviceName() << ": element "
                << check.worstIndex << " is " << check.got << ", expected " << check.expected << "\n";
      return kExitMismatch;
    }
    double milliseconds = runner.timeMilliseconds(20);
    std::printf("workload=%s\ntarget=%s\ndevice=%s\nresult=matches reference (worst error %.3g of tolerance)\n",
                w.name.c_str(), target.toString().c_str(), runner.deviceName().c_str(), check.worstRatio);
    std::printf("median_ms=%.4f\ngflops=%.4g\n", milliseconds, w.flops / milliseconds * 1e-6);
    bool tuned = command.tuningRecords && command.tuningRecords->outcome && command.tuningRecords->outcome->tunedKernels;
    std::printf("tuned_kernels=%d\n", tuned ? 1 : 0);
  } catch (const runtime::Error& error) {
    std::cerr << "tessel bench: " << error.what() << "\n";
    return kExitError;
  }
  return kExitOk;
}
}  // namespace

int runBench(const std::vector<std::string>& args) {
  if (!args.empty() && isModelArgument(args[0])) return runModelBench(args);
  OperatorCommand command;
  std::vector<FlagSpec> flags = {
      threadsFlag(),
      {"seconds", "minimum time spent timing", true, "1"},
      {"target", "where the kernel runs: llvm (this CPU, the default), opencl, or \"cuda -arch=sm_90\" (needs that GPU)",
       true, ""}};
  if (auto done = parseOperatorCommand(
          "bench", args, flags,
          "Checks the result against a plain C++ reference, then prints gflops=, peak_gflops= (the\n"
          "machine's float32 FMA peak, measured now; for bf16_matmul its vdpbf16ps peak where the CPU\n"
          "has AVX-512 BF16; for int8_matmul its tdpbusd peak on AMX tiles, else its vpdpbusd one with\n"
          "VNNI) and fraction_of_peak=. tuned_kernels= is 1 when the\n"
          "schedule is the operator's tuning record (--tuning-records), 0 for the default or --schedule.\n"
          "`tessel bench MODEL` (an .onnx file or a module directory) times a whole model instead;\n"
          "see `tessel bench MODEL --help`.\n",
          &command))
    return *done;
  const CommandLine& line = command.line;
  double seconds = std::atof(line.get("seconds").c_str());
  if (!(seconds > 0)) {
    std::cerr << "tessel bench: --seconds must be a positive number\n";
    return kExitError;
  }
  if (command.spec->target.kind != TargetKind::Cpu) return benchOnGpu(command);
  const Workload& w = command.spec->workload;
  auto built = build(*command.schedule, w.args(), w.name);
  if (!built) {
    std::cerr << command.locate(built.error()).toString() << "\n";
    return kExitError;
  }

  // Random inputs in [-1, 1], a fixed seed so runs are comparable.
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<runtime::NDArray> arrays;
  std::vector<const float*> inputs;
  // A bfloat16 input holds the rounded values, a byte input random bytes; the reference reads
  // the same values as floats.
  std::vector<std::vector<float>> roundedInputs;
  roundedInputs.reserve(w.inputs.size());
  bool bfloat16Kernel = false;
  for (auto& input : w.inputs) {
    if (input.dtype() == DataType::uint8() || input.dtype() == DataType::int8()) {
      bool isSigned = input.dtype() == DataType::int8();
      auto array = runtime::NDArray::empty(shapeOf(input), isSigned ? runtime::DataType::int8() : runtime::DataType::uint8());
      auto* bytes = static_cast<uint8_t*>(array.data());
      std::uniform_int_distribution<int> byte(isSigned ? -128 : 0, isSigned ? 127 : 255);
      std::vector<float>& values = roundedInputs.emplace_back(size_t(array.numElements()));
      for (size_t i = 0; i < values.size(); ++i) {
        int value = byte(rng);
        bytes[i] = uint8_t(value);
        values[i] = float(value);
      }
      inputs.push_back(values.data());
      arrays.push_back(array);
      continue;
    }
    if (input.dtype() == DataType::bfloat16()) {
      bfloat16Kernel = true;
      auto array = runtime::NDArray::empty(shapeOf(input), runtime::DataType::bfloat16());
      auto* bits = static_cast<uint16_t*>(array.data());
      std::vector<float>& values = roundedInputs.emplace_back(size_t(array.numElements()));
      for (size_t i = 0; i < values.size(); ++i) {
        bits[i] = runtime::floatToBFloat16(uniform(rng));
        values[i] = runtime::bfloat16ToFloat(bits[i]);
      }
      inputs.push_back(values.data());
      arrays.push_back(array);
      continue;
    }
    auto array = runtime::NDArray::empty(shapeOf(input), runtime::DataType::float32());
    for (float& v : array.values<float>()) v = uniform(rng);
    inputs.push_back(array.dataAs<float>());
    arrays.push_back(array);
  }
  // An int32 output (int8_matmul) is compared as floats; its sums are exact integers.
  const bool integerOutput = w.outputs[0].dtype() == DataType::int32();
  auto output = runtime::NDArray::empty(shapeOf(w.outputs[0]),
                                        integerOutput ? runtime::DataType::int32() : runtime::DataType::float32());
  arrays.push_back(output);
  std::vector<runtime::Value> callArgs(arrays.begin(), arrays.end());
  try {
    built->function.callPacked(callArgs);
  } catch (const std::exception& error) {
    std::cerr << "tessel bench: running " << w.name << " failed: " << error.what() << "\n";
    return kExitError;
  }
  std::vector<float> expected(output.numElements()), got(output.numElements());
  command.spec->reference(inputs, expected.data());
  for (size_t i = 0; i < got.size(); ++i)
    got[i] = integerOutput ? float(output.dataAs<int32_t>()[i]) : output.dataAs<float>()[i];
  Comparison check = compare(got.data(), expected.data(), output.numElements(), 1e-3, 1e-3);
  if (check.worstRatio > 1) {
    std::cerr << "tessel bench: " << w.name << " gives wrong results: element " << check.worstIndex << " is "
              << check.got << ", expected " << check.expected << "\n";
    return kExitMismatch;
  }

  // The kernel and the FMA peak probe run in alternating blocks of at least 0.2 s, and
  // the fraction of peak is the median of the per-block-pair ratios. Measured any other way
  // the two are not comparable here: a shared or virtual machine drifts over seconds, and
  // may run a burst at full speed and then be throttled for the rest of a ~100 ms period.
  constexpr double kBlockSeconds = 0.2;
  auto& pool = runtime::ThreadPool::global();
  // A bfloat16 kernel is held to the vdpbf16ps ceiling where the CPU has one, an int8 kernel
  // to the tdpbusd one on AMX tiles or the vpdpbusd one on VNNI.
  runtime::FmaKernel ceiling = runtime::bestFmaKernel();
  if (bfloat16Kernel && runtime::supportsFmaKernel(runtime::FmaKernel::BFloat16Dot))
    ceiling = runtime::FmaKernel::BFloat16Dot;
  else if (driver::usesIntegerTiles(built->lowered.func))
    ceiling = runtime::FmaKernel::Int8Tile;
  else if (driver::usesIntegerDot(built->lowered.func) && runtime::supportsFmaKernel(runtime::FmaKernel::Int8VNNI))
    ceiling = runtime::FmaKernel::Int8VNNI;
  runtime::PeakProbe probe(pool, ceiling);
  auto kernelBlockGflops = [&] {
    auto blockStart = std::chrono::steady_clock::now();
    double elapsed = 0;
    int64_t calls = 0;
    while (elapsed < kBlockSeconds || calls == 0) {
      built->function.callPacked(callArgs);
      ++calls;
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - blockStart).count();
    }
    return w.flops * double(calls) / elapsed * 1e-9;
  };
  kernelBlockGflops();  // warm-up
  std::vector<double> kernelRates, peakRates, ratios;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (kernelRates.size() < 5 || std::chrono::steady_clock::now() < deadline) {
    double kernelRate = kernelBlockGflops();
    double peakRate = probe.sustainedGflops(kBlockSeconds);
    kernelRates.push_back(kernelRate);
    peakRates.push_back(peakRate);
    ratios.push_back(kernelRate / peakRate);
  }
  double gflops = runtime::median(kernelRates);
  double peak = runtime::median(peakRates);
  std::printf("workload=%s\nthreads=%d\nresult=matches reference (worst error %.3g of tolerance)\n", w.name.c_str(),
              pool.numThreads(), check.worstRatio);
  std::printf("block_pairs=%zu\nmedian_ms=%.4f\ngflops=%.4g\npeak_gflops=%.4g\nfraction_of_peak=%.3g\n", kernelRates.size(),
              w.flops / gflops * 1e-6, gflops, peak, runtime::median(ratios));
  bool tuned = command.tuningRecords && command.tuningRecords->outcome && command.tuningRecords->outcome->tunedKernels;
  std::printf("tuned_kernels=%d\n", tuned ? 1 : 0);
  return kExitOk;
}

}  // namespace tessel::cli
