// Record file maintenance for `tessel records merge` and `prune`: combining files without
// duplicates and keeping only the best records, always rewriting a file atomically.
#pragma once

#include <string>
#include <vector>

#include "core/support/Error.h"
#include "tuner/records/RecordFile.h"

namespace tessel::tuner {

/// Whether two records are the same measurement: same workload, target, trace, origin and time.
bool sameMeasurement(const TuningRecord& a, const TuningRecord& b);

/// `records` without repeated measurements (the first of each is kept, order preserved).
std::vector<TuningRecord> dropDuplicateMeasurements(std::vector<TuningRecord> records);

/// A problem found in one of several files.
struct FileProblem {
  std::string path;
  RecordProblem problem;
};

/// What a merge did.
struct MergeReport {
  int recordsRead = 0;  ///< valid records found in the inputs (and in the output beforehand)
  int duplicatesDropped = 0;
  int recordsWritten = 0;
  std::vector<FileProblem> problems;  ///< lines skipped, per file
};

/// Merges `inputs` into `output`: the records already in `output` (when it exists) and then
/// those of each input in order, each measurement once. Unreadable input lines are skipped and
/// reported. The output is written atomically. An output with lines this tessel cannot read is
/// refused unless `force` (rewriting it would lose them); a missing input is a Diagnostic, and
/// then nothing is written.
Expected<MergeReport> mergeRecordFiles(const std::vector<std::string>& inputs, const std::string& output,
                                       bool force = false);

/// How to prune.
struct PruneOptions {
  int keepPerWorkload = 1;  ///< valid records kept per (workload, target), fastest first
  bool dropErrors = false;  ///< also drop failed measurements (kept otherwise)
  bool force = false;       ///< rewrite a file in place even though some of its lines cannot be read
};

/// What a prune did.
struct PruneReport {
  int recordsRead = 0;
  int recordsKept = 0;
  int slowerDropped = 0;  ///< valid records beyond the fastest keepPerWorkload
  int errorsDropped = 0;
  std::vector<RecordProblem> problems;  ///< lines of the input skipped
};

/// Keeps, per (workload, target), the `keepPerWorkload` fastest valid records plus the fastest
/// origin=default one (so the speedup over the default stays known), and the failed records
/// unless `dropErrors`. The kept records stay in their original order.
std::vector<TuningRecord> pruneRecords(const std::vector<TuningRecord>& records, const PruneOptions& options,
                                       PruneReport* report = nullptr);

/// Prunes the file `input` into `output` (which may be `input`), atomically. Pruning in place a
/// file with lines this tessel cannot read is refused unless `options.force`.
Expected<PruneReport> pruneRecordFile(const std::string& input, const std::string& output, const PruneOptions& options);

}  // namespace tessel::tuner
