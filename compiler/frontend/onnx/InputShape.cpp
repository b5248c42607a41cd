// The --input-shape syntax: "NAME:D0,D1,...".
#include <charconv>

#include "compiler/frontend/onnx/OnnxDiagnostic.h"
#include "compiler/frontend/onnx/OnnxImporter.h"

namespace tessel::frontend {
namespace {

std::string trim(const std::string& text) {
  size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(" \t") - begin + 1);
}

}  // namespace

Expected<std::pair<std::string, std::vector<int64_t>>> parseInputShape(const std::string& text) {
  const std::string hint = "write NAME:D0,D1,... (for example data:1,3,224,224; NAME: alone for a scalar)";
  // ONNX names may contain ':' (TensorFlow exports "input:0"), dimensions never do, so the
  // last ':' separates them.
  size_t colon = text.rfind(':');
  if (colon == std::string::npos)
    return importError("input shape '" + text + "' has no ':' between the input's name and its dimensions", "",
                      hint);
  std::string name = trim(text.substr(0, colon));
  if (name.empty()) return importError("input shape '" + text + "' names no input", "", hint);
  std::vector<int64_t> dims;
  std::string list = trim(text.substr(colon + 1));
  if (list.empty()) return std::make_pair(name, dims);
  size_t start = 0;
  while (true) {
    size_t comma = list.find(',', start);
    std::string piece = trim(list.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    int64_t dim = 0;
    auto [end, error] = std::from_chars(piece.data(), piece.data() + piece.size(), dim);
    if (piece.empty() || error != std::errc() || end != piece.data() + piece.size() || dim < 0)
      return importError("input shape '" + text + "' has '" + piece + "' where a dimension (an integer >= 0) belongs",
                        "", hint);
    dims.push_back(dim);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return std::make_pair(name, dims);
}

}  // namespace tessel::frontend
