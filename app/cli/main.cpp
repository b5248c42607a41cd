// tessel: the command-line driver of the Tessel compiler.
#include <iostream>

#include "app/cli/Commands.h"
#include "app/project/InstallLocation.h"
#include "core/support/Error.h"

namespace {
const char* kUsage =
    "usage: tessel COMMAND [options]\n"
    "\n"
    "commands:\n"
    "  compile MODEL -o DIR  compile an ONNX model into a deployable module directory\n"
    "  run MODEL_OR_DIR      run a model or module on input files; compare with expected outputs\n"
    "  bench MODEL           measure a model's latency (--profile: per operator)\n"
    "  inspect MODEL         show the graph after each optimization pass, with timings\n"
    "  measure MODEL --task KERNEL\n"
    "                        time one kernel of a model under a schedule (--list-tasks: its kernels;\n"
    "                        --operator OP: a bare operator); --json for tools\n"
    "  measure-worker MODEL  the tuner's measuring process: schedules in, times out (JSON lines)\n"
    "  ops                   list the supported operators and their fusion patterns\n"
    "  project run FILE      run a project (.tessel): compile with its schedules, verify, benchmark,\n"
    "                        check its expectations (also: project new, check, tasks)\n"
    "  tune MODEL --records FILE\n"
    "                        search faster schedules for a model's kernels (or an operator: tune OP);\n"
    "                        every trial is kept in FILE, which --tuning-records applies\n"
    "  records show FILE     summarize tuning records per workload (also: records best, merge, prune)\n"
    "  quantize MODEL --calibration DATA -o OUT.onnx\n"
    "                        quantize a model's convolutions to int8 (QDQ ONNX) from calibration inputs\n"
    "  lower OP              print the loop IR of an operator (matmul, dense, conv2d, bf16_matmul,\n"
    "                        int8_matmul) after lowering\n"
    "  bench OP              check an operator against a reference and measure its GFLOP/s\n"
    "  lesson list|show|check\n"
    "                        schedule lessons: read a step, grade a schedule file against its goal\n"
    "  demo                  lower, check and benchmark a matmul and a conv2d\n"
    "\n"
    "compile, run, bench, inspect, lower and project run take --tuning-records FILE: kernels replay the\n"
    "best records measured on this target (what was tuned goes to stderr).\n"
    "Run `tessel COMMAND --help` for a command's options.\n";
}  // namespace

int main(int argc, char** argv) {
  using namespace tessel::cli;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kUsage;
    // Installed (or built), the example project is one command away.
    if (std::string example = tessel::project::exampleProjectPath(); !example.empty())
      std::cout << "\nTry the example project: tessel project run " << example << "\n";
    return args.empty() ? kExitError : kExitOk;
  }
  std::string command = args[0];
  args.erase(args.begin());
  try {
    if (command == "lower") return runLower(args);
    if (command == "bench") return runBench(args);
    if (command == "demo") return runDemo(args);
    if (command == "compile") return runCompile(args);
    if (command == "run") return runRun(args);
    if (command == "inspect") return runInspect(args);
    if (command == "ops") return runOps(args);
    if (command == "project") return runProject(args);
    if (command == "measure") return runMeasure(args);
    if (command == "records") return runRecords(args);
    if (command == "tune") return runTune(args);
    if (command == "quantize") return runQuantize(args);
    if (command == "lesson") return runLesson(args);
    if (command == "measure-worker") return runMeasureWorker(args);
  } catch (const tessel::UserError& error) {
    std::cerr << error.diagnostic.toString() << "\n";
    return kExitError;
  } catch (const tessel::InternalError& error) {
    std::cerr << "tessel: internal compiler error (please report): " << error.what() << "\n";
    return 70;
  } catch (const std::exception& error) {
    std::cerr << "tessel: " << error.what() << "\n";
    return kExitError;
  }
  std::cerr << "tessel: unknown command '" << command << "'\n\n" << kUsage;
  return kExitError;
}
