// What the model commands (compile, run, bench MODEL, inspect) share: parsing MODEL and its
// flags, and turning --input-shape, --opt-level, --disable-pass, --pass-config and --threads
// into options.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "app/cli/CommandLine.h"
#include "compiler/driver/Driver.h"

namespace tessel::cli {

/// --input-shape NAME:D0,D1,... (repeatable).
FlagSpec inputShapeFlag();
/// --opt-level N, --disable-pass NAME (repeatable) and --pass-config KEY=VALUE (repeatable;
/// its help lists every pass option of the standard pipeline, with values and defaults).
std::vector<FlagSpec> passFlags();
/// --threads T.
FlagSpec threadsFlag();

/// A model command after parsing: its one positional argument (the model) and its flags.
struct ModelCommand {
  std::string model;
  CommandLine line;
};

/// Parses `MODEL [flags]` for `tessel <command>`. Returns an exit code when there is nothing
/// more to do (help printed, or a usage error reported on stderr); otherwise fills `out`.
std::optional<int> parseModelCommand(const std::string& command, const std::string& synopsis,
                                     const std::string& description, const std::vector<std::string>& args,
                                     const std::vector<FlagSpec>& flags, ModelCommand* out);

/// Reads --input-shape values into `options`; an error message for a malformed one.
std::optional<std::string> readInputShapes(const CommandLine& line, driver::LoadOptions* options);
/// Reads --opt-level, --disable-pass and --pass-config (where the command has them) into
/// `options`; an error message for a malformed or unknown one.
std::optional<std::string> readPassOptions(const CommandLine& line, driver::CompileOptions* options);
/// Applies --threads (when given) to the runtime's thread pool.
std::optional<std::string> applyThreads(const CommandLine& line);

/// Prints `diagnostic` on stderr and returns the error exit code.
int reportDiagnostic(const Diagnostic& diagnostic);
/// Prints "tessel <command>: <message>" on stderr and returns the error exit code.
int reportUsageError(const std::string& command, const std::string& message);

}  // namespace tessel::cli
