// tessel run MODEL_OR_DIR: runs a model (or an exported module) on inputs from files, writes
// its outputs as .npy and, given expected outputs, says whether they match.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "app/cli/Commands.h"
#include "app/cli/InputFlags.h"
#include "app/cli/ModelCommand.h"
#include "app/cli/TuningRecordsFlag.h"
#include "compiler/driver/GpuModel.h"
#include "compiler/driver/RunModel.h"
#include "runtime/Npy.h"

namespace tessel::cli {

namespace {

// A non-negative number flag (--rtol, --atol), or an error message.
std::optional<std::string> readTolerance(const CommandLine& line, const std::string& name, double* out) {
  if (!line.has(name)) return std::nullopt;
  std::string text = line.get(name);
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(value >= 0))
    return "--" + name + " must be a non-negative number, got '" + text + "'";
  *out = value;
  return std::nullopt;
}

// An output's type and shape ("float32[1, 1000]"), for the line naming each output.
std::string typeAndShape(const runtime::NDArray& array) {
  std::string text = array.dtype().toString() + "[";
  for (int i = 0; i < array.ndim(); ++i) text += (i ? ", " : "") + std::to_string(array.shape()[i]);
  return text + "]";
}

// An output of strings: its shape and, when short, the strings ("string[3] = [\"a\", \"b\", \"c\"]").
std::string stringsText(const frontend::StringTensor& strings) {
  std::string text = "string[";
  for (size_t i = 0; i < strings.shape.size(); ++i) text += (i ? ", " : "") + std::to_string(strings.shape[i]);
  text += "]";
  if (strings.elements.size() > 8) return text;
  text += " = [";
  for (size_t i = 0; i < strings.elements.size(); ++i) text += (i ? ", \"" : "\"") + strings.elements[i] + "\"";
  return text + "]";
}

}  // namespace

