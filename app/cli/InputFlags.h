// The --input NAME=FILE and --inputs-dir DIR flags that `tessel run` and `tessel bench` share.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "app/cli/CommandLine.h"
#include "compiler/driver/RunModel.h"

namespace tessel::cli {

/// The two flags' specs, for a command's flag list.
std::vector<FlagSpec> inputFlags();

/// Reads the files the flags name into `request` (positionalInputs from --inputs-dir,
/// namedInputs from --input). Returns the message of a usage mistake; a file that cannot be
/// read is returned as a Diagnostic in `diagnostic` (and "" as the message).
std::optional<std::string> readInputFlags(const CommandLine& line, driver::RunRequest* request,
                                          std::optional<Diagnostic>* diagnostic);

}  // namespace tessel::cli
