// Convolution over any number of spatial axes as one direct reduction (ONNX Conv in 3-D and
// more, and ConvInteger with zero points), for the shapes conv2d()'s blocked kernels do not take.
#pragma once

#include <optional>

#include "compiler/ops/Workload.h"

namespace tessel {

struct DirectConvParams {
  std::vector<int64_t> inputShape;   ///< N, C, D1..Dn.
  std::vector<int64_t> weightShape;  ///< M, C / groups, K1..Kn.
  std::vector<int64_t> strides, dilations, padsBegin, padsEnd;  ///< One per spatial axis.
  int64_t groups = 1;
  bool bias = false;  ///< An input "bias" [M] added to every output of its filter.
  /// ConvInteger: operands are integers, shifted by zero points before they multiply; the
  /// shapes of the x_zero_point ([] or [1]) and w_zero_point ([] , [1] or [M]) inputs when given.
  std::optional<std::vector<int64_t>> inputZeroPoint, weightZeroPoint;

  /// N, M, then (D + padsBegin + padsEnd - dilation * (K - 1) - 1) / stride + 1 per axis.
  std::vector<int64_t> outputShape() const;
  /// A message naming the first impossible parameter, or empty when valid.
  std::string validate() const;
};

/// out[n, m, o..] = bias[m] + sum over c, k.. of
///   (x[n, g*C/G + c, o*stride + k*dilation - padBegin] - xz) * (w[m, c, k..] - wz[m]),
/// zero outside the input. Operands are converted to `accumulate` (the output type) first.
/// Inputs: x, w, then bias, x_zero_point, w_zero_point when present. One stage "conv"
/// (axes n, m, o0..; reduction axes c, k0..) plus "conv.sum" when there is a bias.
Expected<Workload> directConv(const DirectConvParams& params, DataType inputType, DataType weightType,
                              DataType accumulate);

/// The default schedule: (n, m) planes in parallel; along a unit-stride innermost axis the
/// outputs are vector lanes with the reduction loops outside them.
Expected<Schedule> defaultDirectConvSchedule(const Workload& workload, const DirectConvParams& params,
                                             const Target& target = hostTarget());

}  // namespace tessel
