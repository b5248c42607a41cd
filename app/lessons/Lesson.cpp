// Reading lessons (JSON through nlohmann/json), strictly: a lesson is graded by its checks, so
// a misspelled key must be an error rather than a check that silently disappears.
#include "app/lessons/Lesson.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "app/lessons/LessonOperators.h"
#include "app/project/AtomicFile.h"
#include "app/project/InstallLocation.h"

namespace tessel::lessons {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

struct InvalidLesson {
  Diagnostic diagnostic;
};

const std::set<std::string> kCheckKinds = {"uses",     "innermost_axis",    "vectorized",       "parallel",
                                           "attached", "matches_reference", "fraction_of_peak", "working_set"};

class LessonReader {
public:
  explicit LessonReader(std::string path) : path_(std::move(path)) {}

  Lesson read(const Json& root) {
    expectObject(root, "", {"format", "version", "id", "number", "title", "summary", "steps"});
    if (string(root, "", "format") != kLessonFormat)
      fail("format", std::string("not a Tessel lesson (\"format\" must be \"") + kLessonFormat + "\")");
    int64_t version = integer(root, "", "version");
    if (version > kLessonVersion)
      fail("version", "written for a newer Tessel (version " + std::to_string(version) + "); this build reads version " +
                          std::to_string(kLessonVersion));
    Lesson lesson;
    lesson.path = path_;
    lesson.id = string(root, "", "id");
    lesson.number = int(integer(root, "", "number"));
    lesson.title = string(root, "", "title");
    lesson.summary = string(root, "", "summary");
    const Json& steps = member(root, "", "steps");
    if (!steps.is_array() || steps.empty()) fail("steps", "expected a non-empty array of steps");
    std::set<std::string> ids;
    for (size_t i = 0; i < steps.size(); ++i) {
      LessonStep step = readStep(steps[i], "steps[" + std::to_string(i) + "]");
      if (!ids.insert(step.id).second) fail("steps[" + std::to_string(i) + "].id", "two steps are called '" + step.id + "'");
      lesson.steps.push_back(std::move(step));
    }
    return lesson;
  }

private:
  [[noreturn]] void fail(const std::string& where, const std::string& message) {
    throw InvalidLesson{{where + ": " + message, path_, 0, 0, "see the format in app/lessons/Lesson.h"}};
  }

  static std::string at(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }

  void expectObject(const Json& value, const std::string& path, const std::set<std::string>& keys) {
    if (!value.is_object()) fail(path.empty() ? "(document)" : path, "expected an object");
    for (const auto& [key, unused] : value.items()) {
      if (keys.count(key)) continue;
      std::string known;
      for (const std::string& k : keys) known += (known.empty() ? "" : ", ") + k;
      fail(at(path, key), "unknown key (known: " + known + ")");
    }
  }

  const Json& member(const Json& object, const std::string& path, const std::string& key) {
    auto found = object.find(key);
    if (found == object.end()) fail(at(path, key), "missing");
    return *found;
  }

  std::string string(const Json& object, const std::string& path, const std::string& key) {
    const Json& value = member(object, path, key);
    if (!value.is_string() || value.get<std::string>().empty()) fail(at(path, key), "expected a non-empty string");
    return value.get<std::string>();
  }

  std::string optionalString(const Json& object, const std::string& path, const std::string& key) {
    return object.contains(key) ? string(object, path, key) : "";
  }

  int64_t integer(const Json& object, const std::string& path, const std::string& key) {
    const Json& value = member(object, path, key);
    if (!value.is_number_integer() || value.get<int64_t>() < 0) fail(at(path, key), "expected a non-negative integer");
    return value.get<int64_t>();
  }

  std::vector<std::string> strings(const Json& object, const std::string& path, const std::string& key) {
    std::vector<std::string> values;
    if (!object.contains(key)) return values;
    const Json& array = object.at(key);
    if (!array.is_array()) fail(at(path, key), "expected an array of strings");
    for (size_t i = 0; i < array.size(); ++i) {
      if (!array[i].is_string()) fail(at(path, key) + "[" + std::to_string(i) + "]", "expected a string");
      values.push_back(array[i].get<std::string>());
    }
    return values;
  }

  static std::string joinLines(const std::vector<std::string>& lines) {
    std::string text;
    for (const std::string& line : lines) text += line + "\n";
    return text;
  }

