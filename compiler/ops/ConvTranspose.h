// Transposed convolution (ONNX ConvTranspose) over any number of spatial axes, NCHW-style
// layout, as a direct gather: each output element sums the inputs whose scattered kernel
// window covers it.
#pragma once

#include "compiler/ops/Workload.h"

namespace tessel {

struct ConvTransposeParams {
  std::vector<int64_t> inputShape;   ///< N, C, D1..Dn.
  std::vector<int64_t> weightShape;  ///< C, M / groups, K1..Kn.
  std::vector<int64_t> strides;      ///< One per spatial axis.
  std::vector<int64_t> dilations;    ///< One per spatial axis.
  std::vector<int64_t> padsBegin;    ///< One per spatial axis: output cropped at the start (negative: extended).
  std::vector<int64_t> padsEnd;      ///< One per spatial axis: output cropped at the end (negative: extended).
  std::vector<int64_t> outputPadding;  ///< One per spatial axis: extra output at the end.
  int64_t groups = 1;
  bool bias = false;  ///< A third input "bias" [M].

  /// N, M, then stride * (D - 1) + outputPadding + dilation * (K - 1) + 1 - padsBegin - padsEnd.
  std::vector<int64_t> outputShape() const;
  /// A message naming the first impossible parameter, or empty when valid.
  std::string validate() const;
};

/// out[n, m, o..] = bias[m] + sum over c (of m's group), k.. of
///   x[n, c, i..] * w[c, m mod (M / groups), k..]  where o = i * stride + k * dilation - padBegin.
/// Inputs: x, w, and bias when params.bias. One stage "convT" with axes n, m, o0, o1, .. and
/// reduction axes c, k0, k1, ...
Expected<Workload> convTranspose(const ConvTransposeParams& params, DataType dtype = DataType::float32());

/// The default schedule: the (n, m) planes in parallel.
Expected<Schedule> defaultConvTransposeSchedule(const Workload& workload,
                                                const Target& target = hostTarget());

}  // namespace tessel
