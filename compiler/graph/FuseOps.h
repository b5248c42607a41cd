// FuseOps: groups of operations that become one kernel, by TVM's fusion rules.
#pragma once

#include "core/graph/Graph.h"
#include "core/support/Error.h"

namespace tessel::graph {

struct FuseOptions {
  /// Lets elementwise ops join a convolution or matrix product as its epilogue (bias add,
  /// activation, residual add). Off leaves every OutElemwiseFusable op alone in its group.
  bool fuseEpilogues = true;
};

/// Partitions the operations of a typed graph into groups, each of which computes exactly one
/// value (its last operation's output), and replaces every group of two or more operations by
/// one fused operation (OperationNode::body holds copies of the primitives). Groups grow
/// greedily in topological order using each operator's registered OpPattern:
///  - a Conv/MatMul/Gemm (OutElemwiseFusable) anchors a group; elementwise and broadcast ops
///    producing the anchor's output shape and element type join it as an epilogue;
///  - chains of injective, elementwise and broadcast ops join together and may end in a
///    reduction (CommReduce), which may take an elementwise epilogue of its output shape;
///  - opaque ops (and ops with several outputs) stay alone; a group holds at most one anchor;
///  - a value read by anything outside the group (another op or the graph's outputs) ends it.
/// A fused node is named "fused_<op>_<op>..." (made unique; its op is the same text without
/// the uniquing suffix); its inputs are the group's external values in first-use order
/// (constant weights stay outside, so they remain runtime parameters) except constants read
/// by value (OpDef::valueInputs, e.g. Reshape's shape), which stay inside the body; its
/// provenance lists all its primitives'. Unknown operators count as opaque.
Expected<Graph> fuseOps(const Graph& graph, const FuseOptions& options = {});

}  // namespace tessel::graph
