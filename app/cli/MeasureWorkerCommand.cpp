// tessel measure-worker: the tuner's persistent measuring process. It compiles a model (or a
// bare operator) once, then measures candidate schedules sent on stdin, one JSON line each,
// answering each with one JSON line (tuner/measure/MeasureProtocol.h). Running in a child
// process of the tuner, a candidate that crashes or hangs takes down only this process
// (DESIGN.md, "Measurement is isolated").
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>

#include "app/cli/Commands.h"
#include "app/cli/InputFlags.h"
#include "app/cli/MeasureCommand.h"
#include "app/cli/ModelCommand.h"
#include "app/cli/OperatorSpec.h"
#include "runtime/ThreadPool.h"
#include "tuner/measure/MeasureServer.h"

namespace tessel::cli {

namespace {

const char* kSynopsis = "MODEL [model flags] [--threads T]\n       tessel measure-worker --operator OP [operator flags]";

const char* kDescription =
    "The tuner's measuring process; not meant to be typed. It imports and compiles the model (or\n"
    "builds the operator) once, prints one line {\"ready\": true, \"tasks\": [...]} (or {\"ready\":\n"
    "false, \"error\": {...}} and exits with 2), then reads one JSON request per line on stdin and\n"
    "prints one JSON reply line for each: the candidate schedule built, checked against the\n"
    "default schedule's outputs and timed. End of input ends it. The protocol is described in\n"
    "tuner/measure/MeasureProtocol.h. Only protocol lines go to stdout; everything else to stderr.\n";

std::vector<FlagSpec> workerFlags(const std::string& op) {
  std::vector<FlagSpec> flags = {
      {"operator", "OP: serve a bare operator (matmul, dense, conv2d) instead of a model's tasks", true, ""},
      {"target", "with --operator: where candidates run: llvm (this CPU, the default), opencl or \"cuda -arch=sm_90\"",
       true, ""},
      threadsFlag()};
  appendSourceFlags(flags, op);
  return flags;
}

Expected<std::vector<tuner::ServedTask>> modelTasks(const std::string& model, const CommandLine& line) {
  std::string usageError;
  auto tasks = compileTasks(model, line, &usageError);
  if (!tasks) {
    Diagnostic error = tasks.error();
    // The parent's message must say which model it could not load.
    if (error.location.empty()) error.location = model;
    return error;
  }
  std::vector<tuner::ServedTask> served;
  for (auto& task : *tasks) {
    Workload workload = task.workload;
    workload.flops = task.flops;  // a fused kernel's count includes what it absorbed
    served.push_back({task.name, std::move(workload), task.defaultTrace});
  }
  return served;
}

Expected<std::vector<tuner::ServedTask>> operatorTask(const std::string& op, const CommandLine& line) {
  std::unique_ptr<OperatorSpec> spec;
  if (auto error = makeOperator(op, line, &spec)) return Diagnostic{*error, "", 0, 0, "see tessel measure-worker --help"};
  auto schedule = spec->defaultSchedule();
  if (!schedule) return schedule.error();
  return std::vector<tuner::ServedTask>{{spec->workload.name, spec->workload, schedule->trace(), spec->target}};
}

// Faults on purpose, for the tuner's tests (a crashing and a hanging candidate in a real
// session): TESSEL_MEASURE_WORKER_FAULTS="crash@3,hang@6" crashes on the 3rd request and hangs
// on the 6th, counted across every worker the session starts in the file named by
// TESSEL_MEASURE_WORKER_FAULT_COUNTER (a restarted worker must not repeat the crash forever).
class InjectedFaults {
public:
  InjectedFaults() {
    const char* spec = std::getenv("TESSEL_MEASURE_WORKER_FAULTS");
    const char* counter = std::getenv("TESSEL_MEASURE_WORKER_FAULT_COUNTER");
    if (!spec || !counter) return;
    counterPath_ = counter;
    std::string text = spec;
    size_t start = 0;
    while (start < text.size()) {
      size_t comma = text.find(',', start);
      if (comma == std::string::npos) comma = text.size();
      std::string item = text.substr(start, comma - start);
      size_t at = item.find('@');
      if (at != std::string::npos) faults_.emplace_back(item.substr(0, at), std::atoi(item.c_str() + at + 1));
      start = comma + 1;
    }
  }

  // Counts this request; crashes or hangs when it is a chosen one.
  void beforeRequest() {
    if (faults_.empty()) return;
    int count = 0;
    std::ifstream(counterPath_) >> count;
    std::ofstream(counterPath_, std::ios::trunc) << ++count;
    for (auto& [kind, at] : faults_) {
      if (at != count) continue;
      if (kind == "crash") std::raise(SIGSEGV);
      if (kind == "hang")
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  }

private:
  std::string counterPath_;
  std::vector<std::pair<std::string, int>> faults_;
};

}  // namespace

int runMeasureWorker(const std::vector<std::string>& args) {
  // The protocol owns stdout; whatever else anything prints (a library's warning) goes to
  // stderr, where the parent keeps it for messages.
  int protocolFd = ::dup(STDOUT_FILENO);
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
  std::unique_ptr<FILE, int (*)(FILE*)> protocol(::fdopen(protocolFd, "w"), &std::fclose);
  if (!protocol) return reportDiagnostic(Diagnostic{"cannot write to stdout", "", 0, 0, ""});
  auto say = [&](const std::string& line) {
    std::fputs((line + "\n").c_str(), protocol.get());
    std::fflush(protocol.get());
  };
  auto notReady = [&](const Diagnostic& error) {
    say(tuner::notReadyLine(error));
    return reportDiagnostic(error);
  };

  std::string op = operatorArgument(args);
  std::vector<FlagSpec> flags = workerFlags(op);
  CommandLine line;
  if (auto error = CommandLine::parse(args, flags, &line)) return notReady(Diagnostic{*error, "", 0, 0, ""});
  if (line.helpRequested()) {
    std::fputs((usage(std::string("tessel measure-worker ") + kSynopsis, flags) + "\n" + kDescription).c_str(),
               protocol.get());
    return kExitOk;
  }
  const auto& positional = line.positional();
  if (positional.size() > 1 || (op.empty() == positional.empty()))
    return notReady(Diagnostic{"give either a MODEL or --operator OP", "", 0, 0, "see tessel measure-worker --help"});
  if (auto error = applyThreads(line)) return notReady(Diagnostic{*error, "", 0, 0, ""});

  if (op.empty() && line.has("target"))
    return notReady(Diagnostic{"--target applies to --operator only: a model's tasks are measured on this CPU", "", 0, 0,
                               "tune a model's kernels for a GPU operator by operator (tessel tune OP --target ...)"});
  auto tasks = op.empty() ? modelTasks(positional[0], line) : operatorTask(op, line);
  if (!tasks) return notReady(tasks.error());
  tuner::MeasureServer server(std::move(*tasks));
  say(tuner::readyLine(server.taskList(), runtime::ThreadPool::global().numThreads()));
  InjectedFaults faults;
  server.serve(std::cin, say, [&] { faults.beforeRequest(); });
  return kExitOk;
}

}  // namespace tessel::cli
