// What the graph view says about quantization: which operations compute on 8-bit integers
// or cross between float and int8, and a quantized operation's scales and zero points.
#pragma once

#include <QString>

#include <utility>
#include <vector>

#include "core/graph/Graph.h"

namespace tessel::views {

/// How an operation stands to quantization, from the element types it reads (its
/// non-constant inputs) and writes.
enum class QuantizationRole {
  None,        ///< Float (or other) in, float out.
  Quantize,    ///< Float in, 8-bit integers out: where a model enters int8 (QuantizeLinear).
  Integer,     ///< 8-bit integers in, integers out: an int8 kernel (QLinearConv, a fused Add).
  Dequantize,  ///< 8-bit integers in, float out: where int8 ends (DequantizeLinear, logits).
};

QuantizationRole quantizationRole(const graph::OperationNode& op);
/// The mark a box carries: "→ int8", "int8", "int8 →" or empty.
QString quantizationTag(QuantizationRole role);
/// Whether tensors of this type are quantized activations (uint8 or int8).
bool isQuantizedType(const graph::TensorType& type);

/// A quantized operation's parameters as (property, value) rows: scale and zero point of
/// QuantizeLinear / DequantizeLinear (with the axis of per-channel ones); x, w and y scales
/// and zero points of QLinearConv and QLinearMatMul; the zero points, output type and folded
/// per-channel scales of the prepacked int8 kernels; the run-time scale of a dynamically
/// quantized one. A tensor of many values reads "64 values, 0.0012 … 0.0051". Empty for
/// other operations.
std::vector<std::pair<QString, QString>> quantizationProperties(const graph::OperationNode& op);

}  // namespace tessel::views
