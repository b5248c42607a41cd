// The tessel subcommands. Each takes its arguments (after the command name) and returns
// the process exit code: 0 success, 2 usage or input error, 3 wrong results.
#pragma once

#include <string>
#include <vector>

namespace tessel::cli {

constexpr int kExitOk = 0;
constexpr int kExitError = 2;
constexpr int kExitMismatch = 3;

int runLower(const std::vector<std::string>& args);
int runBench(const std::vector<std::string>& args);
int runDemo(const std::vector<std::string>& args);

}  // namespace tessel::cli
