// The --tuning-records FILE flag of every command that compiles (compile, run, bench, inspect,
// lower, project run): its spec, the file read for the compile's target, and the report of what
// it did, printed on stderr so that stdout stays key=value.
#pragma once

#include <optional>
#include <string>

#include "app/cli/CommandLine.h"
#include "compiler/driver/Driver.h"
#include "tuner/records/AppliedRecords.h"

namespace tessel::cli {

/// --tuning-records FILE.
FlagSpec tuningRecordsFlag();

/// With --tuning-records: reads the file for options->target (so read it after --threads, which
/// the target's string includes) and sets options->tunedSchedules; the records come back for the
/// report after compiling. nullopt without the flag. A Diagnostic naming a file that cannot be
/// read.
Expected<std::optional<tuner::AppliedRecords>> readTuningRecordsFlag(const CommandLine& line,
                                                                     driver::CompileOptions* options);

/// Notes what `model` made of the records and prints the report (describeAppliedRecords) on
/// stderr.
void reportTuningRecords(tuner::AppliedRecords& applied, const driver::CompiledModel& model);
/// Prints the report of records already noted (a bare operator's) on stderr.
void reportTuningRecords(const tuner::AppliedRecords& applied);

/// Kernels of `model` scheduled by a tuning record (`tuned_kernels=` in the key=value output).
int tunedKernelCount(const driver::CompiledModel& model);

}  // namespace tessel::cli
