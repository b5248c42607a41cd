// The ONNX backend tests Debian ships (libonnx-testdata: the node, pytorch-converted,
// pytorch-operator and simple groups) run through driver::runModel, the path `tessel run
// --inputs-dir --expect-dir` takes: every test passes or is on the skip list with its reason,
// and no listed test passes (the list stays honest).
//
// Each test runs in a forked child process, two at a time (both CI cores), so an operator
// that crashes or hangs fails its own test only. Environment:
//   TESSEL_ONNX_TEST_DATA      the directory holding the groups (default: Debian's)
//   TESSEL_CONFORMANCE_GROUPS  comma-separated groups to run (default: all four)
//   TESSEL_CONFORMANCE_SHARD   i/n: run every n-th test starting at the i-th (0-based)
//   TESSEL_CONFORMANCE_FILTER  run only tests whose group/name contains this text
//   TESSEL_CONFORMANCE_JOBS    tests run at once (default 2)
//   TESSEL_CONFORMANCE_TIMEOUT seconds one test may take (default 120)
#include <QtTest>

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/driver/RunModel.h"
#include "runtime/ThreadPool.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string environment(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}

fs::path dataDirectory() { return environment("TESSEL_ONNX_TEST_DATA", "/usr/share/libonnx-testdata/data"); }
const fs::path kSkipListPath = fs::path(TESSEL_SOURCE_DIR) / "tests/conformance/skip_list.txt";

// The groups of backend tests ONNX ships, in the order they run and are counted.
const std::vector<std::string> kGroups = {"node", "pytorch-converted", "pytorch-operator", "simple"};
// The group a skip-list entry without "group/" means: the list began with the node tests only.
const std::string kDefaultGroup = "node";

// One test: its group and name; "group/name" is how it is printed and listed.
struct TestCase {
  std::string group;
  std::string name;
  std::string id() const { return group + "/" + name; }
  fs::path directory() const { return dataDirectory() / group / name; }
};

// One line of the skip list: `[group/]test_name  # reason`.
struct SkipEntry {
  std::string test;  ///< Always group-qualified: "node/test_abs".
  std::string reason;
  int line = 0;
};

std::string qualifiedTestName(const std::string& listed) {
  return listed.find('/') == std::string::npos ? kDefaultGroup + "/" + listed : listed;
}

std::string trim(const std::string& text) {
  size_t begin = text.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  size_t end = text.find_last_not_of(" \t\r");
  return text.substr(begin, end - begin + 1);
}

// Blank lines and lines starting with '#' are comments.
std::vector<SkipEntry> readSkipList(const fs::path& path) {
  std::vector<SkipEntry> entries;
  std::ifstream file(path);
  std::string text;
  for (int line = 1; std::getline(file, text); ++line) {
    text = trim(text);
    if (text.empty() || text[0] == '#') continue;
    size_t hash = text.find('#');
    SkipEntry entry;
    entry.test = qualifiedTestName(trim(text.substr(0, hash)));
    entry.reason = hash == std::string::npos ? "" : trim(text.substr(hash + 1));
    entry.line = line;
    entries.push_back(entry);
  }
  return entries;
}

// The groups TESSEL_CONFORMANCE_GROUPS names (all of kGroups by default); a name that is no
// group is fatal, since a typo would otherwise pass by running nothing.
std::vector<std::string> selectedGroups() {
  std::string text = environment("TESSEL_CONFORMANCE_GROUPS", "");
  if (text.empty()) return kGroups;
  std::vector<std::string> groups;
  std::stringstream list(text);
  for (std::string group; std::getline(list, group, ',');) {
    group = trim(group);
    if (std::find(kGroups.begin(), kGroups.end(), group) == kGroups.end())
      qFatal("TESSEL_CONFORMANCE_GROUPS: '%s' is not a group (node, pytorch-converted, pytorch-operator, simple)",
             group.c_str());
    groups.push_back(group);
  }
  return groups;
}

// The tests of `group`, by name; empty when the group is not installed.
std::vector<TestCase> listTests(const std::string& group) {
  std::vector<TestCase> tests;
  std::error_code error;
  for (auto& entry : fs::directory_iterator(dataDirectory() / group, error))
    if (entry.is_directory() && fs::exists(entry.path() / "model.onnx"))
      tests.push_back({group, entry.path().filename().string()});
  std::sort(tests.begin(), tests.end(), [](auto& a, auto& b) { return a.name < b.name; });
  return tests;
}

