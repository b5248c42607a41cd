// What `tessel measure` shares with `tessel measure-worker`: a model's tasks from the model
// flags, so both give the kernels the names the compiler and the Studio give them.
#pragma once

#include <string>
#include <vector>

#include "app/cli/CommandLine.h"
#include "compiler/driver/ScheduleTask.h"

namespace tessel::cli {

/// Reads the model flags in `line` (--input-shape, --input, --inputs-dir, the pass flags) into
/// `load` and `compile`. A malformed flag sets `usageError` (and is also the Diagnostic); an
/// input file that cannot be read, or an input the model lacks, is a Diagnostic.
Status readModelSource(const std::string& model, const CommandLine& line, driver::LoadOptions* load,
                       driver::CompileOptions* compile, std::string* usageError);

/// Imports and compiles `model` with the model flags in `line` (--input-shape, --input,
/// --inputs-dir, --opt-level, --disable-pass, --pass-config) and returns its tasks. A
/// malformed flag sets `usageError` (and is also the Diagnostic returned). `constantBytes`,
/// when given, receives the bytes of the compiled model's constants (its weights).
Expected<std::vector<driver::ScheduleTask>> compileTasks(const std::string& model, const CommandLine& line,
                                                         std::string* usageError, int64_t* constantBytes = nullptr);

/// The flags compileTasks reads (--input-shape, the input and pass flags) and, for `op`, that
/// operator's flags (--m, --c, ...), appended to `flags`.
void appendSourceFlags(std::vector<FlagSpec>& flags, const std::string& op);

/// The value of --operator in `args`, or empty: it chooses which operator flags exist, so it
/// is read before the command line is parsed.
std::string operatorArgument(const std::vector<std::string>& args);

}  // namespace tessel::cli
