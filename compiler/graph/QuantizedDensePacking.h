// FakeQuantizationToInteger's dense layers: a quantized MatMul or Gemm with constant int8
// weights built as one QDensePrepacked node on the int8 VNNI kernel (compiler/ops/Int8Dense.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/graph/Graph.h"

namespace tessel::graph {

/// What a quantized dense region reads and makes, in real-number terms.
struct QuantizedDenseRegion {
  std::string name;                  ///< The new node's name.
  std::vector<Provenance> provenance;
  Value data;                        ///< The uint8 or int8 x, [..., K].
  double dataScale = 1;
  int64_t dataZeroPoint = 0;
  /// x quantized at run time: DynamicQuantizeLinear's scale and zero point (dataScale and
  /// dataZeroPoint unused); the output is then float32 and the bias added in float.
  std::optional<Value> runtimeScale, runtimeZeroPoint;
  const ConstantNode* weight = nullptr;  ///< int8, [K, N] or (transposed) [N, K].
  bool transposed = false;
  std::vector<double> weightScales;  ///< One, or one per column.
  std::optional<std::vector<double>> bias;  ///< Real values, one per column.
  /// The output: quantized with this scale and zero point, or float32 when absent.
  std::optional<double> outputScale;
  int64_t outputZeroPoint = 0;
  DataType outputType = DataType::float32();
  bool relu = false;
};

/// The QDensePrepacked node computing `region`: the weight packed in [N/nb][K/4][nb][4]
/// blocks, the bias (rounded to accumulator units, as QGemm's int32 bias is) and the data's
/// zero point folded into one int32 offset per column, and per column the scale x_scale *
/// w_scale (over y_scale for a quantized output). With a run-time scale the node reads the
/// weight sums, x's scale and zero point, the weight scales and the float bias instead.
/// nullopt when the kernel cannot take it (an int32 overflow of the bias, a zero point
/// outside its type).
std::optional<Value> packQuantizedDense(const QuantizedDenseRegion& region);

}  // namespace tessel::graph
