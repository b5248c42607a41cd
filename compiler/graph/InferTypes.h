// InferTypes: gives every value of a graph its static type (dtype, shape) from the operator registry.
#pragma once

#include "core/graph/Graph.h"
#include "core/support/Error.h"
#include "compiler/codegen/llvm/HostTarget.h"

namespace tessel::graph {

/// Recomputes the output types of every operation, producers first, with each operator's
/// registered type rule. The importer leaves output types unknown; later passes call this
/// again after rewrites. Every problem (an unsupported operator, a wrong number of inputs,
/// shapes that do not fit, an attribute of the wrong kind, a graph input of unknown type) is
/// a Diagnostic naming the node and its op. A type that disagrees with one already known
/// (ONNX value_info) is replaced: the operator's rule is the authority. A graph holding
/// placeholders for unsupported nodes (kUnsupportedOp) is refused with one Diagnostic naming
/// them all. `target` is the one the graph's layouts were chosen for: a channel-blocked
/// convolution's block depends on its vector width.
Expected<Graph> inferTypes(const Graph& graph, const Target& target = hostTarget());

}  // namespace tessel::graph
