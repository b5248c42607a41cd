// Tuning records to and from JSON lines, with a message naming the field for every malformed one.
#include "tuner/records/TuningRecord.h"

#include <array>
#include <cmath>
#include <ctime>

#include <nlohmann/json.hpp>

namespace tessel::tuner {

namespace {

using Json = nlohmann::json;

constexpr std::array<std::pair<RecordOrigin, std::string_view>, 5> kOrigins = {{{RecordOrigin::Default, "default"},
                                                                                {RecordOrigin::Search, "search"},
                                                                                {RecordOrigin::Random, "random"},
                                                                                {RecordOrigin::Control, "control"},
                                                                                {RecordOrigin::Confirm, "confirm"}}};

constexpr std::array<std::pair<MeasureErrorKind, std::string_view>, 6> kErrorKinds = {
    {{MeasureErrorKind::Lower, "lower"},
     {MeasureErrorKind::Build, "build"},
     {MeasureErrorKind::WrongResult, "wrong_result"},
     {MeasureErrorKind::Crash, "crash"},
     {MeasureErrorKind::Timeout, "timeout"},
     {MeasureErrorKind::Runtime, "runtime"}}};

template <class Enum, size_t N>
std::string_view nameOf(const std::array<std::pair<Enum, std::string_view>, N>& names, Enum value) {
  for (auto& [candidate, name] : names)
    if (candidate == value) return name;
  TESSEL_ICHECK(false) << "unnamed enumerator " << int(value);
  return {};
}

template <class Enum, size_t N>
std::string listNames(const std::array<std::pair<Enum, std::string_view>, N>& names) {
  std::string out;
  for (auto& entry : names) out += (out.empty() ? "" : ", ") + std::string(entry.second);
  return out;
}

// "2026-11-25T12:34:56Z": the one form records use, so records sort and compare as text.
bool isUtcTimestamp(const std::string& text) {
  static constexpr std::string_view kPattern = "dddd-dd-ddTdd:dd:ddZ";
  if (text.size() != kPattern.size()) return false;
  for (size_t i = 0; i < text.size(); ++i)
    if (kPattern[i] == 'd' ? !std::isdigit(static_cast<unsigned char>(text[i])) : text[i] != kPattern[i]) return false;
  return true;
}

bool isHexDigits(const std::string& text, size_t count) {
  if (text.size() != count) return false;
  for (char c : text)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// What a message quotes of a bad value: enough to recognize it, not a whole corrupt line.
std::string abbreviated(const std::string& text) {
  constexpr size_t kLimit = 40;
  if (text.size() <= kLimit) return text;
  size_t cut = kLimit;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
  return text.substr(0, cut) + "...";
}

// Reads the fields of one JSON object; the first problem becomes the Diagnostic, naming the
// field by its dotted path.
class FieldReader {
public:
  FieldReader(const Json& object, std::string prefix) : object_(object), prefix_(std::move(prefix)) {}

  const std::optional<Diagnostic>& problem() const { return problem_; }
  bool has(const char* name) const { return object_.contains(name); }

  std::string string(const char* name, bool required = true) {
    const Json* value = find(name, required);
    if (!value) return "";
    if (!value->is_string()) {
      fail(name, "expected a string");
      return "";
    }
    return value->get<std::string>();
  }
  double number(const char* name, double minimum) {
    const Json* value = find(name, true);
    if (!value) return 0;
    if (!value->is_number()) {
      fail(name, "expected a number");
      return 0;
    }
    double number = value->get<double>();  // finite: the parser refuses 1e999
    if (number < minimum) {
      fail(name, "expected a number of at least " + formatNumber(minimum) + ", got " + abbreviated(value->dump()));
      return 0;
    }
    return number;
  }
  std::optional<double> optionalNumber(const char* name) {
    if (!has(name)) return std::nullopt;
    return number(name, -HUGE_VAL);
  }
  int integer(const char* name, int minimum, bool required = true, int fallback = 0) {
    const Json* value = find(name, required);
    if (!value) return fallback;
    if (!value->is_number_integer() || value->get<int64_t>() < minimum || value->get<int64_t>() > INT32_MAX) {
      fail(name, "expected an integer of at least " + std::to_string(minimum) + ", got " + abbreviated(value->dump()));
      return 0;
    }
    return int(value->get<int64_t>());
  }
  const Json* object(const char* name) {
    const Json* value = find(name, false);
    if (value && !value->is_object()) {
      fail(name, "expected an object");
      return nullptr;
    }
    return value;
  }
  template <class Enum, size_t N>
  Enum choice(const char* name, const std::array<std::pair<Enum, std::string_view>, N>& names) {
    std::string text = string(name);
    if (problem_) return names[0].first;
    for (auto& [value, spelling] : names)
      if (spelling == text) return value;
    fail(name, "expected one of " + listNames(names) + ", got '" + abbreviated(text) + "'");
    return names[0].first;
  }
  void fail(const std::string& name, const std::string& message) {
    if (!problem_) problem_ = Diagnostic{"field '" + prefix_ + name + "': " + message, "", 0, 0, ""};
  }
  // The problem of a nested reader, if this one has none yet.
  void adopt(const FieldReader& nested) {
    if (!problem_ && nested.problem_) problem_ = nested.problem_;
  }

private:
  const Json* find(const char* name, bool required) {
    if (problem_) return nullptr;
    auto it = object_.find(name);
    if (it == object_.end()) {
      if (required) fail(name, "missing");
      return nullptr;
    }
    return &*it;
  }
  static std::string formatNumber(double value) {
    std::string text = Json(value).dump();
    return text.ends_with(".0") ? text.substr(0, text.size() - 2) : text;
  }

  const Json& object_;
  std::string prefix_;
  std::optional<Diagnostic> problem_;
};

MeasuredTime readResult(const Json& json, FieldReader* parent) {
  FieldReader reader(json, "result.");
  MeasuredTime time;
  time.medianMs = reader.number("median_ms", 0);
  time.minMs = reader.number("min_ms", 0);
  time.maxMs = reader.number("max_ms", 0);
  time.repeats = reader.integer("repeats", 1);
  if (reader.has("gflops")) time.gflops = reader.number("gflops", 0);
  parent->adopt(reader);
  return time;
}

MeasureFailure readError(const Json& json, FieldReader* parent) {
  FieldReader reader(json, "error.");
  MeasureFailure failure;
  failure.kind = reader.choice("kind", kErrorKinds);
  failure.message = reader.string("message");
  parent->adopt(reader);
  return failure;
}

// nlohmann says "[json.exception.parse_error.101] parse error at line 1, column 28: syntax error
// while parsing value - unexpected end of input; ...": keep the column and what was wrong, as
// "line 1" would contradict the file's line number the reader reports.
std::string describeSyntaxError(const Json::parse_error& error) {
  std::string text = error.what();
  for (std::string_view lead : {std::string_view(": "), std::string_view(" - ")})
    if (auto at = text.find(lead); at != std::string::npos) text = text.substr(at + lead.size());
  return "not valid JSON at column " + std::to_string(error.byte) + ": " + text;
}

// Any other refusal of the parser ("[json.exception.out_of_range.406] number overflow parsing '1e999'").
std::string describeUnreadableJson(const Json::exception& error) {
  std::string text = error.what();
  if (auto end = text.find("] "); end != std::string::npos) text = text.substr(end + 2);
  return "not valid JSON: " + text;
}

}  // namespace

std::string_view originName(RecordOrigin origin) { return nameOf(kOrigins, origin); }
std::string_view errorKindName(MeasureErrorKind kind) { return nameOf(kErrorKinds, kind); }

std::string toJsonLine(const TuningRecord& record) {
  nlohmann::ordered_json json;
  json["version"] = record.version;
  json["workload"] = record.workload;
  json["workload_hash"] = record.workloadHash;
  json["task"] = record.task;
  json["target"] = record.target;
  json["trace"] = record.trace;
  json["origin"] = originName(record.origin);
  json["round"] = record.round;
  if (record.prediction) json["prediction"] = *record.prediction;
  if (!record.point.empty()) json["point"] = record.point;
  if (const MeasuredTime* time = record.result()) {
    nlohmann::ordered_json result = {
        {"median_ms", time->medianMs}, {"min_ms", time->minMs}, {"max_ms", time->maxMs}, {"repeats", time->repeats}};
    if (time->gflops) result["gflops"] = *time->gflops;
    json["result"] = std::move(result);
  } else {
    const MeasureFailure& failure = *record.failure();
    json["error"] = {{"kind", errorKindName(failure.kind)}, {"message", failure.message}};
  }
  json["time"] = record.time;
  // Invalid UTF-8 (never expected from the compiler) becomes U+FFFD rather than an exception.
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Expected<TuningRecord> parseRecordLine(std::string_view line, int* newerVersion) {
  if (newerVersion) *newerVersion = 0;
  Json json;
  try {
    json = Json::parse(line);
  } catch (const Json::parse_error& error) {
    return Diagnostic{describeSyntaxError(error), "", 0, 0, ""};
  } catch (const Json::exception& error) {
    return Diagnostic{describeUnreadableJson(error), "", 0, 0, ""};
  }
  if (!json.is_object()) return Diagnostic{"not a JSON object but " + std::string(json.type_name()), "", 0, 0, ""};

  FieldReader reader(json, "");
  TuningRecord record;
  // The version first: a newer record may have any other fields.
  record.version = reader.integer("version", 1);
  if (reader.problem()) return *reader.problem();
  if (record.version > kRecordVersion) {
    if (newerVersion) *newerVersion = record.version;
    return Diagnostic{"records of version " + std::to_string(record.version) + " need a newer tessel", "", 0, 0,
                      "this tessel reads version " + std::to_string(kRecordVersion)};
  }
  record.workload = reader.string("workload");
  if (!reader.problem() && record.workload.empty()) reader.fail("workload", "is empty");
  record.workloadHash = reader.string("workload_hash");
  if (!reader.problem() && !isHexDigits(record.workloadHash, 16))
    reader.fail("workload_hash", "expected 16 hex digits, got '" + abbreviated(record.workloadHash) + "'");
  record.task = reader.string("task", false);
  record.target = reader.string("target");
  if (!reader.problem() && record.target.empty()) reader.fail("target", "is empty");
  record.trace = reader.string("trace");
  record.origin = reader.choice("origin", kOrigins);
  record.round = reader.integer("round", 0, false);
  record.prediction = reader.optionalNumber("prediction");
  record.point = reader.string("point", false);
  const Json* result = reader.object("result");
  const Json* error = reader.object("error");
  if (!reader.problem()) {
    if (result && error)
      reader.fail("result", "a record has either 'result' or 'error', not both");
    else if (!result && !error)
      reader.fail("result", "missing (a record has either 'result' or 'error')");
    else if (result)
      record.outcome = readResult(*result, &reader);
    else
      record.outcome = readError(*error, &reader);
  }
  record.time = reader.string("time");
  if (!reader.problem() && !isUtcTimestamp(record.time))
    reader.fail("time", "expected a UTC time such as 2026-11-25T12:34:56Z, got '" + abbreviated(record.time) + "'");
  if (reader.problem()) return *reader.problem();
  return record;
}

std::string utcTimestamp(std::chrono::system_clock::time_point when) {
  std::time_t seconds = std::chrono::system_clock::to_time_t(when);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

}  // namespace tessel::tuner
