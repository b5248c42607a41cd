// AlterLayout's rewrites of QLinearConv onto the int8 VNNI convolution (compiler/ops/Int8Conv2d.h)
// and the int8 depthwise convolution (compiler/ops/Int8DepthwiseConv2d.h).
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

/// A depthwise QLinearConv (one filter per channel) under the same conditions, over data
/// that `blockedData` holds in NCHW<b>c blocks (b dividing the channels): rewritten to
/// QLinearDepthwiseConvPrepacked reading and writing those blocks, its inputs the blocked
/// data, the weight packed in the blocks ([C / b, R, S, b]), and the folded offset (with the
/// data's own zero point) and scale per channel. nullopt for any other.
std::optional<std::vector<Value>> packQuantizedDepthwiseConv(const OperationNode& op, const std::vector<Value>& inputs,
                                                             const Value& blockedData);

}  // namespace tessel::graph
