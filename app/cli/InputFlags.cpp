// Reading model inputs named on the command line.
#include "app/cli/InputFlags.h"

namespace tessel::cli {

std::vector<FlagSpec> inputFlags() {
  return {{"input", "NAME=FILE: an input's value from a .npy or ONNX .pb file", true, "", true},
          {"inputs-dir", "directory of input_0.pb, input_1.pb, ... in graph-input order (the ONNX test layout)", true,
           ""}};
}

std::optional<std::string> readInputFlags(const CommandLine& line, driver::RunRequest* request,
                                          std::optional<Diagnostic>* diagnostic) {
  if (line.has("inputs-dir")) {
    auto inputs = driver::readNumberedInputs(line.get("inputs-dir"), "input_");
    if (!inputs) {
      *diagnostic = inputs.error();
      return "";
    }
    if (inputs->empty()) return "--inputs-dir " + line.get("inputs-dir") + " holds no input_0.pb";
    request->positionalInputs = std::move(*inputs);
  }
  for (const std::string& text : line.getAll("input")) {
    auto eq = text.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
      return "--input takes NAME=FILE, got '" + text + "'";
    std::string name = text.substr(0, eq);
    if (request->namedInputs.count(name)) return "--input gives '" + name + "' twice";
    auto value = driver::readTensorFile(text.substr(eq + 1));
    if (!value) {
      *diagnostic = value.error();
      return "";
    }
    request->namedInputs[name] = std::move(*value);
  }
  return std::nullopt;
}

}  // namespace tessel::cli
