// Softmax and LogSoftmax along one axis (ONNX opset 13), numerically stable, with a default schedule.
#pragma once

#include "compiler/ops/Workload.h"

namespace tessel {

struct SoftmaxParams {
  std::vector<int64_t> shape;  ///< Input (and output) shape, any rank >= 1.
  int64_t axis = -1;           ///< The axis normalized over; negative counts from the end.
  bool logSoftmax = false;     ///< LogSoftmax: x - max - log(sum(exp(x - max))).
  /// ONNX before opset 13: the input is coerced to 2-D at `axis`, so the normalization runs
  /// over every axis from `axis` on, flattened; from opset 13 only over `axis`.
  bool flattenFromAxis = false;
  /// `axis` in [0, rank), or why it is invalid.
  Expected<int64_t> resolvedAxis() const;
};

/// out = exp(x - max) / sum(exp(x - max)) along the axis (or its log). Stages, with prefix
/// "softmax" (or "logsoftmax"): "<p>.max" and "<p>.sum" (the input shape without the axis;
/// reduction axis "k", or laneSplitReduce() stages when the axis is the last one),
/// "softmax.exp" (the shifted exponentials, Softmax only) and "<p>"
/// (the output). Axes are named ax0, ax1, ... after the input's dimensions.
Expected<Workload> softmax(const SoftmaxParams& params, DataType dtype = DataType::float32());

/// ONNX Hardmax: 1 where the first maximum along the axis (all axes from it, with
/// flattenFromAxis) is, 0 elsewhere; logSoftmax is ignored. Stages "hardmax.max",
/// "hardmax.index" (the first position holding it) and "hardmax"; axes as softmax().
Expected<Workload> hardmax(const SoftmaxParams& params, DataType dtype = DataType::float32());
Expected<Schedule> defaultHardmaxSchedule(const Workload& workload, const SoftmaxParams& params,
                                          const Target& target = hostTarget());

/// The default schedule: in every stage the axes before the softmax axis fused into
/// parallel rows, the innermost axis in vectors where it is not the reduction.
Expected<Schedule> defaultSoftmaxSchedule(const Workload& workload, const SoftmaxParams& params,
                                          const Target& target = hostTarget());

}  // namespace tessel
