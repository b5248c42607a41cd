// A generated graph named as exporters name operations, for the module-group tests.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/graph/Graph.h"
#include "core/graph/UnsupportedOperations.h"

namespace tessel::testing {

// A DenseNet-shaped graph named as PyTorch exports it: a stem, two blocks of `layers` layers
// (Conv, Relu, Concat with everything before), a one-operation classifier. The operation named
// `placeholder` stands for an operator Tessel does not implement (graph::kUnsupportedOp).
inline std::shared_ptr<const graph::Graph> modularGraph(int layers, const std::string& placeholder = {}) {
  graph::TensorType type{DataType::float32(), {1, 8, 4, 4}};
  auto op = [&](const std::string& name, const std::string& kind, std::vector<graph::Value> inputs) {
    return graph::makeOperation(name, name == placeholder ? graph::kUnsupportedOp : kind, std::move(inputs), {},
                                {type})[0];
  };
  graph::Value x = graph::makeInput("x", type);
  graph::Value current = op("/features/relu0/Relu", "Relu", {op("/features/conv0/Conv", "Conv", {x})});
  for (int block = 1; block <= 2; ++block) {
    std::vector<graph::Value> features{current};
    for (int layer = 1; layer <= layers; ++layer) {
      std::string path = "/features/block" + std::to_string(block) + "/layer" + std::to_string(layer);
      graph::Value conv = op(path + "/conv/Conv", "Conv", {features.back()});
      features.push_back(op(path + "/relu/Relu", "Relu", {conv}));
      features.back() = op(path + "/Concat", "Concat", features);
    }
    current = features.back();
  }
  graph::Value logits = op("/classifier/Gemm", "Gemm", {current});
  auto graph = std::make_shared<graph::Graph>();
  graph->inputs = {x};
  graph->outputs = {logits};
  graph->outputNames = {"logits"};
  return graph;
}

}  // namespace tessel::testing
