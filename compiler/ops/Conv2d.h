// 2-D convolution, NCHW layout, with padding, stride, and a register-blocked default schedule.
#pragma once

#include "compiler/ops/Workload.h"

namespace tessel {

struct Conv2dParams {
  int64_t batch = 1, channels = 1, height = 1, width = 1;  ///< Input N, C, H, W.
  int64_t filters = 1, kernelH = 1, kernelW = 1;           ///< Output channels K and kernel R x S.
  int64_t stride = 1, pad = 0;
  int64_t outHeight() const { return (height + 2 * pad - kernelH) / stride + 1; }
  int64_t outWidth() const { return (width + 2 * pad - kernelW) / stride + 1; }
  /// A message naming the first impossible parameter, or empty when valid.
  std::string validate() const;
};

/// out[n,k,y,x] = sum over c,r,s of in[n,c,y*stride+r-pad, x*stride+s-pad] * weight[k,c,r,s].
/// Stages: "data.pad" (zero padding), "weight.packed" (filters in vector-wide blocks),
/// "conv.blocked" (the reduction in a [n][k/kb][y][x][kb] layout; reductions c, r, s) and
/// "conv" (the NCHW output; axes n, k, y, x).
Workload conv2d(const Conv2dParams& params, DataType dtype = DataType::float32(),
                const ScheduleTarget& target = ScheduleTarget::host());

/// The default schedule: accumulators for a row segment of output pixels times two
/// vectors of filters kept in registers, filters as vector lanes, rows in parallel.
Expected<Schedule> defaultConv2dSchedule(const Workload& workload, const Conv2dParams& params,
                                         const ScheduleTarget& target = ScheduleTarget::host());

}  // namespace tessel
