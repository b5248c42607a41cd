// The line protocol between the tuner and its measuring worker (`tessel measure-worker`): one
// JSON object per line each way. Both sides use these functions, so the protocol is written
// down once.
//
// The worker starts, compiles its model (or operator) once and prints one line:
//   {"ready": true, "threads": 2, "tasks": [{"name": "...", "workload": "...", "flops": 2e6}, ...]}
//   {"ready": false, "error": {"kind": "start", "message": ..., "location": ..., "hint": ...}}
// (after the second it exits with code 2). Then, for every request line on its stdin:
//   {"id": 7, "task": "<kernel name>", "trace": "<schedule text>", "check": true,
//    "min_seconds": 0.1, "min_repeats": 5, "max_repeats": 200, "warmup_calls": 1, "seed": 42}
// (optionally "batch": n, see MeasureRequest::batch, "turns": t with it, see
// MeasureRequest::turns, and "flush_caches": true)
// it prints exactly one reply line, in order:
//   {"id": 7, "ok": true, "median_ms", "min_ms", "max_ms", "samples", "gflops", "checked",
//    "max_abs_error" (when checked), "build_ms", "check_ms", "time_ms"}
//   {"id": 7, "ok": false, "error": {"kind", "message", "location", "line", "column", "hint"}}
// (both with "build_ms", "check_ms" and "time_ms": the worker's time, for the tuner's summary;
// location, line, column and hint only when known). A wrong_result message names the worst
// element and both values (OutputComparison.h states the tolerance).
// A line that is not a JSON object with an integer id is answered with "id": null and kind
// "request"; the worker keeps serving. End of file on stdin ends it (exit code 0). Nothing
// else is written on its stdout: logs go to stderr.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/support/Error.h"

namespace tessel::tuner {

/// Why a candidate has no time. The first six come from the worker, the rest from the side
/// that runs it.
enum class CandidateErrorKind {
  Request,      ///< the request itself was malformed (not JSON, unknown task, bad number)
  Parse,        ///< the schedule text does not parse (line and column given)
  Lower,        ///< the schedule does not apply or lower (unknown axis, bad factor, ...)
  Build,        ///< code generation failed
  WrongResult,  ///< it built and ran but computes something else than the default schedule
  Runtime,      ///< running it failed (an error, not a crash)
  Crash,        ///< the worker died while on it (a signal, or an unexpected exit)
  Timeout,      ///< no reply within the time limit: the worker was killed
  Cancelled,    ///< the caller cancelled: the worker was killed
  Start,        ///< the worker could not be started or never got ready
  Protocol,     ///< the worker answered something this side cannot read
};

/// The spelling on the wire: "request", "parse", "lower", "build", "wrong_result", "runtime",
/// "crash", "timeout", "cancelled", "start", "protocol".
std::string_view candidateErrorKindName(CandidateErrorKind kind);
std::optional<CandidateErrorKind> parseCandidateErrorKind(std::string_view name);

/// One candidate to measure.
struct MeasureRequest {
  std::string task;   ///< The kernel's name (a task of the worker's ready line).
  std::string trace;  ///< The schedule as text (replaces the task's default schedule).
  /// Run it once first and compare every output with the default schedule's on the same
  /// inputs (see OutputComparison.h); a mismatch is WrongResult and nothing is timed.
  bool check = true;
  double minSeconds = 0.1;  ///< Sample until the samples add up to this long...
  int minRepeats = 5;       ///< ...and there are this many of them...
  int maxRepeats = 200;     ///< ...but never more than this many.
  int warmupCalls = 1;
  unsigned seed = 42;  ///< Seed of the random inputs (measureKernel's).
  /// Evict every argument but the first from the caches before each timed call
  /// (driver::MeasureOptions::flushCaches): weights come from memory, as in a model.
  bool flushCaches = false;
  /// More than 1: this request starts a batch of this many (it and the next batch - 1 request
  /// lines, which the sender writes at once). The worker builds the whole batch in parallel,
  /// prints one line {"built": n, "build_ms": ...} (no id), then checks and times each request
  /// in order, replying to each as usual. Building in parallel uses every core; timing one at a
  /// time keeps the compiler off the cores a timing runs on.
  int batch = 1;
  /// On a batch's first request, more than 1: the batch is timed in turns
  /// (driver::timeBuiltKernelsInTurns), so that its candidates compare on a machine whose speed
  /// drifts. The worker then builds the batch (its "built" line), checks every request in order,
  /// prints {"checked": n, "check_ms": ...} (no id), times those that passed in this many turns,
  /// and only then replies to each request in order, a failed check included.
  int turns = 1;
  /// Parent side only, never sent: the reply's time limit in seconds; 0 or less:
  /// defaultCandidateTimeout(*this).
  double timeoutSeconds = 0;
};

/// 10 s (building, a first call) plus 20 times minSeconds (sampling on a loaded machine).
double defaultCandidateTimeout(const MeasureRequest& request);

struct CandidateFailure {
  CandidateErrorKind kind = CandidateErrorKind::Runtime;
  /// What went wrong; a schedule error keeps the line and column in the trace text.
  Diagnostic diagnostic;
};

/// What measuring one candidate gave: times, or the failure.
struct CandidateMeasurement {
  std::optional<CandidateFailure> failure;  ///< Set: nothing was timed.
  double medianMilliseconds = 0;
  double minMilliseconds = 0;
  double maxMilliseconds = 0;
  int samples = 0;
  double gflops = 0;
  bool checked = false;    ///< The outputs were compared with the default schedule's...
  double maxAbsError = 0;  ///< ...and differed at most by this much.
  /// Where the worker's time went (what the tuner's summary adds up): lowering and LLVM,
  /// the correctness check (with the default schedule's outputs when first needed), timing.
  double buildMilliseconds = 0;
  double checkMilliseconds = 0;
  double timingMilliseconds = 0;

