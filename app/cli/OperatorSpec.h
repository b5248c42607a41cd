// The operators the CLI can lower and benchmark, built from command-line flags.
#pragma once

#include <functional>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "app/cli/CommandLine.h"
#include "compiler/ops/Conv2d.h"
#include "compiler/ops/Matmul.h"
#include "tuner/records/AppliedRecords.h"

namespace tessel::cli {

/// One operator instance with everything a command needs.
struct OperatorSpec {
  Workload workload;
  /// Where the operator runs: the host, or the GPU that --target names.
  Target target;
  /// The default schedule for this operator and host.
  std::function<Expected<Schedule>()> defaultSchedule;
  /// A plain C++ implementation: reads inputs, writes the output (for checking results).
  std::function<void(const std::vector<const float*>& inputs, float* output)> reference;
};

/// Flags of an operator ("matmul", "dense", "bf16_matmul", "int8_matmul": m, n, k; "conv2d": n, c, h, w,
/// k, r, s, stride, pad).
std::vector<FlagSpec> operatorFlags(const std::string& op);
/// Known operator names, for help text.
std::vector<std::string> operatorNames();
/// Builds the operator from parsed flags, or returns an error message.
std::optional<std::string> makeOperator(const std::string& op, const CommandLine& flags,
                                        std::unique_ptr<OperatorSpec>* out);

/// The schedule to use: the default, or the trace in `path` replayed (errors name the
/// file, line and column).
Expected<Schedule> loadSchedule(const OperatorSpec& spec, const std::string& path);

/// An operator command (`tessel lower OP ...`, `tessel bench OP ...`) after parsing: the
/// operator, its flags and the schedule to use.
struct OperatorCommand {
  std::unique_ptr<OperatorSpec> spec;
  CommandLine line;
  std::optional<Schedule> schedule;
  std::string schedulePath;
  /// With --tuning-records: the records, and whether the schedule is the operator's record
  /// (outcome->tunedKernels is 1) or the default.
  std::optional<tuner::AppliedRecords> tuningRecords;
  /// A diagnostic from lowering, located in the schedule file when one was given.
  Diagnostic locate(Diagnostic d) const;
};

/// Parses `OP [flags]` for `command` ("lower", "bench"): the operator's flags, `extraFlags`,
/// --schedule and --tuning-records (the operator's best record on this target replaces the
/// default schedule; what it did goes to stderr). --threads, when among `extraFlags`, is applied
/// first, since the target the operator is built and looked up for counts the threads. Returns
/// an exit code when there is nothing more to do (help printed, or an error reported on
/// stderr); otherwise fills `out` and returns nullopt.
std::optional<int> parseOperatorCommand(const std::string& command, const std::vector<std::string>& args,
                                        const std::vector<FlagSpec>& extraFlags, const std::string& description,
                                        OperatorCommand* out);

}  // namespace tessel::cli
