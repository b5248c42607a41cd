// The example model (resources/examples/tiny_resnet.onnx) as the view tests use it: imported,
// and after the standard pipeline.
#pragma once

#include <QtGlobal>

#include <memory>

#include "compiler/driver/Driver.h"

namespace tessel::testing {

inline std::shared_ptr<const graph::Graph> importedExample() {
  auto graph = driver::loadModel(TESSEL_SOURCE_DIR "/resources/examples/tiny_resnet.onnx");
  if (!graph) qFatal("%s", graph.error().toString().c_str());
  return std::make_shared<const graph::Graph>(*graph);
}

inline std::shared_ptr<const graph::Graph> optimizedExample() {
  auto compiled = driver::compileGraph(*importedExample());
  if (!compiled) qFatal("%s", compiled.error().toString().c_str());
  return std::make_shared<const graph::Graph>(compiled->optimized);
}

}  // namespace tessel::testing
