// Placeholders for ONNX nodes Tessel cannot compile: how the graph IR marks them, and the one
// message that lists them.
#pragma once

#include <string>
#include <vector>

#include "core/graph/Graph.h"
#include "core/support/Error.h"

namespace tessel::graph {

/// The op of a placeholder: an operation standing for an ONNX node whose operator Tessel does
/// not implement, imported so that a viewer can draw the whole model
/// (frontend::OnnxImportOptions::unsupportedAsPlaceholders). No operator is registered under
/// this name, and type inference, folding and kernel building refuse it by name, so a graph
/// holding one never compiles. A placeholder keeps the node's name, inputs and attributes (as
/// text where the graph IR has no type for them); its provenance's opType is the ONNX operator
/// ("Det", or "com.example.Gelu" outside the default domain); its output types are unknown
/// unless the model declares them (value_info).
inline constexpr const char* kUnsupportedOp = "Unsupported";

/// Whether `op` is a placeholder (see kUnsupportedOp).
bool isUnsupported(const OperationNode& op);

/// The ONNX operator a placeholder stands for.
struct OnnxOperatorName {
  std::string domain;  ///< Empty for the default ONNX domain.
  std::string opType;  ///< "Det".
  /// "Det", or "com.example.Gelu" outside the default domain: how provenance spells it.
  std::string qualified() const { return domain.empty() ? opType : domain + "." + opType; }
};
OnnxOperatorName unsupportedOperator(const OperationNode& placeholder);

/// Every placeholder of `graph`, producers first.
std::vector<const OperationNode*> unsupportedOperations(const Graph& graph);

/// The Diagnostic for nodes Tessel cannot compile, naming them all at once: how many operators
/// are missing, then each operator (with its domain when not the default) and the nodes using
/// it, in the order of first use: "uses 3 unsupported operators in 4 nodes: StringNormalizer
/// (node 'norm'), Det (nodes 'det1', 'det2'), Gelu from domain 'com.example' (node 'gelu')".
/// Long lists are cut short, saying how many more there are, so a model with hundreds of such
/// nodes still reads as one line. The hint points to `tessel ops`. `placeholders` must not be
/// empty; `location` is the model file when known.
Diagnostic unsupportedOperationsError(const std::vector<const OperationNode*>& placeholders,
                                      const std::string& location = "");
/// The same for nodes named by their operator and node name, in the order of use (a reader
/// that has no graph to place placeholders in: an interpreted model's segments).
struct UnsupportedNode {
  OnnxOperatorName op;
  std::string node;
};
Diagnostic unsupportedOperationsError(const std::vector<UnsupportedNode>& nodes, const std::string& location = "");

}  // namespace tessel::graph
