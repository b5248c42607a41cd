// A small ONNX model with nodes whose operators Tessel does not implement, built with the
// protobuf API, for the importer, CLI and Studio tests of how such models are refused and shown.
#pragma once

#include "tests/compiler/OnnxProto.h"

#include <fstream>
#include <string>
#include <vector>

namespace testing {

/// One node of the model Tessel cannot compile.
struct UnsupportedNode {
  std::string opType;
  std::string name;
  std::string domain;  ///< Empty for the default ONNX domain.
};

/// The model's nodes that Tessel cannot compile, in graph order. The operators are made up, so
/// no new operator of Tessel's ever makes them supported.
inline const std::vector<UnsupportedNode> kUnsupportedNodes = {
    {"StringNormalizerX", "normalize", ""},
    {"ImaginaryOp", "imagine_1", ""},
    {"ImaginaryOp", "imagine_2", ""},
    {"CustomGelu", "gelu", "com.example"},
};

/// The operations the model has, supported or not.
constexpr int kUnsupportedModelOperations = 7;

/// x: float32[2, 3] → Relu 'relu' → StringNormalizerX 'normalize' (attributes: an int and a
/// subgraph) → ImaginaryOp 'imagine_1' → Exp 'exp' → ImaginaryOp 'imagine_2' → CustomGelu
/// 'gelu' (domain com.example; value_info declares its output float32[2, 3]) → Add 'add'
/// (with x) → y. Serialized.
inline std::string unsupportedOperatorsModel() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("tessel-test");
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(13);
  auto* custom = model.add_opset_import();
  custom->set_domain("com.example");
  custom->set_version(1);
  onnx::GraphProto& graph = *model.mutable_graph();
  graph.set_name("unsupported");
  auto declare = [](onnx::ValueInfoProto* info, const std::string& name, bool withShape) {
    info->set_name(name);
    auto* type = info->mutable_type()->mutable_tensor_type();
    type->set_elem_type(onnx::TensorProto::FLOAT);
    if (!withShape) return;
    type->mutable_shape()->add_dim()->set_dim_value(2);
    type->mutable_shape()->add_dim()->set_dim_value(3);
  };
  declare(graph.add_input(), "x", true);
  declare(graph.add_output(), "y", false);
  declare(graph.add_value_info(), "gelu_out", true);
  auto node = [&](const std::string& op, const std::string& name, const std::vector<std::string>& inputs,
                  const std::string& output, const std::string& domain = "") {
    auto* added = graph.add_node();
    added->set_op_type(op);
    added->set_name(name);
    added->set_domain(domain);
    for (const std::string& input : inputs) added->add_input(input);
    added->add_output(output);
    return added;
  };
  node("Relu", "relu", {"x"}, "relu_out");
  auto* normalize = node("StringNormalizerX", "normalize", {"relu_out"}, "normalize_out");
  auto* mode = normalize->add_attribute();
  mode->set_name("mode");
  mode->set_type(onnx::AttributeProto::INT);
  mode->set_i(3);
  auto* body = normalize->add_attribute();
  body->set_name("body");
  body->set_type(onnx::AttributeProto::GRAPH);
  body->mutable_g()->set_name("inner");
  node("ImaginaryOp", "imagine_1", {"normalize_out"}, "imagine_1_out");
  node("Exp", "exp", {"imagine_1_out"}, "exp_out");
  node("ImaginaryOp", "imagine_2", {"exp_out"}, "imagine_2_out");
  node("CustomGelu", "gelu", {"imagine_2_out"}, "gelu_out", "com.example");
  node("Add", "add", {"gelu_out", "x"}, "y");
  return model.SerializeAsString();
}

/// Writes unsupportedOperatorsModel() to `path`; false when it cannot.
inline bool writeUnsupportedOperatorsModel(const std::string& path) {
  std::ofstream file(path, std::ios::binary);
  file << unsupportedOperatorsModel();
  return bool(file.flush());
}

}  // namespace testing
