// Tuning records and record files: a record survives a write and a read with every field, each
// kind of bad line is skipped and reported with its line number, and appending loses nothing
// already written: not when the session is killed mid-write, not when the disk is full.
#include <QTemporaryDir>
#include <QtTest>

#include <csignal>
#include <random>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include "RecordsTestSupport.h"
#include "tuner/records/RecordFile.h"

using namespace tessel::tuner;
using namespace testing;
using tessel::Status;

Q_DECLARE_METATYPE(tessel::tuner::TuningRecord)

namespace {

// The JSON of a valid record with the field at `pointer` ("/result/median_ms") replaced by
// `value` (JSON text), or removed when `value` is empty.
QString withField(const std::string& pointer, const std::string& value,
                  const TuningRecord& valid = measured(kConv, 2.5)) {
  nlohmann::json json = nlohmann::json::parse(toJsonLine(valid));
  nlohmann::json::json_pointer at(pointer);
  if (value.empty())
    json[at.parent_pointer()].erase(at.back());
  else
    json[at] = nlohmann::json::parse(value);
  return QString::fromStdString(json.dump());
}

QString describe(const std::vector<RecordProblem>& problems) {
  QStringList lines;
  for (auto& problem : problems) lines << QString::fromStdString(problem.describe());
  return lines.join('\n');
}

}  // namespace

class TestRecords : public QObject {
  Q_OBJECT

  QTemporaryDir directory_;
  QString file(const QString& name) const { return directory_.filePath(name); }

private slots:
  void initTestCase() { QVERIFY(directory_.isValid()); }

  void roundTrip_data() {
    QTest::addColumn<TuningRecord>("record");
    TuningRecord full = measured(kConv, 0.123456789);
    full.origin = RecordOrigin::Confirm;
    full.round = 7;
    full.prediction = -1.25e-3;
    QTest::newRow("success, every field") << full;
    TuningRecord noGflops = measured(kDense, 3);
    std::get<MeasuredTime>(noGflops.outcome).gflops.reset();
    noGflops.task.clear();
    noGflops.round = 0;
    QTest::newRow("success, no gflops, no task") << noGflops;
    QTest::newRow("failure") << failed(kConv, kTarget, MeasureErrorKind::WrongResult);
    QTest::newRow("trace with newlines, quotes, backslashes, tabs")
        << measured(kConv, 1, kTarget, RecordOrigin::Random,
                    "split(i, 8)\n\treorder(\"i.outer\", j)\n# a \\ comment\r\nvectorize(i.inner)\n");
    QTest::newRow("unicode") << measured(kConv, 1, kTarget, RecordOrigin::Control,
                                         "# écart → ∑ 漢字 🙂\nsplit(i, 4)");
    QTest::newRow("empty trace (the default schedule)") << measured(kConv, 1, kTarget, RecordOrigin::Default, "");
    for (auto kind : {MeasureErrorKind::Lower, MeasureErrorKind::Build, MeasureErrorKind::Crash,
                      MeasureErrorKind::Timeout, MeasureErrorKind::Runtime}) {
      TuningRecord record = failed(kDense, kTarget, kind);
      std::get<MeasureFailure>(record.outcome).message = "it said \"no\"\nand stopped";
      QTest::newRow(("error kind " + std::string(errorKindName(kind))).c_str()) << record;
    }
  }
  void roundTrip() {
    QFETCH(TuningRecord, record);
    std::string line = toJsonLine(record);
    QVERIFY2(line.find('\n') == std::string::npos, line.c_str());
    auto parsed = parseRecordLine(line);
    QVERIFY2(parsed.ok(), parsed.ok() ? "" : parsed.error().toString().c_str());
    QVERIFY2(*parsed == record, line.c_str());
  }

