// Measuring one operator under one schedule: JIT build, reproducible inputs, timed samples.
#include "compiler/driver/MeasureKernel.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>

#include "compiler/driver/Roofline.h"
#include "compiler/export/GpuModuleExport.h"
#include "compiler/lower/Build.h"
#include "runtime/BFloat16.h"
#include "runtime/Error.h"
#include "runtime/GpuModule.h"
#include "runtime/NDArray.h"
#include "runtime/PeakBandwidth.h"
#include "runtime/PeakFlops.h"
#include "runtime/ThreadPool.h"
#include "runtime/Timer.h"

namespace tessel::driver {

namespace {

// Calls shorter than this are batched into one sample (clock resolution and call overhead).
constexpr double kMinSampleSeconds = 1e-4;

Expected<std::vector<int64_t>> constantShape(const te::Tensor& tensor, const std::string& kernel) {
  std::vector<int64_t> shape;
  for (const Expr& extent : tensor.shape()) {
    const int64_t* value = asConstInt(extent);
    if (!value)
      return Diagnostic{"cannot measure " + kernel + ": tensor '" + tensor.name() + "' has a symbolic shape", kernel,
                        0, 0, "give every input a concrete shape before measuring"};
    shape.push_back(*value);
  }
  return shape;
}

// Floats uniform in [-1, 1) from `rng`; every other type zero (a valid index, count or flag
// for whatever operator reads it).
void fillReproducibly(runtime::NDArray& array, std::mt19937& rng) {
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  runtime::DataType dtype = array.dtype();
  if (dtype == runtime::DataType::float32()) {
    for (float& v : array.values<float>()) v = float(uniform(rng));
  } else if (dtype == runtime::DataType::float64()) {
    for (double& v : array.values<double>()) v = uniform(rng);
  } else if (dtype == runtime::DataType::bfloat16()) {
    auto* bits = static_cast<uint16_t*>(array.data());
    for (int64_t i = 0; i < array.numElements(); ++i) bits[i] = runtime::floatToBFloat16(float(uniform(rng)));
  } else {
    std::memset(array.data(), 0, size_t(array.byteSize()));
  }
}

struct PeakCache {
  std::mutex mutex;
  std::map<int, double> gflopsByThreads;
  std::map<int, double> bandwidthByThreads;
  std::map<int, double> int8GopsByThreads;
  std::map<int, double> int8TileGopsByThreads;
  std::map<int, double> bfloat16GflopsByThreads;
};
PeakCache& peakCache() {
  static PeakCache cache;
  return cache;
}

Diagnostic cancelledDiagnostic(const std::string& kernel) {
  return Diagnostic{"measuring " + kernel + " was cancelled", kernel, 0, 0, ""};
}

/// `measure(threads)` the first time a thread count is asked for, the cached value after.
double measuredOnce(std::map<int, double> PeakCache::*byThreads, int threads, double (*measure)(int)) {
  if (threads <= 0) threads = runtime::ThreadPool::global().numThreads();
  PeakCache& cache = peakCache();
  {
    std::lock_guard lock(cache.mutex);
    auto found = (cache.*byThreads).find(threads);
    if (found != (cache.*byThreads).end()) return found->second;
  }
  // Measured outside the lock (0.2 s); two threads racing measure twice and keep the higher.
  double measured = measure(threads);
  std::lock_guard lock(cache.mutex);
  double& cached = (cache.*byThreads)[threads];
  cached = std::max(cached, measured);
  return cached;
}

}  // namespace

double machinePeakGflops(int threads) {
  return measuredOnce(&PeakCache::gflopsByThreads, threads,
                      [](int count) { return runtime::measurePeakGflops(count); });
}

double machineInt8PeakGops(int threads) {
  if (!runtime::supportsFmaKernel(runtime::FmaKernel::Int8VNNI)) return 0;
  return measuredOnce(&PeakCache::int8GopsByThreads, threads,
                      [](int count) { return runtime::measurePeakGflops(count, runtime::FmaKernel::Int8VNNI); });
}

double machineInt8TilePeakGops(int threads) {
  if (!runtime::supportsFmaKernel(runtime::FmaKernel::Int8Tile)) return 0;
  return measuredOnce(&PeakCache::int8TileGopsByThreads, threads,
                      [](int count) { return runtime::measurePeakGflops(count, runtime::FmaKernel::Int8Tile); });
}

double machineBFloat16PeakGflops(int threads) {
  if (!runtime::supportsFmaKernel(runtime::FmaKernel::BFloat16Dot)) return 0;
  return measuredOnce(&PeakCache::bfloat16GflopsByThreads, threads,
                      [](int count) { return runtime::measurePeakGflops(count, runtime::FmaKernel::BFloat16Dot); });
}

double machineBandwidthGBps(int threads) {
  return measuredOnce(&PeakCache::bandwidthByThreads, threads, runtime::measureMemoryBandwidthGBps);
}

double machinePeakGflopsReaching(int threads, double observedGflops) {
  if (threads <= 0) threads = runtime::ThreadPool::global().numThreads();
  double peak = machinePeakGflops(threads);
  if (observedGflops <= peak) return peak;
  double again = runtime::measurePeakGflops(threads);
  std::lock_guard lock(peakCache().mutex);
  double& cached = peakCache().gflopsByThreads[threads];
  cached = std::max(cached, again);
  return cached;
}

Expected<std::vector<runtime::Value>> kernelArguments(const Workload& workload, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<runtime::Value> arguments;
  for (const te::Tensor& tensor : workload.args()) {
    auto shape = constantShape(tensor, workload.name);
    if (!shape) return shape.error();
    auto array = runtime::NDArray::empty(*shape, toRuntimeType(tensor.dtype()));
    fillReproducibly(array, rng);
    arguments.emplace_back(array);
  }
  return arguments;
}

namespace {

// Writes back and evicts every cache line of `bytes` at `data` (x86 clflush; elsewhere a
// no-op, and measurements there see warm weights).
void evictFromCaches(const void* data, size_t bytes) {
#if defined(__x86_64__) || defined(__i386__)
  const char* begin = static_cast<const char*>(data);
  for (size_t offset = 0; offset < bytes; offset += 64) __builtin_ia32_clflush(begin + offset);
  if (bytes > 0) __builtin_ia32_clflush(begin + bytes - 1);
  __builtin_ia32_mfence();
#else
  (void)data;
  (void)bytes;
#endif
}

// Times each call alone after evicting every argument but the first from the caches.
std::vector<double> sampleWithColdArguments(const BuiltFunction& built, std::vector<runtime::Value>& arguments,
                                            const runtime::TimerOptions& timing) {
  using Clock = std::chrono::steady_clock;
  auto flush = [&] {
    for (size_t i = 1; i < arguments.size(); ++i)
      if (arguments[i].kind() == runtime::Value::Kind::Array) {
        const runtime::NDArray& array = arguments[i].asArray();
        evictFromCaches(array.data(), size_t(array.byteSize()));
      }
  };
  for (int call = 0; call < timing.warmupCalls; ++call) built.function.callPacked(arguments);
  std::vector<double> samples;
  double total = 0;
  while (int(samples.size()) < timing.maxSamples &&
         (int(samples.size()) < timing.minSamples || total < timing.minTotalSeconds)) {
    flush();
    auto start = Clock::now();
    built.function.callPacked(arguments);
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    samples.push_back(seconds);
    total += seconds;
    if (timing.afterSample && !timing.afterSample(int(samples.size()), total)) break;
  }
  return samples;
}

}  // namespace

namespace {

// The samples of one sampling of `built` on `arguments` (cold or warm, as options say).
std::vector<double> sampleBuiltKernel(const BuiltFunction& built, std::vector<runtime::Value>& arguments,
                                      const runtime::TimerOptions& timing, bool flushCaches) {
  return flushCaches ? sampleWithColdArguments(built, arguments, timing)
                     : runtime::sampleSecondsPerCall([&] { built.function.callPacked(arguments); }, timing);
}

// Sampling as `options` ask, telling options.progress after each sample; `cancelled` is set
// when options.cancelled stopped it.
runtime::TimerOptions timerOptionsFor(const MeasureOptions& options, bool& cancelled) {
  runtime::TimerOptions timing;
  timing.warmupCalls = options.warmupCalls;
  timing.minSamples = std::max(1, options.minRepeats);
  timing.maxSamples = std::max(timing.minSamples, options.maxRepeats);
  timing.minTotalSeconds = options.minSeconds;
  timing.minSampleSeconds = kMinSampleSeconds;
  timing.afterSample = [&options, &cancelled, minSamples = timing.minSamples](int count, double total) {
    if (options.progress) {
      double byCount = double(count) / minSamples;
      double byTime = options.minSeconds > 0 ? total / options.minSeconds : 1.0;
      options.progress(int(100 * std::min(1.0, std::min(byCount, byTime))));
    }
    cancelled = options.cancelled && options.cancelled();
    return !cancelled;
  };
  return timing;
}

Measurement measurementOf(const Workload& workload, const std::vector<double>& samples) {
  Measurement m;
  m.kernelName = workload.name;
  m.samples = int(samples.size());
  m.medianMilliseconds = runtime::median(samples) * 1e3;
  m.minMilliseconds = *std::min_element(samples.begin(), samples.end()) * 1e3;
  m.maxMilliseconds = *std::max_element(samples.begin(), samples.end()) * 1e3;
  m.flops = workload.flops;
  m.threads = runtime::ThreadPool::global().numThreads();
  m.gflops = m.medianMilliseconds > 0 ? workload.flops / (m.medianMilliseconds * 1e-3) * 1e-9 : 0;
  return m;
}

}  // namespace

Expected<Measurement> timeBuiltKernel(const Workload& workload, const BuiltFunction& built,
                                      const MeasureOptions& options) {
  auto isCancelled = [&] { return options.cancelled && options.cancelled(); };
  auto arguments = kernelArguments(workload, options.seed);
  if (!arguments) return arguments.error();
  if (isCancelled()) return cancelledDiagnostic(workload.name);

  bool cancelled = false;
  runtime::TimerOptions timing = timerOptionsFor(options, cancelled);
  std::vector<double> samples;
  try {
    samples = sampleBuiltKernel(built, *arguments, timing, options.flushCaches);
  } catch (const std::exception& error) {
    return Diagnostic{"running " + workload.name + " failed: " + error.what(), workload.name, 0, 0, ""};
  }
  if (cancelled) return cancelledDiagnostic(workload.name);
  // Sampling may stop at maxRepeats before minSeconds: done is done.
  if (options.progress) options.progress(100);
  return measurementOf(workload, samples);
}

std::vector<Expected<Measurement>> timeBuiltKernelsInTurns(const std::vector<KernelToTime>& kernels,
                                                           const MeasureOptions& options, int turns) {
  turns = std::max(1, turns);
  auto isCancelled = [&] { return options.cancelled && options.cancelled(); };
  std::vector<std::optional<Diagnostic>> failures(kernels.size());
  std::vector<std::vector<double>> samples(kernels.size());
  // Candidates of one workload read the same inputs: one set of arguments each, not each.
  std::map<const Workload*, std::vector<runtime::Value>> argumentsOf;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const Workload& workload = *kernels[i].workload;
    if (argumentsOf.count(&workload)) continue;
    auto arguments = kernelArguments(workload, options.seed);
    if (!arguments) {
      for (size_t j = i; j < kernels.size(); ++j)
        if (kernels[j].workload == &workload) failures[j] = arguments.error();
      continue;
    }
    argumentsOf.emplace(&workload, std::move(*arguments));
  }
  runtime::TimerOptions timing;
  timing.warmupCalls = options.warmupCalls;
  timing.minSamples = std::max(1, (std::max(1, options.minRepeats) + turns - 1) / turns);
  timing.maxSamples = std::max(timing.minSamples, (std::max(1, options.maxRepeats) + turns - 1) / turns);
  timing.minTotalSeconds = options.minSeconds / turns;
  timing.minSampleSeconds = kMinSampleSeconds;
  bool cancelled = false;
  timing.afterSample = [&](int, double) { return !(cancelled = cancelled || isCancelled()); };
  for (int turn = 0; turn < turns && !cancelled; ++turn) {
    for (size_t i = 0; i < kernels.size() && !cancelled; ++i) {
      if (failures[i]) continue;
      auto arguments = argumentsOf.find(kernels[i].workload);
      try {
        std::vector<double> taken = sampleBuiltKernel(*kernels[i].built, arguments->second, timing, options.flushCaches);
        samples[i].insert(samples[i].end(), taken.begin(), taken.end());
      } catch (const std::exception& error) {
        failures[i] = Diagnostic{"running " + kernels[i].workload->name + " failed: " + error.what(),
                                 kernels[i].workload->name, 0, 0, ""};
      }
    }
  }
  std::vector<Expected<Measurement>> results;
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (failures[i])
      results.emplace_back(*failures[i]);
    else if (cancelled || samples[i].empty())
      results.emplace_back(cancelledDiagnostic(kernels[i].workload->name));
    else
      results.emplace_back(measurementOf(*kernels[i].workload, samples[i]));
  }
  return results;
}

