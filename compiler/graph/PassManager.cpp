// Ordered, timed execution of graph passes, and the checking of their options.
#include "compiler/graph/PassManager.h"

#include <algorithm>
#include <chrono>

namespace tessel::graph {

namespace {
std::string joined(const std::vector<std::string>& items, const std::string& separator) {
  std::string text;
  for (auto& item : items) text += (text.empty() ? "" : separator) + item;
  return text;
}

// "true or false", "a, b or c".
std::string alternatives(const std::vector<std::string>& values) {
  if (values.size() < 2) return joined(values, "");
  return joined(std::vector<std::string>(values.begin(), values.end() - 1), ", ") + " or " + values.back();
}
}  // namespace

PassOption PassOption::flag(std::string name, bool defaultValue, std::string help) {
  return PassOption{std::move(name), defaultValue ? "true" : "false", std::move(help), {"true", "false"}};
}

const std::string& PassConfig::get(const std::string& name) const {
  auto it = values_.find(name);
  TESSEL_ICHECK(it != values_.end()) << "the pass reads option '" << name << "', which it does not declare";
  return it->second;
}

Pass::Pass(std::string name, int minOptLevel, std::function<Expected<Graph>(const Graph&)> run)
    : name(std::move(name)), minOptLevel(minOptLevel),
      run([run = std::move(run)](const Graph& graph, const PassConfig&) { return run(graph); }) {}

Pass::Pass(std::string name, int minOptLevel, std::vector<PassOption> options,
           std::function<Expected<Graph>(const Graph&, const PassConfig&)> run)
    : name(std::move(name)), minOptLevel(minOptLevel), options(std::move(options)), run(std::move(run)) {}

std::vector<std::string> PassManager::passNames() const {
  std::vector<std::string> names;
  for (auto& pass : passes_) names.push_back(pass.name);
  return names;
}

std::vector<std::string> PassManager::configKeys() const {
  std::vector<std::string> keys;
  for (auto& pass : passes_)
    for (auto& option : pass.options) keys.push_back(pass.name + "." + option.name);
  return keys;
}

Status PassManager::checkOptions(const PassOptions& options) const {
  if (options.optLevel < 0 || options.optLevel > 3)
    return Diagnostic{"opt level " + std::to_string(options.optLevel) + " is not between 0 and 3", "passes", 0, 0,
                      "use --opt-level 0, 1, 2 or 3"};
  auto names = passNames();
  for (auto& disabled : options.disabledPasses)
    if (std::find(names.begin(), names.end(), disabled) == names.end())
      return Diagnostic{"there is no pass named '" + disabled + "'", "passes", 0, 0, "passes: " + joined(names, ", ")};
  for (auto& [key, value] : options.config) {
    const PassOption* declared = nullptr;
    for (auto& pass : passes_)
      for (auto& option : pass.options)
        if (key == pass.name + "." + option.name) declared = &option;
    if (!declared) {
      std::vector<std::string> keys = configKeys();
      return Diagnostic{"there is no pass option '" + key + "'", "passes", 0, 0,
                        keys.empty() ? "no pass takes options" : "options: " + joined(keys, ", ")};
    }
    if (std::find(declared->values.begin(), declared->values.end(), value) == declared->values.end())
      return Diagnostic{"pass option " + key + " cannot be '" + value + "'", "passes", 0, 0,
                        "use " + alternatives(declared->values)};
  }
  return Status::success();
}

Expected<std::vector<PassSnapshot>> PassManager::run(const Graph& graph, const PassOptions& options,
                                                     const PassObserver& observer) const {
  if (Status s = checkOptions(options); !s) return s.error();
  std::vector<PassSnapshot> snapshots;
  Graph current = graph;
  for (size_t index = 0; index < passes_.size(); ++index) {
    const Pass& pass = passes_[index];
    if (observer.cancelled && observer.cancelled())
      return Diagnostic{"cancelled before pass " + pass.name, "passes", 0, 0, ""};
    if (observer.starting) observer.starting(index, passes_.size(), pass.name);
    bool disabled = std::find(options.disabledPasses.begin(), options.disabledPasses.end(), pass.name) !=
                    options.disabledPasses.end();
    if (disabled || options.optLevel < pass.minOptLevel) {
      snapshots.push_back({pass.name, current, 0, true});
      continue;
    }
    std::map<std::string, std::string> values;
    for (auto& option : pass.options) {
      auto given = options.config.find(pass.name + "." + option.name);
      values[option.name] = given == options.config.end() ? option.defaultValue : given->second;
    }
    auto start = std::chrono::steady_clock::now();
    auto next = pass.run(current, PassConfig(std::move(values)));
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
