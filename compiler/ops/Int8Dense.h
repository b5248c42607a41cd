// The int8 dense layer of quantized models, built for VNNI like the int8 convolution: uint8
// rows times int8 weights packed in the blocks dot_16x4_u8i8 reads, int32 accumulation, and
// the epilogue fused: requantization to uint8/int8, or dequantization to float32 for a layer
// whose output stays float (a classifier's logits).
#pragma once

#include <vector>

#include "compiler/ops/Workload.h"
#include "compiler/schedule/Schedule.h"

namespace tessel {

struct Int8DenseParams {
  std::vector<int64_t> dataShape;  ///< [..., K]: rows of K, any leading axes (at least one).
  int64_t columns = 0;             ///< N, the outputs per row.
  int64_t columnBlock = 32;        ///< 16 or 32 columns per packed weight block.
  DataType dataType = DataType::uint8();    ///< uint8, or int8 (shifted by 128 into a copy).
  DataType outputType = DataType::uint8();  ///< uint8, int8 or float32.
  int64_t dataZeroPoint = 0;    ///< The data's zero, in its own type.
  int64_t outputZeroPoint = 0;  ///< The output's zero (byte outputs only).
  bool relu = false;            ///< Clamp the output below at its zero.
  /// The data's scale and zero point are run-time scalars (DynamicQuantizeLinear's outputs):
  /// the output is float32, and the inputs after the weight are weight_sum int32 [N],
  /// data_scale float32 [], data_zero_point uint8 [], weight_scale float32 [N] and bias
  /// float32 [N] (see int8Dense). The data must be uint8.
  bool dynamicData = false;

  int64_t depth() const { return dataShape.empty() ? 0 : dataShape.back(); }
  int64_t rows() const;  ///< The product of the leading axes.
  int64_t paddedDepth() const;    ///< K rounded up to 4 (the padded products have zero weights).
  int64_t paddedColumns() const;  ///< N rounded up to whole blocks (zero weights, never written).
  /// The uint8 value the kernel multiplies for a real 0: dataZeroPoint, plus 128 for int8 data.
  int64_t unsignedDataZeroPoint() const;
  /// Whether the data is copied first: int8 data (shifted to uint8) or K not a multiple of 4.
  bool copiesData() const;
  std::vector<int64_t> weightShape() const;  ///< [paddedColumns() / nb, paddedDepth() / 4, nb, 4]
  std::vector<int64_t> outputShape() const;  ///< dataShape with N last.
  /// A message naming the first parameter the kernel cannot take, or empty.
  std::string validate() const;
};

/// out[..., j] = epilogue(acc + offset[j], scale[j]) with acc = sum over k of
///   u8(data[..., k]) * weight[j, k] (uint8 x int8 in int32) and the epilogue
///   requantize(., scale[j], outputZeroPoint) for byte outputs, or float(.) * scale[j] for
///   float32 (Relu after either when asked). Inputs: data, weight int8 (packed, see
///   packInt8DenseWeight), offset int32 [N] (the bias in accumulator units less
///   unsignedDataZeroPoint() times the column's weight sum), scale float32 [N]. Stages:
///   "data.u8" (when copiesData()), "dense.acc" (reduction axes kq, kl with k = kq * 4 + kl)
///   and "dense". With dynamicData, out[..., j] = float(acc - data_zero_point * weight_sum[j])
///   * (data_scale * weight_scale[j]) + bias[j] (Relu after it when asked), the inputs data,
///   weight, weight_sum, data_scale, data_zero_point, weight_scale, bias.
Workload int8Dense(const Int8DenseParams& params);

/// A [K, N] (or, `transposed`, [N, K]) int8 weight in int8Dense's packed layout.
std::vector<int8_t> packInt8DenseWeight(const Int8DenseParams& params, const int8_t* weight, bool transposed);

/// Whether the default schedule runs on AMX tiles (tile_u8i8): the target has them, K is a
/// multiple of 64 (a tile row), the columns fill whole blocks of a multiple of 16, and the
/// row axis has a divisor of at least 8 (the rows of a tile, up to 128).
bool int8DenseUsesTiles(const Int8DenseParams& params, const Target& target);

/// With AMX (int8DenseUsesTiles), per tile of rows x one column block the whole reduction in
/// tile registers. Otherwise the VNNI schedule: tiles of rows x one column block in parallel; per tile the reduction
/// outermost, rows and column vectors unrolled (accumulators in registers), each 16 columns
/// x 4 products one dot_16x4_u8i8, and the epilogue vectorized along the block. A layer of
/// fewer columns than a block is not tensorized (plain vector multiply-adds).
Expected<Schedule> defaultInt8DenseSchedule(const Workload& workload, const Int8DenseParams& params,
                                            const Target& target);

}  // namespace tessel
