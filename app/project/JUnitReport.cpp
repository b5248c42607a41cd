// JUnit XML, written by hand: the schema is small and the CLI links no XML library.
#include "app/project/JUnitReport.h"

#include <cstdio>
#include <filesystem>
#include <vector>

namespace tessel::project {

namespace {

/// Text for an XML attribute or element: the five special characters escaped, and the control
/// characters XML 1.0 cannot carry at all (a diagnostic quoting a binary file) replaced by '?'.
std::string escaped(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\n': out += "&#10;"; break;
      case '\t': out += "&#9;"; break;
      default: out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
    }
  }
  return out;
}

std::string seconds(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", value < 0 ? 0.0 : value);
  return text;
}

struct TestCase {
  enum class Outcome { Passed, Failed, Error, Skipped };
  std::string name;
  double seconds = 0;
  Outcome outcome = Outcome::Passed;
  std::string message;  ///< Why it failed, errored or was skipped; for a pass, what it measured.
};

void writeTestCase(std::string& out, const std::string& className, const TestCase& test) {
  out += "    <testcase classname=\"" + escaped(className) + "\" name=\"" + escaped(test.name) + "\" time=\"" +
         seconds(test.seconds) + "\"";
  auto element = [&](const char* tag) {
    out += ">\n      <" + std::string(tag) + " message=\"" + escaped(test.message) + "\"";
    if (std::string(tag) == "skipped") {
      out += "/>\n    </testcase>\n";
    } else {
      out += " type=\"" + std::string(tag) + "\">" + escaped(test.message) + "</" + tag + ">\n    </testcase>\n";
    }
  };
  switch (test.outcome) {
    case TestCase::Outcome::Passed:
      if (test.message.empty()) {
        out += "/>\n";
      } else {
        out += ">\n      <system-out>" + escaped(test.message) + "</system-out>\n    </testcase>\n";
      }
      break;
    case TestCase::Outcome::Failed: element("failure"); break;
    case TestCase::Outcome::Error: element("error"); break;
    case TestCase::Outcome::Skipped: element("skipped"); break;
  }
}

std::vector<TestCase> testCasesOf(const ProjectRunReport& report) {
  using Outcome = TestCase::Outcome;
  std::vector<TestCase> tests;
  tests.push_back({"compile", report.loadSeconds + report.compileSeconds, Outcome::Passed,
                   "model " + report.model + ", " + std::to_string(report.tasksEdited) + " kernels with the project's " +
                       "schedules, " + std::to_string(report.tunedKernels) + " from tuning records"});
  if (report.comparisons.empty())
    tests.push_back({"outputs", 0, Outcome::Skipped, "the project names no reference data"});
  for (const driver::OutputComparison& comparison : report.comparisons)
    tests.push_back({"output " + comparison.name, 0, comparison.matches ? Outcome::Passed : Outcome::Failed,
                     comparison.describe()});
  if (!report.benchmarked) {
    tests.push_back({"benchmark", 0, Outcome::Skipped, "not run: the outputs differ from the reference"});
    return tests;
  }
  char measured[160];
  std::snprintf(measured, sizeof measured, "median %.4f ms, fastest %.4f ms over %d runs on %d threads",
                report.latencyMs, report.minMs, report.runs, report.threads);
  tests.push_back({"benchmark", report.latencyMs * report.runs / 1000.0, Outcome::Passed, measured});
  for (const ExpectationResult& expectation : report.expectations)
    tests.push_back({"expectation " + expectation.name, 0, expectation.passed ? Outcome::Passed : Outcome::Failed,
                     expectation.describe()});
  if (!report.exportedTo.empty()) tests.push_back({"export", 0, Outcome::Passed, "module written to " + report.exportedTo});
  return tests;
}

}  // namespace

std::string junitReport(const std::string& projectFile, const Expected<ProjectRunReport>& run,
                        const std::string& timestamp) {
  std::vector<TestCase> tests;
  if (run) {
    tests = testCasesOf(*run);
  } else {
    tests.push_back({"compile", 0, TestCase::Outcome::Error, run.error().toString()});
  }
  int failures = 0, errors = 0, skipped = 0;
  double total = 0;
  for (const TestCase& test : tests) {
    failures += test.outcome == TestCase::Outcome::Failed;
    errors += test.outcome == TestCase::Outcome::Error;
    skipped += test.outcome == TestCase::Outcome::Skipped;
    total += test.seconds;
  }
  // Reporters group by class name: "tessel.project.tiny_resnet" keeps projects apart.
  std::string suite = std::filesystem::path(projectFile).stem().string();
  std::string className = "tessel.project." + suite;
  std::string counts = " tests=\"" + std::to_string(tests.size()) + "\" failures=\"" + std::to_string(failures) +
                       "\" errors=\"" + std::to_string(errors) + "\" skipped=\"" + std::to_string(skipped) +
                       "\" time=\"" + seconds(total) + "\"";
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<testsuites name=\"tessel project run\"" + counts + ">\n";
  out += "  <testsuite name=\"" + escaped(suite) + "\"" + counts;
  if (!timestamp.empty()) out += " timestamp=\"" + escaped(timestamp) + "\"";
  out += ">\n    <properties>\n";
  auto property = [&](const std::string& name, const std::string& value) {
    out += "      <property name=\"" + escaped(name) + "\" value=\"" + escaped(value) + "\"/>\n";
  };
  property("project", projectFile);
  if (run) {
    property("model", run->model);
    property("threads", std::to_string(run->threads));
    if (run->benchmarked) {
      char latency[32];
      std::snprintf(latency, sizeof latency, "%.4f", run->latencyMs);
      property("latency_ms", latency);
    }
    if (run->tuningRecords) property("tuning_records", run->tuningRecords->path);
  }
  out += "    </properties>\n";
  for (const TestCase& test : tests) writeTestCase(out, className, test);
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace tessel::project
