// tessel demo: the main job until the Studio exists. Builds a matmul and a conv2d with their
// default schedules, shows the lowered loop nest, checks results and prints GFLOP/s.
#include <iostream>

#include "app/cli/Commands.h"
#include "app/cli/OperatorSpec.h"
#include "compiler/lower/Lower.h"
#include "core/ir/IRPrinter.h"

namespace tessel::cli {

int runDemo(const std::vector<std::string>& args) {
  CommandLine line;
  std::vector<FlagSpec> flags = {{"threads", "worker threads", true, ""}};
  if (auto error = CommandLine::parse(args, flags, &line)) {
    std::cerr << "tessel demo: " << *error << "\n";
    return kExitError;
  }
  // A stray word would otherwise be ignored and the whole (long) demo run.
  if (!line.positional().empty()) {
    std::cerr << "tessel demo: unexpected argument '" << line.positional()[0] << "' (see --help)\n";
    return kExitError;
  }
  if (line.helpRequested()) {
    std::cout << usage("tessel demo [options]", flags)
              << "\nLowers a small matmul and prints its loop nest, then benchmarks a 1024^3 matmul and a\n"
                 "ResNet-style conv2d against the machine's measured peak.\n";
    return kExitOk;
  }
  std::vector<std::string> threads;
  if (line.has("threads")) threads = {"--threads", line.get("threads")};

  std::cout << "== Tessel demo\n\n"
            << "A 64x64x64 matmul under its default schedule, after every lowering step is done.\n"
            << "(`tessel lower matmul --m 64 --n 64 --k 64 --all-steps` shows each step.)\n\n";
  if (int code = runLower({"matmul", "--m", "64", "--n", "64", "--k", "64"}); code != kExitOk) return code;

  auto bench = [&](std::vector<std::string> benchArgs, const char* title) {
    std::cout << "\n== " << title << "\n";
    benchArgs.insert(benchArgs.end(), threads.begin(), threads.end());
    return runBench(benchArgs);
  };
  if (int code = bench({"matmul", "--m", "1024", "--n", "1024", "--k", "1024"}, "matmul 1024x1024x1024, float32");
      code != kExitOk)
    return code;
  return bench({"conv2d", "--n", "1", "--c", "64", "--h", "56", "--w", "56", "--k", "64", "--r", "3", "--s", "3",
                "--stride", "1", "--pad", "1"},
               "conv2d 1x64x56x56, 64 filters 3x3, pad 1, float32");
}

}  // namespace tessel::cli
