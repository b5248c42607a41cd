// Which ONNX opsets (of the default domain) the importer accepts, and which operators of older ones.
#pragma once

#include <string>

namespace tessel::frontend {

/// The opsets of the default ONNX domain ("" / "ai.onnx") Tessel's operators are written for.
constexpr int kOldestSupportedOpset = 7;
constexpr int kNewestSupportedOpset = 17;

/// Whether an operator in a model of opset `opset` (below kOldestSupportedOpset) still has
/// the definition it has at the oldest supported opset, so Tessel's implementation of that
/// definition is the right one (Relu at opset 6 is Relu-6, unchanged through opset 13; Add
/// at opset 6 is Add-6, which broadcast differently from Add-7 onwards).
bool definitionUnchangedSinceOpset(const std::string& opType, int opset);

}  // namespace tessel::frontend
