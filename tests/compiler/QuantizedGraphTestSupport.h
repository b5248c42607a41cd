// Helpers shared by the tests of quantized graphs: constant arrays of any element type, and a
// graph compiled by the driver and run on one input "x".
#pragma once

#include <QtTest>

#include <vector>

#include "compiler/driver/Driver.h"
#include "core/graph/Graph.h"
#include "runtime/GraphExecutor.h"

namespace tessel::testing {

template <class T>
runtime::NDArray arrayOf(std::vector<int64_t> shape, runtime::DataType type, const std::vector<T>& values) {
  auto out = runtime::NDArray::empty(std::move(shape), type);
  out.copyFrom(values.data(), values.size() * sizeof(T));
  return out;
}

/// Compiles `graph` with `passes`, runs it on `input` as "x" and returns output "y";
/// `optimized` receives the final graph's text.
inline runtime::NDArray runCompiledGraph(const graph::Graph& graph, const graph::PassOptions& passes,
                                         const runtime::NDArray& input, QString* optimized) {
  driver::CompileOptions options;
  options.passes = passes;
  auto compiled = driver::compileGraph(graph, options);
  if (!compiled) qFatal("%s", compiled.error().toString().c_str());
  *optimized = QString::fromStdString(graph::printGraph(compiled->optimized));
  auto executor = driver::createExecutor(*compiled);
  if (!executor) qFatal("%s", executor.error().toString().c_str());
  (*executor)->setInput("x", input);
  (*executor)->run();
  return (*executor)->getOutput("y");
}

}  // namespace tessel::testing
