// Running a project headless, as CI does (`tessel project run`) and the Studio's "Run project":
// import, apply the saved schedules, compile, verify against reference data, benchmark, check
// the expectations, export.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/project/Project.h"
#include "compiler/driver/RunModel.h"
#include "core/support/Error.h"
#include "tuner/records/AppliedRecords.h"

namespace tessel::project {

/// Overrides of the project's own settings for one run (command-line flags).
struct ProjectRunOptions {
  std::optional<int> threads;             ///< Instead of target.threads (and benchmark.threads).
  std::optional<int> repeats;             ///< Instead of benchmark.repeats.
  std::optional<std::string> exportDirectory;  ///< Export there, whatever the project says.
  /// Tuning records to apply instead of the project's tuning_records ("" applies none).
  std::optional<std::string> tuningRecords;
  /// Told the stage about to start ("compiling", "benchmarking", ...), on the calling thread.
  std::function<void(const std::string& stage)> progress;
  /// Asked between stages; true stops the run with a Diagnostic saying it was cancelled.
  std::function<bool()> cancelled;
};

/// One benchmark expectation, checked.
struct ExpectationResult {
  std::string name;     ///< "max_latency_ms", "max_ratio" or "max_tuned_ratio".
  double measured = 0;  ///< Milliseconds, or the ratio to the baseline.
  double limit = 0;
  bool passed = false;
  /// For max_ratio the saved measurement the ratio is of, for max_tuned_ratio the latency
  /// without the tuning records; else 0.
  double baselineMs = 0;
  std::string unchecked;  ///< Why it could not be checked (it then fails); empty when it was.
  /// "max_latency_ms: measured 0.41 ms, limit 50 ms: PASS", "max_ratio: measured 1.62x of the
  /// 0.25 ms baseline (0.405 ms), limit 1.5x: FAIL", "max_tuned_ratio: measured 0.97x of the
  /// 6.7 ms without tuning records (6.5 ms), limit 1x: PASS".
  std::string describe() const;
};

/// What a run found. When the outputs differ from the reference the run stops there (timing
/// wrong code means nothing): benchmarked is false and there are no expectations.
struct ProjectRunReport {
  std::string model;
  int threads = 0;
  int tasksEdited = 0;  ///< Kernels compiled with the project's schedules instead of the defaults.
  /// The tuning records applied (the project's or the override), with what the compile made of
  /// them (outcome: kernels tuned, records not used); empty when there were none. A kernel the
  /// project edits takes the edit, not its record.
  std::optional<tuner::AppliedRecords> tuningRecords;
  int tunedKernels = 0;  ///< Kernels scheduled by a tuning record.
  double loadSeconds = 0, compileSeconds = 0;
  /// One per output when the project names reference data, else empty.
  std::vector<driver::OutputComparison> comparisons;
  bool benchmarked = false;
  int runs = 0;
  double latencyMs = 0;  ///< The median of the timed runs.
  double minMs = 0;
  /// With benchmark.max_tuned_ratio: the median latency of the model compiled without the
  /// tuning records, timed in turns with it (latencyMs is then from the same turns); else 0.
  double untunedLatencyMs = 0;
  std::vector<ExpectationResult> expectations;
  std::string exportedTo;  ///< The module directory written, or empty.
  /// What the compiler made (kernels with the project's schedules applied).
  std::shared_ptr<const driver::CompiledModel> compiled;

  bool outputsMatch() const;       ///< True when there is nothing to compare.
  bool expectationsMet() const;    ///< True when there are none.
};

/// Runs `project`. The thread count changes the runtime's global thread pool (the run is
/// measured with it, as `tessel bench --threads` does). Inputs come from the reference data
/// when named, else they are random (floats uniform in [-1, 1] from a fixed seed, integers
/// zero). Every problem (model, pass options, tuning records that cannot be read, a schedule
/// edit, reference data of another shape, an export that cannot be written) is a Diagnostic; a mismatch or a failed
/// expectation is not an error but part of the report.
Expected<ProjectRunReport> runProject(const Project& project, const ProjectRunOptions& options = {});

}  // namespace tessel::project
