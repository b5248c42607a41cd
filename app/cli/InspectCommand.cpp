// tessel inspect MODEL: the graph after each pass, with each pass's time, so a user can see
// what every optimization did (the command-line view of the Studio's pass timeline).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>

#include "app/cli/Commands.h"
#include "app/cli/ModelCommand.h"
#include "app/cli/TuningRecordsFlag.h"

namespace tessel::cli {

namespace {

// The compiled kernels, those a tuning record schedules marked, in plan order.
void printKernels(const driver::CompiledModel& model) {
  std::printf("\n%-5s  %-16s  %s\n", "tuned", "workload", "kernel");
  for (const driver::CompiledKernel& kernel : model.kernels)
    std::printf("%-5s  %-16s  %s\n", kernel.tuned ? "yes" : "", kernel.workloadHash.empty() ? "-" : kernel.workloadHash.c_str(),
                kernel.name.c_str());
  std::printf("tuned_kernels=%d\n", tunedKernelCount(model));
}

// `text` padded with spaces to `width` characters as a terminal shows them: printf's %-24s
// counts bytes, and a step's name may hold an arrow that takes three ("ConvertOpset 6→7").
std::string padded(const std::string& text, size_t width) {
  size_t characters = 0;
  for (unsigned char c : text) characters += (c & 0xC0) != 0x80;
  return text + std::string(characters < width ? width - characters : 0, ' ');
}

}  // namespace

int runInspect(const std::vector<std::string>& args) {
  std::vector<FlagSpec> flags = {{"print-after", "print the graph after pass NAME, or after every pass with 'all'", true, ""},
                                 inputShapeFlag()};
  for (auto& flag : passFlags()) flags.push_back(flag);
  flags.push_back(tuningRecordsFlag());
  ModelCommand command;
  if (auto done = parseModelCommand(
          "inspect", "MODEL [options]",
          "Imports MODEL and runs the graph passes. Prints one line per pass (its time, whether it ran,\n"
          "operations left), after a line for a conversion the import made first (ConvertOpset 6→7 for\n"
          "a model older than opset 7), then the final graph; --print-after shows the graph after a given\n"
          "pass (or 'all') instead. With --tuning-records it also compiles the kernels and lists them,\n"
          "marking those a tuning record schedules. Passes, in order: " +
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

  auto records = readTuningRecordsFlag(line, &options);
  if (!records) return reportDiagnostic(records.error());

  auto imported = driver::loadModel(command.model, load);
  if (!imported) return reportDiagnostic(imported.error());
  // Which kernels the records tune is known only once they are compiled; the compile runs the
  // same passes and keeps their snapshots.
  std::optional<driver::CompiledModel> compiled;
  Expected<std::vector<graph::PassSnapshot>> snapshots = std::vector<graph::PassSnapshot>{};
  if (*records) {
    auto model = driver::compileGraph(*imported, options);
    if (!model) return reportDiagnostic(model.error());
    compiled = std::move(*model);
    snapshots = compiled->snapshots;
    reportTuningRecords(**records, *compiled);
  } else {
    snapshots = passes.run(*imported, options.passes);
    if (!snapshots) return reportDiagnostic(snapshots.error());
  }

  std::printf("%-24s %10s  %s\n", "pass", "ms", "operations");
  double total = 0;
  // What the import did to the file before the graph existed (an old opset converted).
  for (const graph::ImportStep& step : imported->importSteps) {
    total += step.milliseconds;
    std::printf("%s %10.3f\n", padded(step.name, 24).c_str(), step.milliseconds);
  }
  std::printf("%-24s %10s  %zu\n", "(imported)", "", imported->operationCount());
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
  if (compiled) printKernels(*compiled);
  return kExitOk;
}

}  // namespace tessel::cli
