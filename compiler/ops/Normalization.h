// ONNX LayerNormalization, BatchNormalization (inference) and InstanceNormalization with default schedules.
#pragma once

#include "compiler/ops/Workload.h"

namespace tessel {

enum class NormKind { Layer, Batch, Instance };

struct NormParams {
  NormKind kind = NormKind::Layer;
  std::vector<int64_t> shape;  ///< Input shape: any rank for Layer; N, C, D1.. for Batch and Instance.
  /// Layer only: the first normalized axis (negative counts from the end); mean and variance
  /// are taken over shape[axis:], and scale/bias have that shape.
  int64_t axis = -1;
  double epsilon = 1e-5;
  bool hasBias = true;  ///< Layer only: ONNX's bias input is optional.
  /// Layer only: also output the mean and the inverse standard deviation (ONNX's optional
  /// Mean and InvStdDev), each of shape shape[:axis] followed by ones.
  bool statisticsOutputs = false;
};

/// The normalization as a workload. Inputs, in order:
///   Layer:    x, scale[shape[axis:]], bias[shape[axis:]] (when hasBias)
///   Batch:    x, scale[C], bias[C], mean[C], var[C]       (inference: running statistics)
///   Instance: x, scale[C], bias[C]
/// Layer and Instance compute stages "<p>.mean", "<p>.var" (two-pass, over the normalized
/// axes flattened, each a laneSplitReduce() with its "<p>.mean.lanes" stage), "<p>.rstd"
/// (1/sqrt(var + epsilon)) and "<p>", with prefix
/// "layernorm" or "instancenorm". Batch folds the statistics into per-channel
/// "batchnorm.factor" and "batchnorm.shift" and computes "batchnorm" = x * factor + shift.
/// Axes are named ax0, ax1, ... after the input's dimensions. With statisticsOutputs, the
/// stages "layernorm.mean.out" and "layernorm.rstd.out" are the second and third outputs.
Expected<Workload> normalization(const NormParams& params, DataType dtype = DataType::float32());

/// The default schedule: in every stage the leading (not normalized) axes fused into
/// parallel rows and the innermost axis in vectors where it is not reduced.
Expected<Schedule> defaultNormalizationSchedule(const Workload& workload, const NormParams& params,
                                                const Target& target = hostTarget());

/// ONNX LpNormalization: x / ||x||_p along `axis` (negative counts from the end), p 1 or 2.
/// Stages "lpnorm.norm" (the norm per line; reduction axis "k") and "lpnorm".
Expected<Workload> lpNormalization(const std::vector<int64_t>& shape, int64_t axis, int64_t p,
                                   DataType dtype = DataType::float32());

/// ONNX MeanVarianceNormalization: (x - mean) / sqrt(variance + 1e-9), statistics over `axes`
/// (the others index independent groups). Stages "mvn.mean", "mvn.var" (with reduced axes kept
/// as extent 1; reduction axes r<d>) and "mvn".
Expected<Workload> meanVarianceNormalization(const std::vector<int64_t>& shape, const std::vector<int64_t>& axes,
                                             DataType dtype = DataType::float32());

/// ONNX LRN over the channels of N x C x D1..: x / (bias + alpha / size * sum of x^2 over the
/// `size` channels around c)^beta. Stages "lrn.sum" (reduction axis "r") and "lrn".
struct LrnParams {
  std::vector<int64_t> shape;
  int64_t size = 1;
  double alpha = 1e-4, beta = 0.75, bias = 1.0;
};
Expected<Workload> localResponseNormalization(const LrnParams& params, DataType dtype = DataType::float32());

/// ONNX BatchNormalization in training mode over N x C x D1..: statistics of the batch
/// ("batchnorm.mean", "batchnorm.var": per channel, population variance), the normalized
/// output "batchnorm", and the updated running statistics "batchnorm.running_mean" /
/// "batchnorm.running_var" = input statistic * momentum + batch statistic * (1 - momentum).
/// Inputs x, scale, bias, mean, var; outputs in that order (output, running mean, running var).
Expected<Workload> batchNormalizationTraining(const std::vector<int64_t>& shape, double epsilon, double momentum,
                                              DataType dtype = DataType::float32());

/// The default schedule of lpNormalization, meanVarianceNormalization,
/// batchNormalizationTraining and
/// localResponseNormalization workloads: every stage's outermost axis in parallel.
Expected<Schedule> defaultSimpleNormalizationSchedule(const Workload& workload,
                                                      const Target& target = hostTarget());

}  // namespace tessel
