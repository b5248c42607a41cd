// Serving measurement requests: parse, replay, lower, build, check against the default
// schedule's outputs, time; every failure becomes the candidate's reply, never the worker's end.
#include "tuner/measure/MeasureServer.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <thread>

#include "compiler/driver/MeasureKernel.h"
#include "compiler/export/GpuModuleExport.h"
#include "compiler/lower/Build.h"
#include "compiler/schedule/Schedule.h"
#include "compiler/schedule/TraceText.h"
#include "runtime/GpuModule.h"

namespace tessel::tuner {

namespace {

using Clock = std::chrono::steady_clock;

double millisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

CandidateMeasurement failed(CandidateErrorKind kind, Diagnostic diagnostic) {
  CandidateMeasurement m;
  m.failure = CandidateFailure{kind, std::move(diagnostic)};
  return m;
}

// Replays and lowers `trace`, then builds it with LLVM: a Lower or a Build failure.
Expected<BuiltFunction> buildTrace(const ServedTask& task, const Trace& trace, CandidateErrorKind* failedKind) {
  *failedKind = CandidateErrorKind::Lower;
  try {
    auto schedule = Schedule::replay(task.workload.outputs, trace);
    if (!schedule) return schedule.error();
    auto lowered = lower(*schedule, task.workload.args(), task.workload.name);
    if (!lowered) return lowered.error();
    *failedKind = CandidateErrorKind::Build;
    auto module = makeJitModule({lowered->func});
    if (!module) return module.error();
    BuiltFunction built;
    built.lowered = std::move(*lowered);
    built.module = *module;
    built.function = built.module->getFunction(task.workload.name);
    return built;
  } catch (const InternalError& error) {
    // A compiler bug one candidate runs into: report it with the candidate, serve the next.
    return Diagnostic{std::string("internal compiler error (please report with the schedule): ") + error.what(),
                      task.name, 0, 0, ""};
  }
}

bool onGpu(const ServedTask& task) { return task.target.kind != TargetKind::Cpu; }

// Replays and lowers `trace` for the task's GPU target and exports it as a module (for CUDA,
// NVRTC compiles it): a Lower or a Build failure.
Expected<std::string> buildGpuTrace(const ServedTask& task, const Trace& trace, CandidateErrorKind* failedKind) {
  *failedKind = CandidateErrorKind::Lower;
  try {
    auto schedule = Schedule::replay(task.workload.outputs, trace);
    if (!schedule) return schedule.error();
    auto lowered = lower(*schedule, task.workload.args(), task.workload.name, task.target);
    if (!lowered) return lowered.error();
    *failedKind = CandidateErrorKind::Build;
    GpuModuleOptions options;
    for (const te::Tensor& output : task.workload.outputs) options.outputs.push_back(output.name());
    options.flops = task.workload.flops;
    return exportGpuModule(lowered->func, task.target, options);
  } catch (const InternalError& error) {
    return Diagnostic{std::string("internal compiler error (please report with the schedule): ") + error.what(),
                      task.name, 0, 0, ""};
  }
}

// One call of `built` on kernelArguments(seed); its outputs.
Expected<std::vector<runtime::NDArray>> runOnce(const ServedTask& task, const BuiltFunction& built, unsigned seed) {
  auto arguments = driver::kernelArguments(task.workload, seed);
  if (!arguments) return arguments.error();
  try {
    built.function.callPacked(*arguments);
  } catch (const std::exception& error) {
    return Diagnostic{"running " + task.name + " failed: " + error.what(), task.name, 0, 0, ""};
  }
  std::vector<runtime::NDArray> outputs;
  size_t first = arguments->size() - task.workload.outputs.size();
  for (size_t i = first; i < arguments->size(); ++i) outputs.push_back((*arguments)[i].asArray());
  return outputs;
}

}  // namespace

MeasureServer::MeasureServer(std::vector<ServedTask> tasks, OutputTolerance tolerance)
    : tasks_(std::move(tasks)), tolerance_(tolerance) {}

std::vector<WorkerTask> MeasureServer::taskList() const {
  std::vector<WorkerTask> list;
  for (auto& task : tasks_) list.push_back({task.name, task.workload.name, task.workload.flops});
  return list;
}

Expected<std::vector<runtime::NDArray>> MeasureServer::referenceOutputs(const ServedTask& task, unsigned seed) {
  auto key = std::make_pair(task.name, seed);
  if (auto found = references_.find(key); found != references_.end()) return found->second;
  CandidateErrorKind ignored;
  auto notBuilt = [&](const Diagnostic& error) {
    return Diagnostic{"the default schedule of " + task.name + " does not build, so nothing can be checked against it: " +
                          error.message,
                      task.name, 0, 0, "measure with \"check\": false, or report this compiler bug"};
  };
  Expected<std::vector<runtime::NDArray>> outputs = std::vector<runtime::NDArray>{};
  if (onGpu(task)) {
    auto module = buildGpuTrace(task, task.defaultTrace, &ignored);
    if (!module) return notBuilt(module.error());
    outputs = driver::runGpuModuleOnce(task.workload, *module, task.target, seed);
  } else {
    auto built = buildTrace(task, task.defaultTrace, &ignored);
    if (!built) return notBuilt(built.error());
    outputs = runOnce(task, *built, seed);
  }
  if (!outputs) return outputs.error();
  references_.emplace(key, *outputs);
  return outputs;
}

MeasureServer::Prepared MeasureServer::prepare(const MeasureRequest& request) const {
  Prepared prepared;
  std::string names;
  for (auto& candidate : tasks_) {
    if (candidate.name == request.task) prepared.task = &candidate;
    names += (names.empty() ? "" : ", ") + candidate.name;
  }
  if (!prepared.task) {
    prepared.failure = failed(CandidateErrorKind::Request, Diagnostic{"no task named '" + request.task + "'",
                                                                      request.task, 0, 0, "the worker's tasks: " + names});
    return prepared;
  }
  auto trace = parseTraceText(request.trace);
  if (!trace) {
    prepared.failure = failed(CandidateErrorKind::Parse, trace.error());
    return prepared;
  }
  Clock::time_point start = Clock::now();
  CandidateErrorKind failedKind;
  if (onGpu(*prepared.task)) {
    auto module = buildGpuTrace(*prepared.task, *trace, &failedKind);
    prepared.buildMilliseconds = millisecondsSince(start);
    if (!module) {
      prepared.failure = failed(failedKind, module.error());
      prepared.failure->buildMilliseconds = prepared.buildMilliseconds;
    } else {
      prepared.gpuModule = std::move(*module);
    }
    return prepared;
  }
  auto built = buildTrace(*prepared.task, *trace, &failedKind);
  prepared.buildMilliseconds = millisecondsSince(start);
  if (!built) {
    prepared.failure = failed(failedKind, built.error());
    prepared.failure->buildMilliseconds = prepared.buildMilliseconds;
    return prepared;
  }
  prepared.built = std::move(*built);
  return prepared;
}

CandidateMeasurement MeasureServer::measure(const MeasureRequest& request) { return finish(prepare(request), request); }

std::vector<MeasureServer::Prepared> MeasureServer::prepareInParallel(const std::vector<MeasureRequest>& requests) const {
  std::vector<Prepared> prepared(requests.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next++) < requests.size();) {
      try {
        prepared[i] = prepare(requests[i]);
      } catch (const std::exception& error) {
        prepared[i].failure = failed(CandidateErrorKind::Build,
                                     Diagnostic{std::string("building failed: ") + error.what(), requests[i].task, 0, 0, ""});
      }
    }
  };
  size_t threadCount = std::min<size_t>(requests.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> threads;
  for (size_t t = 1; t < threadCount; ++t) threads.emplace_back(work);
  work();
  for (auto& thread : threads) thread.join();
  return prepared;
}