  // The format users read in Records.md: these names, in this order.
  void writesTheDocumentedFormat() {
    TuningRecord record = measured(kDense, 2, "llvm -cores=2", RecordOrigin::Search, "split(i, 8)\nvectorize(i.inner)");
    record.outcome = MeasuredTime{2, 1.5, 3, 10, 4.5};
    record.prediction = 0.75;
    QCOMPARE(toJsonLine(record),
             std::string(R"j({"version":1,"workload":"dense|in=1x512:float32|w=1000x512",)j"
                         R"j("workload_hash":"fedcba9876543210","task":"fused_Dense_7","target":"llvm -cores=2",)j"
                         R"j("trace":"split(i, 8)\nvectorize(i.inner)","origin":"search","round":1,"prediction":0.75,)j"
                         R"j("result":{"median_ms":2.0,"min_ms":1.5,"max_ms":3.0,"repeats":10,"gflops":4.5},)j"
                         R"j("time":"2026-11-25T12:34:56Z"})j"));
    record.outcome = MeasureFailure{MeasureErrorKind::Timeout, "over 10 s"};
    record.prediction.reset();
    std::string line = toJsonLine(record);
    QVERIFY2(line.find(R"j("round":1,"error":{"kind":"timeout","message":"over 10 s"},"time")j") != std::string::npos,
             line.c_str());
  }

  void corruptLineIsSkippedWithItsLineNumber_data() {
    QTest::addColumn<QString>("line");
    QTest::addColumn<QString>("message");
    QTest::newRow("not JSON") << R"({"version": 1, "workload": )"
                              << "not valid JSON at column 28: unexpected end of input";
    QTest::newRow("an array") << "[1, 2]"
                              << "not a JSON object but array";
    QTest::newRow("median missing") << withField("/result/median_ms", "") << "field 'result.median_ms': missing";
    QTest::newRow("median not a number") << withField("/result/median_ms", R"("fast")")
                                         << "field 'result.median_ms': expected a number";
    QTest::newRow("median negative") << withField("/result/median_ms", "-1")
                                     << "field 'result.median_ms': expected a number of at least 0, got -1";
    QTest::newRow("median too large") << withField("/result/median_ms", "2.5").replace("2.5", "1e999")
                                      << "not valid JSON: number overflow parsing '1e999'";
    QTest::newRow("repeats zero") << withField("/result/repeats", "0") << "field 'result.repeats': expected an integer";
    QTest::newRow("unknown origin") << withField("/origin", R"("guess")")
                                    << "field 'origin': expected one of default, search, random, control, confirm, "
                                       "got 'guess'";
    QTest::newRow("unknown error kind") << withField("/error/kind", R"("oops")", failed(kConv))
                                        << "field 'error.kind': expected one of lower, build, wrong_result, crash";
    QTest::newRow("result and error") << withField("/error", R"({"kind": "crash", "message": ""})")
                                      << "field 'result': a record has either 'result' or 'error', not both";
    QTest::newRow("neither result nor error") << withField("/result", "") << "field 'result': missing";
    QTest::newRow("result not an object") << withField("/result", "2.5") << "field 'result': expected an object";
    QTest::newRow("short hash") << withField("/workload_hash", R"("12ab")")
                                << "field 'workload_hash': expected 16 hex digits, got '12ab'";
    QTest::newRow("empty workload") << withField("/workload", R"("")") << "field 'workload': is empty";
    QTest::newRow("trace missing") << withField("/trace", "") << "field 'trace': missing";
    QTest::newRow("local time") << withField("/time", R"("2026-11-25 12:34:56")")
                                << "field 'time': expected a UTC time such as 2026-11-25T12:34:56Z";
    QTest::newRow("version a string") << withField("/version", R"("1")") << "field 'version': expected an integer";
    QTest::newRow("round negative") << withField("/round", "-2") << "field 'round': expected an integer of at least 0";
  }
  void corruptLineIsSkippedWithItsLineNumber() {
    QFETCH(QString, line);
    QFETCH(QString, message);
    auto direct = parseRecordLine(line.toStdString());
    QVERIFY(!direct);
    QVERIFY2(QString::fromStdString(direct.error().message).contains(message), direct.error().message.c_str());

    QString path = file("corrupt.jsonl");
    writeText(path, toJsonLine(measured(kConv, 1)) + "\n\n" + line.toStdString() + "\n" +
                        toJsonLine(measured(kDense, 2)) + "\n");
    auto contents = readRecordFile(path.toStdString());
    QVERIFY(contents);
    QCOMPARE(contents->records.size(), size_t(2));
    QCOMPARE(contents->records[1].workload, kDense);
    QCOMPARE(contents->problems.size(), size_t(1));
    QCOMPARE(contents->problems[0].kind, RecordProblem::Kind::Corrupt);
    QCOMPARE(contents->problems[0].lineNumber, 3);  // line 2 is blank
    QVERIFY2(describe(contents->problems).startsWith("line 3: " + message), qPrintable(describe(contents->problems)));
  }