  LessonStep readStep(const Json& value, const std::string& path) {
    expectObject(value, path, {"id", "title", "text", "operator", "start", "goal", "hints", "solution", "tune"});
    LessonStep step;
    step.id = string(value, path, "id");
    step.title = string(value, path, "title");
    step.text = strings(value, path, "text");
    if (step.text.empty()) fail(at(path, "text"), "a step needs at least one paragraph");
    step.op = readOperator(member(value, path, "operator"), at(path, "operator"));
    step.start = joinLines(strings(value, path, "start"));
    step.hints = strings(value, path, "hints");
    step.solution = joinLines(strings(value, path, "solution"));
    if (value.contains("tune")) {
      const Json& tune = value.at("tune");
      std::string tunePath = at(path, "tune");
      expectObject(tune, tunePath, {"trials"});
      step.tuneTrials = int(integer(tune, tunePath, "trials"));
      // A classroom session runs while the learner watches: seconds to a few minutes.
      if (step.tuneTrials < 8 || step.tuneTrials > 2000) fail(at(tunePath, "trials"), "expected from 8 to 2000 trials");
    }
    const Json& goal = member(value, path, "goal");
    std::string goalPath = at(path, "goal");
    expectObject(goal, goalPath, {"summary", "checks"});
    step.goalSummary = string(goal, goalPath, "summary");
    const Json& checks = member(goal, goalPath, "checks");
    if (!checks.is_array() || checks.empty()) fail(at(goalPath, "checks"), "expected a non-empty array of checks");
    for (size_t i = 0; i < checks.size(); ++i)
      step.checks.push_back(readCheck(checks[i], at(goalPath, "checks") + "[" + std::to_string(i) + "]"));
    return step;
  }

  LessonOperator readOperator(const Json& value, const std::string& path) {
    if (!value.is_object()) fail(path, "expected an object");
    LessonOperator op;
    op.name = string(value, path, "name");
    std::vector<std::string> known = operatorSizeNames(op.name);
    if (known.empty()) {
      std::string names;
      for (const std::string& name : lessonOperatorNames()) names += (names.empty() ? "" : ", ") + name;
      fail(at(path, "name"), "unknown operator '" + op.name + "' (known: " + names + ")");
    }
    std::set<std::string> keys(known.begin(), known.end());
    keys.insert("name");
    expectObject(value, path, keys);
    // A lesson runs its operator at every check: sizes stay small enough for a classroom
    // machine (and a hostile file cannot ask for terabytes).
    double product = 1;
    for (const std::string& size : known) {
      op.sizes[size] = integer(value, path, size);
      if (op.sizes[size] < 1 || op.sizes[size] > (int64_t(1) << 20)) fail(at(path, size), "expected a size from 1 to 1048576");
      product *= double(op.sizes[size]);
    }
    if (product > double(int64_t(1) << 30))
      fail(path, "the operator is too big for a lesson (the product of its sizes is above 2^30)");
    return op;
  }

  GoalCheck readCheck(const Json& value, const std::string& path) {
    if (!value.is_object()) fail(path, "expected an object");
    GoalCheck check;
    check.kind = string(value, path, "kind");
    if (!kCheckKinds.count(check.kind)) {
      std::string kinds;
      for (const std::string& kind : kCheckKinds) kinds += (kinds.empty() ? "" : ", ") + kind;
      fail(at(path, "kind"), "unknown check '" + check.kind + "' (known: " + kinds + ")");
    }
    expectObject(value, path, {"kind", "stage", "axis", "primitive", "how", "to", "at_least", "at_most_kib"});
    check.stage = optionalString(value, path, "stage");
    check.axis = optionalString(value, path, "axis");
    check.primitive = optionalString(value, path, "primitive");
    check.how = optionalString(value, path, "how");
    check.to = optionalString(value, path, "to");
    auto needs = [&](const char* key, const std::string& field) {
      if (field.empty()) fail(at(path, key), "a '" + check.kind + "' check needs it");
    };
    if (check.kind == "uses") needs("primitive", check.primitive);
    if (check.kind == "innermost_axis" || check.kind == "vectorized" || check.kind == "parallel" || check.kind == "attached")
      needs("stage", check.stage);
    if (check.kind == "innermost_axis") needs("axis", check.axis);
    if (check.kind == "attached") {
      needs("how", check.how);
      if (check.how != "at" && check.how != "inline" && check.how != "root") fail(at(path, "how"), "expected at, inline or root");
      if (check.how == "at") needs("to", check.to);
    }
    if (check.kind == "fraction_of_peak") {
      const Json& limit = member(value, path, "at_least");
      if (!limit.is_number() || limit.get<double>() <= 0 || limit.get<double>() > 1)
        fail(at(path, "at_least"), "expected a fraction of peak above 0 and at most 1");
      check.atLeast = limit.get<double>();
    }
    if (check.kind == "working_set") {
      const Json& limit = member(value, path, "at_most_kib");
      if (!limit.is_number() || limit.get<double>() <= 0)
        fail(at(path, "at_most_kib"), "expected a size in KiB above 0 (32 is a typical L1 data cache)");
      check.atMostKib = limit.get<double>();
    }
    return check;
  }

