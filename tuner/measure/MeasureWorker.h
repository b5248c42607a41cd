// The tuner's side of measuring: one persistent `tessel measure-worker` child per model (or
// operator), sent one candidate at a time. The child compiles the model once instead of once
// per candidate; a candidate that crashes or hangs it costs a restart, never the session
// (DESIGN.md, "Measurement is isolated").
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "compiler/driver/Driver.h"
#include "compiler/driver/IsolatedMeasure.h"
#include "core/support/Error.h"
#include "tuner/measure/MeasureProtocol.h"

namespace tessel {
class InteractiveChildProcess;
struct ChildLine;
}  // namespace tessel

namespace tessel::tuner {

/// A model whose tasks the worker serves: it imports and compiles the model with these options
/// (as `tessel measure` does), which gives the kernels the names they have in this process.
/// Only the pass options of `compile` travel; the worker compiles for its own host.
struct WorkerModelSource {
  std::string modelPath;
  driver::LoadOptions load;  ///< Input shapes become --input-shape, values --input files.
  driver::CompileOptions compile;
};

/// What the worker compiles once: a model's tasks, or one bare operator (its one task is
/// named after its workload).
using WorkerSource = std::variant<WorkerModelSource, driver::OperatorSource>;

struct MeasureWorkerOptions {
  WorkerSource source;
  /// Threads of the worker's parallel loops; 0 or less: its default (TESSEL_NUM_THREADS or
  /// every core).
  int threads = 0;
  /// The tessel executable (or a stand-in speaking the protocol); empty: findTesselExecutable().
  std::string tesselPath;
  /// How long the worker may take to import and compile before its ready line.
  double startTimeoutSeconds = 300;
  /// Polled every 20 ms while waiting for the worker; true kills it at once, and the
  /// candidate (or the start) fails with kind Cancelled. Called on the measuring thread.
  std::function<bool()> cancelled;
};

/// Where the time went, for the tuner's summary. Seconds, summed over the worker's life.
struct MeasureWorkerStatistics {
  int starts = 0;     ///< Children started (the first start included).
  int restarts = 0;   ///< Starts after a child was lost (crash, timeout, cancel).
  int crashes = 0;
  int timeouts = 0;
  int candidates = 0;  ///< Requests answered (failures included).
  double startSeconds = 0;  ///< From starting a child to its ready line (import and compile).
  /// As the worker reported them: building (lowering and LLVM), checking outputs, timing.
  double buildSeconds = 0;
  double checkSeconds = 0;
  double timingSeconds = 0;
  /// Waiting for replies in all: the three above plus transport, crashes and timeouts.
  double requestSeconds = 0;
};

/// One worker child for one model or operator. It starts on the first measure() (or start())
/// and is replaced after it crashes, hangs or is cancelled, on the next request.
///
/// Not thread-safe: one thread measures (one request at a time, which is also what timing on
/// a machine of a few cores wants). Only options.cancelled may look at other threads' state.
class MeasureWorker {
public:
  explicit MeasureWorker(MeasureWorkerOptions options);
  /// Ends the child: closes its stdin (it exits), kills it after a second.
  ~MeasureWorker();
  MeasureWorker(const MeasureWorker&) = delete;
  MeasureWorker& operator=(const MeasureWorker&) = delete;

  /// Starts the child now unless it runs, and waits for its ready line. A worker that cannot
  /// load its model says so ("cannot open model file" naming the file): that Diagnostic, which
  /// every later call returns again without starting another child, since the source will
  /// not change.
  Status start();

  /// Sends one candidate and waits for its reply, up to request.timeoutSeconds (0 or less:
  /// defaultCandidateTimeout). Every outcome is in the result: the worker's own failures
  /// (parse, lower, build, wrong_result, runtime), and this side's: crash (the signal or exit
  /// code, and the end of the worker's stderr), timeout (the worker was killed), cancelled,
  /// start (the worker could not be started), protocol.
  CandidateMeasurement measure(const MeasureRequest& request);

  /// Measures several candidates as one batch (MeasureRequest::batch): the worker builds them
  /// all in parallel, then checks and times each in turn. `onResult(i, measurement)` hears each
  /// outcome as soon as it is known, in order, so a caller can record it before the next.
  /// Each request's limit applies to its own check and timing; the build phase may take the
  /// sum of the limits. A crash or hang while the batch is being built cannot be pinned on one
  /// candidate: the batch is then measured again one candidate at a time, so only the guilty one
  /// is blamed. After a crash or hang while one is timed, that one is blamed and the rest go on
  /// in a new batch. Cancelling gives every remaining candidate kind Cancelled.
  void measureBatch(const std::vector<MeasureRequest>& requests,
                    const std::function<void(size_t index, const CandidateMeasurement& measurement)>& onResult);

  /// The tasks of the ready line (empty before the first start).
  const std::vector<WorkerTask>& tasks() const { return tasks_; }
  const MeasureWorkerStatistics& statistics() const { return statistics_; }
  /// The running child's process id, or -1 (for tests that check it is gone).
  int processId() const;
  /// "model.onnx" or "operator matmul", for messages.
  std::string sourceLabel() const;

private:
  std::optional<CandidateFailure> ensureStarted();
  void dropChild();
  CandidateMeasurement lose(CandidateErrorKind kind, Diagnostic diagnostic);
  std::string stderrTail() const;
  // What the worker's death or silence means for the candidate it was on.
  CandidateMeasurement lost(ChildLine line, const MeasureRequest& request, double limit);

  class InputFiles;
  MeasureWorkerOptions options_;
  std::unique_ptr<InputFiles> inputFiles_;
  std::unique_ptr<InteractiveChildProcess> child_;
  std::optional<CandidateFailure> permanentFailure_;
  std::vector<WorkerTask> tasks_;
  MeasureWorkerStatistics statistics_;
  int64_t nextId_ = 0;
  bool lostChild_ = false;   // the next start is a restart
  int failedStarts_ = 0;     // in a row
};

/// The arguments (after the program name) a worker for `options` is started with, given where
/// each input value was written (by input name).
std::vector<std::string> measureWorkerArguments(const MeasureWorkerOptions& options,
                                                const std::map<std::string, std::string>& inputFiles = {});

}  // namespace tessel::tuner
