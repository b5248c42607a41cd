// QLinearConv -> QLinearConvPrepacked (or, depthwise over channel blocks,
// QLinearDepthwiseConvPrepacked): the weight packed and the per-filter terms folded once.
#include "compiler/graph/QuantizedConvPacking.h"
#include "compiler/schedule/TensorIntrinsic.h"

#include "compiler/opdefs/OpRegistry.h"
#include "compiler/ops/Int8Conv2d.h"
#include "compiler/ops/Int8DepthwiseConv2d.h"
#include "compiler/ops/LayoutTransform.h"
#include "compiler/ops/PackedConvParams.h"

namespace tessel::graph {

namespace {

const ConstantNode* constantAt(const std::vector<Value>& inputs, size_t i) {
  return i < inputs.size() && inputs[i].defined() && inputs[i].index() == 0 ? asConstant(inputs[i].node()) : nullptr;
}

bool isByte(DataType type) { return type == DataType::uint8() || type == DataType::int8(); }

// A QLinearConv's inputs 1..8 (x_scale to the bias) as constants and numbers (a scalar
// repeats for every filter), with what every rewrite needs checked: scalar data and output
// parameters, an int8 4-D weight with one scale or one per filter and zero zero points
// (symmetric), byte data and output types.
struct QuantizedConvConstants {
  std::vector<const ConstantNode*> constants;
  std::vector<std::vector<double>> values;
  bool hasBias = false;
  const ConstantNode* constant(size_t input) const { return constants[input - 1]; }
  double element(size_t input, int64_t i) const {
    const std::vector<double>& v = values[input - 1];
    return v[v.size() == 1 ? 0 : size_t(i)];
  }
  const TensorType& weightType() const { return constant(3)->outputTypes[0]; }
};

std::optional<QuantizedConvConstants> readQuantizedConv(const OperationNode& op, const std::vector<Value>& inputs) {
  // x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B
  if (inputs.size() < 8 || !inputs[0].defined() || op.outputTypes.size() != 1) return std::nullopt;
  QuantizedConvConstants read;
  read.hasBias = inputs.size() > 8 && inputs[8].defined();
  for (size_t i = 1; i < (read.hasBias ? 9u : 8u); ++i) {
    read.constants.push_back(constantAt(inputs, i));
    auto numbers = read.constants.back() ? numericElements(read.constants.back()->data) : std::nullopt;
    if (!numbers) return std::nullopt;
    read.values.push_back(std::move(*numbers));
  }
  const TensorType& w = read.weightType();
  if (!isByte(inputs[0].type().dtype) || w.dtype != DataType::int8() || w.shape.size() != 4 ||
      !isByte(op.outputTypes[0].dtype))
    return std::nullopt;
  for (size_t i : {1, 2, 6, 7})
    if (read.constant(i)->data.numElements() != 1) return std::nullopt;
  const int64_t filters = w.shape[0];
  for (size_t i : {4, 5})
    if (read.constant(i)->data.numElements() != 1 && read.constant(i)->data.numElements() != filters) return std::nullopt;
  for (int64_t k = 0; k < read.constant(5)->data.numElements(); ++k)
    if (read.element(5, k) != 0) return std::nullopt;  // asymmetric weights: the reference kernel
  return read;
}

// Per filter: the offset (the bias less the data zero point, made unsigned, times the
// filter's weight sum) and the scale x_scale * w_scale / y_scale.
void foldPerFilter(const QuantizedConvConstants& read, int64_t unsignedDataZeroPoint, runtime::NDArray* offset,
                   runtime::NDArray* scale) {
  const TensorType& w = read.weightType();
  const int64_t filters = w.shape[0], perFilter = w.shape[1] * w.shape[2] * w.shape[3];
  const auto* weight = static_cast<const int8_t*>(read.constant(3)->data.data());
  *offset = runtime::NDArray::empty({filters}, runtime::DataType::int32());
  *scale = runtime::NDArray::empty({filters}, runtime::DataType::float32());
  float xScale = float(read.element(1, 0)), yScale = float(read.element(6, 0));
  for (int64_t k = 0; k < filters; ++k) {
    int64_t sum = 0;
    for (int64_t i = 0; i < perFilter; ++i) sum += weight[k * perFilter + i];
    int64_t bias = read.hasBias ? int64_t(read.element(8, k)) : 0;
    offset->dataAs<int32_t>()[k] = int32_t(bias - unsignedDataZeroPoint * sum);
    // The order the reference kernel multiplies in, so both round alike.
    scale->dataAs<float>()[k] = xScale * float(read.element(4, k)) / yScale;
  }
}

}  // namespace

std::optional<std::vector<Value>> packQuantizedConv(const OperationNode& op, const std::vector<Value>& inputs,
                                                    const Target& target) {
  auto read = readQuantizedConv(op, inputs);
  if (!read) return std::nullopt;
  const TensorType& x = inputs[0].type();
  const TensorType& w = read->weightType();
  DataType outputType = op.outputTypes[0].dtype;
  if (!x.known() || !x.layout.empty() || x.shape.size() != 4) return std::nullopt;
  const int64_t filters = w.shape[0];
  // Fewer filters than the intrinsic's 16 lanes: a tile would hold part of a vector, which
  // dot_16x4_u8i8 cannot write; such a small layer keeps the reference kernel.
  if (filters < 16) return std::nullopt;
  auto conv = conv2dParamsFromOnnx(op.attributes, x.shape, w.shape, false);
  if (!conv) return std::nullopt;  // QLinearConv's own type inference reports what is wrong

  Int8Conv2dParams params;
  params.conv = *conv;
  params.nchwInput = params.nchwOutput = true;
  const int64_t channels = params.paddedChannels();
  params.inputBlock = channels % 16 == 0 ? 16 : channels % 8 == 0 ? 8 : 4;
  // With AMX, blocks of 64 filters: the next convolution reads them as blocks of 64 channels,
  // one tile row (int8Conv2dUsesTiles).
  params.filterBlock = hasIntegerTiles(target) && filters % 64 == 0 ? 64 : filters % 32 == 0 ? 32 : 16;
  params.dataType = x.dtype;
  params.outputType = outputType;
  params.dataZeroPoint = int64_t(read->element(2, 0));
  params.outputZeroPoint = int64_t(read->element(7, 0));
  if (!params.validate().empty()) return std::nullopt;

  const auto* weight = static_cast<const int8_t*>(read->constant(3)->data.data());
  auto packedWeights = packInt8Conv2dWeight(params, weight);
  auto packed = runtime::NDArray::empty(params.weightShape(), runtime::DataType::int8());
  packed.copyFrom(packedWeights.data(), packedWeights.size());
  runtime::NDArray offset, scale;
  foldPerFilter(*read, params.unsignedDataZeroPoint(), &offset, &scale);

  Attributes attributes = op.attributes;
  attributes["weight_shape"] = w.shape;
  attributes["x_zero_point"] = params.dataZeroPoint;
  attributes["y_zero_point"] = params.outputZeroPoint;
  attributes["y_type"] = outputType.toString();
  attributes["input_block"] = params.inputBlock;
  attributes["filter_block"] = params.filterBlock;
  std::string layout = "OIHW" + std::to_string(params.filterBlock) + "o4i";
  std::vector<Value> newInputs = {
      inputs[0], makeConstant(read->constant(3)->name + "." + layout, packed, layout),
      makeConstant(op.name + ".offset", offset), makeConstant(op.name + ".scale", scale)};
  return makeOperation(op.name, "QLinearConvPrepacked", newInputs, attributes, op.outputTypes, op.provenance);
}

std::optional<std::vector<Value>> packQuantizedDepthwiseConv(const OperationNode& op, const std::vector<Value>& inputs,
                                                             const Value& blockedData) {
  auto read = readQuantizedConv(op, inputs);
  if (!read) return std::nullopt;
  const TensorType& x = blockedData.type();
  std::optional<int64_t> block = channelBlockOf(x.layout);
  if (!x.known() || !block || *block == 0 || x.shape.size() != 5) return std::nullopt;
  const TensorType& w = read->weightType();
  auto conv = conv2dParamsFromOnnx(op.attributes, unblockedChannelShape(x.shape, *block), w.shape, false);
  if (!conv || !conv->isDepthwise() || conv->filters != conv->channels) return std::nullopt;

  Int8DepthwiseConv2dParams params;
  params.conv = *conv;
  params.block = *block;
  params.dataType = x.dtype;
  params.outputType = op.outputTypes[0].dtype;
  params.dataZeroPoint = int64_t(read->element(2, 0));
  params.outputZeroPoint = int64_t(read->element(7, 0));
  params.relu = op.attribute<int64_t>("fused_relu", 0) != 0;
  if (!params.validate().empty()) return std::nullopt;

  const auto* weight = static_cast<const int8_t*>(read->constant(3)->data.data());
  auto packedWeights = packInt8DepthwiseWeight(params, weight);
  auto packed = runtime::NDArray::empty(params.weightShape(), runtime::DataType::int8());
  packed.copyFrom(packedWeights.data(), packedWeights.size());
  // The data is read as it is (signed or not), so its own zero point is what padding holds.
  runtime::NDArray offset, scale;
  foldPerFilter(*read, params.dataZeroPoint, &offset, &scale);

  Attributes attributes = op.attributes;
  attributes["weight_shape"] = w.shape;
  attributes["x_zero_point"] = params.dataZeroPoint;
  attributes["y_zero_point"] = params.outputZeroPoint;
  attributes["y_type"] = params.outputType.toString();
  attributes["data_layout"] = x.layout;
  std::string layout = "CHW" + std::to_string(params.block) + "c";
  std::vector<Value> newInputs = {
      blockedData, makeConstant(read->constant(3)->name + "." + layout, packed, layout),
      makeConstant(op.name + ".offset", offset), makeConstant(op.name + ".scale", scale)};
  TensorType out{params.outputType,
                 blockedChannelShape({conv->batch, conv->filters, conv->outHeight(), conv->outWidth()}, params.block),
                 x.layout};
  return makeOperation(op.name, "QLinearDepthwiseConvPrepacked", newInputs, attributes, {out}, op.provenance);
}

}  // namespace tessel::graph
