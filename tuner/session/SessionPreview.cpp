// The session_start of a session not started yet.
#include "tuner/session/SessionPreview.h"

#include "tuner/session/TuningEvents.h"

namespace tessel::tuner {

nlohmann::json previewSessionStart(const std::vector<TuningTask>& tasks, const SessionPreviewOptions& options) {
  nlohmann::json listed = nlohmann::json::array();
  for (size_t index = 0; index < tasks.size(); ++index)
    listed.push_back(sessionStartTask(int(index), tasks[index], 0, nlohmann::json::array(), 0));
  return {{"event", "session_start"},
          {"t", 0.0},
          {"schema", kEventSchemaVersion},
          {"time", ""},
          {"source", options.source},
          {"target", options.target},
          {"records", options.records},
          {"resumed", false},
          {"resumed_trials", 0},
          {"budget_seconds", 0},
          {"budget_trials", 0},
          {"threads", options.threads},
          {"peak_gflops", 0},
          {"bandwidth_gbps", 0},
          {"from_scratch", false},
          {"flush_caches", false},
          {"timing", "not started"},
          {"tasks", std::move(listed)}};
}

}  // namespace tessel::tuner
