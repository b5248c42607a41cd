// JSON reading and writing of schedule traces (nlohmann::json).
#include "compiler/schedule/TraceJson.h"

#include <nlohmann/json.hpp>

namespace tessel {

namespace {
constexpr int kTraceJsonVersion = 1;

Diagnostic jsonError(std::string message, std::string hint = "") {
  return Diagnostic{std::move(message), "schedule JSON", 0, 0, std::move(hint)};
}
}  // namespace

std::string printTraceJson(const Trace& trace) {
  nlohmann::json primitives = nlohmann::json::array();
  for (auto& p : trace.primitives) {
    nlohmann::json entry;
    entry["kind"] = primitiveName(p.kind);
    entry["stage"] = p.stage;
    if (!p.axes.empty()) entry["axes"] = p.axes;
    if (!p.results.empty()) entry["results"] = p.results;
    if (!p.values.empty()) entry["values"] = p.values;
    if (p.byParts) entry["by_parts"] = true;
    if (!p.target.empty()) entry["target"] = p.target;
    if (!p.readers.empty()) entry["readers"] = p.readers;
    primitives.push_back(entry);
  }
  nlohmann::json root;
  root["version"] = kTraceJsonVersion;
  root["primitives"] = primitives;
  return root.dump(2);
}

Expected<Trace> parseTraceJson(const std::string& text) {
  nlohmann::json root = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return jsonError("not valid JSON");
  if (!root.is_object() || !root.contains("primitives") || !root["primitives"].is_array())
    return jsonError("expected an object with a \"primitives\" list");
  if (!root.contains("version") || !root["version"].is_number_integer())
    return jsonError("missing \"version\"");
  if (root["version"].get<int>() > kTraceJsonVersion)
    return jsonError("trace version " + std::to_string(root["version"].get<int>()) + " is newer than this Tessel (" +
                         std::to_string(kTraceJsonVersion) + ")",
                     "upgrade Tessel to read it");
  Trace trace;
  int index = 0;
  for (auto& entry : root["primitives"]) {
    std::string where = "primitives[" + std::to_string(index++) + "]";
    if (!entry.is_object()) return jsonError(where + " is not an object");
    auto stringField = [&](const char* key, std::string& out, bool required) -> Status {
      if (!entry.contains(key)) return required ? Status(jsonError(where + " has no \"" + key + "\"")) : Status();
      if (!entry[key].is_string()) return jsonError(where + "." + key + " must be a string");
      out = entry[key].get<std::string>();
      return Status();
    };
    auto namesField = [&](const char* key, std::vector<std::string>& out) -> Status {
      if (!entry.contains(key)) return Status();
      if (!entry[key].is_array()) return jsonError(where + "." + key + " must be a list of names");
      for (auto& item : entry[key]) {
        if (!item.is_string()) return jsonError(where + "." + key + " must be a list of names");
        out.push_back(item.get<std::string>());
      }
      return Status();
    };
    Primitive p;
    std::string kind;
    if (Status s = stringField("kind", kind, true); !s) return s.error();
    auto parsed = parsePrimitiveName(kind);
    if (!parsed) return jsonError(where + ".kind '" + kind + "' is not a schedule primitive");
    p.kind = *parsed;
    if (Status s = stringField("stage", p.stage, true); !s) return s.error();
    if (Status s = stringField("target", p.target, false); !s) return s.error();
    if (Status s = namesField("axes", p.axes); !s) return s.error();
    if (Status s = namesField("results", p.results); !s) return s.error();
    if (Status s = namesField("readers", p.readers); !s) return s.error();
    if (entry.contains("values")) {
      if (!entry["values"].is_array()) return jsonError(where + ".values must be a list of integers");
      for (auto& v : entry["values"]) {
        if (!v.is_number_integer()) return jsonError(where + ".values must be a list of integers");
        p.values.push_back(v.get<int64_t>());
      }
    }
    if (entry.contains("by_parts")) {
      if (!entry["by_parts"].is_boolean()) return jsonError(where + ".by_parts must be true or false");
      p.byParts = entry["by_parts"].get<bool>();
    }
    trace.primitives.push_back(std::move(p));
  }
  return trace;
}

}  // namespace tessel