// A test's data sets (test_data_set_0, test_data_set_1, ...), in numeric order.
std::vector<fs::path> dataSets(const fs::path& testDirectory) {
  std::vector<std::pair<int, fs::path>> numbered;
  const std::string prefix = "test_data_set_";
  std::error_code error;
  for (auto& entry : fs::directory_iterator(testDirectory, error)) {
    std::string name = entry.path().filename().string();
    if (entry.is_directory() && name.rfind(prefix, 0) == 0)
      numbered.emplace_back(std::atoi(name.c_str() + prefix.size()), entry.path());
  }
  std::sort(numbered.begin(), numbered.end());
  std::vector<fs::path> sets;
  for (auto& [number, path] : numbered) sets.push_back(path);
  return sets;
}

// What happened to one test. Pass and Mismatch come from runModel; Error is a Diagnostic
// (unsupported operator, bad input); Internal an internal compiler error; Crash and Timeout
// are the child process dying or being killed.
enum class Outcome : char { Pass = 'P', Mismatch = 'M', Error = 'E', Internal = 'I', Crash = 'C', Timeout = 'T' };

struct TestResult {
  Outcome outcome = Outcome::Crash;
  std::string message;
  double seconds = 0;
};

std::string oneLine(std::string text, size_t limit = 400) {
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  if (text.size() > limit) text = text.substr(0, limit) + "...";
  return text;
}

// One data set through runModel: "" when every output matches, else the outcome letter
// followed by the message.
std::string runDataSet(const fs::path& model, const fs::path& dataSet) {
  tessel::driver::RunRequest request;
  request.model = model.string();
  auto inputs = tessel::driver::readNumberedInputs(dataSet.string(), "input_");
  if (!inputs) return "E" + inputs.error().toString();
  auto expected = tessel::driver::readNumberedTensors(dataSet.string(), "output_", &request.expectedStrings);
  if (!expected) return "E" + expected.error().toString();
  request.positionalInputs = std::move(*inputs);
  request.expectedOutputs = std::move(*expected);
  auto result = tessel::driver::runModel(request);
  if (!result) return "E" + result.error().toString();
  if (result->allMatch()) return "";
  std::string message;
  for (auto& comparison : result->comparisons)
    if (!comparison.matches) message += (message.empty() ? "" : "; ") + comparison.describe();
  return "M" + message;
}

// Runs in the child: every data set of one test (each compiles the model anew, since inputs
// an operator reads by value are bound as constants). Returns the outcome letter followed by
// the message of the first data set that fails, naming it when the test has several.
std::string runOneTest(const fs::path& testDirectory) {
  try {
    std::vector<fs::path> sets = dataSets(testDirectory);
    if (sets.empty()) return "Ehas no test_data_set_N directory";
    for (const fs::path& dataSet : sets) {
      std::string failure = runDataSet(testDirectory / "model.onnx", dataSet);
      if (failure.empty()) continue;
      if (sets.size() > 1) failure.insert(1, dataSet.filename().string() + ": ");
      return failure;
    }
    return "P";
  } catch (const tessel::InternalError& error) {
    return std::string("I") + "internal compiler error: " + error.what();
  } catch (const std::exception& error) {
    return std::string("E") + "uncaught exception: " + error.what();
  }
}

struct RunningTest {
  pid_t pid = -1;
  int fd = -1;
  size_t index = 0;
  std::string data;
  Clock::time_point start;
};

RunningTest startTest(const fs::path& testDirectory, size_t index, double timeoutSeconds) {
  int fds[2];
  if (pipe(fds) != 0) qFatal("pipe failed: %s", std::strerror(errno));
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) qFatal("fork failed: %s", std::strerror(errno));
  if (pid == 0) {
    close(fds[0]);
    // A child outliving its parent (killed by CTest's timeout) or its own time limit dies.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    alarm(unsigned(timeoutSeconds) + 10);
    // One thread per test: the tests already run two at a time on two cores.
    tessel::runtime::ThreadPool::global().setNumThreads(1);
    std::string result = runOneTest(testDirectory);
    for (size_t written = 0; written < result.size();) {
      ssize_t n = write(fds[1], result.data() + written, result.size() - written);
      if (n <= 0) break;
      written += size_t(n);
    }
    // No destructors or Qt clean-up in the child: the parent owns all of that.
    _exit(0);
  }
  close(fds[1]);
  RunningTest running;
  running.pid = pid;
  running.fd = fds[0];
  running.index = index;
  running.start = Clock::now();
  return running;
}

