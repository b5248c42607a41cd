// The ONNX importer (being written).
#include "compiler/frontend/onnx/OnnxImporter.h"

namespace tessel::frontend {
namespace {
Diagnostic notYet(const std::string& where) { return Diagnostic{"the ONNX importer is not written yet", where}; }
}  // namespace
Expected<graph::Graph> importOnnxFile(const std::string& path, const OnnxImportOptions&) { return notYet(path); }
Expected<graph::Graph> importOnnxBytes(const std::string&, const std::string& sourceName, const OnnxImportOptions&) {
  return notYet(sourceName);
}
Expected<std::vector<OnnxInputInfo>> readOnnxInputs(const std::string& path) { return notYet(path); }
Expected<runtime::NDArray> readTensorProtoFile(const std::string& path) { return notYet(path); }
Expected<std::pair<std::string, std::vector<int64_t>>> parseInputShape(const std::string& text) { return notYet(text); }
}  // namespace tessel::frontend
