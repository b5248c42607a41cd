// tessel lower OP [flags]: the loop IR of an operator after lowering, or after every step.
#include <iostream>

#include "app/cli/Commands.h"
#include "app/cli/OperatorSpec.h"
#include "compiler/codegen/llvm/CodeGenLLVM.h"
#include "compiler/lower/Lower.h"
#include "core/ir/IRPrinter.h"

namespace tessel::cli {

int runLower(const std::vector<std::string>& args) {
  OperatorCommand command;
  std::vector<FlagSpec> flags = {
      {"all-steps", "print the IR after every lowering step", false, ""},
      {"emit", "what to print: ir (loop IR), llvm (optimized LLVM IR) or asm", true, "ir"}};
  if (auto done = parseOperatorCommand(
          "lower", args, flags, "Prints the loop IR of the operator under its default schedule (or --schedule FILE).\n",
          &command))
    return *done;
  const CommandLine& line = command.line;
  const Workload& workload = command.spec->workload;
  auto lowered = lower(*command.schedule, workload.args(), workload.name);
  if (!lowered) {
    std::cerr << command.locate(lowered.error()).toString() << "\n";
    return kExitError;
  }
  std::string emit = line.get("emit");
  if (emit != "ir" && emit != "llvm" && emit != "asm") {
    std::cerr << "tessel lower: --emit must be ir, llvm or asm, got '" << emit << "'\n";
    return kExitError;
  }
  if (emit == "llvm") {
    std::cout << emitLLVMIR({lowered->func}, hostTarget());
    return kExitOk;
  }
  if (emit == "asm") {
    std::cout << emitAssembly({lowered->func}, hostTarget());
    return kExitOk;
  }
  if (line.has("all-steps")) {
    for (auto& step : lowered->steps)
      std::cout << "// ---- after " << step.name << " (" << step.milliseconds << " ms)\n" << toString(step.func) << "\n";
  } else {
    std::cout << toString(lowered->func);
  }
  return kExitOk;
}

}  // namespace tessel::cli