TestResult finishTest(RunningTest& running, bool timedOut, double timeoutSeconds) {
  TestResult result;
  result.seconds = std::chrono::duration<double>(Clock::now() - running.start).count();
  int status = 0;
  if (timedOut) kill(running.pid, SIGKILL);
  waitpid(running.pid, &status, 0);
  close(running.fd);
  if (timedOut) {
    result.outcome = Outcome::Timeout;
    result.message = "did not finish in " + std::to_string(int(timeoutSeconds)) + " s";
  } else if (!running.data.empty()) {
    result.outcome = Outcome(running.data[0]);
    result.message = oneLine(running.data.substr(1));
  } else if (WIFSIGNALED(status)) {
    result.outcome = Outcome::Crash;
    result.message = std::string("crashed: ") + strsignal(WTERMSIG(status));
  } else {
    result.outcome = Outcome::Crash;
    result.message = "exited with status " + std::to_string(WEXITSTATUS(status)) + " without a result";
  }
  return result;
}

const char* outcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::Pass: return "pass";
    case Outcome::Mismatch: return "wrong result";
    case Outcome::Error: return "error";
    case Outcome::Internal: return "internal error";
    case Outcome::Crash: return "crash";
    case Outcome::Timeout: return "timeout";
  }
  return "?";
}

// Runs `tests`, `jobs` at a time; prints one line per test as it
// finishes: PASS, FAIL (with what went wrong), SKIP (a listed test failing, with the list's
// reason and the failure) or FIXED (a listed test passing). scripts/conformance.sh reads them.
std::map<std::string, TestResult> runTests(const std::vector<TestCase>& tests, int jobs, double timeoutSeconds,
                                           const std::map<std::string, std::string>& skipped) {
  std::map<std::string, TestResult> results;
  std::vector<RunningTest> running;
  size_t next = 0;
  while (next < tests.size() || !running.empty()) {
    while (int(running.size()) < jobs && next < tests.size()) {
      running.push_back(startTest(tests[next].directory(), next, timeoutSeconds));
      ++next;
    }
    std::vector<pollfd> fds;
    for (auto& test : running) fds.push_back({test.fd, POLLIN, 0});
    poll(fds.data(), fds.size(), 200);
    for (size_t i = running.size(); i-- > 0;) {
      RunningTest& test = running[i];
      bool finished = false;
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
        char buffer[4096];
        ssize_t n = read(test.fd, buffer, sizeof buffer);
        if (n > 0) test.data.append(buffer, size_t(n));
        else finished = true;  // end of file: the child has exited
      }
      double elapsed = std::chrono::duration<double>(Clock::now() - test.start).count();
      bool timedOut = !finished && elapsed > timeoutSeconds;
      if (!finished && !timedOut) continue;
      TestResult result = finishTest(test, timedOut, timeoutSeconds);
      const std::string name = tests[test.index].id();
      bool passed = result.outcome == Outcome::Pass;
      auto listed = skipped.find(name);
      std::string failure = std::string(outcomeName(result.outcome)) + ": " + result.message;
      if (listed == skipped.end() && passed) std::printf("PASS %s (%.2f s)\n", name.c_str(), result.seconds);
      else if (listed == skipped.end()) std::printf("FAIL %s (%.2f s): %s\n", name.c_str(), result.seconds, failure.c_str());
      else if (passed) std::printf("FIXED %s (%.2f s): now passing, remove from skip list\n", name.c_str(), result.seconds);
      else std::printf("SKIP %s (%.2f s): %s [%s]\n", name.c_str(), result.seconds, listed->second.c_str(), failure.c_str());
      std::fflush(stdout);
      results[name] = result;
      running.erase(running.begin() + long(i));
    }
  }
  return results;
}

// TESSEL_CONFORMANCE_SHARD=i/n, or {0, 1}.
std::pair<int, int> shardFromEnvironment() {
  std::string text = environment("TESSEL_CONFORMANCE_SHARD", "0/1");
  int index = 0, count = 1;
  if (std::sscanf(text.c_str(), "%d/%d", &index, &count) != 2 || count < 1 || index < 0 || index >= count)
    qFatal("TESSEL_CONFORMANCE_SHARD must be i/n with 0 <= i < n, got '%s'", text.c_str());
  return {index, count};
}


// What one group's tests came to.
struct GroupCount {
  int passed = 0, skipped = 0, failed = 0, total = 0;
};

void printCount(const std::string& label, const GroupCount& count) {
  std::printf("conformance: %s %d passed, %d skipped, %d failed of %d (%.1f%%)\n", label.c_str(), count.passed,
              count.skipped, count.failed, count.total, count.total ? 100.0 * count.passed / count.total : 0.0);
}

}  // namespace

