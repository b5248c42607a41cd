// The int8 depthwise convolution of quantized models (MobileNet's 3x3 layers): uint8 or int8
// activations in the channel blocks the int8 dense convolution writes and reads, one int8
// filter per channel packed in the same blocks, int32 accumulation (LLVM multiplies the
// widened bytes with vpmaddwd) and the requantization fused, so a layer is one pass over
// its bytes instead of a dequantized float32 copy, a float convolution and a quantization.
#pragma once

#include <vector>

#include "compiler/ops/Conv2d.h"

namespace tessel {

struct Int8DepthwiseConv2dParams {
  Conv2dParams conv;              ///< Depthwise: groups == channels == filters.
  int64_t block = 16;             ///< Activations in and out are NCHW<block>c; block divides the channels.
  DataType dataType = DataType::uint8();    ///< uint8 or int8.
  DataType outputType = DataType::uint8();  ///< uint8 or int8.
  int64_t dataZeroPoint = 0;      ///< What padding reads (the quantized real 0), in the data's type.
  int64_t outputZeroPoint = 0;
  bool relu = false;              ///< Clamp the output below at its zero point (a fused Relu).

  std::vector<int64_t> weightShape() const;  ///< [channels / block, R, S, block]
  /// A message naming the first parameter the kernel cannot take, or empty.
  std::string validate() const;
};

/// out[n, co, y, x, ci] = requantize(acc + offset[c], scale[c]) with c = co * block + ci and
///   acc = sum over r, s of data.pad[n, co, y * sh + r * dh, x * sw + s * dw, ci] * weight[co, r, s, ci]
/// (in int32). Inputs: data [N, C / b, H, W, b], weight int8 (packInt8DepthwiseWeight),
/// offset int32 [C] (the bias in accumulator units less the data zero point times the
/// filter's weight sum) and scale float32 [C] (x_scale * w_scale / y_scale). Stages
/// "data.pad", "conv.acc" and "conv", as the float blocked depthwise convolution's, whose
/// schedule it takes.
Workload int8DepthwiseConv2d(const Int8DepthwiseConv2dParams& params);

/// An OIHW ([C, 1, R, S]) int8 weight in int8DepthwiseConv2d's packed layout.
std::vector<int8_t> packInt8DepthwiseWeight(const Int8DepthwiseConv2dParams& params, const int8_t* oihw);

/// The float blocked depthwise schedule: bands of rows of each channel block in parallel,
/// accumulators for a segment of pixels in registers, taps unrolled, channels in vectors.
Expected<Schedule> defaultInt8DepthwiseConv2dSchedule(const Workload& workload, const Int8DepthwiseConv2dParams& params,
                                                      const Target& target);

}  // namespace tessel
