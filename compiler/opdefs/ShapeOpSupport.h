// What the shape and data-movement operator definitions share: turning a Workload into an
// OpKernel located at its node, types read off a kernel, ONNX attribute and input decoding.
#pragma once

#include <optional>

#include "compiler/opdefs/ElementwiseDefinition.h"
#include "compiler/opdefs/OpRegistry.h"

namespace tessel::graph::shape_ops {

/// The kernel for `workload` (placeholders reading node inputs `inputIndices`) under the
/// default transform schedule. A Diagnostic from the operator library is reported at the
/// call's node.
Expected<OpKernel> transformKernel(const OpCall& call, Expected<Workload> workload, std::vector<int> inputIndices);

/// An OpDef whose types are read off the kernel `build` makes (one source of truth for
/// shapes: what InferTypes says is what the kernel computes).
OpDef kernelTypedOp(std::string name, OpPattern pattern, int minInputs, int maxInputs, std::vector<int> valueInputs,
                    std::function<Expected<OpKernel>(const OpCall&)> build, int minOutputs = 1, int maxOutputs = 1);

/// The element type of an ONNX TensorProto data type code (1 float, 7 int64, 9 bool, ...);
/// the elementwise definitions' mapping, so Cast and the generators agree on every code.
using graph::dataTypeFromOnnx;

/// Axes given by attribute `attribute` (older opsets) or by constant input `input` (newer
/// ones), whichever the node has; empty when neither is present.
Expected<std::vector<int64_t>> axesFromAttributeOrInput(const OpCall& call, const std::string& attribute, size_t input);

/// The values of constant input `i` of any numeric or bool type, as doubles (bool: 0 or 1);
/// a Diagnostic naming `what` when it is missing or not a constant.
Expected<std::vector<double>> constantElements(const OpCall& call, size_t i, const std::string& what);

/// The axis `axis` of a rank-`rank` tensor made non-negative, or a Diagnostic naming the
/// attribute when it is outside [-rank, rank).
Expected<int64_t> normalizedAxis(const OpCall& call, int64_t axis, size_t rank, const std::string& what = "axis");

/// The type of input `i` (which must be present).
inline const TensorType& inputType(const OpCall& call, size_t i) { return call.inputTypes[i]; }

// Registration of each family (one file each), called by registerShapeOps.
void registerReshapeOps(OpRegistry& registry);    // ShapeReshapeOps.cpp
void registerIndexingOps(OpRegistry& registry);   // ShapeIndexingOps.cpp
void registerGeneratorOps(OpRegistry& registry);  // ShapeGeneratorOps.cpp
void registerResizeOps(OpRegistry& registry);     // ShapeResizeOps.cpp

}  // namespace tessel::graph::shape_ops
