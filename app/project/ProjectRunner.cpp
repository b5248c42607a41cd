// The headless project run: the same driver calls as `tessel run` and `tessel bench`, with the
// project's schedule edits applied between compiling and loading.
#include "app/project/ProjectRunner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

#include "app/project/ProjectOptions.h"
#include "compiler/driver/RunModel.h"
#include "compiler/driver/ScheduleEdits.h"
#include "compiler/frontend/onnx/OnnxImporter.h"
#include "runtime/ThreadPool.h"
#include "runtime/Timer.h"

namespace tessel::project {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::string formatNumber(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4g", value);
  return buffer;
}


// The run itself; runtime errors (a wrong input shape, an allocation) become Diagnostics in runProject.
class ProjectRun {
public:
  ProjectRun(const Project& project, const ProjectRunOptions& options) : project_(project), options_(options) {}

  Expected<ProjectRunReport> run() {
    report_.model = project_.model;
    if (int threads = options_.threads.value_or(project_.target.threads); threads > 0)
      runtime::ThreadPool::global().setNumThreads(threads);
    report_.threads = runtime::ThreadPool::global().numThreads();

    if (!project_.reference.directory.empty()) {
      if (Status s = stage("reading reference data"); !s) return s.error();
      if (Status s = readReference(); !s) return s.error();
    }
    if (Status s = stage("importing " + project_.model); !s) return s.error();
    auto start = Clock::now();
    auto graph = driver::loadModel(project_.model, loadOptions());
    if (!graph) return graph.error();
    report_.loadSeconds = secondsSince(start);

    driver::CompileOptions compile = compileOptionsFor(project_);
    std::string records = options_.tuningRecords.value_or(project_.tuningRecords);
    if (!records.empty()) {
      if (Status s = stage("reading the tuning records " + records); !s) return s.error();
      auto applied = tuner::loadTuningRecords(records, compile.target);
      if (!applied) return applied.error();
      compile.tunedSchedules = applied->schedules;
      report_.tuningRecords = std::move(*applied);
    }

    if (Status s = stage("compiling"); !s) return s.error();
    start = Clock::now();
    auto compiled = driver::compileGraph(*graph, compile);
    if (!compiled) return compiled.error();
    auto edited = driver::applyScheduleEdits(std::move(*compiled), project_.tasks, compile.target);
    if (!edited) return edited.error();
    report_.tasksEdited = int(project_.tasks.size());
    // After the edits, which win over records for the kernels they schedule.
    if (report_.tuningRecords) tuner::noteCompiledModel(*report_.tuningRecords, *edited);
    for (const driver::CompiledKernel& kernel : edited->kernels)
      if (kernel.tuned) ++report_.tunedKernels;
    report_.compiled = std::make_shared<const driver::CompiledModel>(std::move(*edited));
    auto executor = driver::createExecutor(*report_.compiled, compile.target);
    if (!executor) return executor.error();
    report_.compileSeconds = secondsSince(start);

    if (Status s = stage("verifying"); !s) return s.error();
    if (Status s = setInputs(**executor); !s) return s.error();
    (*executor)->run();
    if (Status s = compareOutputs(**executor); !s) return s.error();
    if (!report_.outputsMatch()) return report_;

    // Without the records, for max_tuned_ratio: the same edits, every other kernel default.
    std::unique_ptr<runtime::GraphExecutor> untuned;
    if (project_.benchmark.maxTunedRatio && report_.tuningRecords) {
      if (Status s = stage("compiling without the tuning records"); !s) return s.error();
      driver::CompileOptions plain = compile;
      plain.tunedSchedules.reset();
      auto compiledPlain = driver::compileGraph(*graph, plain);
      if (!compiledPlain) return compiledPlain.error();
      auto editedPlain = driver::applyScheduleEdits(std::move(*compiledPlain), project_.tasks, plain.target);
      if (!editedPlain) return editedPlain.error();
      untunedModel_ = std::make_shared<const driver::CompiledModel>(std::move(*editedPlain));
      auto plainExecutor = driver::createExecutor(*untunedModel_, plain.target);
      if (!plainExecutor) return plainExecutor.error();
      untuned = std::move(*plainExecutor);
      if (Status s = setInputs(*untuned); !s) return s.error();
    }

    if (Status s = stage("benchmarking"); !s) return s.error();
    benchmark(**executor, untuned.get());
    checkExpectations();

    std::string exportDirectory = options_.exportDirectory.value_or(
        project_.exportSettings.enabled ? project_.exportSettings.directory : std::string());
    if (!exportDirectory.empty()) {
      if (Status s = stage("exporting to " + exportDirectory); !s) return s.error();
      Status exported = driver::exportModel(*report_.compiled, exportDirectory, compile.target);
      if (!exported) return exported.error();
      report_.exportedTo = exportDirectory;
    }
    return report_;
  }

private:
  Status stage(const std::string& name) {
    if (options_.cancelled && options_.cancelled())
      return Diagnostic{"the project run was cancelled before " + name, project_.model, 0, 0, ""};
    if (options_.progress) options_.progress(name);
    return Status::success();
  }

