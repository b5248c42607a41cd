// Which ONNX opsets (of the default domain) the importer accepts, which operators of older ones
// it takes as they are, and what it converts the other old models to.
#pragma once

#include <string>

namespace tessel::frontend {

/// The opsets of the default ONNX domain ("" / "ai.onnx") Tessel's operators are written for.
/// Opset 18 (ONNX 1.13) moved every reduction's axes to an input, gave Split num_outputs and Pad
/// an axes input, and added Mish among others; the operators read both forms by the node's
/// opset (OpCall::opset).
constexpr int kOldestSupportedOpset = 7;
constexpr int kNewestSupportedOpset = 18;
/// The opset ONNX's version converter takes models below kOldestSupportedOpset to. The
/// oldest supported one: the fewest of the converter's adapters run (converting the
/// pytorch-converted and pytorch-operator backend tests to 13 instead passes the same tests).
constexpr int kConversionOpset = kOldestSupportedOpset;

/// Whether an operator in a model of opset `opset` (below kOldestSupportedOpset) still has
/// the definition it has at the oldest supported opset, so Tessel's implementation of that
/// definition is the right one (Relu at opset 6 is Relu-6, unchanged through opset 13; Add
/// at opset 6 is Add-6, which broadcast differently from Add-7 onwards).
bool definitionUnchangedSinceOpset(const std::string& opType, int opset);

/// Whether `domain` names the default ONNX domain ("" or "ai.onnx").
bool isDefaultDomain(const std::string& domain);

/// Whether Tessel compiles operator `opType` of `domain`: one the operator registry has, or one
/// the importer itself turns into others (Constant, GroupNormalization, the recurrent operators,
/// control flow and sequences).
bool implementsOnnxOperator(const std::string& domain, const std::string& opType);

}  // namespace tessel::frontend
