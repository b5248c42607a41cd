// The measuring worker's side of the protocol (MeasureProtocol.h): the tasks of one model (or
// one operator), compiled once, and each request built, checked against the default schedule
// and timed. `tessel measure-worker` runs it in a child process of the tuner, so a candidate
// that crashes or hangs takes only that process down.
#pragma once

#include <functional>
#include <istream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/lower/Build.h"
#include "compiler/ops/Workload.h"
#include "compiler/schedule/Primitive.h"
#include "runtime/NDArray.h"

namespace tessel::runtime {
class GpuModuleRunner;
}
#include "tuner/measure/MeasureProtocol.h"
#include "tuner/measure/OutputComparison.h"

namespace tessel::tuner {

/// One task the worker measures.
struct ServedTask {
  std::string name;    ///< The kernel's name (requests ask for it).
  Workload workload;   ///< Its tensors; workload.flops is the task's count (GFLOP/s use it).
  Trace defaultTrace;  ///< The default schedule: what a checked candidate must agree with.
  /// Where it runs: the host (built by LLVM, called in this process), or a GPU target, whose
  /// candidates are exported as GPU modules and run on the device the runtime finds (OpenCL
  /// through PoCL on a CPU, or a GPU), each timing sample one device-timed run.
  Target target;
};

/// Answers requests for a fixed set of tasks. Each request is handled start to end before the
/// next: build (lowering and LLVM), then the check, then timing. Building the next candidate
/// while one is timed would be faster, but on a machine of a few cores the compiler's work
/// would disturb the timing it runs beside, and a timing is all a measurement is for.
/// A batch (MeasureRequest::batch) is built in parallel first, and with MeasureRequest::turns
/// its candidates are checked and then timed together, in turns.
/// Not thread-safe (one request at a time).
class MeasureServer {
public:
  explicit MeasureServer(std::vector<ServedTask> tasks, OutputTolerance tolerance = {});

  /// The tasks as the ready line lists them.
  std::vector<WorkerTask> taskList() const;

  /// Measures one candidate. Never throws for anything a request contains: a compiler
  /// internal error while lowering or building one candidate is that candidate's failure.
  CandidateMeasurement measure(const MeasureRequest& request);

  /// The reply line to one request line.
  std::string handleLine(std::string_view line);

  /// Reads request lines from `requests` until its end, handing each reply line to `reply`
  /// (which must write and flush it). Blank lines are skipped. `beforeEach`, when given, is
  /// called before each request is handled (the worker's fault injection for tests).
  void serve(std::istream& requests, const std::function<void(const std::string& line)>& reply,
             const std::function<void()>& beforeEach = nullptr);

private:
  // A request parsed and built, or why not (built on any thread: it touches no member).
  struct Prepared {
    const ServedTask* task = nullptr;
    std::optional<BuiltFunction> built;
    std::string gpuModule;  // for a GPU target: the .tgpu text, built instead
    // Its program on the device, made by the check (or the timing) and kept for the other.
    std::shared_ptr<runtime::GpuModuleRunner> gpuRunner;
    double buildMilliseconds = 0;
    std::optional<CandidateMeasurement> failure;
  };
  Prepared prepare(const MeasureRequest& request) const;
  std::vector<Prepared> prepareInParallel(const std::vector<MeasureRequest>& requests) const;
  // Checks and times what prepare() built.
  CandidateMeasurement finish(Prepared prepared, const MeasureRequest& request);
  // The check alone: the measurement so far (build and check times), failed or not.
  CandidateMeasurement check(Prepared& prepared, const MeasureRequest& request);
  // A GPU candidate's program on the device, made once for its check and its timing.
  static Expected<runtime::GpuModuleRunner*> gpuRunnerOf(Prepared& prepared, unsigned seed);
  // The rest of a batch whose first request asks for `turns` (MeasureRequest::turns), once
  // `prepared` (one per request without a parse failure, in order) is built.
  void serveInTurns(const std::vector<ParsedRequest>& batch, std::vector<Prepared>& prepared, int turns,
                    const std::function<void(const std::string& line)>& reply, const std::function<void()>& beforeEach);

  // The default schedule's outputs on the inputs of `seed`, computed once per task and seed.
  Expected<std::vector<runtime::NDArray>> referenceOutputs(const ServedTask& task, unsigned seed);

  std::vector<ServedTask> tasks_;
  OutputTolerance tolerance_;
  std::map<std::pair<std::string, unsigned>, std::vector<runtime::NDArray>> references_;
};

}  // namespace tessel::tuner