Expected<runtime::GpuModuleRunner*> MeasureServer::gpuRunnerOf(Prepared& prepared, unsigned seed) {
  if (!prepared.gpuRunner) {
    auto runner = driver::makeGpuModuleRunner(prepared.task->workload, prepared.gpuModule, prepared.task->target, seed);
    if (!runner) return runner.error();
    prepared.gpuRunner = *runner;
  }
  return prepared.gpuRunner.get();
}

CandidateMeasurement MeasureServer::check(Prepared& prepared, const MeasureRequest& request) {
  if (prepared.failure) return *prepared.failure;
  CandidateMeasurement m;
  m.buildMilliseconds = prepared.buildMilliseconds;
  if (!request.check) return m;
  const ServedTask* task = prepared.task;
  Clock::time_point start = Clock::now();
  auto expected = referenceOutputs(*task, request.seed);
  Expected<std::vector<runtime::NDArray>> actual = expected;
  if (expected && onGpu(*task)) {
    auto runner = gpuRunnerOf(prepared, request.seed);
    actual = runner ? driver::runGpuRunnerOnce(task->workload, **runner, task->target)
                    : Expected<std::vector<runtime::NDArray>>(runner.error());
  } else if (expected) {
    actual = runOnce(*task, *prepared.built, request.seed);
  }
  m.checkMilliseconds = millisecondsSince(start);
  if (!actual) {
    m.failure = CandidateFailure{CandidateErrorKind::Runtime, actual.error()};
    return m;
  }
  OutputComparison comparison = compareOutputs(*actual, *expected, tolerance_);
  m.checked = true;
  m.maxAbsError = comparison.maxAbsError;
  if (comparison.mismatch) {
    // Timing a wrong kernel would only waste the time: it can never be chosen.
    m.failure = CandidateFailure{CandidateErrorKind::WrongResult,
                                 Diagnostic{task->name + " computes a wrong result under this schedule: " +
                                                comparison.mismatch->describe(),
                                            task->name, 0, 0,
                                            "the schedule changes what the kernel computes: a compiler bug worth "
                                            "reporting with the schedule"}};
  }
  return m;
}

