#include "tuner/session/TuningEvents.h"

namespace tessel::tuner {

namespace {

using T = EventFieldType;

std::vector<EventField> taskSummaryFields() {
  return {{"task", T::Integer},          {"name", T::String},         {"trials", T::Integer},
          {"errors", T::Integer},        {"default_ms", T::NullableNumber}, {"best_ms", T::NullableNumber},
          {"speedup", T::NullableNumber}, {"tuned", T::Boolean}};
}

std::vector<EventSchema> makeSchemas() {
  return {
      {"session_start",
       {{"schema", T::Integer},        {"time", T::String},          {"source", T::String},
        {"target", T::String},         {"records", T::String},       {"resumed", T::Boolean},
        {"resumed_trials", T::Integer}, {"budget_seconds", T::Number}, {"budget_trials", T::Integer},
        {"threads", T::Integer},       {"peak_gflops", T::Number},   {"bandwidth_gbps", T::Number, false},   {"from_scratch", T::Boolean},
        {"flush_caches", T::Boolean},  {"timing", T::String},        {"tasks", T::Array}},
       {{"tasks",
         {{"task", T::Integer},
          {"name", T::String},
          {"kernels", T::Array},
          {"op", T::String},
          {"workload_hash", T::String},
          {"weight", T::Integer},
          {"flops", T::Number},
          {"bytes", T::Number, false},
          {"space_size", T::Number},
          {"sketches", T::Array},
          {"resumed_trials", T::Integer}}}}},
      {"trial",
       {{"task", T::Integer},
        {"name", T::String},
        {"round", T::Integer},
        {"origin", T::String},
        {"point", T::String},
        {"prediction", T::NullableNumber},
        {"ok", T::Boolean},
        {"median_ms", T::Number, false},
        {"min_ms", T::Number, false},
        {"max_ms", T::Number, false},
        {"repeats", T::Integer, false},
        {"gflops", T::Number, false},
        {"error", T::Object, false},
        {"best_ms", T::NullableNumber},
        {"build_ms", T::Number},
        {"trials", T::Integer},
        {"task_trials", T::Integer}},
       {}},
      {"round",
       {{"round", T::Integer},
        {"task", T::Integer},
        {"name", T::String},
        {"trials", T::Integer},
        {"task_trials", T::Integer},
        {"measured", T::Integer},
        {"errors", T::Integer},
        {"best_ms", T::NullableNumber},
        {"best_gflops", T::NullableNumber},
        {"percent_of_peak", T::NullableNumber},
        {"default_ms", T::NullableNumber},
        {"speedup", T::NullableNumber},
        {"control_ms", T::NullableNumber},
        {"pairwise_accuracy", T::NullableNumber},
        {"top_k_recall", T::NullableNumber},
        // Added after the first sessions were recorded: optional, so older streams still read.
        {"spearman_rho", T::NullableNumber, false},
        {"chosen_by", T::String, false},
        {"gradient_ms_per_trial", T::Number, false},
        {"kendall_tau", T::NullableNumber, false},
        {"equivalent_skipped", T::Integer, false},
        {"model_samples", T::Integer},
        {"estimated_latency_ms", T::Number},
        {"default_latency_ms", T::Number},
        {"eta_s", T::NullableNumber},
        {"stopped", T::Boolean},
        {"exhausted", T::Boolean}},
       {}},
      {"pause", {}, {}},
      {"resume", {{"paused_s", T::Number}}, {}},
      {"revive",
       {{"tasks", T::Array},
        {"names", T::Array},
        {"patience_trials", T::Integer},
        {"remaining_s", T::NullableNumber}},
       {}},
      {"model_trained", {{"samples", T::Integer}, {"features", T::Integer}, {"seconds", T::Number}}, {}},
      {"confirm",
       {{"task", T::Integer},
        {"name", T::String},
        {"candidates", T::Array},
        {"chosen_point", T::String},
        {"chosen_ms", T::NullableNumber},
        {"default_ms", T::NullableNumber},
        {"speedup", T::NullableNumber}},
       {{"candidates",
         {{"point", T::String}, {"default", T::Boolean}, {"medians_ms", T::Array}, {"median_ms", T::NullableNumber}}}}},
      {"model_latency",
       {{"default_ms", T::Number},
        {"tuned_ms", T::Number},
        {"speedup", T::Number},
        {"runs", T::Integer},
        {"max_abs_difference", T::Number}},
       {}},
      {"warning", {{"message", T::String}, {"location", T::String}, {"hint", T::String}}, {}},
      {"error", {{"message", T::String}, {"location", T::String}, {"hint", T::String}, {"fatal", T::Boolean}}, {}},
      {"session_end",
       {{"reason", T::String},
        {"trials", T::Integer},
        {"errors", T::Integer},
        {"elapsed_s", T::Number},
        {"seconds", T::Object},
        {"default_latency_ms", T::Number},
        {"estimated_latency_ms", T::Number},
        {"measured_default_ms", T::NullableNumber},
        {"measured_tuned_ms", T::NullableNumber},
        {"records", T::String},
        {"tasks", T::Array}},
       {{"tasks", taskSummaryFields()}}},
  };
}

const char* typeName(EventFieldType type) {
  switch (type) {
    case T::String: return "a string";
    case T::Number: return "a number";
    case T::Integer: return "an integer";
    case T::Boolean: return "true or false";
    case T::Array: return "an array";
    case T::Object: return "an object";
    case T::NullableNumber: return "a number or null";
    case T::NullableString: return "a string or null";
  }
  return "?";
}

bool hasType(const nlohmann::json& value, EventFieldType type) {
  switch (type) {
    case T::String: return value.is_string();
    case T::Number: return value.is_number();
    case T::Integer: return value.is_number_integer();
    case T::Boolean: return value.is_boolean();
    case T::Array: return value.is_array();
    case T::Object: return value.is_object();
    case T::NullableNumber: return value.is_null() || value.is_number();
    case T::NullableString: return value.is_null() || value.is_string();
  }
  return false;
}

std::optional<std::string> checkFields(const nlohmann::json& object, const std::vector<EventField>& fields,
                                       const std::string& where) {
  if (!object.is_object()) return where + ": expected an object";
  for (const EventField& field : fields) {
    auto it = object.find(field.name);
    if (it == object.end()) {
      if (field.required) return where + ": field '" + field.name + "' is missing";
      continue;
    }
    if (!hasType(*it, field.type)) return where + ": field '" + field.name + "': expected " + typeName(field.type);
  }
  return std::nullopt;
}

}  // namespace

nlohmann::json sessionStartTask(int index, const TuningTask& task, double spaceSize, const nlohmann::json& sketches,
                                int resumedTrials) {
  return {{"task", index},
          {"name", task.name},
          {"kernels", task.kernels},
          {"op", task.op},
          {"workload_hash", task.workloadHash},
          {"weight", task.weight},
          {"flops", task.flops},
          {"bytes", task.bytes},
          {"space_size", spaceSize},
          {"sketches", sketches},
          {"resumed_trials", resumedTrials}};
}

const std::vector<EventSchema>& eventSchemas() {
  static const std::vector<EventSchema> schemas = makeSchemas();
  return schemas;
}

std::optional<std::string> validateEvent(const nlohmann::json& event) {
  if (!event.is_object()) return std::string("an event must be a JSON object");
  auto name = event.find("event");
  if (name == event.end() || !name->is_string()) return std::string("field 'event' is missing or not a string");
  auto t = event.find("t");
  if (t == event.end() || !t->is_number()) return name->get<std::string>() + ": field 't' is missing or not a number";
  for (const EventSchema& schema : eventSchemas()) {
    if (schema.event != *name) continue;
    if (auto problem = checkFields(event, schema.fields, schema.event)) return problem;
    for (auto& [array, elementFields] : schema.elements) {
      auto it = event.find(array);
      if (it == event.end()) continue;
      for (size_t i = 0; i < it->size(); ++i)
        if (auto problem = checkFields((*it)[i], elementFields, schema.event + "." + array + "[" + std::to_string(i) + "]"))
          return problem;
    }
    return std::nullopt;
  }
  return "unknown event '" + name->get<std::string>() + "'";
}

}  // namespace tessel::tuner
