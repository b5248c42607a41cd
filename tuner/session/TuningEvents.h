// The tuning session's event stream: one JSON object per line for everything that happens
// (tuner/Events.md documents each event and field). The CLI's live table, the Studio's
// dashboard and CI all read this stream, so its schema is written down here once, in code,
// and every event the session emits is checked against it in the tests.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/session/TuningTask.h"

namespace tessel::tuner {

/// The version of the event schema, in session_start's "schema" field. Fields may be added
/// without changing it; a field is never removed or retyped without changing it.
constexpr int kEventSchemaVersion = 1;

/// Receives each event as it happens, on the session's thread.
using EventSink = std::function<void(const nlohmann::json& event)>;

/// What a field holds. Nullable kinds hold null when the value is not known yet.
enum class EventFieldType { String, Number, Integer, Boolean, Array, Object, NullableNumber, NullableString };

struct EventField {
  std::string name;
  EventFieldType type;
  bool required = true;
};

struct EventSchema {
  std::string event;  ///< The "event" field's value.
  std::vector<EventField> fields;  ///< Besides "event" and "t", which every event has.
  /// For array fields whose elements are objects: the fields of each element, by array name.
  std::vector<std::pair<std::string, std::vector<EventField>>> elements;
};

/// One task of session_start's "tasks": what it computes and how often, and its search space
/// (`spaceSize`, `sketches`; zero and empty before spaces are built).
nlohmann::json sessionStartTask(int index, const TuningTask& task, double spaceSize, const nlohmann::json& sketches,
                                int resumedTrials);

/// Every event type, in the order Events.md documents them.
const std::vector<EventSchema>& eventSchemas();

/// Why `event` does not follow its schema ("trial: field 'median_ms': expected a number"), or
/// nullopt when it does. Unknown fields are allowed (a newer tessel may add some).
std::optional<std::string> validateEvent(const nlohmann::json& event);

}  // namespace tessel::tuner
