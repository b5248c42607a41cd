// SimplifyInference: drop what only matters for training and fold batch normalization away.
#pragma once

#include "core/graph/Graph.h"
#include "core/support/Error.h"

namespace tessel::graph {

/// Rewrites a typed graph for inference:
///  - Identity and inference-mode Dropout become their input (a Dropout mask that is read
///    becomes a constant of ones: nothing is dropped at inference);
///  - BatchNormalization with constant parameters, y = scale[c] * x + shift[c] with
///    scale = gamma / sqrt(var + epsilon) and shift = beta - mean * scale, folds into the
///    operation before it when that is a Conv, a Gemm, a MatMul or a MatMul + Add with constant
///    weights and bias and no other reader: the weights are scaled per output channel and the
///    bias adjusted (a Conv or Gemm without one gets one; a MatMul gets an Add);
///  - any other inference BatchNormalization with constant parameters becomes
///    Mul(x, scale) + Add(shift) with per-channel constants shaped [C, 1, ...], which fuse as
///    elementwise ops.
///  - an AveragePool (without ceil_mode or auto_pad) of a constant Pad that adds zeros
///    around the spatial axes only reads the Pad's input instead, the padding added to its
///    own pads and counted (count_include_pad=1): PyTorch exports avg_pool2d's padding, and
///    DenseNet's transitions an empty one, as such a Pad. A pool with padding of its own
///    that it does not count keeps its Pad.
///  - a Conv with a constant weight and explicit padding keeps only the kernel taps that read
///    the image at some output position: a dilation as wide as the image (DeepLab's atrous
///    pyramid) leaves taps that read nothing but zero padding. Its weight is cut to the live
///    taps and its padding reduced by as much, so every output reads the same positions.
/// New operations are typed through the operator registry; a Diagnostic reports an operation
/// it cannot type.
Expected<Graph> simplifyInference(const Graph& graph);

}  // namespace tessel::graph
