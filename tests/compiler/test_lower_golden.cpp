// Golden lowering tests. Each tests/compiler/golden/*.test file holds a workload line, a
// schedule and the expected final loop IR, FileCheck style:
//   # workload: matmul 8 8 4
//   io, ii = split(C, i, factor=4)
//   # expect:
//   func ...
// An optional "# target: cuda -arch=sm_90" line lowers for that target (GPU steps included).
// Set TESSEL_UPDATE_GOLDEN=1 to rewrite the expectations after an intended change (then
// read the diff).
#include <QtTest>

#include <fstream>
#include <sstream>

#include "LoweringWorkloads.h"
#include "compiler/lower/Lower.h"
#include "compiler/schedule/TraceText.h"
#include "core/ir/IRPrinter.h"

using namespace tessel;

namespace {
struct GoldenFile {
  std::string workload;
  std::vector<int64_t> dims;
  std::string schedule;
  std::string expected;
  std::string header;  // everything before "# expect:"
  std::string target;  // "# target:" line; empty: the CPU
};

GoldenFile readGolden(const QString& path) {
  std::ifstream in(path.toStdString());
  std::stringstream all;
  all << in.rdbuf();
  std::string text = all.str();
  GoldenFile g;
  auto split = text.find("# expect:\n");
  g.header = text.substr(0, split);
  g.expected = split == std::string::npos ? "" : text.substr(split + 10);
  std::istringstream lines(g.header);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("# workload:", 0) == 0) {
      std::istringstream words(line.substr(11));
      words >> g.workload;
      int64_t d;
      while (words >> d) g.dims.push_back(d);
    } else if (line.rfind("# target:", 0) == 0) {
      g.target = line.substr(line.find_first_not_of(' ', 9));
    } else if (line.rfind("#", 0) != 0) {
      g.schedule += line + "\n";
    }
  }
  return g;
}
}  // namespace

class TestLowerGolden : public QObject {
  Q_OBJECT
private slots:
  void lowersToExpectedText_data() {
    QTest::addColumn<QString>("path");
    QDir dir(QString(TESSEL_SOURCE_DIR) + "/tests/compiler/golden");
    auto files = dir.entryList({"*.test"}, QDir::Files, QDir::Name);
    QVERIFY(files.size() >= 15);
    for (auto& file : files) QTest::newRow(file.toUtf8().constData()) << dir.filePath(file);
  }
  void lowersToExpectedText() {
    QFETCH(QString, path);
    GoldenFile golden = readGolden(path);
    auto workload = testing::workloadByName(golden.workload, golden.dims);
    QVERIFY2(!workload.outputs.empty(), "unknown workload line");
    auto trace = parseTraceText(golden.schedule);
    QVERIFY2(trace.ok(), trace.ok() ? "" : trace.error().toString().c_str());
    auto schedule = Schedule::replay(workload.outputs, *trace);
    QVERIFY2(schedule.ok(), schedule.ok() ? "" : schedule.error().toString().c_str());
    Target target;
    if (!golden.target.empty()) {
      auto parsed = Target::parse(golden.target);
      QVERIFY2(parsed.ok(), parsed.ok() ? "" : parsed.error().toString().c_str());
      target = *parsed;
    }
    auto lowered = lower(*schedule, workload.args(), "f", target);
    QVERIFY2(lowered.ok(), lowered.ok() ? "" : lowered.error().toString().c_str());
    std::string actual = toString(lowered->func);
    if (qEnvironmentVariableIsSet("TESSEL_UPDATE_GOLDEN")) {
      std::ofstream(path.toStdString()) << golden.header << "# expect:\n" << actual;
      return;
    }
    QCOMPARE(QString::fromStdString(actual), QString::fromStdString(golden.expected));
  }
};

QTEST_GUILESS_MAIN(TestLowerGolden)
#include "test_lower_golden.moc"
