// AlterLayout: constant weights packed at compile time into the layouts their kernels read.
#pragma once

#include "compiler/ops/Workload.h"
#include "core/graph/Graph.h"
#include "core/support/Error.h"

namespace tessel::graph {

/// Rewrites operations whose weights are constants so their kernels stop repacking them on
/// every call:
///   - a 2-D Conv (not depthwise) with a constant float weight becomes ConvPrepacked, its
///     weight replaced by a constant packed in filter blocks (layout "OIHW<kb>o", see
///     conv2dPackedWeightShape) and its attributes kept, plus "weight_shape" (the OIHW shape);
///   - a MatMul with a constant float matrix B (and A of rank >= 2) becomes DensePrepacked
///     over B packed in column panels (layout "KN<width>n", see packMatmulBConstant);
///   - a Gemm with a constant B, no transposed A, alpha 1 and beta 1 (or no C) becomes
///     DensePrepacked followed by an Add of C.
/// The rewritten nodes keep their names, output types and provenance; a weight shared by
/// several nodes is packed once. Other operations and all activation layouts are unchanged.
/// Packing depends on `target`'s vector width: build the result for the same target.
/// Types must be inferred (InferTypes); a Diagnostic names a node whose attributes are invalid.
Expected<Graph> alterLayout(const Graph& graph, const ScheduleTarget& target = ScheduleTarget::host());

}  // namespace tessel::graph
