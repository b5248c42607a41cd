// Ordered, timed execution of graph passes.
#include "compiler/graph/PassManager.h"

#include <algorithm>
#include <chrono>

namespace tessel::graph {

std::vector<std::string> PassManager::passNames() const {
  std::vector<std::string> names;
  for (auto& pass : passes_) names.push_back(pass.name);
  return names;
}

Status PassManager::checkOptions(const PassOptions& options) const {
  if (options.optLevel < 0 || options.optLevel > 3)
    return Diagnostic{"opt level " + std::to_string(options.optLevel) + " is not between 0 and 3", "passes", 0, 0,
                      "use --opt-level 0, 1, 2 or 3"};
  auto names = passNames();
  for (auto& disabled : options.disabledPasses)
    if (std::find(names.begin(), names.end(), disabled) == names.end()) {
      std::string list;
      for (auto& name : names) list += (list.empty() ? "" : ", ") + name;
      return Diagnostic{"there is no pass named '" + disabled + "'", "passes", 0, 0, "passes: " + list};
    }
  return Status::success();
}

Expected<std::vector<PassSnapshot>> PassManager::run(const Graph& graph, const PassOptions& options) const {
  if (Status s = checkOptions(options); !s) return s.error();
  std::vector<PassSnapshot> snapshots;
  Graph current = graph;
  for (auto& pass : passes_) {
    bool disabled = std::find(options.disabledPasses.begin(), options.disabledPasses.end(), pass.name) !=
                    options.disabledPasses.end();
    if (disabled || options.optLevel < pass.minOptLevel) {
      snapshots.push_back({pass.name, current, 0, true});
      continue;
    }
    auto start = std::chrono::steady_clock::now();
    auto next = pass.run(current);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!next) {
      Diagnostic d = next.error();
      d.message = pass.name + ": " + d.message;
      return d;
    }
    current = std::move(*next);
    snapshots.push_back({pass.name, current, ms, false});
  }
  return snapshots;
}

}  // namespace tessel::graph
