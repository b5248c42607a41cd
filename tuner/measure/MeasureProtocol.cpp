// The measuring worker's line protocol in JSON (nlohmann): writing and reading each message.
#include "tuner/measure/MeasureProtocol.h"

#include <array>
#include <utility>

#include <nlohmann/json.hpp>

namespace tessel::tuner {

namespace {

using Json = nlohmann::json;

constexpr std::array<std::pair<CandidateErrorKind, std::string_view>, 11> kKindNames = {{
    {CandidateErrorKind::Request, "request"},
    {CandidateErrorKind::Parse, "parse"},
    {CandidateErrorKind::Lower, "lower"},
    {CandidateErrorKind::Build, "build"},
    {CandidateErrorKind::WrongResult, "wrong_result"},
    {CandidateErrorKind::Runtime, "runtime"},
    {CandidateErrorKind::Crash, "crash"},
    {CandidateErrorKind::Timeout, "timeout"},
    {CandidateErrorKind::Cancelled, "cancelled"},
    {CandidateErrorKind::Start, "start"},
    {CandidateErrorKind::Protocol, "protocol"},
}};

Json errorJson(CandidateErrorKind kind, const Diagnostic& d) {
  Json error = {{"kind", candidateErrorKindName(kind)}, {"message", d.message}};
  if (!d.location.empty()) error["location"] = d.location;
  if (d.line > 0) error["line"] = d.line;
  if (d.column > 0) error["column"] = d.column;
  if (!d.hint.empty()) error["hint"] = d.hint;
  return error;
}

Diagnostic diagnosticFrom(const Json& error) {
  Diagnostic d;
  d.message = error.value("message", std::string("the worker gave no message"));
  d.location = error.value("location", std::string());
  d.line = error.value("line", 0);
  d.column = error.value("column", 0);
  d.hint = error.value("hint", std::string());
  return d;
}

CandidateFailure requestFailure(const std::string& message) {
  return {CandidateErrorKind::Request, Diagnostic{message, "", 0, 0, "see tuner/measure/MeasureProtocol.h"}};
}

CandidateMeasurement protocolFailure(const std::string& message, std::string_view line) {
  CandidateMeasurement m;
  std::string shown(line.substr(0, 200));
  m.failure = CandidateFailure{CandidateErrorKind::Protocol,
                               Diagnostic{"the measuring worker's reply cannot be read: " + message, "", 0, 0,
                                          "it said: " + shown + " (is the tessel tool from another build?)"}};
  return m;
}

// Reads an optional number field into `out`; false (with `problem` set) when it is there but
// not a number in [minimum, maximum].
template <class T>
bool readNumber(const Json& object, const char* field, T* out, double minimum, double maximum, std::string* problem) {
  auto found = object.find(field);
  if (found == object.end()) return true;
  if (!found->is_number() || found->get<double>() < minimum || found->get<double>() > maximum) {
    *problem = std::string("'") + field + "' must be a number from " + Json(minimum).dump() + " to " +
               Json(maximum).dump() + ", got " + found->dump();
    return false;
  }
  *out = found->get<T>();
  return true;
}

}  // namespace

std::string_view candidateErrorKindName(CandidateErrorKind kind) {
  for (auto& [k, name] : kKindNames)
    if (k == kind) return name;
  return "runtime";
}

std::optional<CandidateErrorKind> parseCandidateErrorKind(std::string_view name) {
  for (auto& [kind, text] : kKindNames)
    if (text == name) return kind;
  return std::nullopt;
}

double defaultCandidateTimeout(const MeasureRequest& request) { return 10 + 20 * std::max(0.0, request.minSeconds); }

std::string readyLine(const std::vector<WorkerTask>& tasks, int threads) {
  Json list = Json::array();
  for (auto& task : tasks) list.push_back({{"name", task.name}, {"workload", task.workload}, {"flops", task.flops}});
  return Json{{"ready", true}, {"threads", threads}, {"tasks", list}}.dump();
}

std::string notReadyLine(const Diagnostic& error) {
  return Json{{"ready", false}, {"error", errorJson(CandidateErrorKind::Start, error)}}.dump();
}

Expected<WorkerReady> parseReadyLine(std::string_view line) {
  Json json = Json::parse(line, nullptr, false);
  if (json.is_discarded() || !json.is_object() || !json.contains("ready") || !json["ready"].is_boolean())
    return Diagnostic{"the measuring worker's first line is not its ready line", "", 0, 0,
                      "it said: " + std::string(line.substr(0, 200))};
  WorkerReady ready;
  ready.ready = json["ready"].get<bool>();
  if (!ready.ready) {
    ready.error = diagnosticFrom(json.value("error", Json::object()));
    return ready;
  }
  try {
    ready.threads = json.value("threads", 0);
    for (auto& task : json.at("tasks"))
      ready.tasks.push_back({task.at("name").get<std::string>(), task.value("workload", std::string()),
                             task.value("flops", 0.0)});
  } catch (const Json::exception& error) {
    return Diagnostic{std::string("the measuring worker's ready line is incomplete: ") + error.what(), "", 0, 0, ""};
  }
  return ready;
}

std::string requestLine(int64_t id, const MeasureRequest& r) {
  Json json{{"id", id},
            {"task", r.task},
            {"trace", r.trace},
            {"check", r.check},
            {"min_seconds", r.minSeconds},
            {"min_repeats", r.minRepeats},
            {"max_repeats", r.maxRepeats},
            {"warmup_calls", r.warmupCalls},
            {"seed", r.seed}};
  if (r.batch > 1) json["batch"] = r.batch;
  if (r.batch > 1 && r.turns > 1) json["turns"] = r.turns;
  if (r.flushCaches) json["flush_caches"] = true;
  return json.dump();
}

std::string builtLine(int count, double buildMilliseconds) {
  return Json{{"built", count}, {"build_ms", buildMilliseconds}}.dump();
}

std::string checkedLine(int count, double checkMilliseconds) {
  return Json{{"checked", count}, {"check_ms", checkMilliseconds}}.dump();
}

bool isCheckedLine(std::string_view line) {
  Json json = Json::parse(line, nullptr, false);
  return json.is_object() && json.contains("checked") && !json.contains("id");
}

bool isBuiltLine(std::string_view line) {
  Json json = Json::parse(line, nullptr, false);
  return json.is_object() && json.contains("built") && !json.contains("id");
}

ParsedRequest parseRequestLine(std::string_view line) {
  ParsedRequest parsed;
  Json json = Json::parse(line, nullptr, false);
  if (json.is_discarded() || !json.is_object()) {
    parsed.failure = requestFailure("a request must be one JSON object on one line");
    return parsed;
  }
  auto id = json.find("id");
  if (id == json.end() || !id->is_number_integer()) {
    parsed.failure = requestFailure("a request needs an integer 'id'");
    return parsed;
  }
  parsed.id = id->get<int64_t>();
  MeasureRequest& r = parsed.request;
  for (const char* field : {"task", "trace"}) {
    if (!json.contains(field) || !json[field].is_string()) {
      parsed.failure = requestFailure(std::string("a request needs a string '") + field + "'");
      return parsed;
    }
  }
  r.task = json["task"].get<std::string>();
  r.trace = json["trace"].get<std::string>();
  if (json.contains("check")) {
    if (!json["check"].is_boolean()) {
      parsed.failure = requestFailure("'check' must be true or false");
      return parsed;
    }
    r.check = json["check"].get<bool>();
  }
  if (json.contains("flush_caches")) {
    if (!json["flush_caches"].is_boolean()) {
      parsed.failure = requestFailure("'flush_caches' must be true or false");
      return parsed;
    }
    r.flushCaches = json["flush_caches"].get<bool>();
  }
  std::string problem;
  if (!readNumber(json, "min_seconds", &r.minSeconds, 0, 3600, &problem) ||
      !readNumber(json, "min_repeats", &r.minRepeats, 1, 1e6, &problem) ||
      !readNumber(json, "max_repeats", &r.maxRepeats, 1, 1e6, &problem) ||
      !readNumber(json, "warmup_calls", &r.warmupCalls, 0, 1e6, &problem) ||
      !readNumber(json, "seed", &r.seed, 0, 4294967295.0, &problem) ||
      !readNumber(json, "batch", &r.batch, 1, 10000, &problem) ||
      !readNumber(json, "turns", &r.turns, 1, 1000, &problem)) {
    parsed.failure = requestFailure("bad request: " + problem);
    return parsed;
  }
  if (r.maxRepeats < r.minRepeats) parsed.failure = requestFailure("'max_repeats' must be at least 'min_repeats'");
  return parsed;
}

std::string replyLine(std::optional<int64_t> id, const CandidateMeasurement& m) {
  Json reply = {{"id", id ? Json(*id) : Json(nullptr)}, {"ok", m.ok()}};
  if (m.failure) {
    reply["error"] = errorJson(m.failure->kind, m.failure->diagnostic);
  } else {
    reply.update({{"median_ms", m.medianMilliseconds},
                  {"min_ms", m.minMilliseconds},
                  {"max_ms", m.maxMilliseconds},
                  {"samples", m.samples},
                  {"gflops", m.gflops},
                  {"checked", m.checked}});
    if (m.checked) reply["max_abs_error"] = m.maxAbsError;
  }
  // Also with a failure: a wrong result was built and checked, and that time counts.
  reply.update({{"build_ms", m.buildMilliseconds}, {"check_ms", m.checkMilliseconds}, {"time_ms", m.timingMilliseconds}});
  return reply.dump();
}

std::optional<int64_t> replyId(std::string_view line) {
  Json json = Json::parse(line, nullptr, false);
  if (json.is_discarded() || !json.is_object()) return std::nullopt;
  auto id = json.find("id");
  if (id == json.end() || !id->is_number_integer()) return std::nullopt;
  return id->get<int64_t>();
}

CandidateMeasurement parseReplyLine(std::string_view line) {
  Json json = Json::parse(line, nullptr, false);
  if (json.is_discarded() || !json.is_object()) return protocolFailure("not a JSON object", line);
  CandidateMeasurement m;
  try {
    m.buildMilliseconds = json.value("build_ms", 0.0);
    m.checkMilliseconds = json.value("check_ms", 0.0);
    m.timingMilliseconds = json.value("time_ms", 0.0);
    if (!json.at("ok").get<bool>()) {
      const Json& error = json.at("error");
      auto kind = parseCandidateErrorKind(error.value("kind", std::string()));
      if (!kind) return protocolFailure("unknown error kind " + error.value("kind", Json()).dump(), line);
      m.failure = CandidateFailure{*kind, diagnosticFrom(error)};
      return m;
    }
    m.medianMilliseconds = json.at("median_ms").get<double>();
    m.minMilliseconds = json.at("min_ms").get<double>();
    m.maxMilliseconds = json.at("max_ms").get<double>();
    m.samples = json.at("samples").get<int>();
    m.gflops = json.at("gflops").get<double>();
    m.checked = json.value("checked", false);
    m.maxAbsError = json.value("max_abs_error", 0.0);
  } catch (const Json::exception& error) {
    return protocolFailure(error.what(), line);
  }
  return m;
}

}  // namespace tessel::tuner
