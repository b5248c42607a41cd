// The graph IR: an immutable dataflow graph of operations over typed tensors, with ONNX provenance.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/ir/DataType.h"
#include "core/ir/Node.h"
#include "runtime/NDArray.h"

namespace tessel::graph {

/// A tensor's static type: element type, shape and memory layout ("" is the plain row-major
/// layout of the shape; "NCHW16c" names a blocked layout that AlterLayout introduces).
struct TensorType {
  DataType dtype;
  std::vector<int64_t> shape;
  std::string layout;

  int64_t elementCount() const;
  /// False for the placeholder type an importer gives outputs before InferTypes runs
  /// (a default-constructed type: no element type).
  bool known() const { return dtype.bits() != 0; }
  bool operator==(const TensorType& other) const = default;
  /// "float32[1, 3, 224, 224]" (with "@NCHW16c" for blocked layouts); "?" when unknown.
  std::string toString() const;
};

/// An attribute value of an operation, typed as ONNX types them.
using Attribute = std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>,
                               std::vector<std::string>>;
using Attributes = std::map<std::string, Attribute>;
std::string attributeToString(const Attribute& value);

/// Where a graph node came from: the ONNX nodes it stands for. Fused nodes list all of
/// theirs, so a viewer can say what a node absorbed.
struct Provenance {
  std::string nodeName;  ///< The ONNX node's name (or a generated one when it had none).
  std::string opType;    ///< The ONNX operator ("Conv").
  int opset = 0;         ///< The model's opset for the operator's domain (0: unknown, take the newest).
  bool operator==(const Provenance& other) const = default;
};

enum class GraphNodeKind : uint8_t { Input, Constant, Operation };

struct GraphNode;
struct Graph;

/// One output of a graph node: what operations consume. Identity is (node, index).
class Value {
public:
  Value() = default;
  Value(Ref<GraphNode> node, int index) : node_(std::move(node)), index_(index) {}
  const GraphNode* node() const { return node_.get(); }
  const Ref<GraphNode>& nodeRef() const { return node_; }
  int index() const { return index_; }
  bool defined() const { return node_.get() != nullptr; }
  const TensorType& type() const;
  /// The node's name, with ":index" for outputs after the first.
  std::string name() const;
  bool operator==(const Value& other) const { return node_.get() == other.node_.get() && index_ == other.index_; }

private:
  Ref<GraphNode> node_;
  int index_ = 0;
};

/// An immutable node. Inputs are graph arguments; constants hold their data (weights);
/// operations apply an operator to values.
struct GraphNode : Node {
  GraphNode(GraphNodeKind kind, std::string name, std::vector<TensorType> outputTypes)
      : Node(NodeKind::Other), graphKind(kind), name(std::move(name)), outputTypes(std::move(outputTypes)) {}
  const GraphNodeKind graphKind;
  const std::string name;
  const std::vector<TensorType> outputTypes;
};

struct InputNode : GraphNode {
  InputNode(std::string name, TensorType type) : GraphNode(GraphNodeKind::Input, std::move(name), {std::move(type)}) {}
};

struct ConstantNode : GraphNode {
  ConstantNode(std::string name, TensorType type, runtime::NDArray data)
      : GraphNode(GraphNodeKind::Constant, std::move(name), {std::move(type)}), data(std::move(data)) {}
  const runtime::NDArray data;
};

struct OperationNode : GraphNode {
  OperationNode(std::string name, std::string op, std::vector<Value> inputs, Attributes attributes,
                std::vector<TensorType> outputTypes, std::vector<Provenance> provenance,
                std::shared_ptr<const Graph> body = nullptr)
      : GraphNode(GraphNodeKind::Operation, std::move(name), std::move(outputTypes)), op(std::move(op)),
        inputs(std::move(inputs)), attributes(std::move(attributes)), provenance(std::move(provenance)),
        body(std::move(body)) {}
  const std::string op;  ///< Operator name ("Conv", "Add", or a fused kernel's name).
  /// An undefined Value stands for an omitted optional input (ONNX's empty input name).
  const std::vector<Value> inputs;
  const Attributes attributes;
  const std::vector<Provenance> provenance;
  /// For a fused operation (FuseOps): the primitive operations it stands for, as a graph
  /// whose inputs line up with `inputs` and whose outputs with the node's outputs. Null for
  /// a primitive operation.
  const std::shared_ptr<const Graph> body;

  bool isFused() const { return body != nullptr; }
  bool hasInput(size_t i) const { return i < inputs.size() && inputs[i].defined(); }

  /// The attribute `key` as T, or `fallback` when absent or of another type.
  template <class T>
  T attribute(const std::string& key, T fallback) const {
    auto it = attributes.find(key);
    if (it == attributes.end()) return fallback;
    if (auto* value = std::get_if<T>(&it->second)) return *value;
    return fallback;
  }
};

inline const InputNode* asInput(const GraphNode* n) {
  return n && n->graphKind == GraphNodeKind::Input ? static_cast<const InputNode*>(n) : nullptr;
}
inline const ConstantNode* asConstant(const GraphNode* n) {
  return n && n->graphKind == GraphNodeKind::Constant ? static_cast<const ConstantNode*>(n) : nullptr;
}
inline const OperationNode* asOperation(const GraphNode* n) {
  return n && n->graphKind == GraphNodeKind::Operation ? static_cast<const OperationNode*>(n) : nullptr;
}

/// Builders: each returns the new node's outputs.
Value makeInput(std::string name, TensorType type);
Value makeConstant(std::string name, runtime::NDArray data, std::string layout = "");
/// `inputs` may hold undefined Values for omitted optional inputs.
std::vector<Value> makeOperation(std::string name, std::string op, std::vector<Value> inputs, Attributes attributes,
                                 std::vector<TensorType> outputTypes, std::vector<Provenance> provenance = {});
/// A fused operation over `body` (see OperationNode::body); output types are the body's.
std::vector<Value> makeFusedOperation(std::string name, std::string op, std::vector<Value> inputs, Graph body,
                                      std::vector<Provenance> provenance);

/// A step the frontend took on the model file before it built the graph (an old opset
/// converted: "ConvertOpset 6→7"). `tessel inspect` and the Studio's pass timeline show it
/// before the passes, with its time.
struct ImportStep {
  std::string name;          ///< "ConvertOpset 6→7".
  std::string description;   ///< One sentence saying what it did and with what.
  double milliseconds = 0;
};

/// A whole model: its inputs (in order) and outputs (in order). A value, not a container
/// being edited: passes build new graphs that share the unchanged nodes.
struct Graph {
  std::vector<Value> inputs;
  std::vector<Value> outputs;
  std::vector<std::string> outputNames;  ///< The model's names for its outputs.
  /// What the import did before building the graph, in order; empty for most models. Passes
  /// copy it along with the graph; it is no part of the graph's structure (structuralHash).
  std::vector<ImportStep> importSteps{};

  /// Every node the outputs depend on (and every input), producers before consumers.
  std::vector<const GraphNode*> topologicalOrder() const;
  /// Operation nodes only, in topological order.
  std::vector<const OperationNode*> operations() const;
  size_t operationCount() const { return operations().size(); }
};

/// Readable text, one operation per line:
///   %conv1 = Conv(%data, @conv1.weight) {pads=[1, 1, 1, 1]} : float32[1, 64, 56, 56]  # Conv_0
std::string printGraph(const Graph& graph);

/// A hash of the graph's structure: operators, attributes, types, constants' shapes and
/// the wiring; independent of node names, so two imports of one model hash alike.
uint64_t structuralHash(const Graph& graph);

}  // namespace tessel::graph
