// The com.microsoft quantized operators as rewrite rules: which inputs are the quantized
// operands (with their scale and zero point), which is the output's quantization, and the
// float operator in between.
#include "compiler/frontend/onnx/OnnxContribOps.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>

namespace tessel::frontend {

namespace {

constexpr const char* kDomain = "com.microsoft";

/// One operator's rule: its quantized operands' (tensor, scale, zero point) input positions,
/// where the output's scale and zero point are, and the float operator computed between.
struct ContribRule {
  const char* floatOp;
  std::vector<int> operands;   ///< Input index of each quantized operand; its scale and zero point follow it.
  int outputScale;             ///< Input index of the output's scale (its zero point follows).
  bool variadic = false;       ///< QLinearConcat: (tensor, scale, zero point) triples from `operands[0]` on.
  std::vector<std::string> dropAttributes;  ///< Attributes the float operator does not take.
};

const std::map<std::string, ContribRule>& rules() {
  static const std::map<std::string, ContribRule> table = {
      {"QLinearAdd", {"Add", {0, 3}, 6}},
      {"QLinearMul", {"Mul", {0, 3}, 6}},
      {"QLinearSigmoid", {"Sigmoid", {0}, 3}},
      {"QLinearLeakyRelu", {"LeakyRelu", {0}, 3}},
      {"QLinearAveragePool", {"AveragePool", {0}, 3, false, {"channels_last"}}},
      {"QLinearGlobalAveragePool", {"GlobalAveragePool", {0}, 3, false, {"channels_last"}}},
      {"QLinearConcat", {"Concat", {2}, 0, true}},
  };
  return table;
}

class Expander {
public:
  Expander(onnx::GraphProto& graph, std::string sourceName) : graph_(graph), source_(std::move(sourceName)) {
    for (const auto& tensor : graph.initializer()) initializers_[tensor.name()] = &tensor;
  }

  Expected<int> run() {
    google::protobuf::RepeatedPtrField<onnx::NodeProto> out;
    int expanded = 0;
    for (const onnx::NodeProto& node : graph_.node()) {
      if (node.domain() != kDomain || (!rules().count(node.op_type()) && node.op_type() != "QGemm")) {
        *out.Add() = node;
        continue;
      }
      // Every expansion writes the node's first output; protobuf aborts on a missing one.
      if (node.output_size() < 1) return error(node, "has no output");
      Status done = node.op_type() == "QGemm" ? expandQGemm(node, out) : expandByRule(node, rules().at(node.op_type()), out);
      if (!done) return done.error();
      ++expanded;
    }
    graph_.mutable_node()->Swap(&out);
    for (auto& initializer : newInitializers_) *graph_.add_initializer() = std::move(initializer);
    return expanded;
  }

private:
  Diagnostic error(const onnx::NodeProto& node, const std::string& message, const std::string& hint = "") const {
    return Diagnostic{node.op_type() + " '" + node.name() + "' (com.microsoft): " + message, source_, 0, 0, hint};
  }

  static std::string input(const onnx::NodeProto& node, int i) {
    return i < node.input_size() ? node.input(i) : std::string();
  }

  onnx::NodeProto& add(google::protobuf::RepeatedPtrField<onnx::NodeProto>& out, const std::string& op,
                       const std::string& name, std::vector<std::string> inputs, const std::string& output) {
    onnx::NodeProto& node = *out.Add();
    node.set_op_type(op);
    node.set_name(name);
    for (auto& in : inputs) node.add_input(in);
    node.add_output(output);
    return node;
  }

