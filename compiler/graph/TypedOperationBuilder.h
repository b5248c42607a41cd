// What passes that replace an operation by others share: new operations typed through the
// operator registry, small int64 constants, and a first failure kept for the pass to return.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/graph/GraphRewriter.h"
#include "core/graph/Graph.h"
#include "core/support/Error.h"

namespace tessel::graph {

class TypedOperationBuilder {
public:
  /// The first Diagnostic a typed() call met; a rewrite stops building once there is one.
  const std::optional<Diagnostic>& error() const { return error_; }

protected:
  /// An operation typed through the registry (makeTypedOperation), its first output; nullopt
  /// with error() set when it cannot be typed.
  std::optional<Value> typed(const std::string& name, const std::string& op, std::vector<Value> inputs,
                             Attributes attributes, const std::vector<Provenance>& provenance);
  /// A constant int64 vector named `name` (a shape, axes, starts).
  static Value int64s(const std::string& name, const std::vector<int64_t>& values);

  std::optional<Diagnostic> error_;
};

/// rewriteGraph with `builder`'s rule (its `rewrite(op, inputs)`), then the builder's first
/// failure if it met one.
template <class Builder>
Expected<Graph> rewriteGraphWith(const Graph& graph, Builder& builder) {
  Graph out = rewriteGraph(graph, [&](const OperationNode& op, const std::vector<Value>& inputs) {
    return builder.rewrite(op, inputs);
  });
  if (builder.error()) return *builder.error();
  return out;
}

}  // namespace tessel::graph
