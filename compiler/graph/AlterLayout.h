// AlterLayout: constant weights packed at compile time into the layouts their kernels read, and
// activations kept channel-blocked (NCHW<b>c) between convolutions.
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
/// several nodes is packed once.
///
/// Then activations between convolutions go channel-blocked (NCHW<kb>c, kb the filter block
/// of the producing convolution): a dense ConvPrepacked whose result reaches another dense
/// ConvPrepacked (directly or through the elementwise operations below) writes its output
/// blocked, and a dense ConvPrepacked reads a blocked input in place ("data_layout" /
/// "out_layout" attributes). Unary elementwise operations (Relu, Clip, ...) and Add, Sub, Mul,
/// Div of full-sized tensors, per-channel constants ([C, 1, 1] becomes [C / kb, 1, 1, kb]) or
/// scalars stay blocked. Every other consumer and every graph output gets a LayoutTransform
/// back to NCHW (one per value), and a transform that would undo another is not inserted: the
/// original value is used instead. Output types of rewritten operations come from the
/// registry's inferTypes, so the graph stays InferTypes-consistent.
///
/// Packing depends on `target`'s vector width: build the result for the same target.
/// Types must be inferred (InferTypes); a Diagnostic names a node whose attributes are invalid.
/// This overload does what AlterLayoutOptions::fromEnvironment() says.
Expected<Graph> alterLayout(const Graph& graph, const ScheduleTarget& target = ScheduleTarget::host());

/// What alterLayout changes.
struct AlterLayoutOptions {
  bool packWeights = true;        ///< Constant weights packed (ConvPrepacked, DensePrepacked).
  bool blockedActivations = true;  ///< Activations between convolutions in NCHW<kb>c (needs packWeights).

  /// What the standard pipeline does: both; the environment variable
  /// TESSEL_BLOCKED_ACTIVATIONS=0 (or 1) turns blocked activations off (or on), for comparing
  /// both from the command line (the driver has no option for it).
  static AlterLayoutOptions fromEnvironment();
};

/// alterLayout doing only what `options` asks for.
Expected<Graph> alterLayout(const Graph& graph, const ScheduleTarget& target, const AlterLayoutOptions& options);

}  // namespace tessel::graph
