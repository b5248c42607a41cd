// ONNX Conv attributes read into Conv2dParams, for the operators whose weights are packed at
// compile time (AlterLayout decides with it, ConvPrepacked builds with it).
#pragma once

#include <vector>

#include "compiler/ops/Conv2d.h"
#include "core/graph/Graph.h"
#include "core/support/Error.h"

namespace tessel {

/// The Conv2dParams of a 2-D ONNX Conv with input [N, C, H, W] and OIHW weight
/// [K, C / group, R, S]: strides, pads (auto_pad NOTSET, VALID, SAME_UPPER or SAME_LOWER
/// resolved to explicit pads), dilations and group; `hasBias` when a bias input is given.
/// A Diagnostic names the attribute that is malformed or makes the convolution invalid.
Expected<Conv2dParams> conv2dParamsFromOnnx(const graph::Attributes& attributes, const std::vector<int64_t>& inputShape,
                                            const std::vector<int64_t>& weightShape, bool hasBias);

}  // namespace tessel
