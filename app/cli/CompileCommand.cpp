// tessel compile MODEL -o DIR: compiles a model and writes a deployable module directory,
// then summarizes what the compiler made of it.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "app/cli/Commands.h"
#include "app/cli/CompileTimeReport.h"
#include "app/cli/ModelCommand.h"
#include "app/cli/QuantizeModel.h"
#include "app/cli/TuningRecordsFlag.h"
#include "compiler/driver/GpuModel.h"

namespace tessel::cli {

namespace {
// tessel compile MODEL --target cuda|opencl -o FILE.tgpu: the whole model as one GPU module.
int compileForGpu(const ModelCommand& command, const driver::LoadOptions& load, const Target& target,
                  const std::optional<QuantizedModel>& quantized) {
  auto start = std::chrono::steady_clock::now();
  auto graph = quantized ? driver::loadModelBytes(quantized->bytes, command.model, load) : driver::loadModel(command.model, load);
  if (!graph) return reportDiagnostic(graph.error());
  auto compiled = driver::compileModelForGpu(*graph, target);
  if (!compiled) return reportDiagnostic(compiled.error());
  std::string path = command.line.get("output");
  std::ofstream file(path, std::ios::binary);
  file << compiled->moduleJson;
  if (!file.flush()) {
    std::cerr << "tessel compile: cannot write " << path << "\n";
    return kExitError;
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("model=%s\noutput=%s\ntarget=%s\n", command.model.c_str(), path.c_str(), target.toString().c_str());
  std::printf("operations=%zu\nkernels=%zu\ngeneric_schedules=%zu\ncompile_seconds=%.2f\n", compiled->operations,
              compiled->kernels, compiled->genericSchedules, seconds);
  return kExitOk;
}
}  // namespace

int runCompile(const std::vector<std::string>& args) {
  std::vector<FlagSpec> flags = {{"output", "directory to write the module to (kernels.so, graph.json, params.bin)", true,
                                  "", false, "o"},
                                 inputShapeFlag()};
  for (auto& flag : passFlags()) flags.push_back(flag);
  flags.push_back(threadsFlag());
  flags.push_back(tuningRecordsFlag());
  flags.push_back({"time-report",
                   "after the summary, print where the time went: import, type inference, each pass, each lowering "
                   "step and code generation phase summed over kernels, and the 5 slowest kernels (each kernel then "
                   "compiles as an LLVM module of its own, which costs 10-20% more CPU)",
                   false, ""});
  flags.push_back({"quantize", "int8: quantize the convolutions and dense layers first, as `tessel quantize` does (needs --calibration)",
                   true, ""});
  for (auto& flag : quantizeFlags()) flags.push_back(flag);
  flags.push_back({"target",
                   "where the model runs: llvm (this CPU, the default), opencl or \"cuda -arch=sm_90\"; for a GPU, -o "
                   "names the .tgpu file to write (for tessel-deploy-run --gpu-module)",
                   true, ""});
  ModelCommand command;
  if (auto done = parseModelCommand(
          "compile", "MODEL -o DIR [options]",
          "Imports MODEL (ONNX), runs the graph passes, compiles one kernel per (fused) operation, plans\n"
          "memory and writes a module that `tessel run DIR` and tessel-deploy-run load. Prints kernels=,\n"
          "tuned_kernels=, fused_ops=, planned_memory_bytes=, naive_memory_bytes= and compile_seconds=.\n"
          "With --tuning-records, how many kernels the records tuned (and what they skipped) goes to stderr.\n"
          "With --time-report, a table of where the compile's time went follows the summary.\n"
          "With --quantize int8 --calibration DATA, the model is quantized in memory first (the QDQ model\n"
          "`tessel quantize` would write, without its report) and quantized_layers= counts its int8 layers.\n",
          args, flags, &command))
    return *done;
  const CommandLine& line = command.line;
  if (!line.has("output")) return reportUsageError("compile", "-o DIR is required (where to write the module)");
  // Threads first: the target compiled for (and matched against tuning records) counts them.
  if (auto error = applyThreads(line)) return reportUsageError("compile", *error);
  driver::LoadOptions load;
  driver::CompileOptions options;
  for (auto error : {readInputShapes(line, &load), readPassOptions(line, &options)})
    if (error) return reportUsageError("compile", *error);
  auto records = readTuningRecordsFlag(line, &options);
  if (!records) return reportDiagnostic(records.error());

  // --quantize int8: the QDQ model in memory replaces the file's (its quantized layers then run in int8).
  std::optional<QuantizedModel> quantized;
  if (line.has("quantize")) {
    if (line.get("quantize") != "int8")
      return reportUsageError("compile", "--quantize takes int8 (got '" + line.get("quantize") + "')");
    if (line.get("calibration").empty() && !line.has("dynamic"))
      return reportUsageError("compile", "--quantize int8 needs --calibration DATA (inputs to choose the ranges from) "
                                         "or --dynamic");
    std::string usageError;
    auto result = quantizeModel(command.model, line, load, &usageError);
    if (!result) return usageError.empty() ? reportDiagnostic(result.error()) : reportUsageError("compile", usageError);
    quantized = std::move(*result);
  } else {
    for (const FlagSpec& flag : quantizeFlags())
      if (line.has(flag.name))
        return reportUsageError("compile", "--" + flag.name + " applies with --quantize int8 only");
  }

  if (line.has("target") && !line.get("target").empty()) {
    auto target = Target::parse(line.get("target"));
    if (!target) return reportUsageError("compile", "--target: " + target.error().message);
    if (target->kind != TargetKind::Cpu) return compileForGpu(command, load, *target, quantized);
  }

  bool timeReport = line.has("time-report");
  CompileTimes times;
  if (timeReport) load.times = &times.load;
  auto start = std::chrono::steady_clock::now();
  auto graph = quantized ? driver::loadModelBytes(quantized->bytes, command.model, load) : driver::loadModel(command.model, load);
  if (!graph) return reportDiagnostic(graph.error());
  auto compiled = driver::compileGraph(*graph, options);
  if (!compiled) return reportDiagnostic(compiled.error());
  if (*records) reportTuningRecords(**records, *compiled);
  ExportOptions exportOptions;
  exportOptions.target = options.target;
  if (timeReport) exportOptions.times = &times.exported;
  Status exported = driver::exportModel(*compiled, line.get("output"), exportOptions);
  if (!exported) return reportDiagnostic(exported.error());
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  int fused = 0;
  for (auto& kernel : compiled->kernels)
    if (kernel.node && kernel.node->isFused()) ++fused;
  const driver::MemoryReport& memory = compiled->memory;
  std::printf("model=%s\noutput=%s\n", command.model.c_str(), line.get("output").c_str());
  std::printf("operations=%zu\nkernels=%zu\ntuned_kernels=%d\nfused_ops=%d\n", graph->operationCount(),
              compiled->kernels.size(), tunedKernelCount(*compiled), fused);
  if (quantized) std::printf("quantized_layers=%zu\n", quantized->layers.size());
  std::printf("planned_memory_bytes=%lld\nnaive_memory_bytes=%lld\nstorages=%d\n", (long long)memory.plannedBytes,
              (long long)memory.naiveBytes, memory.storageCount);
  std::printf("pass_seconds=%.3f\nlower_seconds=%.3f\ncompile_seconds=%.3f\n", compiled->passSeconds,
              compiled->lowerSeconds, seconds);
  if (timeReport) {
    times.imported = &*graph;
    times.compiled = &*compiled;
    times.totalSeconds = seconds;
    std::fputs(formatCompileTimeReport(times).c_str(), stdout);
  }
  return kExitOk;
}

}  // namespace tessel::cli
