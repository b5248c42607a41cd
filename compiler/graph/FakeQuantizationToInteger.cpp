// FakeQuantizationToInteger for convolutions: QDQ regions matched and rebuilt as QLinearConv.
#include "compiler/graph/FakeQuantizationToInteger.h"

#include <cmath>
#include <map>

#include "compiler/graph/TypedOperationBuilder.h"
#include "compiler/opdefs/OpRegistry.h"

namespace tessel::graph {

namespace {

const OperationNode* producer(const Value& value, const char* op) {
  if (!value.defined()) return nullptr;
  const auto* node = asOperation(value.node());
  return node && node->op == op && !node->isFused() ? node : nullptr;
}

const ConstantNode* constantOf(const Value& value) {
  return value.defined() && value.index() == 0 ? asConstant(value.node()) : nullptr;
}

// A constant's elements as doubles, or nullopt for a non-numeric one.
std::optional<std::vector<double>> valuesOf(const ConstantNode* constant) {
  return constant ? numericElements(constant->data) : std::nullopt;
}

// The parts of a DequantizeLinear or QuantizeLinear node: its tensor, scale and zero point
// (either may be a scalar or, for weights, one per filter).
struct QuantizationParams {
  Value tensor, scale, zeroPoint;  // zeroPoint undefined when the node has none
  std::vector<double> scales;
  int64_t axis = 1;
};

std::optional<QuantizationParams> quantizationOf(const OperationNode& node, const std::vector<Value>& inputs) {
  if (inputs.size() < 2 || !inputs[0].defined()) return std::nullopt;
  QuantizationParams q;
  q.tensor = inputs[0];
  q.scale = inputs[1];
  if (inputs.size() > 2 && inputs[2].defined()) {
    q.zeroPoint = inputs[2];
    if (!constantOf(q.zeroPoint)) return std::nullopt;
  }
  auto scales = valuesOf(constantOf(q.scale));
  if (!scales || scales->empty()) return std::nullopt;
  for (double s : *scales)
    if (!(s > 0) || !std::isfinite(s)) return std::nullopt;  // InferTypes names the bad scale
  q.scales = *scales;
  auto axis = node.attributes.find("axis");
  if (axis != node.attributes.end())
    if (auto* value = std::get_if<int64_t>(&axis->second)) q.axis = *value;
  return q;
}

runtime::NDArray scalarByte(DataType type, int value) {
  auto out = runtime::NDArray::empty({}, type == DataType::int8() ? runtime::DataType::int8() : runtime::DataType::uint8());
  static_cast<uint8_t*>(out.data())[0] = uint8_t(value);
  return out;
}

class FakeQuantizationRewriter : public TypedOperationBuilder {
public:
  explicit FakeQuantizationRewriter(const Graph& graph) {
    // Uses of each (node name, output): a float result read elsewhere must stay float.
    for (const GraphNode* node : graph.topologicalOrder())
      if (const auto* op = asOperation(node))
        for (const Value& input : op->inputs)
          if (input.defined()) ++uses_[{input.node()->name, input.index()}];
    for (const Value& output : graph.outputs) ++uses_[{output.node()->name, output.index()}];
  }

