// FakeQuantizationToInteger: the dequantize -> operator -> quantize regions of a QDQ model
// (what ONNX Runtime's quantizer and `tessel quantize` write) computed in integers.
#pragma once

#include "core/graph/Graph.h"
#include "core/support/Error.h"

namespace tessel::graph {

/// Rewrites
///   QuantizeLinear(Conv(DequantizeLinear(xq), DequantizeLinear(wq)[, bias]) [-> Relu], ys, yz)
/// into QLinearConv(xq, xs, xz, wq, ws, wz, ys, yz, B), when the scales and zero points are
/// constant (x's and y's per tensor, w's per tensor or per filter along axis 0), wq is a
/// constant, and the float convolution (and Relu) feed nothing but the QuantizeLinear. The
/// bias, a float constant or a dequantized int32 one, becomes int32 in the accumulator's
/// scale (xs * ws). A Relu becomes the attribute fused_relu = 1: the quantized output is
/// clamped below at yz, which is exactly quantize(relu(y)). The result differs from the float
/// region by the rounding of the accumulator's conversion at most (one quantization step);
/// everything else is left as it is (and runs in float, correctly). New operations keep the
/// QuantizeLinear's name and the whole region's provenance.
Expected<Graph> fakeQuantizationToInteger(const Graph& graph);

}  // namespace tessel::graph
