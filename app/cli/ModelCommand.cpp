// Parsing and options shared by the model commands.
#include "app/cli/ModelCommand.h"

#include <iostream>

#include "app/cli/Commands.h"
#include "compiler/frontend/onnx/OnnxImporter.h"
#include "runtime/ThreadPool.h"

namespace tessel::cli {

FlagSpec inputShapeFlag() {
  return {"input-shape", "NAME:D0,D1,... shape of an input with dynamic or missing dimensions", true, "", true};
}

std::vector<FlagSpec> passFlags() {
  // The options come from the passes themselves, so a new one shows up here by itself.
  std::string options;
  graph::PassManager standard = driver::standardPasses();
  for (const graph::Pass& pass : standard.passes())
    for (const graph::PassOption& option : pass.options) {
      std::string values;
      for (const std::string& value : option.values) values += (values.empty() ? "" : "|") + value;
      options += "\n      " + pass.name + "." + option.name + "=" + values + ": " + option.help + " (default " +
                 option.defaultValue + ")";
    }
  return {{"opt-level", "graph optimization level, 0 to 3", true, "3"},
          {"disable-pass", "skip the graph pass NAME (see tessel inspect for the names)", true, "", true},
          {"pass-config", "KEY=VALUE sets a pass option; the options:" + options, true, "", true}};
}

FlagSpec threadsFlag() { return {"threads", "worker threads (also TESSEL_NUM_THREADS)", true, ""}; }

std::optional<int> parseModelCommand(const std::string& command, const std::string& synopsis,
                                     const std::string& description, const std::vector<std::string>& args,
                                     const std::vector<FlagSpec>& flags, ModelCommand* out) {
  if (auto error = CommandLine::parse(args, flags, &out->line)) return reportUsageError(command, *error);
  if (out->line.helpRequested()) {
    std::cout << usage("tessel " + command + " " + synopsis, flags) << "\n" << description;
    return kExitOk;
  }
  const auto& positional = out->line.positional();
  if (positional.empty()) {
    std::cout << usage("tessel " + command + " " + synopsis, flags) << "\n" << description;
    return kExitError;
  }
  // A stray word or a single-dash flag would otherwise be ignored silently.
  if (positional.size() > 1) return reportUsageError(command, "unexpected argument '" + positional[1] + "' (see --help)");
  out->model = positional[0];
  return std::nullopt;
}

std::optional<std::string> readInputShapes(const CommandLine& line, driver::LoadOptions* options) {
  for (const std::string& text : line.getAll("input-shape")) {
    auto parsed = frontend::parseInputShape(text);
    if (!parsed) return "--input-shape " + text + ": " + parsed.error().message;
    if (options->inputShapes.count(parsed->first)) return "--input-shape gives '" + parsed->first + "' twice";
    options->inputShapes[parsed->first] = parsed->second;
  }
  return std::nullopt;
}

std::optional<std::string> readPassOptions(const CommandLine& line, driver::CompileOptions* options) {
  int64_t level = 3;
  if (auto error = line.getInt("opt-level", &level, 0)) return error;
  if (level > 3) return "--opt-level must be between 0 and 3, got " + line.get("opt-level");
  options->passes.optLevel = int(level);
  options->passes.disabledPasses = line.getAll("disable-pass");
  for (const std::string& setting : line.getAll("pass-config")) {
    size_t equals = setting.find('=');
    if (equals == std::string::npos || equals == 0)
      return "--pass-config " + setting + ": expected KEY=VALUE (AlterLayout.blocked_activations=false)";
    std::string key = setting.substr(0, equals);
    if (options->passes.config.count(key)) return "--pass-config gives '" + key + "' twice";
    options->passes.config[key] = setting.substr(equals + 1);
  }
  // A misspelled pass or option name is a mistake worth stopping for, before any work is done.
  if (Status checked = driver::standardPasses(options->target).checkOptions(options->passes); !checked)
    return checked.error().message + (checked.error().hint.empty() ? "" : " (" + checked.error().hint + ")");
  return std::nullopt;
}

std::optional<std::string> applyThreads(const CommandLine& line) {
  if (!line.has("threads")) return std::nullopt;
  int64_t threads = 0;
  if (auto error = line.getInt("threads", &threads)) return error;
  runtime::ThreadPool::global().setNumThreads(int(threads));
  return std::nullopt;
}

int reportDiagnostic(const Diagnostic& diagnostic) {
  std::cerr << diagnostic.toString() << "\n";
  return kExitError;
}

int reportUsageError(const std::string& command, const std::string& message) {
  std::cerr << "tessel " << command << ": " << message << "\n";
  return kExitError;
}

}  // namespace tessel::cli
