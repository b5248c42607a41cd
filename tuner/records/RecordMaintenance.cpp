// Merging and pruning record files.
#include "tuner/records/RecordMaintenance.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

namespace tessel::tuner {

namespace {

namespace fs = std::filesystem;

auto measurementIdentity(const TuningRecord& record) {
  return std::tie(record.workload, record.target, record.trace, record.origin, record.time);
}

// Rewriting a file drops the lines this tessel could not read (corrupt, torn, or written by a
// newer tessel): only with the user's consent.
Status checkRewriteKeepsEverything(const std::string& path, const RecordFileContents& contents, bool force) {
  if (contents.problems.empty() || force) return Status::success();
  size_t lost = contents.problems.size() + std::max(0, contents.newerVersionRecords - 1);
  return Diagnostic{"has " + std::to_string(lost) + " line(s) this tessel cannot read (" +
                        contents.problems.front().describe() + "); rewriting it would lose them",
                    path, 0, 0, "--force rewrites it anyway; or write the result to another file"};
}

bool sameFile(const std::string& a, const std::string& b) {
  std::error_code error;
  return a == b || fs::equivalent(a, b, error);
}

}  // namespace

bool sameMeasurement(const TuningRecord& a, const TuningRecord& b) {
  return measurementIdentity(a) == measurementIdentity(b);
}

std::vector<TuningRecord> dropDuplicateMeasurements(std::vector<TuningRecord> records) {
  using Identity = std::tuple<std::string, std::string, std::string, RecordOrigin, std::string>;
  std::set<Identity> seen;
  std::vector<TuningRecord> out;
  for (TuningRecord& record : records)
    if (seen.insert(Identity(measurementIdentity(record))).second) out.push_back(std::move(record));
  return out;
}

Expected<MergeReport> mergeRecordFiles(const std::vector<std::string>& inputs, const std::string& output, bool force) {
  MergeReport report;
  std::vector<TuningRecord> records;
  auto take = [&](const std::string& path, RecordFileContents contents) {
    report.recordsRead += int(contents.records.size());
    for (RecordProblem& problem : contents.problems) report.problems.push_back({path, std::move(problem)});
    std::move(contents.records.begin(), contents.records.end(), std::back_inserter(records));
  };
  auto lock = RecordRewriteLock::acquire(output);
  if (!lock) return lock.error();
  std::error_code ignored;
  if (fs::exists(output, ignored)) {
    auto existing = readRecordFile(output);
    if (!existing) return existing.error();
    if (Status safe = checkRewriteKeepsEverything(output, *existing, force); !safe) return safe.error();
    take(output, std::move(*existing));
  }
  for (const std::string& input : inputs) {
    if (fs::exists(output, ignored) && sameFile(input, output)) continue;  // already read as the output
    auto contents = readRecordFile(input);
    if (!contents) return contents.error();
    take(input, std::move(*contents));
  }
  records = dropDuplicateMeasurements(std::move(records));
  report.duplicatesDropped = report.recordsRead - int(records.size());
  report.recordsWritten = int(records.size());
  if (Status written = writeRecordFileAtomically(output, records); !written) return written.error();
  return report;
}

std::vector<TuningRecord> pruneRecords(const std::vector<TuningRecord>& records, const PruneOptions& options,
                                       PruneReport* report) {
  // Per (workload, target), the valid records' indices, fastest first (stable: earlier wins ties).
  std::map<std::pair<std::string, std::string>, std::vector<size_t>> valid;
  for (size_t i = 0; i < records.size(); ++i)
    if (records[i].result()) valid[{records[i].workload, records[i].target}].push_back(i);
  std::vector<bool> keep(records.size(), false);
  for (auto& [key, indices] : valid) {
    std::stable_sort(indices.begin(), indices.end(),
                     [&](size_t a, size_t b) { return records[a].result()->medianMs < records[b].result()->medianMs; });
    for (size_t rank = 0; rank < indices.size() && rank < size_t(std::max(0, options.keepPerWorkload)); ++rank)
      keep[indices[rank]] = true;
    auto firstDefault = std::find_if(indices.begin(), indices.end(),
                                     [&](size_t i) { return records[i].origin == RecordOrigin::Default; });
    if (firstDefault != indices.end()) keep[*firstDefault] = true;
  }

  PruneReport counts;
  std::vector<TuningRecord> out;
  for (size_t i = 0; i < records.size(); ++i) {
    bool failed = !records[i].result();
    if (failed ? !options.dropErrors : keep[i])
      out.push_back(records[i]);
    else
      ++(failed ? counts.errorsDropped : counts.slowerDropped);
  }
  if (report) {
    report->recordsRead = int(records.size());
    report->recordsKept = int(out.size());
    report->slowerDropped = counts.slowerDropped;
    report->errorsDropped = counts.errorsDropped;
  }
  return out;
}

Expected<PruneReport> pruneRecordFile(const std::string& input, const std::string& output,
                                      const PruneOptions& options) {
  auto lock = RecordRewriteLock::acquire(output);
  if (!lock) return lock.error();
  auto contents = readRecordFile(input);
  if (!contents) return contents.error();
  if (sameFile(input, output))
    if (Status safe = checkRewriteKeepsEverything(input, *contents, options.force); !safe) return safe.error();
  PruneReport report;
  std::vector<TuningRecord> kept = pruneRecords(contents->records, options, &report);
  report.problems = std::move(contents->problems);
  if (Status written = writeRecordFileAtomically(output, kept); !written) return written.error();
  return report;
}

}  // namespace tessel::tuner
