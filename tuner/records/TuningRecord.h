// One tuning record (a measured schedule of one workload on one target) and its JSON-line form.
// The format is described for users in tuner/records/Records.md.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "core/support/Error.h"

namespace tessel::tuner {

/// The record format this tessel writes and the newest it reads.
constexpr int kRecordVersion = 1;

/// Why a schedule was measured.
enum class RecordOrigin {
  Default,  ///< the hand-written default schedule (the baseline a speedup is measured against)
  Search,   ///< a candidate the search proposed
  Random,   ///< a random point of the space (exploration, and training data for the cost model)
  Control,  ///< a re-measurement of a known schedule to watch the machine's noise
  Confirm,  ///< a re-measurement of a best candidate before it is trusted
};

/// How a measurement failed.
enum class MeasureErrorKind { Lower, Build, WrongResult, Crash, Timeout, Runtime };

/// The spelling in the file: "default", "search", ...
std::string_view originName(RecordOrigin origin);
/// The spelling in the file: "lower", "build", "wrong_result", "crash", "timeout", "runtime".
std::string_view errorKindName(MeasureErrorKind kind);

/// The timings of a successful measurement, in milliseconds.
struct MeasuredTime {
  double medianMs = 0;
  double minMs = 0;
  double maxMs = 0;
  int repeats = 0;               ///< timed samples taken (at least 1)
  std::optional<double> gflops;  ///< absent when the workload's FLOP count is unknown

  bool operator==(const MeasuredTime&) const = default;
};

/// Why a measurement produced no time.
struct MeasureFailure {
  MeasureErrorKind kind = MeasureErrorKind::Runtime;
  std::string message;

  bool operator==(const MeasureFailure&) const = default;
};

/// One measured schedule: which workload, on which target, under which trace, and how it went.
struct TuningRecord {
  int version = kRecordVersion;
  std::string workload;      ///< the canonical workload key (opaque here)
  std::string workloadHash;  ///< 16 hex digits identifying the workload (opaque here)
  std::string task;          ///< the kernel's name in the model it came from; informational
  std::string target;        ///< the target string; records match a target by exact equality
  std::string trace;         ///< the schedule as trace text (may span several lines)
  RecordOrigin origin = RecordOrigin::Search;
  int round = 0;                                       ///< the session's round that measured it; 0 for none
  std::optional<double> prediction;                    ///< the cost model's score before measuring
  /// The candidate's place in the search space it came from ("1:3,0,2", SearchSpace::pointKey),
  /// so a resumed session knows which points it has measured; empty when not from a space.
  std::string point;
  std::variant<MeasuredTime, MeasureFailure> outcome;  ///< exactly one of result and error
  std::string time;                                    ///< when it was measured, "2026-11-25T12:34:56Z" (UTC)

  /// The timings, or nullptr when the measurement failed.
  const MeasuredTime* result() const { return std::get_if<MeasuredTime>(&outcome); }
  /// The failure, or nullptr when the measurement succeeded.
  const MeasureFailure* failure() const { return std::get_if<MeasureFailure>(&outcome); }

  /// Every field equal (what a write and a read give back).
  bool operator==(const TuningRecord&) const = default;
};

/// The record as one JSON object on one line, without a trailing newline (the trace's
/// newlines are escaped). Fields appear in the order Records.md lists them.
std::string toJsonLine(const TuningRecord& record);

/// Reads one JSON line. A Diagnostic names the offending field ("field 'result.median_ms':
/// expected a number") and leaves `line` at 0 for the caller to fill. A record of a version
/// newer than kRecordVersion is refused; when `newerVersion` is given it receives that version
/// (0 otherwise), so a file reader can tell "written by a newer tessel" from "corrupt".
/// Unknown fields are ignored, so a later writer of the same version may add optional ones.
Expected<TuningRecord> parseRecordLine(std::string_view line, int* newerVersion = nullptr);

/// `when` as the records' timestamp form, "2026-11-25T12:34:56Z" (UTC, whole seconds).
std::string utcTimestamp(std::chrono::system_clock::time_point when = std::chrono::system_clock::now());

}  // namespace tessel::tuner
