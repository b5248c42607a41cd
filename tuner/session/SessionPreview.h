// What a tuning session of a model would start from, before it runs: the session_start event
// its tasks make (nothing measured, no search spaces built). The Studio's Tuning view shows it
// so that a person sees the model's tasks, their occurrences, FLOPs and profiled share, and
// chooses the budget, before pressing Start.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/session/TuningTask.h"

namespace tessel::tuner {

struct SessionPreviewOptions {
  std::string source;   ///< The model.
  std::string target;   ///< Target string (may be empty).
  std::string records;  ///< The records file a session would append to.
  int threads = 1;
};

/// A session_start event (valid by eventSchemas()) listing `tasks` with their kernels, weights,
/// FLOPs and bytes; budgets, peak and search spaces zero, `timing` "not started".
nlohmann::json previewSessionStart(const std::vector<TuningTask>& tasks, const SessionPreviewOptions& options);

}  // namespace tessel::tuner