  // tensor's float value: DequantizeLinear(tensor, scale, zero point), per-axis along `axis`
  // when given (a QGemm's per-column B scales).
  std::string dequantized(google::protobuf::RepeatedPtrField<onnx::NodeProto>& out, const onnx::NodeProto& node,
                          int at, std::optional<int64_t> axis = std::nullopt) {
    std::string name = node.name() + "/DequantizeLinear_" + std::to_string(at);
    std::string value = node.name() + "/dequantized_" + std::to_string(at);
    std::vector<std::string> inputs = {input(node, at), input(node, at + 1)};
    if (!input(node, at + 2).empty()) inputs.push_back(input(node, at + 2));
    onnx::NodeProto& dequantize = add(out, "DequantizeLinear", name, inputs, value);
    if (axis) {
      auto* attribute = dequantize.add_attribute();
      attribute->set_name("axis");
      attribute->set_type(onnx::AttributeProto::INT);
      attribute->set_i(*axis);
    }
    return value;
  }

  Status expandByRule(const onnx::NodeProto& node, const ContribRule& rule,
                      google::protobuf::RepeatedPtrField<onnx::NodeProto>& out) {
    for (const auto& attribute : node.attribute())
      if (attribute.name() == "channels_last" && attribute.i() != 0)
        return error(node, "channels_last pools are not supported", "export the model with NCHW pools");
    std::vector<int> operands = rule.operands;
    if (rule.variadic)
      for (int at = rule.operands[0] + 3; at + 2 < node.input_size() + 1; at += 3) operands.push_back(at);
    for (int at : operands)
      if (input(node, at).empty() || input(node, at + 1).empty())
        return error(node, "input " + std::to_string(at) + " or its scale is missing");
    if (input(node, rule.outputScale).empty()) return error(node, "the output's scale is missing");
    std::vector<std::string> floats;
    for (int at : operands) floats.push_back(dequantized(out, node, at));
    std::string real = node.name() + "/float";
    onnx::NodeProto& op = add(out, rule.floatOp, node.name() + "/" + rule.floatOp, floats, real);
    for (const auto& attribute : node.attribute())
      if (std::find(rule.dropAttributes.begin(), rule.dropAttributes.end(), attribute.name()) == rule.dropAttributes.end())
        *op.add_attribute() = attribute;
    std::vector<std::string> quantization = {real, input(node, rule.outputScale)};
    if (!input(node, rule.outputScale + 1).empty()) quantization.push_back(input(node, rule.outputScale + 1));
    add(out, "QuantizeLinear", node.name(), quantization, node.output(0));
    return {};
  }

  // QGemm: A, a_scale, a_zero_point, B, b_scale, b_zero_point, C (int32, in a_scale * b_scale
  // units), y_scale, y_zero_point; the output is float when y_scale is absent.
  Status expandQGemm(const onnx::NodeProto& node, google::protobuf::RepeatedPtrField<onnx::NodeProto>& out) {
    if (node.input_size() < 6) return error(node, "needs A, a_scale, a_zero_point, B, b_scale and b_zero_point");
    bool transB = false;
    for (const auto& attribute : node.attribute())
      if (attribute.name() == "transB") transB = attribute.i() != 0;
    // Per-column B scales lie along N: axis 0 of a transposed B ([N, K]), else axis 1.
    std::string a = dequantized(out, node, 0), b = dequantized(out, node, 3, transB ? 0 : 1);
    std::vector<std::string> gemmInputs = {a, b};
    if (!input(node, 6).empty()) {
      // The bias's scale is a_scale * b_scale: a constant when both are (as quantizers write
      // them), so FakeQuantizationToInteger can fold the bias; a Mul otherwise.
      std::string scale = node.name() + "/bias_scale";
      auto as = initializers_.find(input(node, 1)), bs = initializers_.find(input(node, 4));
      if (as != initializers_.end() && bs != initializers_.end()) {
        auto product = productOf(*as->second, *bs->second, scale);
        if (!product) return error(node, "a_scale and b_scale must be float32 constants");
        newInitializers_.push_back(std::move(*product));
      } else {
        add(out, "Mul", node.name() + "/BiasScale", {input(node, 1), input(node, 4)}, scale);
      }
      std::string bias = node.name() + "/bias";
      onnx::NodeProto& dequantize = add(out, "DequantizeLinear", node.name() + "/DequantizeBias", {input(node, 6), scale}, bias);
      auto* axis = dequantize.add_attribute();  // the bias is 1-D: a per-column scale is along axis 0
      axis->set_name("axis");
      axis->set_type(onnx::AttributeProto::INT);
      axis->set_i(0);
      gemmInputs.push_back(bias);
    }
    bool quantizedOutput = !input(node, 7).empty();
    std::string result = quantizedOutput ? node.name() + "/float" : node.output(0);
    onnx::NodeProto& gemm = add(out, "Gemm", node.name() + "/Gemm", gemmInputs, result);
    for (const auto& attribute : node.attribute()) *gemm.add_attribute() = attribute;
    if (quantizedOutput) {
      std::vector<std::string> quantization = {result, input(node, 7)};
      if (!input(node, 8).empty()) quantization.push_back(input(node, 8));
      add(out, "QuantizeLinear", node.name(), quantization, node.output(0));
    }
    return {};
  }