namespace {

driver::MeasureOptions timingOptions(const MeasureRequest& request) {
  driver::MeasureOptions options;
  options.minSeconds = request.minSeconds;
  options.minRepeats = request.minRepeats;
  options.maxRepeats = request.maxRepeats;
  options.warmupCalls = request.warmupCalls;
  options.seed = request.seed;
  options.flushCaches = request.flushCaches;
  return options;
}

// Fills `m`'s times from `timed`, or its failure.
void takeTimes(CandidateMeasurement& m, const Expected<driver::Measurement>& timed) {
  if (!timed) {
    m.failure = CandidateFailure{CandidateErrorKind::Runtime, timed.error()};
    return;
  }
  m.medianMilliseconds = timed->medianMilliseconds;
  m.minMilliseconds = timed->minMilliseconds;
  m.maxMilliseconds = timed->maxMilliseconds;
  m.samples = timed->samples;
  m.gflops = timed->gflops;
}

}  // namespace

CandidateMeasurement MeasureServer::finish(Prepared prepared, const MeasureRequest& request) {
  CandidateMeasurement m = check(prepared, request);
  if (!m.ok()) return m;
  Clock::time_point start = Clock::now();
  Expected<driver::Measurement> timed = Diagnostic{"", "", 0, 0, ""};
  if (onGpu(*prepared.task)) {
    auto runner = gpuRunnerOf(prepared, request.seed);
    timed = runner ? driver::timeGpuRunner(prepared.task->workload, **runner, prepared.task->target,
                                           timingOptions(request))
                   : Expected<driver::Measurement>(runner.error());
  } else {
    timed = driver::timeBuiltKernel(prepared.task->workload, *prepared.built, timingOptions(request));
  }
  m.timingMilliseconds = millisecondsSince(start);
  takeTimes(m, timed);
  return m;
}

std::string MeasureServer::handleLine(std::string_view line) {
  ParsedRequest parsed = parseRequestLine(line);
  if (parsed.failure) return replyLine(parsed.id, failed(parsed.failure->kind, parsed.failure->diagnostic));
  try {
    return replyLine(parsed.id, measure(parsed.request));
  } catch (const std::exception& error) {
    // Whatever escaped is this candidate's problem; the worker serves the next one.
    return replyLine(parsed.id, failed(CandidateErrorKind::Runtime,
                                       Diagnostic{std::string("measuring failed: ") + error.what(), parsed.request.task,
                                                  0, 0, ""}));
  }
}

