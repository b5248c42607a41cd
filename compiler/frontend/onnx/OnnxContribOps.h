// ONNX Runtime's quantized contrib operators (domain com.microsoft), which its quantizer
// writes in QOperator form: each becomes DequantizeLinear -> its float operator ->
// QuantizeLinear before import, so the rest of Tessel sees the QDQ form it knows
// (FakeQuantizationToInteger then runs dense layers and pools on int8 kernels).
#pragma once

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>

#include "core/graph/Graph.h"
#include "core/support/Error.h"

namespace tessel::frontend {

/// Rewrites, in `model`'s main graph, every com.microsoft QLinearAdd, QLinearMul,
/// QLinearSigmoid, QLinearLeakyRelu, QLinearAveragePool, QLinearGlobalAveragePool,
/// QLinearConcat and QGemm into default-domain nodes. Returns the import step to show (how
/// many were expanded), or nullopt when the model has none. A node of those ops that cannot
/// be expanded (channels_last pools, too few inputs) is a Diagnostic naming it.
Expected<std::optional<graph::ImportStep>> expandContribQuantizedOps(onnx::ModelProto& model,
                                                                    const std::string& sourceName);

}  // namespace tessel::frontend