int runRun(const std::vector<std::string>& args) {
  std::vector<FlagSpec> flags = {
      {"output-dir", "write every output there as NAME.npy (an output of strings as NAME.txt, one per line)", true, ""},
      {"expect-dir", "directory of output_0.pb, output_1.pb, ...: compare the outputs with them", true, ""},
      {"rtol", "relative tolerance of the comparison", true, "0.001"},
      {"atol", "absolute tolerance of the comparison", true, "1e-07"},
      inputShapeFlag()};
  for (auto& flag : inputFlags()) flags.push_back(flag);
  for (auto& flag : passFlags()) flags.push_back(flag);
  flags.push_back(threadsFlag());
  flags.push_back(tuningRecordsFlag());
  flags.push_back({"target",
                   "where the model runs: llvm (this CPU, the default), opencl or \"cuda -arch=sm_90\" (compiled as one "
                   "GPU module, run once on the device the runtime finds)",
                   true, ""});
  ModelCommand command;
  if (auto done = parseModelCommand(
          "run", "MODEL_OR_DIR [options]",
          "Runs an ONNX model (compiled first) or a module directory written by `tessel compile`.\n"
          "With --expect-dir, an output matches when |got - expected| <= atol + rtol * |expected| for\n"
          "every element (NaN matches NaN; integers and booleans exactly; shapes and types equal).\n"
          "With --tuning-records (an ONNX model only), tuned_kernels= says how many kernels replayed a record.\n"
          "Exit status: 0 success (outputs match), 3 outputs differ, 2 any error.\n",
          args, flags, &command))
    return *done;
  const CommandLine& line = command.line;
  // Threads first: the target compiled for (and matched against tuning records) counts them.
  if (auto error = applyThreads(line)) return reportUsageError("run", *error);
  driver::RunRequest request;
  request.model = command.model;
  driver::LoadOptions load;
  for (auto error : {readTolerance(line, "rtol", &request.tolerance.rtol),
                     readTolerance(line, "atol", &request.tolerance.atol), readInputShapes(line, &load),
                     readPassOptions(line, &request.compile)})
    if (error) return reportUsageError("run", *error);
  request.inputShapes = load.inputShapes;
  if (line.has("tuning-records") && driver::isModuleDirectory(command.model))
    return reportUsageError("run", "--tuning-records applies while compiling; " + command.model +
                                       " is a module that was compiled already");
  auto records = readTuningRecordsFlag(line, &request.compile);
  if (!records) return reportDiagnostic(records.error());

  std::optional<Diagnostic> unreadable;
  if (auto error = readInputFlags(line, &request, &unreadable)) {
    if (unreadable) return reportDiagnostic(*unreadable);
    return reportUsageError("run", *error);
  }
  if (line.has("expect-dir")) {
    auto expected = driver::readNumberedTensors(line.get("expect-dir"), "output_", &request.expectedStrings);
    if (!expected) return reportDiagnostic(expected.error());
    if (expected->empty())
      return reportUsageError("run", "--expect-dir " + line.get("expect-dir") + " holds no output_0.pb");
    request.expectedOutputs = std::move(*expected);
  }

  std::optional<Target> gpu;
  if (line.has("target") && !line.get("target").empty()) {
    auto target = Target::parse(line.get("target"));
    if (!target) return reportUsageError("run", "--target: " + target.error().message);
    if (target->kind != TargetKind::Cpu) gpu = *target;
  }
  auto result = gpu ? driver::runModelOnGpu(request, *gpu) : driver::runModel(request);
  if (!result) return reportDiagnostic(result.error());
  if (*records && result->compiled) reportTuningRecords(**records, *result->compiled);

  if (line.has("output-dir")) {
    std::filesystem::path directory = line.get("output-dir");
    std::error_code error;
    std::filesystem::create_directories(directory, error);
    if (error) return reportDiagnostic({"cannot create the directory: " + error.message(), directory.string(), 0, 0, ""});
    for (size_t i = 0; i < result->outputs.size(); ++i) {
      const bool strings = i < result->stringOutputs.size() && result->stringOutputs[i];
      std::string path =
          (directory / (driver::fileNameForTensor(result->outputNames[i]) + (strings ? ".txt" : ".npy"))).string();
      if (strings) {
        // NumPy files hold no strings: one string per line, in row-major order.
        std::ofstream file(path, std::ios::trunc);
        for (const std::string& text : result->stringOutputs[i]->elements) file << text << "\n";
        if (!file) return reportDiagnostic({"cannot write the strings", path, 0, 0, ""});
        std::cout << "output " << result->outputNames[i] << ": " << stringsText(*result->stringOutputs[i]) << " -> "
                  << path << "\n";
        continue;
      }
      try {
        runtime::writeNpy(path, result->outputs[i]);
      } catch (const runtime::Error& failure) {
        return reportDiagnostic({failure.what(), path, 0, 0, ""});
      }
      std::cout << "output " << result->outputNames[i] << ": " << typeAndShape(result->outputs[i]) << " -> " << path << "\n";
    }
  } else {
    for (size_t i = 0; i < result->outputs.size(); ++i) {
      const bool strings = i < result->stringOutputs.size() && result->stringOutputs[i];
      std::cout << "output " << result->outputNames[i] << ": "
                << (strings ? stringsText(*result->stringOutputs[i]) : typeAndShape(result->outputs[i])) << "\n";
    }
  }
  std::printf("load_seconds=%.3f\ncompile_seconds=%.3f\nrun_ms=%.3f\n", result->loadSeconds, result->compileSeconds,
              result->runSeconds * 1e3);
  if (result->compiled)
    std::printf("kernels=%zu\ntuned_kernels=%d\n", result->compiled->kernels.size(),
                tunedKernelCount(*result->compiled));
  if (result->interpreted)
    std::printf("interpreted=yes\nsegments_compiled=%d\nsegment_runs=%lld\ncontrol_steps=%lld\n",
                result->interpreted->segmentCompiles, static_cast<long long>(result->interpreted->segmentRuns),
                static_cast<long long>(result->interpreted->controlSteps));
  if (result->comparisons.empty()) return kExitOk;
  for (auto& comparison : result->comparisons) std::cout << comparison.describe() << "\n";
  if (result->allMatch()) {
    std::cout << "result=match\n";
    return kExitOk;
  }
  std::cout << "result=mismatch\n";
  std::cerr << "tessel run: outputs differ from " << line.get("expect-dir") << " (rtol " << request.tolerance.rtol
            << ", atol " << request.tolerance.atol << ")\n";
  return kExitMismatch;
}

}  // namespace tessel::cli