  // The element-wise product of two float32 constant tensors (a scalar broadcasts).
  static std::optional<onnx::TensorProto> productOf(const onnx::TensorProto& a, const onnx::TensorProto& b,
                                                    const std::string& name) {
    auto values = [](const onnx::TensorProto& t) -> std::optional<std::vector<float>> {
      if (t.data_type() != onnx::TensorProto::FLOAT) return std::nullopt;
      std::vector<float> v(t.float_data().begin(), t.float_data().end());
      if (v.empty() && !t.raw_data().empty()) {
        v.resize(t.raw_data().size() / sizeof(float));
        std::memcpy(v.data(), t.raw_data().data(), v.size() * sizeof(float));
      }
      return v;
    };
    auto x = values(a), y = values(b);
    if (!x || !y || x->empty() || y->empty() || (x->size() != 1 && y->size() != 1 && x->size() != y->size()))
      return std::nullopt;
    const onnx::TensorProto& shaped = x->size() >= y->size() ? a : b;
    onnx::TensorProto product;
    product.set_name(name);
    product.set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : shaped.dims()) product.add_dims(d);
    size_t n = std::max(x->size(), y->size());
    for (size_t i = 0; i < n; ++i) product.add_float_data((*x)[x->size() == 1 ? 0 : i] * (*y)[y->size() == 1 ? 0 : i]);
    return product;
  }

  onnx::GraphProto& graph_;
  std::string source_;
  std::map<std::string, const onnx::TensorProto*> initializers_;
  std::vector<onnx::TensorProto> newInitializers_;
};

}  // namespace

Expected<std::optional<graph::ImportStep>> expandContribQuantizedOps(onnx::ModelProto& model,
                                                                    const std::string& sourceName) {
  bool any = false;
  for (const auto& node : model.graph().node())
    any = any || (node.domain() == kDomain && (rules().count(node.op_type()) || node.op_type() == "QGemm"));
  if (!any) return std::optional<graph::ImportStep>();
  auto start = std::chrono::steady_clock::now();
  auto expanded = Expander(*model.mutable_graph(), sourceName).run();
  if (!expanded) return expanded.error();
  // The model now needs the default domain at an opset with per-axis DequantizeLinear.
  bool declared = false;
  for (auto& opset : *model.mutable_opset_import())
    if (opset.domain().empty() || opset.domain() == "ai.onnx") {
      declared = true;
      if (opset.version() < 13) opset.set_version(13);
    }
  if (!declared) {
    auto* opset = model.add_opset_import();
    opset->set_domain("");
    opset->set_version(13);
  }
  double milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return std::optional<graph::ImportStep>(graph::ImportStep{
      "ExpandContribOps",
      std::to_string(*expanded) +
          " ONNX Runtime quantized operator(s) (com.microsoft QLinear*, QGemm) became DequantizeLinear → their float "
          "operator → QuantizeLinear, compiled as the QDQ form is (QGemm on the int8 dense kernel).",
      milliseconds});
}

}  // namespace tessel::frontend