Expected<Measurement> measureKernel(const Workload& workload, const Schedule& schedule, const MeasureOptions& options) {
  auto built = build(schedule, workload.args(), workload.name);
  if (!built) return built.error();
  auto measured = timeBuiltKernel(workload, *built, options);
  if (!measured) return measured;
  Measurement& m = *measured;
  // A given peak below what the kernel reached was taken at a slow moment: the kernel is at 100 %.
  // A kernel of int8 dot products is held to the int8 ceiling (4x the float one with VNNI),
  // one of bfloat16 dot products to the bfloat16 one (2x).
  double dotPeak = usesIntegerTiles(built->lowered.func)  ? machineInt8TilePeakGops(m.threads)
                   : usesIntegerDot(built->lowered.func)  ? machineInt8PeakGops(m.threads)
                   : usesBFloat16Dot(built->lowered.func) ? machineBFloat16PeakGflops(m.threads)
                                                          : 0;
  m.peakGflops = options.peakGflops > 0 ? std::max(options.peakGflops, m.gflops)
                 : dotPeak > 0          ? std::max(dotPeak, m.gflops)
                                        : machinePeakGflopsReaching(m.threads, m.gflops);
  m.fractionOfPeak = m.peakGflops > 0 ? m.gflops / m.peakGflops : 0;
  return measured;
}

