// What the signal-processing, vision, text and box operator definitions share: the kernel
// wrapper, output element types given as ONNX codes, and one registration function per file.
#pragma once

#include "compiler/opdefs/OpRegistry.h"

namespace tessel::graph::signal_vision {

/// The kernel for `workload` (placeholders reading node inputs `inputIndices`) with every
/// stage at root: these operators are rare and small, so no tuned schedule is worth its
/// code. A Diagnostic from building the workload is reported at the call's node.
Expected<OpKernel> opaqueKernel(const OpCall& call, Expected<Workload> workload, std::vector<int> inputIndices);

/// An Opaque OpDef whose output types are read off the kernel `build` makes, so that what
/// InferTypes says is what the kernel computes.
OpDef kernelTypedOpaqueOp(std::string name, int minInputs, int maxInputs, std::vector<int> valueInputs,
                          std::function<Expected<OpKernel>(const OpCall&)> build);

/// The element type named by the ONNX type code in attribute `attribute` (default float32),
/// restricted to floating-point types when `floatOnly`.
Expected<DataType> outputDataTypeAttr(const OpCall& call, const std::string& attribute, bool floatOnly);

/// The single value of constant integer input `i` (a scalar or a one-element tensor).
Expected<int64_t> constantScalarInt(const OpCall& call, size_t i, const std::string& what);

/// An index-typed immediate.
inline Expr indexConst(int64_t value) { return IntImmNode::make(DataType::index(), value); }

// One registration function per file, called by registerSignalAndVisionOps.
void registerSpectralOps(OpRegistry& registry);        // SignalVisionSpectral.cpp
void registerImageRegionOps(OpRegistry& registry);     // SignalVisionImage.cpp
void registerTextAndAlgebraOps(OpRegistry& registry);  // SignalVisionTextAlgebra.cpp
void registerBoxOps(OpRegistry& registry);             // SignalVisionBoxes.cpp

}  // namespace tessel::graph::signal_vision
