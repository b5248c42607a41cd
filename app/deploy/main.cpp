// tessel-deploy-run: loads an exported module, feeds .npy inputs, runs it, writes .npy outputs.
#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "runtime/Error.h"
#include "runtime/GraphExecutor.h"
#include "runtime/Npy.h"

namespace {

constexpr int kUsageError = 2;

const char* kUsage =
    "usage: tessel-deploy-run DIR [--input NAME=FILE]... [--output-dir DIR] [--profile]\n"
    "\n"
    "Runs the model exported to DIR (kernels.so, graph.json, params.bin) with the Tessel\n"
    "runtime alone.\n"
    "\n"
    "  --input NAME=FILE  sets input NAME from FILE, a C-order .npy array of the input's\n"
    "                     shape and element type; every input must be given\n"
    "  --output-dir DIR   writes each output as DIR/NAME.npy (default: the current directory)\n"
    "  --profile          prints the time of each node\n"
    "  --help             shows this text\n";

struct Options {
  std::string moduleDirectory;
  std::vector<std::pair<std::string, std::string>> inputs;  // name, file
  std::string outputDirectory = ".";
  bool profile = false;
};

int usageError(const std::string& message) {
  std::fprintf(stderr, "tessel-deploy-run: %s\n(see tessel-deploy-run --help)\n", message.c_str());
  return kUsageError;
}

/// Parses the command line; returns -1 to go on, or an exit status.
int parseArguments(int argc, char** argv, Options& options) {
  for (int i = 1; i < argc; ++i) {
    std::string argument = argv[i];
    // Takes the next argument as the value of the current flag.
    auto value = [&](std::string& out) {
      if (i + 1 >= argc) return false;
      out = argv[++i];
      return true;
    };
    if (argument == "--help" || argument == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (argument == "--input" || argument.rfind("--input=", 0) == 0) {
      std::string spec;
      if (argument == "--input") {
        if (!value(spec)) return usageError("--input needs NAME=FILE");
      } else {
        spec = argument.substr(8);
      }
      size_t equals = spec.find('=');
      if (equals == std::string::npos || equals == 0 || equals + 1 == spec.size())
        return usageError("--input expects NAME=FILE, got \"" + spec + "\"");
      options.inputs.emplace_back(spec.substr(0, equals), spec.substr(equals + 1));
    } else if (argument == "--output-dir") {
      if (!value(options.outputDirectory)) return usageError("--output-dir needs a directory");
    } else if (argument.rfind("--output-dir=", 0) == 0) {
      options.outputDirectory = argument.substr(13);
    } else if (argument == "--profile") {
      options.profile = true;
    } else if (argument.rfind("-", 0) == 0 && argument != "-") {
      return usageError("unknown option " + argument);
    } else if (options.moduleDirectory.empty()) {
      options.moduleDirectory = argument;
    } else {
      return usageError("more than one module directory (" + options.moduleDirectory + ", " + argument + ")");
    }
  }
  if (options.moduleDirectory.empty()) return usageError("no module directory given");
  return -1;
}

/// The file name for output `name`: tensor names may hold characters a path cannot.
std::string outputFileName(const std::string& name) {
  std::string file = name;
  for (char& c : file)
    if (c == '/' || c == '\\' || c == '\0') c = '_';
  return file + ".npy";
}

int run(const Options& options) {
  using namespace tessel::runtime;
  auto executor = GraphExecutor::load(options.moduleDirectory);
  for (const auto& [name, file] : options.inputs) executor->setInput(name, readNpy(file));
  for (const std::string& input : executor->inputNames()) {
    bool given = false;
    for (const auto& entry : options.inputs) given = given || entry.first == input;
    if (!given) throw Error("input '" + input + "' was not given (--input " + input + "=FILE.npy)");
  }
  executor->run();

  std::error_code error;
  std::filesystem::create_directories(options.outputDirectory, error);
  if (error) throw Error(options.outputDirectory + ": cannot create the output directory: " + error.message());
  for (const std::string& output : executor->outputNames()) {
    std::string path = (std::filesystem::path(options.outputDirectory) / outputFileName(output)).string();
    writeNpy(path, executor->getOutput(output));
    std::printf("%s -> %s\n", output.c_str(), path.c_str());
  }
  if (options.profile) {
    double total = 0;
    for (const NodeTiming& timing : executor->nodeTimings()) {
      std::printf("%-32s %-40s %10.3f ms\n", timing.node.c_str(), timing.kernel.c_str(), timing.milliseconds);
      total += timing.milliseconds;
    }
    std::printf("%-73s %10.3f ms\n", "total", total);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (int status = parseArguments(argc, argv, options); status >= 0) return status;
  try {
    return run(options);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "tessel-deploy-run: error: %s\n", error.what());
    return kUsageError;
  }
}