  Status readReference() {
    const std::string& directory = project_.reference.directory;
    auto declared = frontend::readOnnxInputs(project_.model);
    if (!declared) return declared.error();
    auto inputs = referenceInputValues(project_, *declared);
    if (!inputs) return inputs.error();
    auto outputs = driver::readNumberedTensors(directory, "output_");
    if (!outputs) return outputs.error();
    if (outputs->empty())
      return Diagnostic{"the reference data holds no output_0.pb", directory, 0, 0,
                        "reference data is input_N.pb and output_N.pb files (the ONNX test layout)"};
    referenceInputs_ = std::move(*inputs);
    expectedOutputs_ = std::move(*outputs);
    return Status::success();
  }

  // Known input values are given to the compiler: one it needs by value (a Reshape's shape) is
  // bound as a constant, and values complete open dimensions, as in `tessel run`.
  driver::LoadOptions loadOptions() const {
    driver::LoadOptions load = loadOptionsFor(project_);
    load.inputValues = referenceInputs_;
    return load;
  }

  Status setInputs(runtime::GraphExecutor& executor) {
    std::mt19937 rng(42);
    for (const std::string& name : executor.inputNames()) {
      auto reference = referenceInputs_.find(name);
      runtime::NDArray value =
          reference != referenceInputs_.end() ? reference->second : driver::timingInput(executor.tensorInfo(name), rng);
      try {
        executor.setInput(name, value);
      } catch (const runtime::Error& error) {
        return Diagnostic{"input '" + name + "': " + error.what(), project_.reference.directory, 0, 0, ""};
      }
    }
    return Status::success();
  }

  Status compareOutputs(const runtime::GraphExecutor& executor) {
    if (expectedOutputs_.empty()) return Status::success();
    const auto& names = executor.outputNames();
    if (expectedOutputs_.size() != names.size())
      return Diagnostic{"the reference data has " + std::to_string(expectedOutputs_.size()) + " outputs, the model " +
                            std::to_string(names.size()),
                        project_.reference.directory, 0, 0, ""};
    driver::Tolerance tolerance{project_.reference.rtol, project_.reference.atol};
    for (size_t i = 0; i < names.size(); ++i)
      report_.comparisons.push_back(
          driver::compareOutput(names[i], executor.getOutput(names[i]), expectedOutputs_[i], tolerance));
    return Status::success();
  }