  // Whatever a damaged file holds, reading it reports a problem and never throws.
  void damagedLinesNeverThrow() {
    std::string valid = toJsonLine(measured(kConv, 2.5));
    std::mt19937 random(7);
    int refused = 0;
    for (int trial = 0; trial < 5000; ++trial) {
      std::string line = valid;
      for (int flips = 1 + int(random() % 3); flips > 0; --flips) {
        size_t at = random() % line.size();
        switch (random() % 4) {
          case 0:
            line[at] = char(random() % 256);
            break;
          case 1:
            line.erase(at, 1 + random() % 8);
            break;
          case 2:
            line.insert(at, std::string(1 + random() % 3, "{}[]\",:0e9-\xff"[random() % 12]));
            break;
          default:
            line.resize(at);
            break;
        }
        if (line.empty()) line.push_back('x');
      }
      try {
        if (!parseRecordLine(line)) ++refused;
      } catch (const std::exception& error) {
        QFAIL(qPrintable(QString("line %1 threw %2").arg(QString::fromStdString(line), error.what())));
      }
    }
    QVERIFY2(refused > 4000, qPrintable(QString::number(refused)));  // most damage is noticed
  }

  void windowsLineEndingsAndBlankLinesAreRead() {
    QString path = file("crlf.jsonl");
    writeText(path, "\r\n" + toJsonLine(measured(kConv, 1)) + "\r\n   \n" + toJsonLine(measured(kDense, 2)) + "\r\n");
    auto contents = readRecordFile(path.toStdString());
    QVERIFY(contents);
    QCOMPARE(contents->records.size(), size_t(2));
    QVERIFY2(contents->problems.empty(), qPrintable(describe(contents->problems)));
  }

  void truncatedLastLineIsIncomplete() {
    std::string text = linesOf({measured(kConv, 1), measured(kConv, 2), measured(kDense, 3)});
    std::string last = toJsonLine(measured(kDense, 4));
    QString path = file("truncated.jsonl");
    writeText(path, text + last.substr(0, last.size() / 2));
    auto contents = readRecordFile(path.toStdString());
    QVERIFY(contents);
    QCOMPARE(contents->records.size(), size_t(3));
    QCOMPARE(contents->problems.size(), size_t(1));
    QCOMPARE(contents->problems[0].kind, RecordProblem::Kind::Incomplete);
    QCOMPARE(contents->problems[0].describe(),
             std::string("line 4 is incomplete: the session writing it was stopped mid-write; it is ignored"));

    // A last line without its newline that is nevertheless whole is a record.
    writeText(path, text + last);
    contents = readRecordFile(path.toStdString());
    QCOMPARE(contents->records.size(), size_t(4));
    QVERIFY(contents->problems.empty());
  }

  void newerVersionIsReportedOnce() {
    nlohmann::json newer = nlohmann::json::parse(toJsonLine(measured(kConv, 1)));
    newer["version"] = 2;
    newer["result"] = "a shape this tessel does not know";
    QString path = file("newer.jsonl");
    writeText(path, linesOf({measured(kConv, 1), measured(kDense, 1)}) + newer.dump() + "\n" +
                        linesOf({measured(kConv, 2)}) + newer.dump() + "\n");
    auto contents = readRecordFile(path.toStdString());
    QVERIFY(contents);
    QCOMPARE(contents->records.size(), size_t(3));
    QCOMPARE(contents->newerVersionRecords, 2);
    QCOMPARE(contents->problems.size(), size_t(1));
    QCOMPARE(contents->problems[0].kind, RecordProblem::Kind::NewerVersion);
    QCOMPARE(contents->problems[0].describe(),
             std::string("line 3: records of version 2 need a newer tessel (2 such records skipped)"));
  }

