// Runs named graph passes in order, with opt levels, disabling by name, timing and a snapshot
// of the graph after every pass (the Studio's pass timeline and `tessel inspect` use them).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/graph/Graph.h"
#include "core/support/Error.h"

namespace tessel::graph {

/// A graph pass: a pure function from one graph to the next.
struct Pass {
  std::string name;   ///< "FoldConstant", "FuseOps", ...
  int minOptLevel = 0;  ///< Runs only at this opt level or above.
  std::function<Expected<Graph>(const Graph&)> run;
};

/// The graph after one pass, for viewers and `--print-after`.
struct PassSnapshot {
  std::string passName;
  Graph graph;
  double milliseconds = 0;
  bool skipped = false;  ///< Disabled by name or below its opt level: the graph is unchanged.
};

struct PassOptions {
  int optLevel = 3;
  std::vector<std::string> disabledPasses;
};

class PassManager {
public:
  explicit PassManager(std::vector<Pass> passes) : passes_(std::move(passes)) {}

  const std::vector<Pass>& passes() const { return passes_; }
  /// The names of the passes, in order.
  std::vector<std::string> passNames() const;
  /// A Diagnostic for option mistakes: an opt level outside 0-3 or a disabled pass that
  /// does not exist (named, with the pass names listed).
  Status checkOptions(const PassOptions& options) const;

  /// Runs every pass in order; returns one snapshot per pass (skipped ones included), the
  /// last holding the final graph. Stops at the first pass that fails.
  Expected<std::vector<PassSnapshot>> run(const Graph& graph, const PassOptions& options) const;

private:
  std::vector<Pass> passes_;
};

}  // namespace tessel::graph
