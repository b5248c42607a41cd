// A quantized dense region -> QDensePrepacked: the weight packed and the per-column terms folded.
#include "compiler/graph/QuantizedDensePacking.h"

#include <cmath>

#include "compiler/opdefs/OpRegistry.h"
#include "compiler/ops/Int8Dense.h"

namespace tessel::graph {

std::optional<Value> packQuantizedDense(const QuantizedDenseRegion& region) {
  const TensorType& x = region.data.type();
  const std::vector<int64_t>& w = region.weight->outputTypes[0].shape;
  if (w.size() != 2 || region.weight->outputTypes[0].dtype != DataType::int8()) return std::nullopt;
  const int64_t depth = region.transposed ? w[1] : w[0], columns = region.transposed ? w[0] : w[1];
  Int8DenseParams params;
  params.dataShape = x.shape;
  params.columns = columns;
  // Whole blocks of 32 columns where they fit, else the block that pads least.
  params.columnBlock = columns % 32 == 0 || (columns % 16 != 0 && columns > 16) ? 32 : 16;
  params.dataType = x.dtype;
  params.outputType = region.outputScale ? region.outputType : DataType::float32();
  params.dataZeroPoint = region.dataZeroPoint;
  params.outputZeroPoint = region.outputScale ? region.outputZeroPoint : 0;
  params.relu = region.relu;
  params.dynamicData = region.runtimeScale.has_value();
  if (params.dynamicData && (!region.runtimeZeroPoint || region.outputScale)) return std::nullopt;
  if (!x.known() || !x.layout.empty() || x.shape.empty() || x.shape.back() != depth || !params.validate().empty())
    return std::nullopt;
  if (region.weightScales.size() != 1 && int64_t(region.weightScales.size()) != columns) return std::nullopt;
  if (region.bias && int64_t(region.bias->size()) != columns) return std::nullopt;

  const auto* weight = static_cast<const int8_t*>(region.weight->data.data());
  std::vector<int8_t> packedWeights = packInt8DenseWeight(params, weight, region.transposed);
  std::string layout = "NK" + std::to_string(params.columnBlock) + "n4k";
  auto packed = runtime::NDArray::empty(params.weightShape(), runtime::DataType::int8());
  packed.copyFrom(packedWeights.data(), packedWeights.size());
  Value packedWeight = makeConstant(region.weight->name + "." + layout, packed, layout);
  auto weightScale = [&](int64_t n) { return region.weightScales[region.weightScales.size() == 1 ? 0 : size_t(n)]; };
  auto weightSum = [&](int64_t n) {
    int64_t sum = 0;
    for (int64_t k = 0; k < depth; ++k) sum += weight[region.transposed ? n * depth + k : k * columns + n];
    return sum;
  };
  auto offset = runtime::NDArray::empty({columns}, runtime::DataType::int32());
  auto scale = runtime::NDArray::empty({columns}, runtime::DataType::float32());
  Attributes attributes{{"n", columns},
                        {"column_block", params.columnBlock},
                        {"y_type", params.outputType.toString()},
                        {"fused_relu", int64_t(params.relu ? 1 : 0)}};
  std::vector<Value> inputs;
  if (params.dynamicData) {
    // The zero-point term needs x's run-time zero point: the kernel takes the weight sums,
    // the weight scales and the float bias.
    auto bias = runtime::NDArray::empty({columns}, runtime::DataType::float32());
    for (int64_t n = 0; n < columns; ++n) {
      offset.dataAs<int32_t>()[n] = int32_t(weightSum(n));
      scale.dataAs<float>()[n] = float(weightScale(n));
      bias.dataAs<float>()[n] = region.bias ? float((*region.bias)[size_t(n)]) : 0.0f;
    }
    inputs = {region.data,
              packedWeight,
              makeConstant(region.name + ".weight_sum", offset),
              *region.runtimeScale,
              *region.runtimeZeroPoint,
              makeConstant(region.name + ".weight_scale", scale),
              makeConstant(region.name + ".bias", bias)};
  } else {
    for (int64_t n = 0; n < columns; ++n) {
      double bias = region.bias ? std::nearbyint((*region.bias)[size_t(n)] / (region.dataScale * weightScale(n))) : 0.0;
      double folded = bias - double(params.unsignedDataZeroPoint()) * double(weightSum(n));
      if (!(std::fabs(folded) < 2147483647.0)) return std::nullopt;
      offset.dataAs<int32_t>()[n] = int32_t(folded);
      // In float32, in the order QLinearMatMul's reference multiplies, so both round alike.
      float product = float(region.dataScale) * float(weightScale(n));
      scale.dataAs<float>()[n] = region.outputScale ? product / float(*region.outputScale) : product;
    }
    attributes["x_zero_point"] = params.dataZeroPoint;
    attributes["y_zero_point"] = params.outputZeroPoint;
    inputs = {region.data, packedWeight, makeConstant(region.name + ".offset", offset),
              makeConstant(region.name + ".scale", scale)};
  }
  TensorType out{params.outputType, params.outputShape(), ""};
  return makeOperation(region.name, "QDensePrepacked", inputs, attributes, {out}, region.provenance)[0];
}

}  // namespace tessel::graph
