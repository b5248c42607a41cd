// FoldConstant: operations on known values are computed once, by the compiler, at compile time.
#pragma once

#include <optional>
#include <vector>

#include "core/graph/Graph.h"
#include "core/support/Error.h"

namespace tessel::graph {

/// Replaces every operation whose result does not depend on a graph input by constants
/// holding that result. An operation folds when all its inputs are constants (or it has none),
/// or when its kernel reads no non-constant input (Shape reads only its input's type). The
/// compiler evaluates it with the operator's own kernel: built through the registry with its
/// default schedule, JIT-compiled and run on the constants. Producers are visited first, so
/// whole constant subgraphs fold in one call. Each new constant is named after the operation
/// and the ONNX nodes it stands for ("<node>.folded", "<node>+<merged node>.folded",
/// "<node>.<i>.folded" for outputs after the first) and keeps its output's
/// type. Random operators never fold. An operation that should fold but cannot be built or
/// run is a Diagnostic naming it.
Expected<Graph> foldConstant(const Graph& graph);

/// The graph inputs whose data `values` are computed from, each once, in the order found:
/// what keeps them from folding. Shape and Size read only their input's type, so the data
/// behind them does not count.
std::vector<const InputNode*> inputsFeeding(const std::vector<Value>& values);

/// foldConstant's step for one typed operation, for passes that fold as they go (InferTypes
/// can fold shape computations so that a Reshape or Slice reading them gets typed): the
/// constants that replace the outputs of `op` read with `inputs` in place of its own (a pass
/// rebuilding the graph passes the rewritten ones), nullopt when the operation does not fold,
/// or a Diagnostic when it should fold but its kernel cannot be built or run.
Expected<std::optional<std::vector<Value>>> foldOperation(const OperationNode& op, const std::vector<Value>& inputs);

}  // namespace tessel::graph
