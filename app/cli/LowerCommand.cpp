// tessel lower OP [flags]: the loop IR of an operator after lowering, or after every step.
#include <iostream>

#include "app/cli/Commands.h"
#include "app/cli/OperatorSpec.h"
#include "compiler/codegen/llvm/CodeGenLLVM.h"
#include "compiler/lower/Lower.h"
#include "core/ir/IRPrinter.h"

namespace tessel::cli {

namespace {
std::vector<FlagSpec> lowerFlags(const std::string& op) {
  auto flags = operatorFlags(op);
  flags.push_back({"schedule", "schedule text file replacing the default schedule", true, ""});
  flags.push_back({"all-steps", "print the IR after every lowering step", false, ""});
  flags.push_back({"emit", "what to print: ir (loop IR), llvm (optimized LLVM IR) or asm", true, "ir"});
  return flags;
}
}  // namespace

int runLower(const std::vector<std::string>& args) {
  std::string op = args.empty() || args[0].rfind("--", 0) == 0 ? "" : args[0];
  std::vector<std::string> rest(args.begin() + (op.empty() ? 0 : 1), args.end());
  auto flags = lowerFlags(op.empty() ? "matmul" : op);
  CommandLine line;
  if (auto error = CommandLine::parse(rest, flags, &line)) {
    std::cerr << "tessel lower: " << *error << "\n";
    return kExitError;
  }
  // A stray word or a single-dash flag ("-m 64") would otherwise be ignored silently.
  if (!line.positional().empty()) {
    std::cerr << "tessel lower: unexpected argument '" << line.positional()[0] << "' (see --help)\n";
    return kExitError;
  }
  if (line.helpRequested() || op.empty()) {
    std::cout << usage("tessel lower matmul|dense|conv2d [options]", flags)
              << "\nPrints the loop IR of the operator under its default schedule (or --schedule FILE).\n";
    return op.empty() && !line.helpRequested() ? kExitError : kExitOk;
  }
  std::unique_ptr<OperatorSpec> spec;
  if (auto error = makeOperator(op, line, &spec)) {
    std::cerr << "tessel lower: " << *error << "\n";
    return kExitError;
  }
  std::string schedulePath = line.get("schedule");
  auto schedule = loadSchedule(*spec, schedulePath);
  if (!schedule) {
    std::cerr << schedule.error().toString() << "\n";
    return kExitError;
  }
  auto lowered = lower(*schedule, spec->workload.args(), spec->workload.name);
  if (!lowered) {
    Diagnostic d = lowered.error();
    if (d.location == "schedule" && !schedulePath.empty()) d.location = schedulePath;
    std::cerr << d.toString() << "\n";
    return kExitError;
  }
  std::string emit = line.get("emit");
  if (emit != "ir" && emit != "llvm" && emit != "asm") {
    std::cerr << "tessel lower: --emit must be ir, llvm or asm, got '" << emit << "'\n";
    return kExitError;
  }
  if (emit == "llvm") {
    std::cout << emitLLVMIR({lowered->func}, TargetInfo::host());
    return kExitOk;
  }
  if (emit == "asm") {
    std::cout << emitAssembly({lowered->func}, TargetInfo::host());
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
