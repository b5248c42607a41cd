// The int8 convolution of quantized models, built for VNNI: uint8 activations in channel
// blocks, int8 weights packed in the blocks the dot_16x4_u8i8 tensor intrinsic reads, int32
// accumulation, and the requantization to uint8 fused into the same kernel.
#pragma once

#include <vector>

#include "compiler/ops/Conv2d.h"

namespace tessel {

struct Int8Conv2dParams {
  Conv2dParams conv;          ///< groups must be 1 (depthwise convolutions are not tensorized).
  int64_t inputBlock = 16;    ///< Activations are NCHW<inputBlock>c; a multiple of 4 dividing the channels.
  int64_t filterBlock = 32;   ///< Output NCHW<filterBlock>c; 16, 32 or 64, dividing the filters.
  int64_t dataZeroPoint = 0;    ///< The input's zero (in its own type): what padding reads.
  int64_t outputZeroPoint = 0;  ///< The output's zero, in its own type.
  bool relu = false;            ///< Clamp the output below at its zero (a fused Relu).
  /// uint8 or int8. VNNI multiplies unsigned by signed bytes, so int8 data is shifted by 128
  /// on its way into the padded copy; the offset input must then use dataZeroPoint + 128.
  DataType dataType = DataType::uint8();
  DataType outputType = DataType::uint8();  ///< uint8 or int8.
  /// NCHW input (the padded copy regroups it into channel blocks) and NCHW output (written
  /// tile by tile from the blocked accumulators), as QLinearConv's are; else NCHW<b>c.
  bool nchwInput = false, nchwOutput = false;

  /// The filters the kernel computes: NCHW output's rounded up to a whole block (the padded
  /// ones have zero weights and are never written), else the filters.
  int64_t paddedFilters() const;
  /// The channels the kernel reduces over: NCHW input's rounded up to a multiple of 4 (the
  /// padded ones have zero weights), else the channels.
  int64_t paddedChannels() const;
  /// The uint8 value padding and the offset use: dataZeroPoint, plus 128 for int8 data.
  int64_t unsignedDataZeroPoint() const;

  std::vector<int64_t> weightShape() const;  ///< [paddedFilters() / kb, paddedChannels() / 4, R, S, kb, 4]
  /// A message naming the first parameter the kernel cannot take, or empty.
  std::string validate() const;
};

/// out[n, ko, y, x, ki] = requantize(acc + offset[k], scale[k]) with k = ko * kb + ki and
///   acc = sum over c, r, s of data.pad[n, c / ib, y * sh + r, x * sw + s, c % ib] * weight[k, c, r, s]
/// (uint8 x int8 in int32). Inputs: data [N, C / ib, H, W, ib] (or NCHW), weight int8 (packed,
/// see packInt8Conv2dWeight), offset int32 [K] (the bias in accumulator units less
/// unsignedDataZeroPoint() times the sum of the filter's weights), scale float32 [K] (input scale times
/// the filter's weight scale over the output scale). Stages: "data.pad", "conv.acc" (reduction
/// axes co, r, s, cg, ci with c = (co * ib / 4 + cg) * 4 + ci) and "conv".
Workload int8Conv2d(const Int8Conv2dParams& params);

/// An OIHW int8 weight (row-major, K * C * R * S values) in int8Conv2d's packed layout.
std::vector<int8_t> packInt8Conv2dWeight(const Int8Conv2dParams& params, const int8_t* oihw);

/// Whether the default schedule runs on AMX tiles (tile_u8i8): the target has them, the
/// activations come blocked by 64 channels (a tile row) and the filters in multiples of 16.
bool int8Conv2dUsesTiles(const Int8Conv2dParams& params, const Target& target);

/// With AMX (int8Conv2dUsesTiles), the whole reduction of a tile of pixels x filters in tile
/// registers. Otherwise the VNNI schedule: rows of output tiles in parallel; per tile, the reduction outermost,
/// pixels and filter vectors unrolled, each 16 filters x 4 channels one dot_16x4_u8i8, and
/// the requantization vectorized over the filter block.
Expected<Schedule> defaultInt8Conv2dSchedule(const Workload& workload, const Int8Conv2dParams& params,
                                             const Target& target);

}  // namespace tessel
