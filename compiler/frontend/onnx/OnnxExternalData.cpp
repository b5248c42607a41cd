#include "compiler/frontend/onnx/OnnxExternalData.h"

#include <algorithm>

#include "compiler/frontend/onnx/OnnxModelFile.h"

namespace tessel::frontend {

namespace {

void collectLocations(const onnx::TensorProto& tensor, std::vector<std::string>& files) {
  if (tensor.data_location() != onnx::TensorProto::EXTERNAL) return;
  for (const auto& entry : tensor.external_data())
    if (entry.key() == "location" && std::find(files.begin(), files.end(), entry.value()) == files.end())
      files.push_back(entry.value());
}

void collectLocations(const onnx::GraphProto& graph, std::vector<std::string>& files, int depth) {
  // Subgraphs nest as deep as the model's control flow; a hostile file could nest without end.
  if (depth > 64) return;
  for (const auto& tensor : graph.initializer()) collectLocations(tensor, files);
  for (const auto& node : graph.node())
    for (const auto& attribute : node.attribute()) {
      if (attribute.has_t()) collectLocations(attribute.t(), files);
      for (const auto& tensor : attribute.tensors()) collectLocations(tensor, files);
      if (attribute.has_g()) collectLocations(attribute.g(), files, depth + 1);
      for (const auto& subgraph : attribute.graphs()) collectLocations(subgraph, files, depth + 1);
    }
}

}  // namespace

Expected<std::vector<std::string>> externalDataFiles(const std::string& path) {
  auto bytes = readFileBytes(path);
  if (!bytes) return bytes.error();
  auto model = parseModel(*bytes, path);
  if (!model) return model.error();
  std::vector<std::string> files;
  collectLocations(model->graph(), files, 0);
  return files;
}

}  // namespace tessel::frontend
