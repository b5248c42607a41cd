// Small ONNX models assembled field by field in tests, the way an exporter writes them.
#pragma once

#include <string>
#include <vector>

#include "tests/compiler/OnnxProto.h"

#include "compiler/frontend/onnx/OnnxImporter.h"

namespace tessel::testing {

/// Adds inputs, nodes, initializers and outputs to one graph: a model's, or a subgraph (an
/// If's branch, a Loop's body) held by a node's attribute.
struct GraphBuilder {
  explicit GraphBuilder(onnx::GraphProto* graph) : graph_(graph) {}
  onnx::GraphProto& graph() { return *graph_; }

  /// Dimensions: -1 is a dynamic dimension named N. `rankKnown` false declares no shape.
  static void setType(onnx::ValueInfoProto* info, int elemType, const std::vector<int64_t>& dims,
                      bool rankKnown = true) {
    auto* tensorType = info->mutable_type()->mutable_tensor_type();
    tensorType->set_elem_type(elemType);
    if (!rankKnown) return;
    auto* shape = tensorType->mutable_shape();
    for (int64_t dim : dims) {
      if (dim >= 0) shape->add_dim()->set_dim_value(dim);
      else shape->add_dim()->set_dim_param("N");
    }
  }
  onnx::ValueInfoProto* input(const std::string& name, const std::vector<int64_t>& dims,
                              int elemType = onnx::TensorProto::FLOAT) {
    auto* info = graph().add_input();
    info->set_name(name);
    setType(info, elemType, dims);
    return info;
  }
  /// An input declared as a sequence of tensors of `elemType` (shape not declared).
  onnx::ValueInfoProto* sequenceInput(const std::string& name, int elemType = onnx::TensorProto::FLOAT) {
    auto* info = graph().add_input();
    info->set_name(name);
    info->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(elemType);
    return info;
  }
  void output(const std::string& name) {
    auto* info = graph().add_output();
    info->set_name(name);
    info->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  }
  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "") {
    auto* node = graph().add_node();
    node->set_op_type(op);
    node->set_name(name);
    for (auto& input : inputs) node->add_input(input);
    for (auto& output : outputs) node->add_output(output);
    return node;
  }
  onnx::TensorProto* initializer(const std::string& name, const std::vector<int64_t>& dims,
                                 const std::vector<float>& values) {
    auto* tensor = graph().add_initializer();
    tensor->set_name(name);
    tensor->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t dim : dims) tensor->add_dims(dim);
    tensor->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
    return tensor;
  }
  onnx::TensorProto* int64Initializer(const std::string& name, const std::vector<int64_t>& dims,
                                      const std::vector<int64_t>& values) {
    auto* tensor = graph().add_initializer();
    tensor->set_name(name);
    tensor->set_data_type(onnx::TensorProto::INT64);
    for (int64_t dim : dims) tensor->add_dims(dim);
    for (int64_t value : values) tensor->add_int64_data(value);
    return tensor;
  }

protected:
  onnx::GraphProto* graph_;
};

/// A model: opset `opset` of the default domain, IR version 7, one graph.
struct ModelBuilder : GraphBuilder {
  onnx::ModelProto model;

  // The base is built before `model`: it is pointed at the model's graph once that exists.
  explicit ModelBuilder(int opset = 13) : GraphBuilder(nullptr) {
    graph_ = model.mutable_graph();
    model.set_ir_version(7);
    model.set_producer_name("tessel-test");
    auto* opsetImport = model.add_opset_import();
    opsetImport->set_domain("");
    opsetImport->set_version(opset);
    model.mutable_graph()->set_name("test");
  }
  // A copy builds into its own model.
  ModelBuilder(const ModelBuilder& other) : GraphBuilder(nullptr), model(other.model) { graph_ = model.mutable_graph(); }
  ModelBuilder& operator=(const ModelBuilder& other) {
    model = other.model;
    graph_ = model.mutable_graph();
    return *this;
  }

  std::string bytes() const { return model.SerializeAsString(); }
  Expected<graph::Graph> import(const frontend::OnnxImportOptions& options = {}) const {
    return frontend::importOnnxBytes(bytes(), "model.onnx", options);
  }
};

inline onnx::AttributeProto* addAttribute(onnx::NodeProto* node, const std::string& name,
                                          onnx::AttributeProto::AttributeType type) {
  auto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(type);
  return attribute;
}

/// A subgraph attribute `name` of `node` (If's then_branch, Loop's body), to build into.
inline GraphBuilder addSubgraph(onnx::NodeProto* node, const std::string& name) {
  auto* graph = addAttribute(node, name, onnx::AttributeProto::GRAPH)->mutable_g();
  graph->set_name(name);
  return GraphBuilder(graph);
}

}  // namespace tessel::testing