  std::string path_;
};

}  // namespace

std::string LessonOperator::describe() const {
  std::string text = name;
  for (const std::string& size : operatorSizeNames(name)) {
    auto found = sizes.find(size);
    if (found != sizes.end()) text += " " + size + "=" + std::to_string(found->second);
  }
  return text;
}

std::string LessonStep::tuneCommand(const std::string& records) const {
  std::string command = "tessel tune lesson_" + op.name;
  for (const std::string& size : operatorSizeNames(op.name)) {
    auto found = op.sizes.find(size);
    if (found != op.sizes.end()) command += " --" + size + " " + std::to_string(found->second);
  }
  return command + " --trials " + std::to_string(tuneTrials) + " --records " + records;
}

const LessonStep* Lesson::findStep(const std::string& idOrNumber) const {
  for (const LessonStep& step : steps)
    if (step.id == idOrNumber) return &step;
  char* end = nullptr;
  long number = std::strtol(idOrNumber.c_str(), &end, 10);
  if (!idOrNumber.empty() && *end == '\0' && number >= 1 && size_t(number) <= steps.size()) return &steps[number - 1];
  return nullptr;
}

Expected<Lesson> parseLesson(const std::string& text, const std::string& path) {
  Json root;
  try {
    root = Json::parse(text);
  } catch (const Json::exception& error) {
    return Diagnostic{std::string("the lesson is not valid JSON: ") + error.what(), path, 0, 0, "fix it in a text editor"};
  }
  try {
    return LessonReader(path).read(root);
  } catch (const InvalidLesson& invalid) {
    return invalid.diagnostic;
  } catch (const Json::exception& error) {
    return Diagnostic{std::string("the lesson has a value of the wrong type: ") + error.what(), path, 0, 0, ""};
  }
}

Expected<std::vector<Lesson>> loadLessons(const std::string& directory) {
  std::error_code error;
  if (!fs::is_directory(directory, error))
    return Diagnostic{"no lessons folder", directory, 0, 0, "install Tessel's lessons or set TESSEL_LESSONS_DIR"};
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(directory, error))
    if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  std::vector<Lesson> lessons;
  for (const std::string& file : files) {
    auto text = project::readTextFile(file);
    if (!text) return text.error();
    auto lesson = parseLesson(*text, file);
    if (!lesson) return lesson.error();
    for (const Lesson& other : lessons)
      if (other.id == lesson->id)
        return Diagnostic{"a second lesson called '" + lesson->id + "' (the first is " + other.path + ")", file, 0, 0,
                          "give every lesson its own id"};
    lessons.push_back(std::move(*lesson));
  }
  std::stable_sort(lessons.begin(), lessons.end(), [](const Lesson& a, const Lesson& b) { return a.number < b.number; });
  return lessons;
}

Expected<std::vector<Lesson>> loadInstalledLessons() {
  if (const char* directory = std::getenv("TESSEL_LESSONS_DIR"); directory && *directory) return loadLessons(directory);
  std::string data = project::sharedDataDirectory();
  if (data.empty())
    return Diagnostic{"the lessons are not installed (no share/tessel beside the program)", "", 0, 0,
                      "reinstall the tessel package, build Tessel, or set TESSEL_LESSONS_DIR"};
  return loadLessons((fs::path(data) / "lessons").string());
}

const Lesson* findLesson(const std::vector<Lesson>& lessons, const std::string& idOrNumber) {
  for (const Lesson& lesson : lessons)
    if (lesson.id == idOrNumber || std::to_string(lesson.number) == idOrNumber) return &lesson;
  return nullptr;
}

}  // namespace tessel::lessons
