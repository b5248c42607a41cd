// QLinearConv -> QLinearConvPrepacked: the weight packed and the per-filter terms folded once.
#include "compiler/graph/QuantizedConvPacking.h"

#include "compiler/opdefs/OpRegistry.h"
#include "compiler/ops/Int8Conv2d.h"
#include "compiler/ops/PackedConvParams.h"

namespace tessel::graph {

namespace {

const ConstantNode* constantAt(const std::vector<Value>& inputs, size_t i) {
  return i < inputs.size() && inputs[i].defined() && inputs[i].index() == 0 ? asConstant(inputs[i].node()) : nullptr;
}

bool isByte(DataType type) { return type == DataType::uint8() || type == DataType::int8(); }

}  // namespace

std::optional<std::vector<Value>> packQuantizedConv(const OperationNode& op, const std::vector<Value>& inputs,
                                                    const Target& target) {
  // x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B
  if (inputs.size() < 8 || !inputs[0].defined() || op.outputTypes.size() != 1) return std::nullopt;
  bool hasBias = inputs.size() > 8 && inputs[8].defined();
  // Inputs 1..8 as constants, and their values (a scalar repeats for every filter).
  std::vector<const ConstantNode*> constants;
  std::vector<std::vector<double>> values;
  for (size_t i = 1; i < (hasBias ? 9u : 8u); ++i) {
    constants.push_back(constantAt(inputs, i));
    auto numbers = constants.back() ? numericElements(constants.back()->data) : std::nullopt;
    if (!numbers) return std::nullopt;
    values.push_back(std::move(*numbers));
  }
  auto constant = [&](size_t input) { return constants[input - 1]; };
  auto element = [&](size_t input, int64_t i) {
    const std::vector<double>& v = values[input - 1];
    return v[v.size() == 1 ? 0 : size_t(i)];
  };
  const TensorType& x = inputs[0].type();
  const TensorType& w = constant(3)->outputTypes[0];
  DataType outputType = op.outputTypes[0].dtype;
  if (!x.known() || !x.layout.empty() || x.shape.size() != 4 || !isByte(x.dtype) || w.dtype != DataType::int8() ||
      w.shape.size() != 4 || !isByte(outputType))
    return std::nullopt;
  for (size_t i : {1, 2, 6, 7})
    if (constant(i)->data.numElements() != 1) return std::nullopt;
  const int64_t filters = w.shape[0];
  // Fewer filters than the intrinsic's 16 lanes: a tile would hold part of a vector, which
  // dot_16x4_u8i8 cannot write; such a small layer keeps the reference kernel.
  if (filters < 16) return std::nullopt;
  for (size_t i : {4, 5})
    if (constant(i)->data.numElements() != 1 && constant(i)->data.numElements() != filters) return std::nullopt;
  for (int64_t k = 0; k < constant(5)->data.numElements(); ++k)
    if (element(5, k) != 0) return std::nullopt;  // asymmetric weights: the reference kernel
  auto conv = conv2dParamsFromOnnx(op.attributes, x.shape, w.shape, false);
  if (!conv) return std::nullopt;  // QLinearConv's own type inference reports what is wrong

  Int8Conv2dParams params;
  params.conv = *conv;
  params.nchwInput = params.nchwOutput = true;
  const int64_t channels = params.paddedChannels();
  params.inputBlock = channels % 16 == 0 ? 16 : channels % 8 == 0 ? 8 : 4;
  params.filterBlock = filters % 32 == 0 ? 32 : 16;
  params.dataType = x.dtype;
  params.outputType = outputType;
  params.dataZeroPoint = int64_t(element(2, 0));
  params.outputZeroPoint = int64_t(element(7, 0));
  if (!params.validate().empty()) return std::nullopt;

  const int64_t perFilter = w.shape[1] * w.shape[2] * w.shape[3];
  const auto* weight = static_cast<const int8_t*>(constant(3)->data.data());
  auto packedWeights = packInt8Conv2dWeight(params, weight);
  auto packed = runtime::NDArray::empty(params.weightShape(), runtime::DataType::int8());
  packed.copyFrom(packedWeights.data(), packedWeights.size());
  auto offset = runtime::NDArray::empty({filters}, runtime::DataType::int32());
  auto scale = runtime::NDArray::empty({filters}, runtime::DataType::float32());
  float xScale = float(element(1, 0)), yScale = float(element(6, 0));
  for (int64_t k = 0; k < filters; ++k) {
    int64_t sum = 0;
    for (int64_t i = 0; i < perFilter; ++i) sum += weight[k * perFilter + i];
    int64_t bias = hasBias ? int64_t(element(8, k)) : 0;
    offset.dataAs<int32_t>()[k] = int32_t(bias - params.unsignedDataZeroPoint() * sum);
    // The order the reference kernel multiplies in, so both round alike.
    scale.dataAs<float>()[k] = xScale * float(element(4, k)) / yScale;
  }

  Attributes attributes = op.attributes;
  attributes["weight_shape"] = w.shape;
  attributes["x_zero_point"] = params.dataZeroPoint;
  attributes["y_zero_point"] = params.outputZeroPoint;
  attributes["y_type"] = outputType.toString();
  attributes["input_block"] = params.inputBlock;
  attributes["filter_block"] = params.filterBlock;
  std::string layout = "OIHW" + std::to_string(params.filterBlock) + "o4i";
  std::vector<Value> newInputs = {
      inputs[0], makeConstant(constant(3)->name + "." + layout, packed, layout),
      makeConstant(op.name + ".offset", offset), makeConstant(op.name + ".scale", scale)};
  return makeOperation(op.name, "QLinearConvPrepacked", newInputs, attributes, op.outputTypes, op.provenance);
}

}  // namespace tessel::graph
