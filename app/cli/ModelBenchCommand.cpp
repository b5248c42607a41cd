// tessel bench MODEL: the median latency of a whole model (ONNX file or exported module) on
// random inputs, and with --profile where the time goes, operator by operator.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <random>
#include <set>

#include "app/cli/Commands.h"
#include "app/cli/InputFlags.h"
#include "app/cli/ModelCommand.h"
#include "app/cli/TuningRecordsFlag.h"
#include "compiler/driver/MeasureKernel.h"
#include "compiler/driver/ModelProfile.h"
#include "compiler/driver/Roofline.h"
#include "compiler/driver/RunModel.h"
#include "runtime/ThreadPool.h"
#include "runtime/Timer.h"

namespace tessel::cli {

bool isModelArgument(const std::string& argument) {
  std::error_code ignored;
  if (std::filesystem::exists(argument, ignored)) return true;
  std::string extension = std::filesystem::path(argument).extension().string();
  return extension == ".onnx";
}

namespace {

// A model whose control flow is interpreted: its median latency over `repeat` runs after one
// to warm up (which compiles the segments it meets), and what the interpreter did. There is
// no per-kernel profile: the compiled segments change with the values the control flow meets.
int benchInterpreted(const std::string& model, driver::PreparedModel& prepared, int repeat, bool profileAsked) {
  if (Status status = driver::runPrepared(prepared); !status) return reportDiagnostic(status.error());
  std::vector<double> times;
  for (int run = 0; run < std::max(repeat, 1); ++run) {
    auto start = std::chrono::steady_clock::now();
    if (Status status = driver::runPrepared(prepared); !status) return reportDiagnostic(status.error());
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  const driver::InterpretedStatistics& statistics = prepared.interpreted->statistics();
  std::printf("model=%s\nthreads=%d\n", model.c_str(), runtime::ThreadPool::global().numThreads());
  std::printf("load_seconds=%.3f\ncompile_seconds=%.3f\nruns=%zu\n", prepared.loadSeconds, statistics.compileSeconds,
              times.size());
  std::printf("latency_ms=%.4f\nmin_ms=%.4f\n", times[times.size() / 2], times.front());
  std::printf("interpreted=yes\nsegments_compiled=%d\ncontrol_steps_per_run=%lld\n", statistics.segmentCompiles,
              static_cast<long long>(statistics.controlSteps / int64_t(times.size() + 1)));
  if (profileAsked)
    std::printf("\nprofile: not available: the model's control flow is decided while it runs, so it is interpreted "
                "and its compiled segments depend on the values it meets\n");
  return kExitOk;
}

}  // namespace

int runModelBench(const std::vector<std::string>& args) {
  std::vector<FlagSpec> flags = {threadsFlag(),
                                 {"repeat", "timed runs; the median is reported", true, "20"},
                                 {"profile", "print per-operator times and roofline fractions, slowest first", false, ""},
                                 {"save-profile", "write the per-operator profile to FILE as JSON", true, ""},
                                 inputShapeFlag()};
  for (auto& flag : inputFlags()) flags.push_back(flag);
  for (auto& flag : passFlags()) flags.push_back(flag);
  flags.push_back(tuningRecordsFlag());
  ModelCommand command;
  if (auto done = parseModelCommand(
          "bench", "MODEL [options]",
          "Compiles MODEL (an ONNX file; a module directory is loaded as it is), runs it once to warm\n"
          "up, then --repeat times and prints latency_ms= (the median run). Inputs not given with --input or\n"
          "--inputs-dir are random floats (integers and booleans zero).\n"
          "--profile adds each operator's median time and share of the total, slowest first, and its\n"
          "roofline: the fraction of its bound its fastest run reaches, where the bound is the larger of\n"
          "its flops at the measured FMA peak (peak_gflops=) and its least bytes (each input read and\n"
          "output written once) at the measured memory bandwidth (bandwidth_gbps=, DRAM: the standard\n"
          "roofline; an int8 kernel's flops count against the int8 vpdpbusd peak, int8_peak_gops=, or\n"
          "on AMX tiles against the tdpbusd peak, int8_tile_peak_gops=), and\n"
          "which of the two binds (compute or memory). Runs and probes alike count their\n"
          "fastest (a busy machine only slows them down). A kernel whose data stays in cache can pass\n"
          "100%; '-' when a module directory does not say how many flops a kernel does.\n"
          "--save-profile FILE writes the profile as JSON; saved as MODEL.profile.json beside the model,\n"
          "Tessel Studio finds it (the Tuning view's Share column, View > Colour Graph by > Share of Model Time).\n"
          "tuned_kernels= counts the kernels that replayed a tuning record (--tuning-records); the\n"
          "profile marks them.\n",
          args, flags, &command))
    return *done;
  const CommandLine& line = command.line;
  // Threads first: the target compiled for (and matched against tuning records) counts them.
  if (auto error = applyThreads(line)) return reportUsageError("bench", *error);
  driver::LoadOptions load;
  driver::RunRequest request;
  request.model = command.model;
  int64_t repeat = 0;
  for (auto error : {readInputShapes(line, &load), readPassOptions(line, &request.compile),
                     line.getInt("repeat", &repeat)})
    if (error) return reportUsageError("bench", *error);
  request.inputShapes = load.inputShapes;
  if (line.has("tuning-records") && driver::isModuleDirectory(command.model))
    return reportUsageError("bench", "--tuning-records applies while compiling; " + command.model +
                                         " is a module that was compiled already");
  auto records = readTuningRecordsFlag(line, &request.compile);
  if (!records) return reportDiagnostic(records.error());
  std::optional<Diagnostic> unreadable;
  if (auto error = readInputFlags(line, &request, &unreadable)) {
    if (unreadable) return reportDiagnostic(*unreadable);
    return reportUsageError("bench", *error);
  }

  std::mt19937 rng(42);
  auto prepared = driver::prepareWithInputs(
      request, [&](const runtime::GraphTensor& tensor) { return driver::timingInput(tensor, rng); });
  if (!prepared) return reportDiagnostic(prepared.error());
  if (*records && prepared->compiled) reportTuningRecords(**records, *prepared->compiled);

  if (prepared->interpreted) return benchInterpreted(command.model, *prepared, int(repeat), line.has("profile"));

  driver::ProfileOptions options;
  options.minRuns = options.maxRuns = int(repeat);
  options.minSeconds = 0;
  auto profile = driver::profileExecutor(*prepared->executor, options);
  if (!profile) return reportDiagnostic(profile.error());
  profile->model = command.model;
  // A module directory was compiled elsewhere: whether its kernels were tuned is not known here.
  if (prepared->compiled) profile->tunedKernels = tunedKernelCount(*prepared->compiled);
  std::printf("model=%s\nthreads=%d\n", command.model.c_str(), profile->threads);
  std::printf("load_seconds=%.3f\ncompile_seconds=%.3f\nruns=%d\n", prepared->loadSeconds, prepared->compileSeconds,
              profile->runs);
  std::printf("latency_ms=%.4f\nmin_ms=%.4f\n", profile->latencyMs, profile->minMs);
  if (prepared->compiled) std::printf("tuned_kernels=%d\n", profile->tunedKernels);
  if (line.has("profile") || line.has("save-profile")) {
    // After the runs, so the probes' arrays never share the caches with the model.
    driver::MachineRoof roof{driver::machinePeakGflops(profile->threads), driver::machineBandwidthGBps(profile->threads)};
    const auto& kernels = prepared->compiled ? prepared->compiled->kernels : std::vector<driver::CompiledKernel>{};
    // The int8 ceiling only when some kernel runs int8 dot products (it takes another 0.2 s).
    if (std::any_of(kernels.begin(), kernels.end(),
                    [](const auto& k) { return k.function.defined() && driver::usesIntegerDot(k.function); }))
      roof.int8PeakGops = driver::machineInt8PeakGops(profile->threads);
    if (std::any_of(kernels.begin(), kernels.end(),
                    [](const auto& k) { return k.function.defined() && driver::usesIntegerTiles(k.function); }))
      roof.int8TilePeakGops = driver::machineInt8TilePeakGops(profile->threads);
    driver::addRooflines(*profile, kernels, roof);
    std::printf("peak_gflops=%.1f\nbandwidth_gbps=%.1f\n", roof.peakGflops, roof.bandwidthGBps);
    if (roof.int8PeakGops > 0) std::printf("int8_peak_gops=%.1f\n", roof.int8PeakGops);
    if (roof.int8TilePeakGops > 0) std::printf("int8_tile_peak_gops=%.1f\n", roof.int8TilePeakGops);
  }
  if (line.has("save-profile")) {
    std::string path = line.get("save-profile");
    if (Status saved = driver::writeModelProfile(*profile, path); !saved) return reportDiagnostic(saved.error());
    std::printf("profile_file=%s\n", path.c_str());
  }
  if (!line.has("profile")) return kExitOk;

  std::set<std::string> tunedKernels;
  if (prepared->compiled)
    for (const driver::CompiledKernel& kernel : prepared->compiled->kernels)
      if (kernel.tuned) tunedKernels.insert(kernel.name);
  std::vector<driver::ProfiledNode> rows = profile->nodes;
  double total = profile->nodeSumMs();
  std::stable_sort(rows.begin(), rows.end(), [](const driver::ProfiledNode& a, const driver::ProfiledNode& b) {
    return a.milliseconds > b.milliseconds;
  });
  std::printf("\nprofile (median per operator over %d runs, slowest first; sum %.4f ms)\n", profile->runs, total);
  // The roofline columns go before "tuned", so a row still reads "ms share% ... yes node kernel".
  std::printf("%10s %7s  %-7s %8s  %-5s  %-32s %s\n", "ms", "share", "bound", "roofline", "tuned", "node", "kernel");
  for (const driver::ProfiledNode& row : rows) {
    auto bound = driver::rooflineBound(row, profile->roof);
    char fraction[32] = "-";
    if (row.rooflineFraction) std::snprintf(fraction, sizeof fraction, "%.1f%%", 100.0 * *row.rooflineFraction);
    std::printf("%10.4f %6.1f%%  %-7s %8s  %-5s  %-32s %s\n", row.milliseconds,
                total > 0 ? 100.0 * row.milliseconds / total : 0.0, bound ? toString(bound->limit) : "-", fraction,
                tunedKernels.count(row.kernel) ? "yes" : "", row.node.c_str(), row.kernel.c_str());
  }
  return kExitOk;
}

}  // namespace tessel::cli
