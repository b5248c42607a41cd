// FakeQuantizationToInteger: QDQ regions matched and rebuilt as integer kernels (convolutions
// as QLinearConv, dense layers as QDensePrepacked).
#include "compiler/graph/FakeQuantizationToInteger.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "compiler/graph/QuantizedDensePacking.h"
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
          if (input.defined()) {
            ++uses_[{input.node()->name, input.index()}];
            readers_[{input.node()->name, input.index()}].push_back(op->op);
          }
    for (const Value& output : graph.outputs) ++uses_[{output.node()->name, output.index()}];
  }

  std::optional<std::vector<Value>> rewrite(const OperationNode& op, const std::vector<Value>& inputs) {
    if (error_ || op.isFused()) return std::nullopt;
    if (op.op == "Mul" || op.op == "Add")
      if (auto dense = rewriteDynamicDense(op, inputs)) return dense;
    if (op.op == "Gemm" || op.op == "MatMul" || op.op == "Add") return rewriteFloatDense(op, inputs);
    if (op.op == "QLinearMatMul") return rewriteQLinearMatMul(op, inputs);
    if (op.op != "QuantizeLinear") return std::nullopt;
    auto output = quantizationOf(op, inputs);
    if (!output || output->scales.size() != 1) return std::nullopt;
    if (auto dense = rewriteQuantizedDense(op, *output)) return dense;
    if (auto pool = rewriteQuantizedMaxPool(op, *output)) return pool;
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

  // The op types reading output 0 of node `name` (a graph output is not among them).
  std::vector<std::string> readersOf(const std::string& name) const {
    auto it = readers_.find({name, 0});
    return it == readers_.end() ? std::vector<std::string>{} : it->second;
  }

  // A dense layer over dequantized operands: Gemm(DQ(x), DQ(W) [, bias]), MatMul(DQ(x), DQ(W)),
  // or Add(such a MatMul, bias) with its MatMul read by nothing else. x is per-tensor; W is a
  // constant 2-D int8 with a zero zero point, per tensor or per output column; the bias is a
  // float constant (or a dequantized one) with one value per column.
  std::optional<QuantizedDenseRegion> denseRegion(const OperationNode& node, const std::vector<Value>& inputs) const {
    QuantizedDenseRegion region;
    region.name = node.name;
    region.provenance = node.provenance;
    const OperationNode* product = &node;
    std::vector<Value> productInputs = inputs;
    std::optional<Value> biasValue;
    if (node.op == "Add") {
      if (inputs.size() != 2) return std::nullopt;
      for (int side : {0, 1}) {
        const OperationNode* matmul = producer(inputs[size_t(side)], "MatMul");
        if (matmul && onlyUse(inputs[size_t(side)])) {
          product = matmul;
          productInputs = matmul->inputs;
          biasValue = inputs[size_t(1 - side)];
          break;
        }
      }
      if (product == &node) return std::nullopt;
      region.provenance.insert(region.provenance.end(), product->provenance.begin(), product->provenance.end());
    } else if (node.op == "Gemm") {
      if (node.attribute<int64_t>("transA", 0) != 0 || numberAttribute(node, "alpha", 1.0) != 1.0) return std::nullopt;
      region.transposed = node.attribute<int64_t>("transB", 0) != 0;
      if (inputs.size() > 2 && inputs[2].defined()) {
        if (numberAttribute(node, "beta", 1.0) != 1.0) return std::nullopt;
        biasValue = inputs[2];
      }
    } else if (node.op != "MatMul") {
      return std::nullopt;
    }
    if (productInputs.size() < 2) return std::nullopt;
    const OperationNode* dataNode = producer(productInputs[0], "DequantizeLinear");
    const OperationNode* weightNode = producer(productInputs[1], "DequantizeLinear");
    if (!dataNode || !weightNode) return std::nullopt;
    auto data = quantizationOf(*dataNode, dataNode->inputs);
    auto weight = quantizationOf(*weightNode, weightNode->inputs);
    if (!data || !weight || data->scales.size() != 1) return std::nullopt;
    region.weight = constantOf(weight->tensor);
    const TensorType& dataType = data->tensor.type();
    if (!region.weight || weight->tensor.type().shape.size() != 2 || weight->tensor.type().dtype != DataType::int8() ||
        dataType.shape.size() < 2 || (dataType.dtype != DataType::uint8() && dataType.dtype != DataType::int8()))
      return std::nullopt;
    const std::vector<int64_t>& w = weight->tensor.type().shape;
    const int64_t columns = region.transposed ? w[0] : w[1];
    // Per-column weight scales lie along the axis that indexes the columns.
    if (weight->scales.size() != 1) {
      int64_t axis = weight->axis < 0 ? weight->axis + 2 : weight->axis;
      if (int64_t(weight->scales.size()) != columns || axis != (region.transposed ? 0 : 1)) return std::nullopt;
    }
    if (weight->zeroPoint.defined()) {
      auto zeros = valuesOf(constantOf(weight->zeroPoint));
      if (!zeros) return std::nullopt;
      for (double zero : *zeros)
        if (zero != 0) return std::nullopt;  // asymmetric weights stay float
    }
    region.data = data->tensor;
    region.dataScale = data->scales[0];
    if (data->zeroPoint.defined()) {
      auto zero = valuesOf(constantOf(data->zeroPoint));
      if (!zero || zero->size() != 1) return std::nullopt;
      region.dataZeroPoint = int64_t((*zero)[0]);
    }
    region.weightScales = weight->scales;
    if (biasValue) {
      region.bias = columnBias(*biasValue, columns);
      if (!region.bias) return std::nullopt;
    }
    return region;
  }

  // Output `index` of a DynamicQuantizeLinear node, or nullptr.
  static const OperationNode* dynamicQuantizer(const Value& value, int index) {
    const OperationNode* node = producer(value, "DynamicQuantizeLinear");
    return node && value.index() == index ? node : nullptr;
  }

  // ONNX Runtime's dynamically quantized dense layer: Mul(Cast(MatMulInteger(xq, W, xz, wz)),
  // Mul(xs, ws)) with xq, xs, xz the outputs of one DynamicQuantizeLinear, W a constant 2-D
  // int8 [K, N] with zero zero points, ws a constant (one, or one per column), and the
  // factors in either order; [-> Add(bias)]. One QDensePrepacked reading x's run-time scale
  // and zero point, float32 out. A Mul read only by an Add is left to the Add, which folds
  // the bias in.
  std::optional<std::vector<Value>> rewriteDynamicDense(const OperationNode& op, const std::vector<Value>& inputs) {
    if (inputs.size() != 2 || op.outputTypes.size() != 1 || op.outputTypes[0].dtype != DataType::float32())
      return std::nullopt;
    const OperationNode* mul = &op;
    std::vector<Value> mulInputs = inputs;
    std::optional<Value> biasValue;
    std::vector<Provenance> provenance = op.provenance;
    if (op.op == "Add") {
      mul = nullptr;
      for (int side : {0, 1})
        if (const OperationNode* candidate = producer(inputs[size_t(side)], "Mul");
            candidate && onlyUse(inputs[size_t(side)])) {
          mul = candidate;
          mulInputs = candidate->inputs;
          biasValue = inputs[size_t(1 - side)];
          provenance.insert(provenance.end(), candidate->provenance.begin(), candidate->provenance.end());
          break;
        }
      if (!mul || mulInputs.size() != 2) return std::nullopt;
    } else {
      std::vector<std::string> readers = readersOf(op.name);
      if (readers.size() == 1 && readers[0] == "Add" && uses_.at({op.name, 0}) == 1) return std::nullopt;
    }
    for (int side : {0, 1}) {
      const OperationNode* cast = producer(mulInputs[size_t(side)], "Cast");
      if (!cast || !onlyUse(mulInputs[size_t(side)]) || cast->inputs.empty()) continue;
      const OperationNode* matmul = producer(cast->inputs[0], "MatMulInteger");
      if (!matmul || !onlyUse(cast->inputs[0]) || matmul->inputs.size() < 3) continue;
      const OperationNode* quantizer = dynamicQuantizer(matmul->inputs[0], 0);
      if (!quantizer || !dynamicQuantizer(matmul->inputs[2], 2) || matmul->inputs[2].node() != quantizer) continue;
      // The combined scale: xs * ws, or xs alone.
      const Value& combined = mulInputs[size_t(1 - side)];
      std::vector<double> weightScales = {1.0};
      if (const OperationNode* scaleMul = producer(combined, "Mul")) {
        if (scaleMul->inputs.size() != 2) continue;
        int xsSide = dynamicQuantizer(scaleMul->inputs[0], 1) == quantizer ? 0
                     : dynamicQuantizer(scaleMul->inputs[1], 1) == quantizer ? 1
                                                                              : -1;
        auto scales = xsSide < 0 ? std::nullopt : valuesOf(constantOf(scaleMul->inputs[size_t(1 - xsSide)]));
        if (!scales || scales->empty()) continue;
        weightScales = *scales;
      } else if (dynamicQuantizer(combined, 1) != quantizer) {
        continue;
      }
      QuantizedDenseRegion region;
      region.name = op.name;
      region.provenance = provenance;
      region.provenance.insert(region.provenance.end(), cast->provenance.begin(), cast->provenance.end());
      region.provenance.insert(region.provenance.end(), matmul->provenance.begin(), matmul->provenance.end());
      region.data = matmul->inputs[0];
      region.runtimeScale = Value(matmul->inputs[0].nodeRef(), 1);
      region.runtimeZeroPoint = matmul->inputs[2];
      region.weight = constantOf(matmul->inputs[1]);
      if (!region.weight || region.weight->outputTypes[0].shape.size() != 2) continue;
      const int64_t columns = region.weight->outputTypes[0].shape[1];
      if (weightScales.size() != 1 && int64_t(weightScales.size()) != columns) continue;
      for (double scale : weightScales)
        if (!(scale > 0) || !std::isfinite(scale)) return std::nullopt;
      if (matmul->inputs.size() > 3 && matmul->inputs[3].defined()) {
        auto zeros = valuesOf(constantOf(matmul->inputs[3]));
        if (!zeros) continue;
        if (std::any_of(zeros->begin(), zeros->end(), [](double z) { return z != 0; })) continue;
      }
      region.weightScales = weightScales;
      if (biasValue) {
        region.bias = columnBias(*biasValue, columns);
        if (!region.bias) return std::nullopt;
      }
      auto packed = packQuantizedDense(region);
      if (!packed || packed->type().shape != op.outputTypes[0].shape) return std::nullopt;
      return std::vector<Value>{*packed};
    }
    return std::nullopt;
  }

  // A pre-quantized QLinearMatMul with a constant 2-D int8 B of zero zero points (as
  // quantizers write weights), per tensor or per column, and per-tensor A and Y: the same
  // int8 dense kernel, requantizing to Y's type.
  std::optional<std::vector<Value>> rewriteQLinearMatMul(const OperationNode& op, const std::vector<Value>& inputs) {
    // a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point
    if (inputs.size() != 8 || op.outputTypes.size() != 1) return std::nullopt;
    std::vector<std::optional<std::vector<double>>> values(8);
    for (size_t i = 1; i < 8; ++i) {
      values[i] = valuesOf(constantOf(inputs[i]));
      if (!values[i] || values[i]->empty()) return std::nullopt;
    }
    QuantizedDenseRegion region;
    region.name = op.name;
    region.provenance = op.provenance;
    region.data = inputs[0];
    region.weight = constantOf(inputs[3]);
    if (!region.weight || region.weight->outputTypes[0].shape.size() != 2 || values[1]->size() != 1 ||
        values[2]->size() != 1 || values[6]->size() != 1 || values[7]->size() != 1)
      return std::nullopt;
    for (double zero : *values[5])
      if (zero != 0) return std::nullopt;
    for (size_t i : {1, 4, 6})
      for (double scale : *values[i])
        if (!(scale > 0) || !std::isfinite(scale)) return std::nullopt;  // InferTypes names a bad scale
    region.dataScale = (*values[1])[0];
    region.dataZeroPoint = int64_t((*values[2])[0]);
    region.weightScales = *values[4];
    region.outputScale = (*values[6])[0];
    region.outputZeroPoint = int64_t((*values[7])[0]);
    region.outputType = op.outputTypes[0].dtype;
    auto packed = packQuantizedDense(region);
    if (!packed || packed->type() != op.outputTypes[0]) return std::nullopt;
    return std::vector<Value>{*packed};
  }

  // A dense layer whose float result is the model's (or feeds float operations): one
  // QDensePrepacked with a float32 output. One read by a QuantizeLinear (or a Relu) is left
  // for that node's rewrite, which makes the quantized output instead; a MatMul read by an
  // Add, for the Add's, which folds the bias.
  std::optional<std::vector<Value>> rewriteFloatDense(const OperationNode& op, const std::vector<Value>& inputs) {
    if (op.outputTypes.size() != 1 || op.outputTypes[0].dtype != DataType::float32()) return std::nullopt;
    std::vector<std::string> readers = readersOf(op.name);
    if (readers.size() == 1 && uses_.at({op.name, 0}) == 1 &&
        (readers[0] == "QuantizeLinear" || readers[0] == "Relu" || (op.op == "MatMul" && readers[0] == "Add")))
      return std::nullopt;
    auto region = denseRegion(op, inputs);
    if (!region) return std::nullopt;
    auto packed = packQuantizedDense(*region);
    if (!packed || packed->type().shape != op.outputTypes[0].shape) return std::nullopt;
    return std::vector<Value>{*packed};
  }

  // QuantizeLinear(MaxPool(DequantizeLinear(x))) with one scale and zero point on both sides:
  // the maximum of quantized values is the quantized maximum, so MaxPool(x) in x's type.
  std::optional<std::vector<Value>> rewriteQuantizedMaxPool(const OperationNode& op, const QuantizationParams& output) {
    const OperationNode* pool = producer(output.tensor, "MaxPool");
    if (!pool || !onlyUse(output.tensor) || pool->inputs.empty() || pool->outputTypes.size() != 1) return std::nullopt;
    const OperationNode* dequantize = producer(pool->inputs[0], "DequantizeLinear");
    if (!dequantize) return std::nullopt;
    auto input = quantizationOf(*dequantize, dequantize->inputs);
    if (!input || input->scales != output.scales) return std::nullopt;
    auto zeroOf = [](const QuantizationParams& q) -> std::optional<std::vector<double>> {
      return q.zeroPoint.defined() ? valuesOf(constantOf(q.zeroPoint)) : std::vector<double>{0.0};
    };
    if (zeroOf(*input) != zeroOf(output) || input->tensor.type().dtype != op.outputTypes[0].dtype) return std::nullopt;
    std::vector<Provenance> provenance = op.provenance;
    provenance.insert(provenance.end(), pool->provenance.begin(), pool->provenance.end());
    std::optional<Value> pooled = typed(op.name, "MaxPool", {input->tensor}, pool->attributes, provenance);
    if (!pooled) {
      error_.reset();  // a pool MaxPool cannot take in this type stays float
      return std::nullopt;
    }
    return std::vector<Value>{*pooled};
  }

  // QuantizeLinear(dense [-> Relu]): one QDensePrepacked writing the quantized output.
  std::optional<std::vector<Value>> rewriteQuantizedDense(const OperationNode& op, const QuantizationParams& output) {
    Value tensor = output.tensor;
    bool relu = false;
    std::vector<Provenance> provenance = op.provenance;
    if (const OperationNode* activation = producer(tensor, "Relu")) {
      if (!onlyUse(tensor)) return std::nullopt;
      relu = true;
      provenance.insert(provenance.end(), activation->provenance.begin(), activation->provenance.end());
      tensor = activation->inputs[0];
    }
    const auto* node = asOperation(tensor.defined() ? tensor.node() : nullptr);
    if (!node || node->isFused() || !onlyUse(tensor) || (node->op != "Gemm" && node->op != "MatMul" && node->op != "Add"))
      return std::nullopt;
    auto region = denseRegion(*node, node->inputs);
    if (!region) return std::nullopt;
    region->name = op.name;
    region->provenance.insert(region->provenance.begin(), provenance.begin(), provenance.end());
    region->relu = relu;
    region->outputScale = output.scales[0];
    if (output.zeroPoint.defined()) {
      auto zero = valuesOf(constantOf(output.zeroPoint));
      if (!zero || zero->size() != 1) return std::nullopt;
      region->outputZeroPoint = int64_t((*zero)[0]);
      region->outputType = output.zeroPoint.type().dtype;
    } else {
      region->outputType = DataType::uint8();
    }
    auto packed = packQuantizedDense(*region);
    if (!packed || packed->type() != op.outputTypes[0]) return std::nullopt;
    return std::vector<Value>{*packed};
  }

  // A dense layer's bias: biasValues of a [N] or [1, N] constant, else nullopt.
  std::optional<std::vector<double>> columnBias(const Value& value, int64_t columns) const {
    const std::vector<int64_t>& shape = value.type().shape;
    if (shape != std::vector<int64_t>{columns} && shape != std::vector<int64_t>{1, columns}) return std::nullopt;
    return biasValues(value);
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
  std::map<std::pair<std::string, int>, std::vector<std::string>> readers_;
};

}  // namespace

Expected<Graph> fakeQuantizationToInteger(const Graph& graph) {
  FakeQuantizationRewriter rewriter(graph);
  return rewriteGraphWith(graph, rewriter);
}

}  // namespace tessel::graph
