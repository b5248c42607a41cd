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

int runModelBench(const std::vector<std::string>& args) {
  std::vector<FlagSpec> flags = {threadsFlag(),
                                 {"repeat", "timed runs; the median is reported", true, "20"},
                                 {"profile", "print per-operator times, slowest first", false, ""},
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
          "--profile adds each operator's median time and share of the total, slowest first.\n"
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
  runtime::GraphExecutor& executor = *prepared->executor;

  // One untimed run: first-touch page faults, thread pool start-up, caches.
  executor.run();
  std::vector<double> latencies;
  std::map<size_t, std::vector<double>> nodeMilliseconds;  // by node position
  for (int64_t i = 0; i < repeat; ++i) {
    auto start = std::chrono::steady_clock::now();
    executor.run();
    latencies.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    const auto& timings = executor.nodeTimings();
    for (size_t node = 0; node < timings.size(); ++node) nodeMilliseconds[node].push_back(timings[node].milliseconds);
  }
  std::printf("model=%s\nthreads=%d\n", command.model.c_str(), runtime::ThreadPool::global().numThreads());
  std::printf("load_seconds=%.3f\ncompile_seconds=%.3f\nruns=%lld\n", prepared->loadSeconds, prepared->compileSeconds,
              (long long)repeat);
  std::printf("latency_ms=%.4f\nmin_ms=%.4f\n", runtime::median(latencies),
              *std::min_element(latencies.begin(), latencies.end()));
  // A module directory was compiled elsewhere: whether its kernels were tuned is not known here.
  if (prepared->compiled) std::printf("tuned_kernels=%d\n", tunedKernelCount(*prepared->compiled));
  if (!line.has("profile")) return kExitOk;

  std::set<std::string> tunedKernels;
  if (prepared->compiled)
    for (const driver::CompiledKernel& kernel : prepared->compiled->kernels)
      if (kernel.tuned) tunedKernels.insert(kernel.name);
  struct Row {
    std::string node, kernel;
    double milliseconds;
  };
  std::vector<Row> rows;
  double total = 0;
  const auto& timings = executor.nodeTimings();
  for (auto& [node, samples] : nodeMilliseconds) {
    rows.push_back({timings[node].node, timings[node].kernel, runtime::median(samples)});
    total += rows.back().milliseconds;
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.milliseconds > b.milliseconds; });
  std::printf("\nprofile (median per operator over %lld runs, slowest first; sum %.4f ms)\n", (long long)repeat, total);
  std::printf("%10s %7s  %-5s  %-32s %s\n", "ms", "share", "tuned", "node", "kernel");
  for (const Row& row : rows)
    std::printf("%10.4f %6.1f%%  %-5s  %-32s %s\n", row.milliseconds, total > 0 ? 100.0 * row.milliseconds / total : 0.0,
                tunedKernels.count(row.kernel) ? "yes" : "", row.node.c_str(), row.kernel.c_str());
  return kExitOk;
}

}  // namespace tessel::cli
