// tessel lesson list|show|check: the schedule lessons headless, for a teacher who grades a
// student's schedule file in a script or CI (exit status and message), and for reading a
// lesson in a terminal.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "app/cli/CommandLine.h"
#include "app/cli/Commands.h"
#include "app/cli/ModelCommand.h"
#include "app/lessons/LessonCheck.h"
#include "app/lessons/Lesson.h"

namespace tessel::cli {

namespace {

const char* kLessonUsage =
    "usage: tessel lesson SUBCOMMAND [options]\n"
    "\n"
    "subcommands:\n"
    "  list                              the lessons and their steps\n"
    "  show LESSON [STEP]                a lesson, or one step: text, operator, starting schedule, goal\n"
    "                                    (--hints, --solution; --start prints only the starting schedule)\n"
    "  check LESSON STEP --schedule FILE grade a schedule against the step's goal: exit 0 when it is\n"
    "                                    reached, 4 when a check fails, 2 when the schedule has an error\n"
    "\n"
    "LESSON is a lesson's id or number, STEP a step's id or number. The lessons are\n"
    "share/tessel/lessons beside the program (TESSEL_LESSONS_DIR overrides).\n";

// Paragraph markup (<b>, <i>, <code>) as plain terminal text.
std::string plainText(const std::string& html) {
  static const std::regex tags("</?(b|i|code|em|strong)>");
  std::string text = std::regex_replace(html, tags, "");
  for (auto [entity, character] : {std::pair{"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}}) {
    for (size_t at = text.find(entity); at != std::string::npos; at = text.find(entity, at + 1))
      text.replace(at, std::string(entity).size(), character);
  }
  return text;
}

int printUsageError(const std::string& command, const std::string& message) {
  std::cerr << "tessel lesson " << command << ": " << message << "\n(see tessel lesson --help)\n";
  return kExitError;
}

std::optional<std::vector<lessons::Lesson>> installedLessons() {
  auto loaded = lessons::loadInstalledLessons();
  if (!loaded) {
    std::cerr << loaded.error().toString() << "\n";
    return std::nullopt;
  }
  return std::move(*loaded);
}

int runList(const std::vector<std::string>& args) {
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    std::cout << "usage: tessel lesson list\n\nLists every lesson with its steps.\n";
    return kExitOk;
  }
  if (!args.empty()) return printUsageError("list", "unexpected argument '" + args[0] + "'");
  auto all = installedLessons();
  if (!all) return kExitError;
  for (const lessons::Lesson& lesson : *all) {
    std::printf("%d  %-22s %s\n", lesson.number, lesson.id.c_str(), lesson.title.c_str());
    for (size_t i = 0; i < lesson.steps.size(); ++i)
      std::printf("     %zu. %-20s %s\n", i + 1, lesson.steps[i].id.c_str(), lesson.steps[i].title.c_str());
  }
  return kExitOk;
}

void printStep(const lessons::Lesson& lesson, size_t index, const CommandLine& line) {
  const lessons::LessonStep& step = lesson.steps[index];
  std::printf("== Lesson %d, step %zu of %zu: %s\n\n", lesson.number, index + 1, lesson.steps.size(), step.title.c_str());
  for (const std::string& paragraph : step.text) std::printf("%s\n\n", plainText(paragraph).c_str());
  std::printf("operator: %s\n", step.op.describe().c_str());
  std::printf("starting schedule:\n%s", step.start.empty() ? "  (none: every loop in its natural order)\n" : "");
  std::istringstream start(step.start);
  for (std::string scheduleLine; std::getline(start, scheduleLine);) std::printf("  %s\n", scheduleLine.c_str());
  std::printf("goal: %s\n", step.goalSummary.c_str());
  if (line.has("hints"))
    for (size_t h = 0; h < step.hints.size(); ++h) std::printf("hint %zu: %s\n", h + 1, plainText(step.hints[h]).c_str());
  if (line.has("solution")) {
    std::printf("a solution:\n");
    std::istringstream solution(step.solution);
    for (std::string scheduleLine; std::getline(solution, scheduleLine);) std::printf("  %s\n", scheduleLine.c_str());
  }
  if (step.tuneTrials > 0)
    std::printf("tune it: %s\n         then `tessel records best %s` prints the schedule the tuner chose\n",
                step.tuneCommand(step.id + ".jsonl").c_str(), (step.id + ".jsonl").c_str());
  std::printf("check it: tessel lesson check %s %s --schedule FILE\n\n", lesson.id.c_str(), step.id.c_str());
}

int runShow(const std::vector<std::string>& args) {
  std::vector<FlagSpec> flags = {{"hints", "also print the step's hints", false, ""},
                                 {"solution", "also print a schedule that reaches the goal (for teachers)", false, ""},
                                 {"start", "print only the step's starting schedule (to save as a file)", false, ""}};
  CommandLine line;
  if (auto error = CommandLine::parse(args, flags, &line)) return printUsageError("show", *error);
  if (line.helpRequested()) {
    std::cout << usage("tessel lesson show LESSON [STEP]", flags);
    return kExitOk;
  }
  if (line.positional().empty() || line.positional().size() > 2) return printUsageError("show", "give LESSON [STEP]");
  auto all = installedLessons();
  if (!all) return kExitError;
  const lessons::Lesson* lesson = lessons::findLesson(*all, line.positional()[0]);
  if (!lesson) return printUsageError("show", "no lesson '" + line.positional()[0] + "' (tessel lesson list shows them)");
  if (line.positional().size() == 1) {
    if (line.has("start")) return printUsageError("show", "--start needs a STEP");
    std::printf("Lesson %d: %s\n%s\n\n", lesson->number, lesson->title.c_str(), lesson->summary.c_str());
    for (size_t i = 0; i < lesson->steps.size(); ++i) printStep(*lesson, i, line);
    return kExitOk;
  }
  const lessons::LessonStep* step = lesson->findStep(line.positional()[1]);
  if (!step) return printUsageError("show", "lesson '" + lesson->id + "' has no step '" + line.positional()[1] + "'");
  if (line.has("start")) {
    std::cout << step->start;
    return kExitOk;
  }
  printStep(*lesson, size_t(step - lesson->steps.data()), line);
  return kExitOk;
}

int runCheck(const std::vector<std::string>& args) {
  std::vector<FlagSpec> flags = {{"schedule", "the schedule text file to grade", true, ""},
                                 {"json", "print the grade as one JSON object", false, ""},
                                 {"seconds", "time spent measuring for a fraction-of-peak goal", true, "1"}};
  CommandLine line;
  if (auto error = CommandLine::parse(args, flags, &line)) return printUsageError("check", *error);
  if (line.helpRequested()) {
    std::cout << usage("tessel lesson check LESSON STEP --schedule FILE", flags)
              << "\nGrades the schedule against the step's goal and prints each check with PASS or FAIL and\n"
                 "what is missing. Exit status: 0 the goal is reached, 4 a check failed, 2 the schedule\n"
                 "does not parse or apply (the message names its line), or no such lesson or step.\n";
    return kExitOk;
  }
  if (line.positional().size() != 2) return printUsageError("check", "give LESSON STEP --schedule FILE");
  if (!line.has("schedule")) return printUsageError("check", "--schedule FILE is required");
  double seconds = std::atof(line.get("seconds").c_str());
  if (!(seconds > 0)) return printUsageError("check", "--seconds must be a positive number");
  auto all = installedLessons();
  if (!all) return kExitError;
  const lessons::Lesson* lesson = lessons::findLesson(*all, line.positional()[0]);
  if (!lesson) return printUsageError("check", "no lesson '" + line.positional()[0] + "' (tessel lesson list shows them)");
  const lessons::LessonStep* step = lesson->findStep(line.positional()[1]);
  if (!step) return printUsageError("check", "lesson '" + lesson->id + "' has no step '" + line.positional()[1] + "'");
  std::string path = line.get("schedule");
  std::ifstream file(path);
  if (!file) return reportDiagnostic({"cannot read the schedule file", path, 0, 0, "check the path"});
  std::stringstream text;
  text << file.rdbuf();
  lessons::GradeOptions options;
  options.measureSeconds = seconds;
  auto grade = lessons::gradeSchedule(*step, text.str(), options);
  if (!grade) {
    Diagnostic located = grade.error();
    if (located.location.empty() || located.location == "schedule") located.location = path;
    return reportDiagnostic(located);
  }
  if (line.has("json")) {
    nlohmann::ordered_json out;
    out["lesson"] = lesson->id;
    out["step"] = step->id;
    out["schedule"] = path;
    out["passed"] = grade->passed;
    nlohmann::ordered_json checks = nlohmann::ordered_json::array();
    for (const lessons::CheckResult& result : grade->results)
      checks.push_back({{"kind", result.check.kind}, {"passed", result.passed}, {"message", result.message}});
    out["checks"] = checks;
    if (grade->fractionOfPeak > 0) {
      out["gflops"] = grade->gflops;
      out["peak_gflops"] = grade->peakGflops;
      out["fraction_of_peak"] = grade->fractionOfPeak;
    }
    std::cout << out.dump(2) << "\n";
  } else {
    std::printf("lesson=%s\nstep=%s\n", lesson->id.c_str(), step->id.c_str());
    for (const lessons::CheckResult& result : grade->results)
      std::printf("check %s: %s: %s\n", result.check.kind.c_str(), result.passed ? "PASS" : "FAIL", result.message.c_str());
    std::printf("goal=%s\n", grade->passed ? "reached" : "not reached");
    if (!grade->passed) {
      std::printf("the goal: %s\n", step->goalSummary.c_str());
      if (!step->hints.empty()) std::printf("hint: %s\n", plainText(step->hints.front()).c_str());
    }
  }
  return grade->passed ? kExitOk : kExitExpectationFailed;
}

}  // namespace

int runLesson(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::cout << kLessonUsage;
    return args.empty() ? kExitError : kExitOk;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "list") return runList(rest);
  if (args[0] == "show") return runShow(rest);
  if (args[0] == "check") return runCheck(rest);
  std::cerr << "tessel lesson: unknown subcommand '" << args[0] << "'\n\n" << kLessonUsage;
  return kExitError;
}

}  // namespace tessel::cli