  // The timed runs; with `untuned`, in turns with it, so that both see the same machine (a
  // throttling or busy machine would otherwise make either look better).
  void benchmark(runtime::GraphExecutor& executor, runtime::GraphExecutor* untuned) {
    if (!options_.threads && project_.benchmark.threads > 0) {
      runtime::ThreadPool::global().setNumThreads(project_.benchmark.threads);
      report_.threads = project_.benchmark.threads;
    }
    executor.run();  // untimed: first-touch page faults, thread start-up, caches
    if (untuned) untuned->run();
    auto timed = [](runtime::GraphExecutor& e) {
      auto start = Clock::now();
      e.run();
      return secondsSince(start) * 1e3;
    };
    std::vector<double> latencies, untunedLatencies;
    int repeats = std::max(1, options_.repeats.value_or(project_.benchmark.repeats));
    for (int i = 0; i < repeats; ++i) {
      // Alternating which goes first cancels an advantage of running second (warm caches).
      if (untuned && i % 2) untunedLatencies.push_back(timed(*untuned));
      latencies.push_back(timed(executor));
      if (untuned && i % 2 == 0) untunedLatencies.push_back(timed(*untuned));
    }
    report_.benchmarked = true;
    report_.runs = repeats;
    report_.latencyMs = runtime::median(latencies);
    report_.minMs = *std::min_element(latencies.begin(), latencies.end());
    if (untuned) report_.untunedLatencyMs = runtime::median(untunedLatencies);
  }

  void checkExpectations() {
    const BenchmarkSettings& limits = project_.benchmark;
    if (limits.maxLatencyMs)
      report_.expectations.push_back(
          {"max_latency_ms", report_.latencyMs, *limits.maxLatencyMs, report_.latencyMs <= *limits.maxLatencyMs});
    if (limits.baselineMs && limits.maxRatio) {
      double ratio = report_.latencyMs / *limits.baselineMs;
      report_.expectations.push_back(
          {"max_ratio", ratio, *limits.maxRatio, ratio <= *limits.maxRatio, *limits.baselineMs});
    }
    if (limits.maxTunedRatio) {
      if (report_.untunedLatencyMs > 0) {
        double ratio = report_.latencyMs / report_.untunedLatencyMs;
        report_.expectations.push_back({"max_tuned_ratio", ratio, *limits.maxTunedRatio,
                                        ratio <= *limits.maxTunedRatio, report_.untunedLatencyMs});
      } else {
        ExpectationResult unchecked{"max_tuned_ratio", 0, *limits.maxTunedRatio, false};
        unchecked.unchecked = "the project applies no tuning records (set tuning_records, or pass --tuning-records)";
        report_.expectations.push_back(unchecked);
      }
    }
  }

  const Project& project_;
  const ProjectRunOptions& options_;
  ProjectRunReport report_;
  std::shared_ptr<const driver::CompiledModel> untunedModel_;  // outlives its executor's runs
  std::map<std::string, runtime::NDArray> referenceInputs_;
  std::vector<runtime::NDArray> expectedOutputs_;
};

}  // namespace

std::string ExpectationResult::describe() const {
  std::string verdict = passed ? "PASS" : "FAIL";
  if (!unchecked.empty()) return name + ": not checked: " + unchecked + ": " + verdict;
  if (name == "max_tuned_ratio")
    return name + ": measured " + formatNumber(measured) + "x of the " + formatNumber(baselineMs) +
           " ms without the tuning records (" + formatNumber(measured * baselineMs) + " ms), limit " +
           formatNumber(limit) + "x: " + verdict;
  if (baselineMs > 0)
    return name + ": measured " + formatNumber(measured) + "x of the " + formatNumber(baselineMs) + " ms baseline (" +
           formatNumber(measured * baselineMs) + " ms), limit " + formatNumber(limit) + "x: " + verdict;
  return name + ": measured " + formatNumber(measured) + " ms, limit " + formatNumber(limit) + " ms: " + verdict;
}

bool ProjectRunReport::outputsMatch() const {
  return std::all_of(comparisons.begin(), comparisons.end(), [](auto& c) { return c.matches; });
}

bool ProjectRunReport::expectationsMet() const {
  return std::all_of(expectations.begin(), expectations.end(), [](auto& e) { return e.passed; });
}

Expected<ProjectRunReport> runProject(const Project& project, const ProjectRunOptions& options) {
  try {
    return ProjectRun(project, options).run();
  } catch (const runtime::Error& error) {
    return Diagnostic{error.what(), project.model, 0, 0, ""};
  } catch (const UserError& error) {
    return error.diagnostic;
  }
}

}  // namespace tessel::project