class TestOnnxNode : public QObject {
  Q_OBJECT
private slots:
  // Every entry names a test that exists, once, with a reason a reader can act on.
  void skipListIsWellFormed() {
    QVERIFY2(fs::exists(kSkipListPath), qPrintable(QString::fromStdString(kSkipListPath.string()) + " is missing"));
    auto entries = readSkipList(kSkipListPath);
    std::map<std::string, int> seen;
    QStringList problems;
    for (auto& entry : entries) {
      QString where = QString("skip_list.txt:%1: ").arg(entry.line);
      QString test = QString::fromStdString(entry.test);
      std::string group = entry.test.substr(0, entry.test.find('/'));
      if (entry.reason.size() < 8) problems << where + test + " has no reason";
      if (seen.count(entry.test))
        problems << where + test + " is listed again (first at line " + QString::number(seen[entry.test]) + ")";
      seen[entry.test] = entry.line;
      if (std::find(kGroups.begin(), kGroups.end(), group) == kGroups.end())
        problems << where + test + ": '" + QString::fromStdString(group) +
                        "' is no group (node, pytorch-converted, pytorch-operator, simple)";
      else if (fs::is_directory(dataDirectory() / group) && !fs::exists(dataDirectory() / entry.test / "model.onnx"))
        problems << where + test + " is not a test in " + QString::fromStdString((dataDirectory() / group).string());
    }
    QVERIFY2(problems.isEmpty(), qPrintable(problems.join('\n')));
  }

  void backendTestsPassOrAreSkippedWithAReason() {
    auto [shard, shardCount] = shardFromEnvironment();
    std::string filter = environment("TESSEL_CONFORMANCE_FILTER", "");
    int jobs = std::max(1, std::atoi(environment("TESSEL_CONFORMANCE_JOBS", "2").c_str()));
    double timeout = std::max(1.0, std::atof(environment("TESSEL_CONFORMANCE_TIMEOUT", "120").c_str()));

    std::vector<std::string> groups = selectedGroups(), missing;
    std::vector<TestCase> tests;
    for (const std::string& group : groups) {
      std::vector<TestCase> all = listTests(group);
      if (all.empty()) missing.push_back(group);
      for (size_t i = 0; i < all.size(); ++i)
        if (int(i % size_t(shardCount)) == shard && all[i].id().find(filter) != std::string::npos)
          tests.push_back(all[i]);
    }
    if (missing.size() == groups.size())
      QSKIP(qPrintable("the ONNX backend tests are not installed (" + QString::fromStdString(dataDirectory().string()) +
                       "; Debian package libonnx-testdata)"));
    for (auto& group : missing) std::printf("conformance: group %s is not installed, not run\n", group.c_str());
    QVERIFY2(!tests.empty(), "no test selected (check TESSEL_CONFORMANCE_SHARD and TESSEL_CONFORMANCE_FILTER)");
    std::map<std::string, std::string> skipped;
    for (auto& entry : readSkipList(kSkipListPath)) skipped[entry.test] = entry.reason;

    auto results = runTests(tests, jobs, timeout, skipped);

    std::map<std::string, GroupCount> counts;
    GroupCount total;
    QStringList failures, nowPassing;
    std::map<std::string, int> failuresByOutcome;
    for (const TestCase& test : tests) {
      const TestResult& result = results[test.id()];
      GroupCount& count = counts[test.group];
      ++count.total;
      bool listed = skipped.count(test.id()) != 0;
      if (result.outcome == Outcome::Pass) {
        ++count.passed;
        if (listed) nowPassing << QString::fromStdString(test.id());
      } else if (listed) {
        ++count.skipped;
      } else {
        ++count.failed;
        ++failuresByOutcome[outcomeName(result.outcome)];
        failures << QString::fromStdString(test.id() + ": " + outcomeName(result.outcome) + ": " + result.message);
      }
    }
    std::string shardText =
        shardCount > 1 ? " (shard " + std::to_string(shard) + "/" + std::to_string(shardCount) + ")" : "";
    for (const std::string& group : groups) {
      if (!counts.count(group)) continue;
      const GroupCount& count = counts[group];
      total.passed += count.passed;
      total.skipped += count.skipped;
      total.failed += count.failed;
      total.total += count.total;
      printCount(group + shardText, count);
    }
    printCount("total" + shardText, total);
    for (auto& [outcome, count] : failuresByOutcome) std::printf("  failed with %s: %d\n", outcome.c_str(), count);
    std::fflush(stdout);

    QStringList problems;
    if (!failures.isEmpty())
      problems << QString("%1 tests fail and are not on the skip list:\n  ").arg(failures.size()) +
                      failures.join("\n  ");
    if (!nowPassing.isEmpty())
      problems << QString("%1 tests on the skip list now pass, remove them from tests/conformance/skip_list.txt:\n  ")
                          .arg(nowPassing.size()) +
                      nowPassing.join("\n  ");
    QVERIFY2(problems.isEmpty(), qPrintable(problems.join('\n')));
  }
};

QTEST_GUILESS_MAIN(TestOnnxNode)
#include "test_onnx_node.moc"
