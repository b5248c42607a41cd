// DecomposeConvTranspose: a transposed convolution as ordinary convolutions, one per stride phase.
#pragma once

#include "core/graph/Graph.h"
#include "core/support/Error.h"

namespace tessel::graph {

/// Rewrites each ConvTranspose with constant weights, unit dilations, non-negative pads and
/// a stride no larger than its kernel into convolutions that the Conv schedules make fast. Output position u = s*q + p of
/// a stride-s transposed convolution only ever receives kernel taps k = p, p + s, p + 2s, ...
/// (the "phase" p): so phase p is a stride-1 Conv of the input with those taps reversed,
/// padded by one less than their count at the front. The s^d phase results (d spatial axes)
/// are interleaved (Unsqueeze, Concat along the new axes, Reshape) and the pads cropped
/// (Slice), with the positions past the output's end when the stride does not divide it. A 2x2 stride-2 transposed convolution becomes four 1x1 convolutions: the same
/// flops as before, none of them skipped by a select. Other ConvTransposes are left as they
/// are (a direct gather kernel). New operations are named "<node>/phase<p..>", typed through
/// the operator registry, and keep the node's provenance.
Expected<Graph> decomposeConvTranspose(const Graph& graph);

}  // namespace tessel::graph
