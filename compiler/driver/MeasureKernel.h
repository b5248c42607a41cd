// Measuring one operator under one schedule: latency, GFLOP/s and the fraction of machine peak.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler/ops/Workload.h"
#include "compiler/schedule/Schedule.h"
#include "runtime/Value.h"

namespace tessel::runtime {
class GpuModuleRunner;
}

namespace tessel {
struct BuiltFunction;  // compiler/lower/Build.h
}  // namespace tessel

namespace tessel::driver {

/// How long and how carefully to time a kernel.
struct MeasureOptions {
  /// Untimed calls first (page faults, caches, CPU frequency ramp-up, thread pool start).
  int warmupCalls = 1;
  /// Take at least this many timed samples...
  int minRepeats = 10;
  /// ...and keep sampling until they add up to at least this long...
  double minSeconds = 0.2;
  /// ...but never take more than this many.
  int maxRepeats = 2000;
  /// Seed of the random inputs: the same seed fills the same values, so two variants of a
  /// schedule are timed on identical data.
  unsigned seed = 42;
  /// Asked between calls; returning true stops the measurement (it then fails with a
  /// Diagnostic saying it was cancelled).
  std::function<bool()> cancelled;
  /// Told the percentage done (0-100) after every sample.
  std::function<void(int percent)> progress;
  /// Before each timed call, evict every argument but the first from the CPU caches (untimed),
  /// and time each call alone. In a model a layer's weights come from memory, since the whole
  /// network's weights do not fit in cache, while back-to-back calls of one kernel find them
  /// cached: without this, a schedule that is fast only on cached weights looks best (TVM's
  /// LocalRunner has the same option, enable_cpu_cache_flush, for the same reason). The first
  /// argument, the activations, usually comes warm from the layer before.
  bool flushCaches = false;
  /// The machine's peak to state the result against, in GFLOP/s; 0: machinePeakGflops()
  /// for the threads used. Measurements taken in separate processes (the Studio measures each
  /// variant in a child) pass one peak so their fractions compare: each process measuring
  /// its own would put a different, noisy peak under every variant.
  double peakGflops = 0;
};

/// What one measurement found. A sample is one timed batch of calls divided by its size
/// (calls shorter than 0.1 ms are batched, because a single microsecond call is dominated by
/// the clock's resolution).
struct Measurement {
  std::string kernelName;
  double medianMilliseconds = 0;  ///< Median over the samples: robust to a preempted sample.
  double minMilliseconds = 0;     ///< The fastest sample: what the kernel can do undisturbed.
  double maxMilliseconds = 0;     ///< The slowest sample: how noisy the machine was.
  int samples = 0;
  double flops = 0;         ///< Floating-point operations per call (the workload's count).
  double gflops = 0;        ///< flops / median latency, in 10^9 per second.
  /// The machine's peak with `threads` threads: machinePeakGflops, or machineInt8PeakGops
  /// for a kernel of int8 dot products (usesIntegerDot), machineInt8TilePeakGops for one on
  /// AMX tiles (usesIntegerTiles), or machineBFloat16PeakGflops for one
  /// of bfloat16 dot products (usesBFloat16Dot).
  double peakGflops = 0;
  double fractionOfPeak = 0;  ///< gflops / peakGflops.
  int threads = 1;          ///< Threads the runtime's parallel loops used.
  /// Where it ran, for a GPU target ("pthread-cpu" for PoCL, the GPU's name); empty on the host.
  std::string device;
};

/// JIT-builds `workload` under `schedule` for the host, fills its inputs with deterministic
/// random data (floats uniform in [-1, 1); integers and booleans zero, a valid index and
/// shape value for every operator), and times it: options.warmupCalls untimed calls, then
/// samples until both options.minRepeats and options.minSeconds are reached. A schedule that
/// does not lower or build, or a kernel that fails at run time, is a Diagnostic naming the
/// kernel.
Expected<Measurement> measureKernel(const Workload& workload, const Schedule& schedule,
                                    const MeasureOptions& options = {});

/// The same after replaying `trace` on the workload's outputs (a schedule edited as text);
/// a trace that does not replay is its Diagnostic, with the primitive's line and column.
Expected<Measurement> measureKernel(const Workload& workload, const Trace& trace, const MeasureOptions& options = {});

/// measureKernel for a GPU target (OpenCL, CUDA): lowers `schedule` for `target`, exports the
/// kernels as a GPU module and runs it on the device the runtime finds (OpenCL through PoCL on
/// a CPU, or a GPU) with measureKernel's inputs: options.warmupCalls untimed runs, then
/// device-timed runs until options.minRepeats and options.minSeconds are reached. There is no
/// measured peak for a device: peakGflops and fractionOfPeak stay 0, threads is 0. A schedule
/// that does not lower for the GPU, or a device that is missing or fails, is a Diagnostic. A
/// CPU target is measureKernel.
Expected<Measurement> measureKernelOnGpu(const Workload& workload, const Schedule& schedule, const Target& target,
                                         const MeasureOptions& options = {});

/// The GPU module (.tgpu text) of `workload` under `schedule` for `target` (OpenCL or CUDA):
/// lowered for the target and exported with the workload's outputs and flops. A schedule that
/// does not lower for the GPU (or CUDA source NVRTC refuses) is a Diagnostic.
Expected<std::string> buildGpuModule(const Workload& workload, const Schedule& schedule, const Target& target);

/// Times a GPU module of `workload` (buildGpuModule) as measureKernelOnGpu does, on
/// kernelArguments(workload, options.seed); a missing or failing device is a Diagnostic.
Expected<Measurement> timeGpuModule(const Workload& workload, const std::string& moduleText, const Target& target,
                                    const MeasureOptions& options = {});

/// One run of a GPU module of `workload` on kernelArguments(workload, seed): its outputs, in
/// workload.outputs order (for checking a candidate against the default schedule).
Expected<std::vector<runtime::NDArray>> runGpuModuleOnce(const Workload& workload, const std::string& moduleText,
                                                         const Target& target, unsigned seed);

/// The same in steps, so that one runner (one device program: PoCL compiles it, taking most of
/// a small kernel's measurement) serves both a check and the timing: a runner of the module on
/// the device, with the inputs of kernelArguments(workload, seed) set; ...
Expected<std::shared_ptr<runtime::GpuModuleRunner>> makeGpuModuleRunner(const Workload& workload,
                                                                        const std::string& moduleText,
                                                                        const Target& target, unsigned seed);
/// ... one run, its outputs; ...
Expected<std::vector<runtime::NDArray>> runGpuRunnerOnce(const Workload& workload, runtime::GpuModuleRunner& runner,
                                                         const Target& target);
/// ... and timing as timeGpuModule does.
Expected<Measurement> timeGpuRunner(const Workload& workload, runtime::GpuModuleRunner& runner, const Target& target,
                                    const MeasureOptions& options = {});

/// The arguments measureKernel calls `workload` with for `seed`: one NDArray per tensor of
/// workload.args() (inputs, then outputs), filled as measureKernel describes. Two calls with
/// the same seed give identical values, so two schedules of one workload can be compared
/// output by output. A symbolic shape is a Diagnostic.
Expected<std::vector<runtime::Value>> kernelArguments(const Workload& workload, unsigned seed);

/// Times `built` (workload built under some schedule) as measureKernel does, on
/// kernelArguments(workload, options.seed). The peak fields are left 0: stating the result
/// against the machine's peak is measureKernel's business, and a caller timing hundreds of
/// candidates in one process does not need it. A kernel that fails at run time is a
/// Diagnostic.
Expected<Measurement> timeBuiltKernel(const Workload& workload, const BuiltFunction& built,
                                      const MeasureOptions& options = {});

/// One built kernel for timeBuiltKernelsInTurns: the workload and what it was built to.
struct KernelToTime {
  const Workload* workload = nullptr;
  const BuiltFunction* built = nullptr;
};

/// Times several kernels (candidate schedules, typically of one workload) so that they can be
/// compared on a machine whose speed drifts: instead of one after the other, in `turns` rounds
/// that give every kernel 1/turns of options.minSeconds, options.minRepeats and
/// options.maxRepeats (at least one sample) each, so every kernel's samples spread over the
/// whole measurement and a slow spell of the machine lands on all of them alike. On a shared
/// 2-core VM the median of a loop's 50 ms window differed by 4% (the median case) from the
/// window half a second before and by 15% from the adjacent one in one pair of ten: more than
/// a tuning round's candidates differ. Each turn starts with options.warmupCalls untimed calls (the kernel before
/// evicted its data). Kernels of one workload and seed share their arguments. One result per
/// kernel, in order: its samples from every turn, or the Diagnostic of its first failing call
/// (it is then left out of later turns). turns < 1 counts as 1; cancelling fails the rest.
std::vector<Expected<Measurement>> timeBuiltKernelsInTurns(const std::vector<KernelToTime>& kernels,
                                                           const MeasureOptions& options, int turns);

/// Peak float32 GFLOP/s of this machine with `threads` threads (0 or less: the runtime's
/// thread count): not a data-sheet estimate but a measurement. Every thread runs the widest
/// FMA loop the CPU supports (AVX-512, AVX2 or scalar, chosen at run time) on registers only,
/// and the fastest of many short samples counts (interference only ever slows a sample down),
/// so it is the vector width x FMA units x clock x threads this machine really sustains,
/// turbo and throttling included. Measured once per thread count (about 0.2 s) and cached
/// for the life of the process; thread-safe.
double machinePeakGflops(int threads = 0);

/// The int8 ceiling the same way: vpdpbusd multiply-adds (two operations each) in GOP/s;
/// 0 on a CPU without AVX-512 VNNI.
double machineInt8PeakGops(int threads = 0);

/// The AMX int8 ceiling the same way: tdpbusd multiply-adds (two operations each) in GOP/s;
/// 0 on a CPU without AMX, or whose kernel does not let the process use the tiles.
double machineInt8TilePeakGops(int threads = 0);

/// The bfloat16 ceiling the same way: vdpbf16ps multiply-adds (two operations each) in
/// GFLOP/s; 0 on a CPU without AVX-512 BF16 (where a bfloat16 dot runs as float32 arithmetic,
/// under machinePeakGflops).
double machineBFloat16PeakGflops(int threads = 0);

/// machinePeakGflops, unless a kernel just ran at `observedGflops` above it: the cached peak
/// was then taken during a busy moment, so it is measured again and the higher value kept
/// (and returned). What a caller stating measurements against the peak uses.
double machinePeakGflopsReaching(int threads, double observedGflops);

/// Memory (DRAM) bandwidth of this machine in GB/s with `threads` threads (0 or less: the
/// runtime's thread count), read and write together: runtime::measureMemoryBandwidthGBps,
/// measured once per thread count (about 0.2 s) and cached for the life of the process;
/// thread-safe. With machinePeakGflops, the two ceilings of the roofline.
double machineBandwidthGBps(int threads = 0);

}  // namespace tessel::driver
