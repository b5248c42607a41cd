// Serving measurement requests: parse, replay, lower, build, check against the default
// schedule's outputs, time; every failure becomes the candidate's reply, never the worker's end.
#include "tuner/measure/MeasureServer.h"

#include <chrono>
#include <exception>

#include "compiler/driver/MeasureKernel.h"
#include "compiler/lower/Build.h"
#include "compiler/schedule/Schedule.h"
#include "compiler/schedule/TraceText.h"

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
  auto built = buildTrace(task, task.defaultTrace, &ignored);
  if (!built)
    return Diagnostic{"the default schedule of " + task.name + " does not build, so nothing can be checked against it: " +
                          built.error().message,
                      task.name, 0, 0, "measure with \"check\": false, or report this compiler bug"};
  auto outputs = runOnce(task, *built, seed);
  if (!outputs) return outputs.error();
  references_.emplace(key, *outputs);
  return outputs;
}

CandidateMeasurement MeasureServer::measure(const MeasureRequest& request) {
  const ServedTask* task = nullptr;
  std::string names;
  for (auto& candidate : tasks_) {
    if (candidate.name == request.task) task = &candidate;
    names += (names.empty() ? "" : ", ") + candidate.name;
  }
  if (!task)
    return failed(CandidateErrorKind::Request, Diagnostic{"no task named '" + request.task + "'", request.task, 0, 0,
                                                          "the worker's tasks: " + names});
  auto trace = parseTraceText(request.trace);
  if (!trace) return failed(CandidateErrorKind::Parse, trace.error());

  Clock::time_point start = Clock::now();
  CandidateErrorKind failedKind;
  auto built = buildTrace(*task, *trace, &failedKind);
  double buildMilliseconds = millisecondsSince(start);
  if (!built) {
    CandidateMeasurement m = failed(failedKind, built.error());
    m.buildMilliseconds = buildMilliseconds;
    return m;
  }

  CandidateMeasurement m;
  m.buildMilliseconds = buildMilliseconds;
  if (request.check) {
    start = Clock::now();
    auto expected = referenceOutputs(*task, request.seed);
    auto actual = expected ? runOnce(*task, *built, request.seed) : expected;
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
      return m;
    }
  }

  driver::MeasureOptions options;
  options.minSeconds = request.minSeconds;
  options.minRepeats = request.minRepeats;
  options.maxRepeats = request.maxRepeats;
  options.warmupCalls = request.warmupCalls;
  options.seed = request.seed;
  start = Clock::now();
  auto timed = driver::timeBuiltKernel(task->workload, *built, options);
  m.timingMilliseconds = millisecondsSince(start);
  if (!timed) {
    m.failure = CandidateFailure{CandidateErrorKind::Runtime, timed.error()};
    return m;
  }
  m.medianMilliseconds = timed->medianMilliseconds;
  m.minMilliseconds = timed->minMilliseconds;
  m.maxMilliseconds = timed->maxMilliseconds;
  m.samples = timed->samples;
  m.gflops = timed->gflops;
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
  for (std::string line; std::getline(requests, line);) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (beforeEach) beforeEach();
    reply(handleLine(line));
  }
}

}  // namespace tessel::tuner
