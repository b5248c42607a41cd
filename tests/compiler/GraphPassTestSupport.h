// Helpers shared by the graph pass tests: typed operations built through the operator
// registry, constant arrays, and evaluating a graph of constants with FoldConstant.
#pragma once

#include <QtTest>

#include <cmath>
#include <functional>

#include "compiler/graph/FoldConstant.h"
#include "compiler/opdefs/OpRegistry.h"

namespace tessel::testing {

inline graph::TensorType f32(std::vector<int64_t> shape, std::string layout = "") {
  return graph::TensorType{DataType::float32(), std::move(shape), std::move(layout)};
}

/// A float32 array of `shape` holding `value` everywhere.
inline runtime::NDArray filled(std::vector<int64_t> shape, float value) {
  auto array = runtime::NDArray::empty(std::move(shape), runtime::DataType::float32());
  for (float& v : array.values<float>()) v = value;
  return array;
}

/// An operation with its output type given (not inferred), named like the ONNX node it stands
/// for: `onnxName`, or the name + "_onnx".
inline graph::Value op(const std::string& name, const std::string& kind, std::vector<graph::Value> inputs,
                       graph::TensorType type, graph::Attributes attributes = {}, std::string onnxName = "") {
  return graph::makeOperation(name, kind, std::move(inputs), std::move(attributes), {std::move(type)},
                              {{onnxName.empty() ? name + "_onnx" : onnxName, kind, 13}})[0];
}

/// A float32 array of `shape` whose element at offset i is value(i).
inline runtime::NDArray floatArray(std::vector<int64_t> shape, const std::function<double(int64_t)>& value) {
  auto array = runtime::NDArray::empty(std::move(shape), runtime::DataType::float32());
  auto values = array.values<float>();
  for (size_t i = 0; i < values.size(); ++i) values[i] = float(value(int64_t(i)));
  return array;
}

inline runtime::NDArray int64Array(std::vector<int64_t> values) {
  auto array = runtime::NDArray::empty({int64_t(values.size())}, runtime::DataType::int64());
  array.copyFrom(values);
  return array;
}

/// Varied values in [-1, 1] (a folding that mixes up channels shows).
inline runtime::NDArray variedArray(std::vector<int64_t> shape, int seed) {
  return floatArray(std::move(shape), [seed](int64_t i) { return std::sin(double(i * 7 + seed * 13) * 0.37); });
}

/// An operation typed by the registry, as InferTypes would type it (opset 13); named like the
/// ONNX node it stands for, as the importer names them.
inline std::vector<graph::Value> typedOutputs(const std::string& name, const std::string& op,
                                              std::vector<graph::Value> inputs, graph::Attributes attributes = {},
                                              int outputCount = 1) {
  using namespace graph;
  std::vector<Provenance> provenance{{name, op, 13}};
  std::vector<TensorType> unknown(size_t(outputCount), TensorType{});
  auto probe = makeOperation(name, op, inputs, attributes, unknown, provenance);
  auto types = inferOpTypes(makeOpCall(*asOperation(probe[0].node())));
  if (!types) qFatal("cannot type %s: %s", name.c_str(), types.error().toString().c_str());
  return makeOperation(name, op, std::move(inputs), std::move(attributes), *types, std::move(provenance));
}

inline graph::Value typed(const std::string& name, const std::string& op, std::vector<graph::Value> inputs,
                          graph::Attributes attributes = {}) {
  return typedOutputs(name, op, std::move(inputs), std::move(attributes))[0];
}

/// The values of a graph whose outputs depend on constants only, computed by FoldConstant
/// (each operation's own JIT-compiled kernel); one vector per output, as doubles.
inline std::vector<std::vector<double>> evaluateConstantGraph(const graph::Graph& g) {
  auto folded = graph::foldConstant(g);
  if (!folded) {
    qWarning("%s", folded.error().toString().c_str());
    return {};
  }
  std::vector<std::vector<double>> results;
  for (auto& output : folded->outputs) {
    auto* constant = graph::asConstant(output.node());
    if (!constant) {
      qWarning("output %s did not fold", output.name().c_str());
      return {};
    }
    std::vector<double> values;
    if (constant->data.dtype() == runtime::DataType::float32())
      for (float v : constant->data.values<float>()) values.push_back(v);
    else if (constant->data.dtype() == runtime::DataType::int64())
      for (int64_t v : constant->data.values<int64_t>()) values.push_back(double(v));
    else
      qWarning("output %s has an element type the test does not read", output.name().c_str());
    results.push_back(values);
  }
  return results;
}

/// The largest difference between two equally long lists, relative to max(1, |expected|);
/// infinity when their lengths differ.
inline double largestRelativeError(const std::vector<double>& actual, const std::vector<double>& expected) {
  if (actual.size() != expected.size() || actual.empty()) return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < actual.size(); ++i)
    worst = std::max(worst, std::abs(actual[i] - expected[i]) / std::max(1.0, std::abs(expected[i])));
  return worst;
}

/// The largest relative error (as largestRelativeError) between the single outputs of two
/// graphs of constants, each evaluated by FoldConstant: a rewritten graph against the one it
/// was rewritten from. Infinity when either does not evaluate to one output.
inline double rewriteError(const graph::Graph& rewritten, const graph::Graph& original) {
  auto expected = evaluateConstantGraph(original);
  auto actual = evaluateConstantGraph(rewritten);
  if (expected.size() != 1 || actual.size() != 1) return INFINITY;
  return largestRelativeError(actual[0], expected[0]);
}

/// The operators of a graph's operations, in topological order.
inline std::vector<std::string> opKinds(const graph::Graph& graph) {
  std::vector<std::string> kinds;
  for (const graph::OperationNode* node : graph.operations()) kinds.push_back(node->op);
  return kinds;
}

}  // namespace tessel::testing
