// tessel inspect MODEL: the graph after each pass, with each pass's time, so a user can see
// what every optimization did (the command-line view of the Studio's pass timeline).
#include <algorithm>
#include <cstdio>
#include <iostream>

#include "app/cli/Commands.h"
#include "app/cli/ModelCommand.h"

namespace tessel::cli {

int runInspect(const std::vector<std::string>& args) {
  std::vector<FlagSpec> flags = {{"print-after", "print the graph after pass NAME, or after every pass with 'all'", true, ""},
                                 inputShapeFlag()};
  for (auto& flag : passFlags()) flags.push_back(flag);
  ModelCommand command;
  if (auto done = parseModelCommand(
          "inspect", "MODEL [options]",
          "Imports MODEL and runs the graph passes. Prints one line per pass (its time, whether it ran,\n"
          "operations left), then the final graph; --print-after shows the graph after a given pass\n"
          "(or 'all') instead. Passes, in order: " +
              [] {
                std::string names;
                for (auto& name : driver::standardPasses().passNames()) names += (names.empty() ? "" : ", ") + name;
                return names;
              }() + ".\n",
          args, flags, &command))
    return *done;
  const CommandLine& line = command.line;
  driver::LoadOptions load;
  driver::CompileOptions options;
  for (auto error : {readInputShapes(line, &load), readPassOptions(line, &options)})
    if (error) return reportUsageError("inspect", *error);
  graph::PassManager passes = driver::standardPasses(options.target);
  std::vector<std::string> names = passes.passNames();
  std::string printAfter = line.get("print-after");
  if (!printAfter.empty() && printAfter != "all" &&
      std::find(names.begin(), names.end(), printAfter) == names.end()) {
    std::string list;
    for (auto& name : names) list += (list.empty() ? "" : ", ") + name;
    return reportUsageError("inspect", "--print-after: there is no pass named '" + printAfter + "' (passes: " + list +
                                           ", or all)");
  }

  auto imported = driver::loadModel(command.model, load);
  if (!imported) return reportDiagnostic(imported.error());
  auto snapshots = passes.run(*imported, options.passes);
  if (!snapshots) return reportDiagnostic(snapshots.error());

  std::printf("%-24s %10s  %s\n", "pass", "ms", "operations");
  std::printf("%-24s %10s  %zu\n", "(imported)", "", imported->operationCount());
  double total = 0;
  for (auto& snapshot : *snapshots) {
    total += snapshot.milliseconds;
    if (snapshot.skipped) std::printf("%-24s %10s  %zu\n", snapshot.passName.c_str(), "skipped", snapshot.graph.operationCount());
    else std::printf("%-24s %10.3f  %zu\n", snapshot.passName.c_str(), snapshot.milliseconds, snapshot.graph.operationCount());
  }
  std::printf("%-24s %10.3f\n", "total", total);

  for (auto& snapshot : *snapshots) {
    bool last = &snapshot == &snapshots->back();
    if (printAfter == "all" || printAfter == snapshot.passName || (printAfter.empty() && last)) {
      if (snapshot.skipped) std::printf("\n// ---- after %s (skipped)\n", snapshot.passName.c_str());
      else std::printf("\n// ---- after %s (%.3f ms)\n", snapshot.passName.c_str(), snapshot.milliseconds);
      std::cout << graph::printGraph(snapshot.graph);
    }
  }
  return kExitOk;
}

}  // namespace tessel::cli