  void missingFileIsADiagnosticAndEmptyFileHasNoRecords() {
    std::string missing = file("missing.jsonl").toStdString();
    auto contents = readRecordFile(missing);
    QVERIFY(!contents);
    QCOMPARE(contents.error().location, missing);
    QVERIFY2(contents.error().message.find("no such record file") != std::string::npos,
             contents.error().message.c_str());
    QVERIFY(!readRecordFile(directory_.path().toStdString()));

    writeText(file("empty.jsonl"), "");
    contents = readRecordFile(file("empty.jsonl").toStdString());
    QVERIFY(contents);
    QVERIFY(contents->records.empty() && contents->problems.empty());
  }

  void writerCreatesAndAppends() {
    std::string path = file("appended.jsonl").toStdString();
    std::vector<TuningRecord> records = {measured(kConv, 3), failed(kConv), measured(kDense, 1)};
    {
      auto writer = RecordWriter::open(path);
      QVERIFY2(writer, writer ? "" : writer.error().toString().c_str());
      for (int i = 0; i < 2; ++i) QVERIFY(writer->append(records[i]));
    }
    auto writer = RecordWriter::open(path);  // a later session
    QVERIFY(writer);
    QVERIFY(writer->append(records[2]));
    QCOMPARE(readText(QString::fromStdString(path)), linesOf(records));
  }

  // A session killed while writing left half a line; the next one appends after it.
  void writerAppendsAfterATornLastLine() {
    QString path = file("torn.jsonl");
    std::string half = toJsonLine(measured(kDense, 9)).substr(0, 40);
    std::string before = linesOf({measured(kConv, 1), measured(kConv, 2)}) + half;
    writeText(path, before);
    {
      auto writer = RecordWriter::open(path.toStdString());
      QVERIFY(writer);
      QVERIFY(writer->append(measured(kDense, 3)));
      QVERIFY(writer->append(measured(kDense, 4)));
    }
    QCOMPARE(readText(path), before + "\n" + linesOf({measured(kDense, 3), measured(kDense, 4)}));
    auto contents = readRecordFile(path.toStdString());
    QCOMPARE(contents->records.size(), size_t(4));
    QCOMPARE(contents->problems.size(), size_t(1));  // the torn line, now a whole (corrupt) line
    QCOMPARE(contents->problems[0].lineNumber, 3);
    QCOMPARE(contents->problems[0].kind, RecordProblem::Kind::Corrupt);
  }

  // A real kill: every append that returned before the SIGKILL is in the file, in order.
  void sessionKilledWhileAppendingLosesNothingAppended() {
    std::string path = file("killed.jsonl").toStdString();
    int acknowledgements[2];
    QVERIFY(::pipe(acknowledgements) == 0);
    pid_t child = ::fork();
    QVERIFY(child >= 0);
    if (child == 0) {
      ::close(acknowledgements[0]);
      auto writer = RecordWriter::open(path);
      for (int round = 0; writer; ++round) {
        TuningRecord record = measured(kConv, 1 + round % 7, kTarget, RecordOrigin::Search,
                                       std::string(1000 + round % 300, 'x'));  // lines of varying length
        record.round = round;
        if (!writer->append(record)) ::_exit(3);
        if (::write(acknowledgements[1], &round, sizeof round) != sizeof round) ::_exit(4);
      }
      ::_exit(5);
    }
    ::close(acknowledgements[1]);
    int acknowledged = -1, round = 0;
    while (acknowledged < 50 && ::read(acknowledgements[0], &round, sizeof round) == sizeof round) acknowledged = round;
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    while (::read(acknowledgements[0], &round, sizeof round) == sizeof round) acknowledged = round;
    ::close(acknowledgements[0]);
    QVERIFY(WIFSIGNALED(status));

    auto contents = readRecordFile(path);
    QVERIFY(contents);
    QVERIFY2(int(contents->records.size()) >= acknowledged + 1,
             qPrintable(QString("%1 records, %2 acknowledged").arg(contents->records.size()).arg(acknowledged + 1)));
    for (size_t i = 0; i < contents->records.size(); ++i) QCOMPARE(contents->records[i].round, int(i));
    // Only the last line may be cut short.
    for (auto& problem : contents->problems) QCOMPARE(problem.kind, RecordProblem::Kind::Incomplete);
  }