  std::optional<std::vector<Value>> rewrite(const OperationNode& op, const std::vector<Value>& inputs) {
    if (error_ || op.op != "QuantizeLinear" || op.isFused()) return std::nullopt;
    auto output = quantizationOf(op, inputs);
    if (!output || output->scales.size() != 1) return std::nullopt;
    std::vector<Provenance> provenance = op.provenance;
    const OperationNode* conv = producer(output->tensor, "Conv");
    bool relu = false;
    if (const OperationNode* activation = producer(output->tensor, "Relu")) {
      if (!onlyUse(output->tensor)) return std::nullopt;
      conv = producer(activation->inputs[0], "Conv");
      relu = true;
      provenance.insert(provenance.end(), activation->provenance.begin(), activation->provenance.end());
      if (conv && !onlyUse(activation->inputs[0])) return std::nullopt;
    } else if (conv && !onlyUse(output->tensor)) {
      return std::nullopt;
    }
    if (!conv || conv->inputs.size() < 2) return std::nullopt;
    provenance.insert(provenance.end(), conv->provenance.begin(), conv->provenance.end());
    const OperationNode* dataNode = producer(conv->inputs[0], "DequantizeLinear");
    const OperationNode* weightNode = producer(conv->inputs[1], "DequantizeLinear");
    if (!dataNode || !weightNode) return std::nullopt;
    auto data = quantizationOf(*dataNode, dataNode->inputs);
    auto weight = quantizationOf(*weightNode, weightNode->inputs);
    if (!data || !weight || data->scales.size() != 1 || !constantOf(weight->tensor)) return std::nullopt;
    const TensorType& weightType = weight->tensor.type();
    if (weightType.shape.size() != 4) return std::nullopt;
    const int64_t filters = weightType.shape[0];
    if (weight->scales.size() != 1 && (int64_t(weight->scales.size()) != filters || weight->axis != 0))
      return std::nullopt;

    // The bias in the accumulator's units: round(b / (xs * ws[k])).
    std::optional<Value> bias;
    if (conv->inputs.size() > 2 && conv->inputs[2].defined()) {
      std::optional<std::vector<double>> realBias = biasValues(conv->inputs[2]);
      if (!realBias || int64_t(realBias->size()) != filters) return std::nullopt;
      auto quantized = runtime::NDArray::empty({filters}, runtime::DataType::int32());
      for (int64_t k = 0; k < filters; ++k) {
        double scale = data->scales[0] * weight->scales[weight->scales.size() == 1 ? 0 : size_t(k)];
        double value = std::nearbyint((*realBias)[size_t(k)] / scale);
        if (!(std::fabs(value) < 2147483647.0)) return std::nullopt;
        quantized.dataAs<int32_t>()[k] = int32_t(value);
      }
      bias = makeConstant(op.name + ".bias_int32", quantized);
    }

    Value dataZero = data->zeroPoint.defined()
                         ? data->zeroPoint
                         : makeConstant(op.name + ".x_zero_point", scalarByte(DataType::uint8(), 0));
    Value weightZero = weight->zeroPoint.defined()
                           ? weight->zeroPoint
                           : makeConstant(op.name + ".w_zero_point", scalarByte(weightType.dtype, 0));
    Value outputZero = output->zeroPoint.defined()
                           ? output->zeroPoint
                           : makeConstant(op.name + ".y_zero_point", scalarByte(DataType::uint8(), 0));
    std::vector<Value> qinputs = {data->tensor, data->scale, dataZero, weight->tensor, weight->scale,
                                  weightZero,   output->scale, outputZero};
    if (bias) qinputs.push_back(*bias);
    Attributes attributes = conv->attributes;
    if (relu) attributes["fused_relu"] = int64_t(1);
    std::optional<Value> result = typed(op.name, "QLinearConv", qinputs, attributes, provenance);
    if (!result) {
      error_.reset();  // a region QLinearConv cannot take (uint8 weights with per-filter zero points, ...) stays float
      return std::nullopt;
    }
    return std::vector<Value>{*result};
  }

private:
  bool onlyUse(const Value& value) const {
    auto it = uses_.find({value.node()->name, value.index()});
    return it != uses_.end() && it->second == 1;
  }

  // A float bias constant, or a constant dequantized: (q - zero) * scale per element.
  std::optional<std::vector<double>> biasValues(const Value& value) const {
    if (const ConstantNode* constant = constantOf(value))
      return value.type().dtype == DataType::float32() ? valuesOf(constant) : std::nullopt;
    const OperationNode* dequantize = producer(value, "DequantizeLinear");
    if (!dequantize) return std::nullopt;
    auto q = quantizationOf(*dequantize, dequantize->inputs);
    if (!q) return std::nullopt;
    auto raw = valuesOf(constantOf(q->tensor));
    auto zero = q->zeroPoint.defined() ? valuesOf(constantOf(q->zeroPoint)) : std::vector<double>{0.0};
    if (!raw || !zero || zero->empty()) return std::nullopt;
    std::vector<double> real(raw->size());
    for (size_t i = 0; i < raw->size(); ++i)
      real[i] = ((*raw)[i] - (*zero)[zero->size() == 1 ? 0 : i]) * q->scales[q->scales.size() == 1 ? 0 : i];
    return real;
  }

  std::map<std::pair<std::string, int>, int> uses_;
};

}  // namespace

Expected<Graph> fakeQuantizationToInteger(const Graph& graph) {
  FakeQuantizationRewriter rewriter(graph);
  return rewriteGraphWith(graph, rewriter);
}

}  // namespace tessel::graph