Expected<Measurement> measureKernel(const Workload& workload, const Trace& trace, const MeasureOptions& options) {
  auto schedule = Schedule::replay(workload.outputs, trace);
  if (!schedule) return schedule.error();
  return measureKernel(workload, *schedule, options);
}

Expected<std::string> buildGpuModule(const Workload& workload, const Schedule& schedule, const Target& target) {
  auto lowered = lower(schedule, workload.args(), workload.name, target);
  if (!lowered) return lowered.error();
  GpuModuleOptions moduleOptions;
  for (const te::Tensor& output : workload.outputs) moduleOptions.outputs.push_back(output.name());
  moduleOptions.flops = workload.flops;
  return exportGpuModule(lowered->func, target, moduleOptions);
}

namespace {
Diagnostic deviceFailure(const Workload& workload, const Target& target, const char* what) {
  return Diagnostic{"running " + workload.name + " on " + target.toString() + " failed: " + what, workload.name, 0, 0,
                    "an OpenCL target needs an OpenCL platform (PoCL runs one on the CPU); CUDA needs a GPU and its "
                    "driver"};
}
}  // namespace

Expected<std::shared_ptr<runtime::GpuModuleRunner>> makeGpuModuleRunner(const Workload& workload,
                                                                        const std::string& moduleText,
                                                                        const Target& target, unsigned seed) {
  auto arguments = kernelArguments(workload, seed);
  if (!arguments) return arguments.error();
  try {
    auto runner =
        std::make_shared<runtime::GpuModuleRunner>(runtime::GpuModule::parse(moduleText, workload.name + ".tgpu"));
    const std::vector<te::Tensor> args = workload.args();
    for (size_t i = 0; i < workload.inputs.size(); ++i) runner->setInput(args[i].name(), (*arguments)[i].asArray());
    return runner;
  } catch (const runtime::Error& error) {
    return deviceFailure(workload, target, error.what());
  }
}