  void writerOnAFullDiskSaysSo() {
    auto writer = RecordWriter::open("/dev/full");
    QVERIFY2(writer, writer ? "" : writer.error().toString().c_str());
    Status appended = writer->append(measured(kConv, 1));
    QVERIFY(!appended);
    QCOMPARE(appended.error().location, std::string("/dev/full"));
    QCOMPARE(appended.error().message, "cannot append a tuning record: " + std::string(std::strerror(ENOSPC)));
    QVERIFY2(appended.error().hint.find("free some disk space") != std::string::npos, appended.error().hint.c_str());
  }

  // A write cut short (here by the file size limit, as a nearly full disk would) leaves the
  // file exactly as it was, and the next append goes on from there.
  void shortWriteLeavesEarlierLinesIntact() {
    QString path = file("limited.jsonl");
    std::string before = linesOf({measured(kConv, 1), measured(kConv, 2)});
    writeText(path, before);
    auto writer = RecordWriter::open(path.toStdString());
    QVERIFY(writer);

    rlimit original{};
    QVERIFY(::getrlimit(RLIMIT_FSIZE, &original) == 0);
    auto oldHandler = std::signal(SIGXFSZ, SIG_IGN);
    rlimit limited = original;
    limited.rlim_cur = before.size() + 20;  // room for part of the next line only
    QVERIFY(::setrlimit(RLIMIT_FSIZE, &limited) == 0);
    Status appended = writer->append(measured(kDense, 3));
    ::setrlimit(RLIMIT_FSIZE, &original);
    std::signal(SIGXFSZ, oldHandler);

    QVERIFY(!appended);
    QCOMPARE(appended.error().message, "cannot append a tuning record: " + std::string(std::strerror(EFBIG)));
    QCOMPARE(readText(path), before);
    QVERIFY(writer->append(measured(kDense, 4)));
    QCOMPARE(readText(path), before + linesOf({measured(kDense, 4)}));
  }

  void writerRefusesARecordTheReaderWouldRefuse() {
    QString path = file("invalid.jsonl");
    auto writer = RecordWriter::open(path.toStdString());
    QVERIFY(writer);
    TuningRecord record = measured(kConv, 1);
    record.time = "yesterday";
    Status appended = writer->append(record);
    QVERIFY(!appended);
    QVERIFY2(appended.error().message.find("field 'time'") != std::string::npos, appended.error().message.c_str());
    QCOMPARE(readText(path), std::string());
  }

  void openingInAMissingDirectoryNamesTheFile() {
    std::string path = file("no/such/dir/records.jsonl").toStdString();
    auto writer = RecordWriter::open(path);
    QVERIFY(!writer);
    QCOMPARE(writer.error().location, path);
    QVERIFY2(writer.error().message.find(std::strerror(ENOENT)) != std::string::npos, writer.error().message.c_str());
  }

  void timestampsAreUtcWholeSeconds() {
    using namespace std::chrono;
    sys_seconds when = sys_days{year{2026} / 11 / 25} + hours{12} + minutes{34} + seconds{56};
    QCOMPARE(utcTimestamp(when + milliseconds{789}), std::string("2026-11-25T12:34:56Z"));
    TuningRecord record = measured(kConv, 1);
    record.time = utcTimestamp();
    QVERIFY(parseRecordLine(toJsonLine(record)));
  }
};

QTEST_GUILESS_MAIN(TestRecords)
#include "test_records.moc"
