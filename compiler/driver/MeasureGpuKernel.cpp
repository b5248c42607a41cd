// measureKernelOnGpu: `tessel measure --target opencl|cuda`, timed on the device the runtime
// finds. Apart from measureKernel's CPU timing since it needs the GPU module export and the
// device runtime, and has no peak to state the result against.
#include <algorithm>
#include <chrono>

#include "compiler/driver/MeasureKernel.h"
#include "compiler/export/GpuModuleExport.h"
#include "compiler/lower/Lower.h"
#include "runtime/Error.h"
#include "runtime/GpuModule.h"
#include "runtime/Timer.h"

namespace tessel::driver {

Expected<Measurement> measureKernelOnGpu(const Workload& workload, const Schedule& schedule, const Target& target,
                                         const MeasureOptions& options) {
  if (target.kind == TargetKind::Cpu) return measureKernel(workload, schedule, options);
  auto lowered = lower(schedule, workload.args(), workload.name, target);
  if (!lowered) return lowered.error();
  GpuModuleOptions moduleOptions;
  for (const te::Tensor& output : workload.outputs) moduleOptions.outputs.push_back(output.name());
  moduleOptions.flops = workload.flops;
  auto module = exportGpuModule(lowered->func, target, moduleOptions);
  if (!module) return module.error();
  auto arguments = kernelArguments(workload, options.seed);
  if (!arguments) return arguments.error();
  auto isCancelled = [&] { return options.cancelled && options.cancelled(); };

  Measurement m;
  m.kernelName = workload.name;
  m.flops = workload.flops;
  m.threads = 0;
  std::vector<double> samples;
  try {
    runtime::GpuModuleRunner runner(runtime::GpuModule::parse(*module, workload.name + ".tgpu"));
    m.device = runner.deviceName();
    const std::vector<te::Tensor> args = workload.args();
    for (size_t i = 0; i < workload.inputs.size(); ++i) runner.setInput(args[i].name(), (*arguments)[i].asArray());
    for (int call = 0; call < options.warmupCalls; ++call) runner.run();
    const int minSamples = std::max(1, options.minRepeats), maxSamples = std::max(minSamples, options.maxRepeats);
    double total = 0;
    while (int(samples.size()) < maxSamples && (int(samples.size()) < minSamples || total < options.minSeconds * 1e3)) {
      if (isCancelled()) return Diagnostic{"measuring " + workload.name + " was cancelled", workload.name, 0, 0, ""};
      samples.push_back(runner.timedRunMilliseconds());
      total += samples.back();
      if (options.progress) {
        double byCount = double(samples.size()) / minSamples;
        double byTime = options.minSeconds > 0 ? total / (options.minSeconds * 1e3) : 1.0;
        options.progress(int(100 * std::min(1.0, std::min(byCount, byTime))));
      }
    }
  } catch (const runtime::Error& error) {
    return Diagnostic{"running " + workload.name + " on " + target.toString() + " failed: " + error.what(), workload.name,
                      0, 0, "an OpenCL target needs an OpenCL platform (PoCL runs one on the CPU); CUDA needs a GPU and its driver"};
  }
  if (options.progress) options.progress(100);
  m.samples = int(samples.size());
  m.medianMilliseconds = runtime::median(samples);
  m.minMilliseconds = *std::min_element(samples.begin(), samples.end());
  m.maxMilliseconds = *std::max_element(samples.begin(), samples.end());
  m.gflops = m.medianMilliseconds > 0 ? workload.flops / (m.medianMilliseconds * 1e-3) * 1e-9 : 0;
  return m;
}

}  // namespace tessel::driver
