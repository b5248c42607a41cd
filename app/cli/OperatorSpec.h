// The operators the CLI can lower and benchmark, built from command-line flags.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "app/cli/CommandLine.h"
#include "compiler/ops/Conv2d.h"
#include "compiler/ops/Matmul.h"

namespace tessel::cli {

/// One operator instance with everything a command needs.
struct OperatorSpec {
  Workload workload;
  /// The default schedule for this operator and host.
  std::function<Expected<Schedule>()> defaultSchedule;
  /// A plain C++ implementation: reads inputs, writes the output (for checking results).
  std::function<void(const std::vector<const float*>& inputs, float* output)> reference;
};

/// Flags of an operator ("matmul": m, n, k; "conv2d": n, c, h, w, k, r, s, stride, pad).
std::vector<FlagSpec> operatorFlags(const std::string& op);
/// Known operator names, for help text.
std::vector<std::string> operatorNames();
/// Builds the operator from parsed flags, or returns an error message.
std::optional<std::string> makeOperator(const std::string& op, const CommandLine& flags,
                                        std::unique_ptr<OperatorSpec>* out);

/// The schedule to use: the default, or the trace in `path` replayed (errors name the
/// file, line and column).
Expected<Schedule> loadSchedule(const OperatorSpec& spec, const std::string& path);

}  // namespace tessel::cli
