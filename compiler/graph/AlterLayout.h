// AlterLayout: constant weights packed at compile time into the layouts their kernels read, and
// activations kept channel-blocked (NCHW<b>c) between convolutions.
#pragma once

#include "compiler/graph/PassManager.h"
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
/// "out_layout" attributes). A depthwise Conv (one filter per channel, constant weight) of a
/// blocked input becomes a ConvPrepacked that reads and writes the input's blocks, its weight
/// packed in them ("OIHW<b>o"): its vectors are channels, whatever the width and stride, and
/// a convolution feeding it counts as feeding a convolution. Unary elementwise operations
/// (Relu, Clip, ...) and Add, Sub, Mul, Div of full-sized tensors, per-channel constants
/// ([C, 1, 1] becomes [C / kb, 1, 1, kb]) or scalars stay blocked, and so do MaxPool, AveragePool, GlobalMaxPool and GlobalAveragePool
/// of a blocked input (pooling is per channel, so the kernels read the blocked tensor in place
/// and their output is no larger than their input). A Concat along channels (axis 1) of
/// blocked inputs with one block joins their outer block axis and stays blocked; NCHW inputs
/// among them whose channels fill whole blocks are transformed in when the result reaches a
/// convolution or they hold no more elements than the blocked inputs (otherwise the Concat
/// stays NCHW). A result reaching a convolution
/// through any of these counts as feeding it. Every other consumer and every graph output gets a
/// LayoutTransform back to NCHW (one per value), and a transform that would undo another is
/// not inserted: the original value is used instead. Output types of rewritten operations come
/// from the registry's inferTypes, so the graph stays InferTypes-consistent.
///
/// A graph that already holds layouts (the result of an earlier alterLayout, or one built with
/// LayoutTransform nodes) is accepted: each LayoutTransform becomes a transform of its
/// rewritten input, so inverse pairs cancel; a dense convolution reads the blocked source of a
/// transform to NCHW in place; operations that already read or write blocked tensors keep
/// their layouts; graph outputs keep theirs. Running alterLayout on its own result changes
/// nothing.
///
/// Packing depends on `target`'s vector width: build the result for the same target.
/// Types must be inferred (InferTypes); a Diagnostic names a node whose attributes are invalid.
Expected<Graph> alterLayout(const Graph& graph, const Target& target = hostTarget());

/// What alterLayout changes.
struct AlterLayoutOptions {
  bool packWeights = true;        ///< Constant weights packed (ConvPrepacked, DensePrepacked).
  bool blockedActivations = true;  ///< Activations between convolutions in NCHW<kb>c (needs packWeights).
  /// Dense 3x3 stride-1 convolutions with enough channels and filters (winogradTileFor) packed
  /// for Winograd's F(4x4, 3x3): attribute "winograd_tile", weight G g G^T (needs packWeights).
  bool winograd = true;

  /// The options the AlterLayout pass declares to the pass manager (keys
  /// "AlterLayout.pack_weights", "AlterLayout.blocked_activations" and "AlterLayout.winograd",
  /// true or false, all true by default).
  static std::vector<PassOption> declared();
  /// The options a pass manager's config for AlterLayout (see declared()) asks for.
  static AlterLayoutOptions fromConfig(const PassConfig& config);
};

/// alterLayout doing only what `options` asks for.
Expected<Graph> alterLayout(const Graph& graph, const Target& target, const AlterLayoutOptions& options);

}  // namespace tessel::graph
