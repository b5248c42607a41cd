// Reading --tuning-records and reporting what the records did.
#include "app/cli/TuningRecordsFlag.h"

#include <iostream>

namespace tessel::cli {

FlagSpec tuningRecordsFlag() {
  return {"tuning-records",
          "FILE of tuning records (.jsonl): a kernel whose workload has a record measured on exactly\n"
          "                        this target replays the best one instead of its default schedule",
          true, ""};
}

Expected<std::optional<tuner::AppliedRecords>> readTuningRecordsFlag(const CommandLine& line,
                                                                     driver::CompileOptions* options) {
  if (!line.has("tuning-records")) return std::optional<tuner::AppliedRecords>();
  auto applied = tuner::loadTuningRecords(line.get("tuning-records"), options->target);
  if (!applied) return applied.error();
  options->tunedSchedules = applied->schedules;
  return std::optional<tuner::AppliedRecords>(std::move(*applied));
}

void reportTuningRecords(tuner::AppliedRecords& applied, const driver::CompiledModel& model) {
  tuner::noteCompiledModel(applied, model);
  reportTuningRecords(applied);
}

void reportTuningRecords(const tuner::AppliedRecords& applied) {
  for (const std::string& line : tuner::describeAppliedRecords(applied)) std::cerr << line << "\n";
}

int tunedKernelCount(const driver::CompiledModel& model) {
  int tuned = 0;
  for (const driver::CompiledKernel& kernel : model.kernels)
    if (kernel.tuned) ++tuned;
  return tuned;
}

}  // namespace tessel::cli