  bool ok() const { return !failure; }
};

/// A task the worker serves, as its ready line lists it.
struct WorkerTask {
  std::string name;      ///< The kernel's name, what requests ask for.
  std::string workload;  ///< The workload's name ("matmul_64x64x64").
  double flops = 0;      ///< Floating-point operations per call.
};

/// The worker's first line.
struct WorkerReady {
  bool ready = false;
  int threads = 0;
  std::vector<WorkerTask> tasks;
  Diagnostic error;  ///< Why not, when not ready.
};

std::string readyLine(const std::vector<WorkerTask>& tasks, int threads);
std::string notReadyLine(const Diagnostic& error);
/// A Diagnostic when `line` is not a ready line at all.
Expected<WorkerReady> parseReadyLine(std::string_view line);

/// The request line the tuner sends.
std::string requestLine(int64_t id, const MeasureRequest& request);

/// A request line as the worker reads it: the request, or the failure to answer with (with
/// the id when the line had one).
struct ParsedRequest {
  std::optional<int64_t> id;
  MeasureRequest request;
  std::optional<CandidateFailure> failure;
};
ParsedRequest parseRequestLine(std::string_view line);

/// The worker's reply line (a null id when `id` is empty).
std::string replyLine(std::optional<int64_t> id, const CandidateMeasurement& measurement);

/// The line the worker prints when a batch is built (before its first reply).
std::string builtLine(int count, double buildMilliseconds);
/// Whether `line` is that line.
bool isBuiltLine(std::string_view line);

/// The line the worker prints when a batch timed in turns is checked (before its first reply).
std::string checkedLine(int count, double checkMilliseconds);
/// Whether `line` is that line.
bool isCheckedLine(std::string_view line);

/// The id of a reply line, when `line` is a JSON object with an integer id; the caller skips
/// lines that answer something else.
std::optional<int64_t> replyId(std::string_view line);
/// Reads a reply line; a reply this side cannot read is a Protocol failure.
CandidateMeasurement parseReplyLine(std::string_view line);

}  // namespace tessel::tuner
