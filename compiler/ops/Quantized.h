// Integer and quantized operators on the float kernels' structure: MatMulInteger,
// QLinearMatMul and QLinearConv (ConvInteger is DirectConv with zero points).
#pragma once

#include <optional>

#include "compiler/ops/DirectConv.h"

namespace tessel {

/// Whether `zeroPoint` is a value of `type` (uint8 or int8).
bool zeroPointFits(DataType type, int64_t zeroPoint);

/// saturate(round_half_to_even(value) + zeroPoint) in the integer type `out` (at most 32
/// bits): the last step of QuantizeLinear and of every requantization. `value` is floating
/// point, `zeroPoint` of any numeric type.
Expr roundToQuantized(Expr value, Expr zeroPoint, DataType out);

/// saturate(round_half_to_even(accumulator * scale) + zeroPoint) in `out` (ONNX's
/// requantization; `scale` is float32).
Expr requantize(Expr accumulator, Expr scale, Expr zeroPoint, DataType out);

struct QuantizedMatmulParams {
  std::vector<int64_t> aShape, bShape;  ///< numpy.matmul operands (uint8 or int8).
  DataType aType = DataType::uint8(), bType = DataType::uint8();
  /// Zero-point shapes: a scalar ([] or [1]), or one per row of A ([M]) / column of B ([N]).
  std::optional<std::vector<int64_t>> aZeroPoint, bZeroPoint;
  /// QLinearMatMul: scales (scalars) and the output zero point, whose type is the output's.
  bool requantized = false;
  DataType outType = DataType::uint8();
  /// The shapes ([] or [1]) of a_scale, b_scale, y_scale and y_zero_point when requantized.
  std::vector<std::vector<int64_t>> scalarShapes = {{}, {}, {}, {}};
};

/// (A - a_zero_point) @ (B - b_zero_point) in int32 ("qmatmul.acc" / stage "qmatmul" when not
/// requantized), then, for QLinearMatMul, requantized by a_scale * b_scale / y_scale into
/// "qmatmul". Inputs: A, B, then the zero points given, then (requantized) a_scale, b_scale,
/// y_scale, y_zero_point.
Expected<Workload> quantizedMatmul(const QuantizedMatmulParams& params);

struct QuantizedConvParams {
  DirectConvParams conv;  ///< With both zero points set; bias is int32.
  DataType xType = DataType::uint8(), wType = DataType::uint8(), outType = DataType::uint8();
  std::vector<int64_t> weightScaleShape;  ///< [] / [1] or one per filter [M].
  /// The shapes ([] or [1]) of x_scale, y_scale and y_zero_point.
  std::vector<std::vector<int64_t>> scalarShapes = {{}, {}, {}};
  /// Clamp the output below at y_zero_point: a Relu folded in (FakeQuantizationToInteger).
  bool relu = false;
};

/// QLinearConv: directConv()'s int32 stages, then "qconv" = requantize(conv, x_scale *
/// w_scale[m] / y_scale, y_zero_point). Inputs: directConv's, then x_scale, w_scale,
/// y_scale, y_zero_point.
Expected<Workload> quantizedConv(const QuantizedConvParams& params);

/// The default schedule of both: the int32 accumulation's outermost axis in parallel (for
/// the conv, directConv's schedule), and the requantization alongside it.
Expected<Schedule> defaultQuantizedSchedule(const Workload& workload,
                                            const Target& target = hostTarget());

}  // namespace tessel
