// tessel ops: the operators the graph compiler supports, with how each one fuses.
#include <cstdio>
#include <iostream>

#include "app/cli/Commands.h"
#include "app/cli/CommandLine.h"
#include "compiler/opdefs/OpRegistry.h"

namespace tessel::cli {

int runOps(const std::vector<std::string>& args) {
  CommandLine line;
  std::vector<FlagSpec> flags;
  if (auto error = CommandLine::parse(args, flags, &line)) {
    std::cerr << "tessel ops: " << *error << "\n";
    return kExitError;
  }
  if (!line.positional().empty()) {
    std::cerr << "tessel ops: unexpected argument '" << line.positional()[0] << "' (see --help)\n";
    return kExitError;
  }
  if (line.helpRequested()) {
    std::cout << usage("tessel ops", flags)
              << "\nLists every registered operator (ONNX op type) with its fusion pattern (TVM's: ElementWise,\n"
                 "Broadcast, Injective, CommReduce, OutElemwiseFusable, Opaque) and its input count.\n";
    return kExitOk;
  }
  const graph::OpRegistry& registry = graph::OpRegistry::global();
  std::vector<std::string> names = registry.names();
  std::printf("%-28s %-20s %s\n", "operator", "pattern", "inputs");
  for (const std::string& name : names) {
    const graph::OpDef* def = registry.find(name);
    char inputs[32];
    if (def->maxInputs < 0) std::snprintf(inputs, sizeof inputs, "%d or more", def->minInputs);
    else if (def->maxInputs != def->minInputs) std::snprintf(inputs, sizeof inputs, "%d-%d", def->minInputs, def->maxInputs);
    else std::snprintf(inputs, sizeof inputs, "%d", def->minInputs);
    std::printf("%-28s %-20s %s\n", name.c_str(), graph::opPatternName(def->pattern), inputs);
  }
  std::printf("%zu operators\n", names.size());
  return kExitOk;
}

}  // namespace tessel::cli