void MeasureServer::serve(std::istream& requests, const std::function<void(const std::string& line)>& reply,
                          const std::function<void()>& beforeEach) {
  auto nextLine = [&](std::string* line) {
    while (std::getline(requests, *line))
      if (line->find_first_not_of(" \t\r") != std::string::npos) return true;
    return false;
  };
  for (std::string line; nextLine(&line);) {
    ParsedRequest first = parseRequestLine(line);
    if (first.failure || first.request.batch <= 1) {
      if (beforeEach) beforeEach();
      reply(handleLine(line));
      continue;
    }
    // A batch: read the rest of it, build it all, then check and time one request at a time.
    std::vector<ParsedRequest> batch = {first};
    for (std::string more; int(batch.size()) < first.request.batch && nextLine(&more);) batch.push_back(parseRequestLine(more));
    std::vector<MeasureRequest> buildable;
    for (auto& parsed : batch)
      if (!parsed.failure) buildable.push_back(parsed.request);
    auto start = Clock::now();
    std::vector<Prepared> prepared = prepareInParallel(buildable);
    reply(builtLine(int(batch.size()), millisecondsSince(start)));
    if (first.request.turns > 1) {
      serveInTurns(batch, prepared, first.request.turns, reply, beforeEach);
      continue;
    }
    size_t next = 0;
    for (auto& parsed : batch) {
      if (beforeEach) beforeEach();
      if (parsed.failure) {
        reply(replyLine(parsed.id, failed(parsed.failure->kind, parsed.failure->diagnostic)));
        continue;
      }
      CandidateMeasurement m;
      try {
        m = finish(std::move(prepared[next++]), parsed.request);
      } catch (const std::exception& error) {
        m = failed(CandidateErrorKind::Runtime,
                   Diagnostic{std::string("measuring failed: ") + error.what(), parsed.request.task, 0, 0, ""});
      }
      reply(replyLine(parsed.id, m));
    }
  }
}

void MeasureServer::serveInTurns(const std::vector<ParsedRequest>& batch, std::vector<Prepared>& prepared, int turns,
                                 const std::function<void(const std::string& line)>& reply,
                                 const std::function<void()>& beforeEach) {
  // Every request checked first (a failure is final), then those that passed timed together.
  std::vector<CandidateMeasurement> results(batch.size());
  std::vector<Prepared*> preparedOf(batch.size(), nullptr);
  Clock::time_point start = Clock::now();
  size_t next = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    if (beforeEach) beforeEach();
    if (batch[i].failure) {
      results[i] = failed(batch[i].failure->kind, batch[i].failure->diagnostic);
      continue;
    }
    preparedOf[i] = &prepared[next++];
    try {
      results[i] = check(*preparedOf[i], batch[i].request);
    } catch (const std::exception& error) {
      results[i] = failed(CandidateErrorKind::Runtime,
                          Diagnostic{std::string("checking failed: ") + error.what(), batch[i].request.task, 0, 0, ""});
    }
  }
  std::vector<size_t> timedIndex;
  std::vector<driver::KernelToTime> kernels;
  std::vector<size_t> onDevice;
  for (size_t i = 0; i < batch.size(); ++i) {
    if (!results[i].ok()) continue;
    if (onGpu(*preparedOf[i]->task)) {
      onDevice.push_back(i);
      continue;
    }
    timedIndex.push_back(i);
    kernels.push_back({&preparedOf[i]->task->workload, &*preparedOf[i]->built});
  }
  reply(checkedLine(int(batch.size()), millisecondsSince(start)));

  // Turns are against a CPU's drift between candidates; a device times each run itself, so
  // GPU candidates are timed one after the other.
  for (size_t i : onDevice) {
    Clock::time_point begin = Clock::now();
    auto runner = gpuRunnerOf(*preparedOf[i], batch[i].request.seed);
    Expected<driver::Measurement> timed =
        runner ? driver::timeGpuRunner(preparedOf[i]->task->workload, **runner, preparedOf[i]->task->target,
                                       timingOptions(batch[i].request))
               : Expected<driver::Measurement>(runner.error());
    results[i].timingMilliseconds = millisecondsSince(begin);
    takeTimes(results[i], timed);
  }

  start = Clock::now();
  std::vector<Expected<driver::Measurement>> timed;
  try {
    timed = driver::timeBuiltKernelsInTurns(kernels, timingOptions(batch.front().request), turns);
  } catch (const std::exception& error) {
    for (size_t i : timedIndex)
      timed.emplace_back(Diagnostic{std::string("measuring failed: ") + error.what(), batch[i].request.task, 0, 0, ""});
  }
  // The timing's wall time, shared out: the tuner's summary adds the candidates' times up.
  double timingShare = kernels.empty() ? 0 : millisecondsSince(start) / double(kernels.size());
  for (size_t k = 0; k < timedIndex.size(); ++k) {
    CandidateMeasurement& m = results[timedIndex[k]];
    m.timingMilliseconds = timingShare;
    takeTimes(m, timed[k]);
  }
  for (size_t i = 0; i < batch.size(); ++i) reply(replyLine(batch[i].id, results[i]));
}

}  // namespace tessel::tuner
