// What `tessel measure` shares with `tessel measure-worker`: a model's tasks from the model
// flags, so both give the kernels the names the compiler and the Studio give them.
#pragma once

#include <string>
#include <vector>

#include "app/cli/CommandLine.h"
#include "compiler/driver/ScheduleTask.h"

namespace tessel::cli {

/// Imports and compiles `model` with the model flags in `line` (--input-shape, --input,
/// --inputs-dir, --opt-level, --disable-pass, --pass-config) and returns its tasks. A
/// malformed flag sets `usageError` (and is also the Diagnostic returned).
Expected<std::vector<driver::ScheduleTask>> compileTasks(const std::string& model, const CommandLine& line,
                                                         std::string* usageError);

}  // namespace tessel::cli
