// Runs named graph passes in order, with opt levels, disabling by name, per-pass options,
// timing and a snapshot of the graph after every pass (the Studio's pass timeline and
// `tessel inspect` use them).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/graph/Graph.h"
#include "core/support/Error.h"

namespace tessel::graph {

/// One setting a pass understands, given as PassOptions::config["<Pass>.<name>"] (in the
/// spirit of TVM's PassContext config).
struct PassOption {
  std::string name;                 ///< "blocked_activations".
  std::string defaultValue;         ///< What the pass sees when the config does not set it.
  std::string help;                 ///< One line, for --help and the Studio.
  std::vector<std::string> values;  ///< The values it accepts.

  /// An option taking "true" or "false".
  static PassOption flag(std::string name, bool defaultValue, std::string help);
};

/// The values of one pass's options for one run: every option the pass declares, as the
/// config gives it or its default.
class PassConfig {
public:
  PassConfig() = default;
  explicit PassConfig(std::map<std::string, std::string> values) : values_(std::move(values)) {}
  /// The value of option `name`; asking for an option the pass did not declare is a
  /// compiler bug.
  const std::string& get(const std::string& name) const;
  /// A PassOption::flag option's value.
  bool flag(const std::string& name) const { return get(name) == "true"; }

private:
  std::map<std::string, std::string> values_;
};

/// A graph pass: a pure function from one graph (and its options' values) to the next.
struct Pass {
  std::string name;     ///< "FoldConstant", "FuseOps", ...
  int minOptLevel = 0;  ///< Runs only at this opt level or above.
  std::vector<PassOption> options;  ///< What PassOptions::config may set for it.
  std::function<Expected<Graph>(const Graph&, const PassConfig&)> run;

  Pass() = default;
  /// A pass without options.
  Pass(std::string name, int minOptLevel, std::function<Expected<Graph>(const Graph&)> run);
  /// A pass reading `options`.
  Pass(std::string name, int minOptLevel, std::vector<PassOption> options,
       std::function<Expected<Graph>(const Graph&, const PassConfig&)> run);
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
  /// Pass options by "<Pass>.<option>" ("AlterLayout.blocked_activations" -> "false"); each
  /// key must be an option its pass declares, each value one the option accepts.
  std::map<std::string, std::string> config;
};

/// What PassManager::run tells its caller while it works (the driver's progress and cancel).
/// Both are called on the running thread; either may be empty.
struct PassObserver {
  /// Asked before each pass; true stops the run, which then returns a Diagnostic naming the
  /// pass it stopped before.
  std::function<bool()> cancelled;
  /// Called before each pass (skipped ones included) with its position among the passes.
  std::function<void(size_t index, size_t count, const std::string& passName)> starting;
};

class PassManager {
public:
  explicit PassManager(std::vector<Pass> passes) : passes_(std::move(passes)) {}

  const std::vector<Pass>& passes() const { return passes_; }
  /// The names of the passes, in order.
  std::vector<std::string> passNames() const;
  /// Every key PassOptions::config accepts ("AlterLayout.blocked_activations", ...), in pass order.
  std::vector<std::string> configKeys() const;
  /// A Diagnostic for option mistakes: an opt level outside 0-3, a disabled pass that does not
  /// exist (named, with the pass names listed), a config key no pass declares (with the valid
  /// keys listed) or a value its option does not accept (with the accepted values).
  Status checkOptions(const PassOptions& options) const;

  /// Runs every pass in order; returns one snapshot per pass (skipped ones included), the
  /// last holding the final graph. Stops at the first pass that fails, or before any pass
  /// once `observer.cancelled` says so.
  Expected<std::vector<PassSnapshot>> run(const Graph& graph, const PassOptions& options,
                                          const PassObserver& observer = {}) const;

private:
  std::vector<Pass> passes_;
};

}  // namespace tessel::graph