Expected<std::vector<runtime::NDArray>> runGpuRunnerOnce(const Workload& workload, runtime::GpuModuleRunner& runner,
                                                         const Target& target) {
  try {
    runner.run();
    std::vector<runtime::NDArray> outputs;
    for (const te::Tensor& output : workload.outputs) outputs.push_back(runner.getOutput(output.name()));
    return outputs;
  } catch (const runtime::Error& error) {
    return deviceFailure(workload, target, error.what());
  }
}

Expected<Measurement> timeGpuRunner(const Workload& workload, runtime::GpuModuleRunner& runner, const Target& target,
                                    const MeasureOptions& options) {
  bool cancelled = false;
  runtime::TimerOptions timing = timerOptionsFor(options, cancelled);
  std::vector<double> samples;
  std::string device;
  try {
    device = runner.deviceName();
    samples = runtime::sampleTimedCalls([&] { return runner.timedRunMilliseconds() * 1e-3; }, timing);
  } catch (const runtime::Error& error) {
    return deviceFailure(workload, target, error.what());
  }
  if (cancelled) return cancelledDiagnostic(workload.name);
  if (options.progress) options.progress(100);
  Measurement m = measurementOf(workload, samples);
  m.threads = 0;
  m.device = device;
  return m;
}

Expected<Measurement> timeGpuModule(const Workload& workload, const std::string& moduleText, const Target& target,
                                    const MeasureOptions& options) {
  auto runner = makeGpuModuleRunner(workload, moduleText, target, options.seed);
  if (!runner) return runner.error();
  return timeGpuRunner(workload, **runner, target, options);
}

Expected<std::vector<runtime::NDArray>> runGpuModuleOnce(const Workload& workload, const std::string& moduleText,
                                                         const Target& target, unsigned seed) {
  auto runner = makeGpuModuleRunner(workload, moduleText, target, seed);
  if (!runner) return runner.error();
  return runGpuRunnerOnce(workload, **runner, target);
}

// A GPU target: the kernels exported as a GPU module and run on the device the runtime finds,
// each sample one run timed by the device. No measured peak for a device: the peak fields stay 0.
Expected<Measurement> measureKernelOnGpu(const Workload& workload, const Schedule& schedule, const Target& target,
                                         const MeasureOptions& options) {
  if (target.kind == TargetKind::Cpu) return measureKernel(workload, schedule, options);
  auto module = buildGpuModule(workload, schedule, target);
  if (!module) return module.error();
  return timeGpuModule(workload, *module, target, options);
}

}  // namespace tessel::driver
