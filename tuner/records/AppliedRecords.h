// Tuning records applied to a compile: a record file read for one target into the schedules the
// compiler replays (`--tuning-records`, a project's "tuning_records", the Studio), and what a
// person should hear about it afterwards.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/driver/Driver.h"
#include "compiler/schedule/Schedule.h"
#include "core/support/Error.h"
#include "core/target/Target.h"
#include "tuner/records/RecordFile.h"
#include "tuner/records/TuningDatabase.h"

namespace tessel::tuner {

/// What one compile made of the applied records.
struct TuningOutcome {
  int kernels = 0;                 ///< Kernels that take a schedule (copies of graph outputs left out).
  int tunedKernels = 0;            ///< Of those, the kernels scheduled by a record.
  int unknownWorkloadRecords = 0;  ///< Records for this target of workloads the compile did not have.
  /// Records that were found but not used, one line each naming the kernel and why (the
  /// compiler's CompiledModel::tuningNotes); those kernels kept their default schedule.
  std::vector<std::string> notes;
};

/// A record file read for one target.
struct AppliedRecords {
  std::string path;    ///< The file as it was given (what the report names).
  std::string target;  ///< The target string a record must equal to apply.
  /// The trace of the best record of every workload measured on `target`, by workload key:
  /// what CompileOptions::tunedSchedules takes. Never null.
  std::shared_ptr<const driver::TunedSchedules> schedules;
  /// Every valid record of the file, for the lookups after compiling. Never null.
  std::shared_ptr<const TuningDatabase> database;
  int recordsRead = 0;                  ///< Valid records in the file, for any target.
  std::vector<RecordProblem> problems;  ///< The lines skipped, in file order.
  int otherTargetRecords = 0;           ///< Records measured for another target, ignored.
  std::vector<std::string> otherTargets;  ///< Those targets, sorted, each once.
  /// Set by noteCompiledModel / noteCompiledOperator once a compile used `schedules`.
  std::optional<TuningOutcome> outcome;

  /// Workloads with a best record on `target`.
  int workloadCount() const { return int(schedules->traces.size()); }
};

/// Reads the record file at `path` and takes, for each workload, the best valid record measured
/// on exactly `target` (TuningDatabase::best). Corrupt and torn lines are skipped and listed in
/// `problems`; records of other targets are counted and ignored. A file that cannot be read is a
/// Diagnostic naming it.
Expected<AppliedRecords> loadTuningRecords(const std::string& path, const Target& target);

/// Records in `applied` what compiling `model` with applied.schedules made of them: kernels
/// tuned, records of workloads the model lacks, and the compiler's notes on records not used.
void noteCompiledModel(AppliedRecords& applied, const driver::CompiledModel& model);

/// The schedule of a bare operator (`tessel bench matmul ...`) from its best record on
/// applied.target: the record's trace replayed on `workload` and checked to lower. nullopt when
/// there is no record, or when the record no longer replays or lowers (said in the notes); the
/// caller then takes the default schedule. Either way the outcome is recorded in `applied`.
std::optional<Schedule> tunedOperatorSchedule(AppliedRecords& applied, const Workload& workload);

/// A few lines for a person, each starting "tuning records PATH: ": how many kernels were tuned
/// (once a compile is noted), the records of other targets ignored (which targets), the records
/// of workloads not compiled, each line skipped with its number (the first few), and each
/// record not used.
std::vector<std::string> describeAppliedRecords(const AppliedRecords& applied);

}  // namespace tessel::tuner
