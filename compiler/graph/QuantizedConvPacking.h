// AlterLayout's rewrite of QLinearConv onto the int8 VNNI convolution (compiler/ops/Int8Conv2d.h).
#pragma once

#include <optional>
#include <vector>

#include "core/graph/Graph.h"
#include "core/target/Target.h"

namespace tessel::graph {

/// A QLinearConv whose weight is constant int8 with a zero w_zero_point (symmetric, as
/// quantizers write weights), whose scales, zero points and bias are constant, over 4-D
/// uint8 or int8 data, without groups, with at least 16 filters (channels and filters are
/// padded to the kernel's blocks):
/// rewritten to QLinearConvPrepacked, whose inputs are the data, the weight packed for the
/// kernel, and per filter the folded offset (bias less the data zero point times the
/// filter's weight sum) and scale (x_scale * w_scale / y_scale, in float32 as ONNX computes
/// it). Any other QLinearConv is left to the reference kernel: nullopt.
std::optional<std::vector<Value>> packQuantizedConv(const OperationNode& op, const std::vector<Value>& inputs,
                                                    const Target& target);

}  // namespace tessel::graph
