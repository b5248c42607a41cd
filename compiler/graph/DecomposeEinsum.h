// DecomposeEinsum: a two-operand Einsum that is a (batched) matrix product becomes a MatMul.
#pragma once

#include "core/graph/Graph.h"
#include "core/support/Error.h"

namespace tessel::graph {

/// Rewrites each Einsum of two operands with an explicit output ("bhid,bhjd->bhij") whose
/// letters each appear once per operand, are all kept or shared, and agree in size where
/// shared: the letters in both operands and the output are batch axes, those in both operands
/// only are summed (K), those of one operand and the output are its rows (M) or columns (N).
/// Each operand is transposed to [batch.., M.., K..] and [batch.., K.., N..] and reshaped to
/// [batch.., M, K] and [batch.., K, N]; their MatMul is reshaped to [batch.., M.., N..] and
/// transposed to the output's order. Transposes and reshapes that would change nothing are
/// left out: attention's "bhid,bhjd->bhij" is a Transpose of the second operand and a MatMul.
/// The MatMul schedules then compute what the Einsum kernel (a plain reduction loop) did.
/// Other Einsums (one or three operands, "...", diagonals, letters summed within one operand,
/// broadcast sizes) are left as they are. New operations are named "<node>/...", typed through
/// the operator registry, and keep the node's provenance.
Expected<Graph> decomposeEinsum(const Graph& graph);

}  // namespace tessel::graph
