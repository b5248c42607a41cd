// The database of best schedules and record file maintenance: best() picks the fastest valid
// record for exactly the asked target, a lookup says what a model takes and what it ignores,
// merge drops repeated measurements, prune keeps the fastest and never leaves a partial file.
#include <QDir>
#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <csignal>
#include <thread>

#include <sys/resource.h>

#include "RecordsTestSupport.h"
#include "tuner/records/RecordMaintenance.h"
#include "tuner/records/TuningDatabase.h"

using namespace tessel::tuner;
using namespace testing;

Q_DECLARE_METATYPE(std::vector<tessel::tuner::TuningRecord>)

namespace {

const std::string kOtherTarget = "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=skylake-avx512 -cores=8";
// The same as kTarget but for the cores: a different target, as records match by exact string.
const std::string kFourCores =
    "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=znver3 -mattr=+avx2,+fma -vector-bits=256 -cores=4";

TuningRecord withTrace(TuningRecord record, const std::string& trace) {
  record.trace = trace;
  return record;
}

TuningRecord withTime(TuningRecord record, const std::string& time) {
  record.time = time;
  return record;
}

std::vector<double> mediansOf(const std::vector<TuningRecord>& records) {
  std::vector<double> medians;
  for (auto& record : records) medians.push_back(record.result() ? record.result()->medianMs : -1);
  return medians;
}

}  // namespace

class TestRecordsDatabase : public QObject {
  Q_OBJECT

  QTemporaryDir directory_;
  QString file(const QString& name) const { return directory_.filePath(name); }

private slots:
  void initTestCase() { QVERIFY(directory_.isValid()); }

  void bestIsTheFastestValidRecordForExactlyThatTarget_data() {
    QTest::addColumn<std::vector<TuningRecord>>("records");
    QTest::addColumn<QString>("expectedTrace");  // empty: no best
    QTest::newRow("fastest of several") << std::vector{withTrace(measured(kConv, 3), "a"),
                                                       withTrace(measured(kConv, 1.5), "b"),
                                                       withTrace(measured(kConv, 2), "c")}
                                        << "b";
    QTest::newRow("failures never win") << std::vector{withTrace(failed(kConv), "crashed"),
                                                       withTrace(measured(kConv, 9), "slow")}
                                        << "slow";
    QTest::newRow("only failures") << std::vector{failed(kConv), failed(kConv, kTarget, MeasureErrorKind::Timeout)}
                                   << "";
    QTest::newRow("other targets ignored")
        << std::vector{withTrace(measured(kConv, 0.1, kOtherTarget), "skylake"),
                       withTrace(measured(kConv, 0.2, kFourCores), "four cores"), withTrace(measured(kConv, 5), "ours")}
        << "ours";
    QTest::newRow("other workloads ignored")
        << std::vector{withTrace(measured(kDense, 0.1), "dense"), withTrace(measured(kConv, 5), "conv")} << "conv";
    QTest::newRow("a tie keeps the earlier")
        << std::vector{withTrace(measured(kConv, 2), "first"), withTrace(measured(kConv, 2), "second")} << "first";
    QTest::newRow("any origin may be best")
        << std::vector{withTrace(measured(kConv, 2, kTarget, RecordOrigin::Search), "search"),
                       withTrace(measured(kConv, 1, kTarget, RecordOrigin::Default), "default")}
        << "default";
  }
  void bestIsTheFastestValidRecordForExactlyThatTarget() {
    QFETCH(std::vector<TuningRecord>, records);
    QFETCH(QString, expectedTrace);
    TuningDatabase database(records);
    const TuningRecord* best = database.best(kConv, kTarget);
    QCOMPARE(best ? QString::fromStdString(best->trace) : QString(), expectedTrace);
  }

  // A session ends by measuring its top candidates in turns; their confirmations decide, not
  // one lucky sample of the search.
  void confirmationsDecideOverASingleFasterSample() {
    auto confirm = [](const std::string& trace, double ms) {
      return withTrace(measured(kConv, ms, kTarget, RecordOrigin::Confirm), trace);
    };
    TuningDatabase database({withTrace(measured(kConv, 0.5, kTarget, RecordOrigin::Search), "lucky"),
                             confirm("lucky", 2.0), confirm("steady", 1.2), confirm("lucky", 2.1),
                             confirm("steady", 1.3), confirm("lucky", 0.9), confirm("steady", 1.25)});
    // lucky: confirmations 0.9, 2.0, 2.1 (median 2.0); steady: 1.2, 1.25, 1.3 (median 1.25).
    const TuningRecord* best = database.best(kConv, kTarget);
    QVERIFY(best);
    QCOMPARE(best->trace, std::string("steady"));
    QCOMPARE(best->result()->medianMs, 1.25);
    QCOMPARE(database.bestForTarget(kTarget).front()->trace, std::string("steady"));
    // Its speedup compares it with the default as re-measured beside it, not with the
    // default's luckiest sample.
    TuningDatabase withDefault({withTrace(measured(kConv, 1.0, kTarget, RecordOrigin::Default), "default"),
                                confirm("steady", 1.2), confirm("default", 2.4), confirm("steady", 1.2),
                                confirm("default", 2.4)});
    auto statistics = withDefault.statistics();
    QCOMPARE(statistics.size(), size_t(1));
    QCOMPARE(statistics[0].best->trace, std::string("steady"));
    QCOMPARE(*statistics[0].defaultMedianMs, 2.4);
    QCOMPARE(*statistics[0].speedupOverDefault(), 2.0);
    // Without confirmations the fastest record is the best.
    TuningDatabase unconfirmed({withTrace(measured(kConv, 0.5, kTarget, RecordOrigin::Search), "lucky"),
                                withTrace(measured(kConv, 1.2, kTarget, RecordOrigin::Search), "steady")});
    QCOMPARE(unconfirmed.best(kConv, kTarget)->trace, std::string("lucky"));
  }

  void bestForTargetListsOnePerWorkload() {
    TuningDatabase database({measured(kDense, 4), measured(kConv, 3), measured(kDense, 2), failed(kConv),
                             measured(kConv, 1, kOtherTarget)});
    std::vector<const TuningRecord*> best = database.bestForTarget(kTarget);
    QCOMPARE(best.size(), size_t(2));
    QCOMPARE(best[0]->workload, kConv);  // ordered by key
    QCOMPARE(best[0]->result()->medianMs, 3.0);
    QCOMPARE(best[1]->result()->medianMs, 2.0);
    QCOMPARE(database.bestForTarget(kOtherTarget).size(), size_t(1));
    QVERIFY(database.bestForTarget(kFourCores).empty());
    QCOMPARE(database.targets(), (std::vector<std::string>{kOtherTarget, kTarget}));  // sorted
  }

  void pointersStayValidAsRecordsAreAdded() {
    TuningDatabase database;
    database.add(measured(kConv, 1));
    const TuningRecord* best = database.best(kConv, kTarget);
    for (int i = 0; i < 10000; ++i) database.add(measured(kDense, 2 + i));
    QCOMPARE(database.best(kConv, kTarget), best);
    QCOMPARE(best->result()->medianMs, 1.0);
  }

  void lookupSaysWhatAModelTakesAndWhatItIgnores() {
    const std::string kPool = "pool2d|in=1x64x56x56:float32:NCHW|k=3";
    const std::string kSoftmax = "softmax|in=1x1000:float32";
    TuningDatabase database({measured(kConv, 1), measured(kConv, 2), failed(kDense),  // dense: no valid record
                             measured(kSoftmax, 1), failed(kSoftmax),                 // not in the model
                             measured(kConv, 0.5, kOtherTarget), measured(kPool, 1, kOtherTarget),
                             measured(kConv, 0.7, kFourCores)});
    LookupReport report = database.lookup({kConv, kDense, kPool}, kTarget);
    QCOMPARE(report.appliedKeys, std::vector<std::string>{kConv});
    QCOMPARE(report.otherTargetRecords, 3);
    QCOMPARE(report.otherTargets, (std::vector<std::string>{kOtherTarget, kFourCores}));
    QCOMPARE(report.unknownWorkloadRecords, 2);
  }

  void statisticsPerWorkload() {
    TuningDatabase database({measured(kConv, 4, kTarget, RecordOrigin::Default), measured(kConv, 2), failed(kConv),
                             measured(kConv, 1), measured(kConv, 5, kTarget, RecordOrigin::Default), failed(kDense),
                             measured(kDense, 3, kOtherTarget)});
    std::vector<WorkloadStatistics> statistics = database.statistics();
    QCOMPARE(statistics.size(), size_t(3));  // in the order first seen
    const WorkloadStatistics& conv = statistics[0];
    QCOMPARE(conv.workload, kConv);
    QCOMPARE(conv.task, std::string("fused_Conv_Relu_3"));
    QCOMPARE(conv.trials, 5);
    QCOMPARE(conv.errors, 1);
    QCOMPARE(conv.best->result()->medianMs, 1.0);
    QCOMPARE(conv.defaultMedianMs, std::optional<double>(4));  // the faster of the two defaults
    QCOMPARE(conv.speedupOverDefault(), std::optional<double>(4));
    const WorkloadStatistics& dense = statistics[1];
    QCOMPARE(dense.trials, 1);
    QCOMPARE(dense.errors, 1);
    QVERIFY(!dense.best);
    QVERIFY(!dense.speedupOverDefault());
    QCOMPARE(statistics[2].target, kOtherTarget);
    QVERIFY(!statistics[2].speedupOverDefault());  // no default measured there
  }

  void mergeDropsRepeatedMeasurements() {
    TuningRecord a = measured(kConv, 1), b = measured(kConv, 2, kTarget, RecordOrigin::Search, "other trace");
    TuningRecord c = measured(kDense, 3);
    TuningRecord laterA = withTime(a, "2026-11-26T08:00:00Z");  // the same schedule measured again
    TuningRecord confirmA = a;
    confirmA.origin = RecordOrigin::Confirm;
    writeText(file("a.jsonl"), linesOf({a, b}));
    writeText(file("b.jsonl"), linesOf({b, c, laterA, confirmA}) + "garbage\n");
    std::string out = file("merged.jsonl").toStdString();
    auto report = mergeRecordFiles({file("a.jsonl").toStdString(), file("b.jsonl").toStdString()}, out);
    QVERIFY2(report, report ? "" : report.error().toString().c_str());
    QCOMPARE(report->recordsRead, 6);
    QCOMPARE(report->duplicatesDropped, 1);
    QCOMPARE(report->recordsWritten, 5);
    QCOMPARE(report->problems.size(), size_t(1));
    QCOMPARE(report->problems[0].path, file("b.jsonl").toStdString());
    QCOMPARE(report->problems[0].problem.lineNumber, 5);
    QCOMPARE(readText(QString::fromStdString(out)), linesOf({a, b, c, laterA, confirmA}));

    // Merging into an existing file keeps what it had.
    TuningRecord d = withTrace(measured(kDense, 0.5), "tile(i, j, 4, 4)");
    writeText(file("c.jsonl"), linesOf({d, a}));
    report = mergeRecordFiles({file("c.jsonl").toStdString()}, out);
    QVERIFY(report);
    QCOMPARE(readText(QString::fromStdString(out)), linesOf({a, b, c, laterA, confirmA, d}));
  }

  void mergeWritesNothingWhenAnInputIsMissing() {
    writeText(file("one.jsonl"), linesOf({measured(kConv, 1)}));
    std::string missing = file("missing.jsonl").toStdString();
    std::string out = file("never.jsonl").toStdString();
    auto report = mergeRecordFiles({file("one.jsonl").toStdString(), missing}, out);
    QVERIFY(!report);
    QCOMPARE(report.error().location, missing);
    QVERIFY(!QFile::exists(QString::fromStdString(out)));
  }

  void mergeRefusesToRewriteAnOutputWithUnreadableLines() {
    QString out = file("damaged.jsonl");
    std::string damaged = linesOf({measured(kConv, 1)}) + "{\"version\": 1, \"workl\n";
    writeText(out, damaged);
    writeText(file("more.jsonl"), linesOf({measured(kDense, 1)}));
    auto report = mergeRecordFiles({file("more.jsonl").toStdString()}, out.toStdString());
    QVERIFY(!report);
    QVERIFY2(report.error().message.find("rewriting it would lose them") != std::string::npos,
             report.error().toString().c_str());
    QCOMPARE(readText(out), damaged);
    report = mergeRecordFiles({file("more.jsonl").toStdString()}, out.toStdString(), /*force=*/true);
    QVERIFY(report);
    QCOMPARE(readText(out), linesOf({measured(kConv, 1), measured(kDense, 1)}));
  }

  void pruneKeepsTheFastest_data() {
    QTest::addColumn<int>("keep");
    QTest::addColumn<bool>("dropErrors");
    QTest::addColumn<std::vector<double>>("kept");  // medians in file order; -1 for a failure
    QTest::newRow("keep 1") << 1 << false << std::vector<double>{4, -1, 1, 7};
    QTest::newRow("keep 2") << 2 << false << std::vector<double>{4, 2, -1, 1, 7};
    QTest::newRow("keep 1, drop errors") << 1 << true << std::vector<double>{4, 1, 7};
    QTest::newRow("keep 10") << 10 << false << std::vector<double>{4, 3, 2, -1, 1, 7};
  }
  void pruneKeepsTheFastest() {
    QFETCH(int, keep);
    QFETCH(bool, dropErrors);
    QFETCH(std::vector<double>, kept);
    // conv: default 4, then 3, 2, a failure, 1; dense on another target: 7.
    std::vector<TuningRecord> records = {measured(kConv, 4, kTarget, RecordOrigin::Default),
                                         measured(kConv, 3),
                                         measured(kConv, 2),
                                         failed(kConv),
                                         measured(kConv, 1),
                                         measured(kDense, 7, kOtherTarget)};
    PruneReport report;
    std::vector<TuningRecord> pruned = pruneRecords(records, {keep, dropErrors}, &report);
    QCOMPARE(mediansOf(pruned), kept);  // the default stays, for the speedup
    QCOMPARE(report.recordsRead, 6);
    QCOMPARE(report.recordsKept, int(kept.size()));
    QCOMPARE(report.errorsDropped, dropErrors ? 1 : 0);
    QCOMPARE(report.slowerDropped + report.errorsDropped + report.recordsKept, 6);
  }

  void pruneInPlaceIsAtomic() {
    QString path = file("prune.jsonl");
    std::vector<TuningRecord> records = {measured(kConv, 3), measured(kConv, 1), measured(kConv, 2)};
    writeText(path, linesOf(records));
    QFile::setPermissions(path, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ReadGroup);
    auto report = pruneRecordFile(path.toStdString(), path.toStdString(), {1, false, false});
    QVERIFY2(report, report ? "" : report.error().toString().c_str());
    QCOMPARE(readText(path), linesOf({measured(kConv, 1)}));
    QCOMPARE(QFile::permissions(path), QFileDevice::ReadOwner | QFileDevice::ReadUser | QFileDevice::WriteOwner |
                                           QFileDevice::WriteUser | QFileDevice::ReadGroup);
    QCOMPARE(QDir(directory_.path()).entryList({"*prune*"}, QDir::Files | QDir::Hidden), QStringList{"prune.jsonl"});

    // When the new file cannot be written whole (here: the file size limit, as a full disk
    // would), the original is untouched and no temporary file is left.
    std::string big;
    for (int i = 0; i < 200; ++i) big += linesOf({withTrace(measured(kConv, 1 + i), std::string(500, 't'))});
    writeText(path, big);
    rlimit original{};
    QVERIFY(::getrlimit(RLIMIT_FSIZE, &original) == 0);
    auto oldHandler = std::signal(SIGXFSZ, SIG_IGN);
    rlimit limited = original;
    limited.rlim_cur = 4096;
    QVERIFY(::setrlimit(RLIMIT_FSIZE, &limited) == 0);
    report = pruneRecordFile(path.toStdString(), path.toStdString(), {100, false, false});
    ::setrlimit(RLIMIT_FSIZE, &original);
    std::signal(SIGXFSZ, oldHandler);
    QVERIFY(!report);
    QCOMPARE(report.error().location, path.toStdString());
    QVERIFY2(report.error().hint.find("unchanged") != std::string::npos, report.error().toString().c_str());
    QVERIFY(readText(path) == big);
    QCOMPARE(QDir(directory_.path()).entryList({"*prune*"}, QDir::Files | QDir::Hidden), QStringList{"prune.jsonl"});
  }

  void pruneInPlaceRefusesAFileWithUnreadableLines() {
    QString path = file("corrupt-prune.jsonl");
    std::string text = linesOf({measured(kConv, 3), measured(kConv, 1)}) + "not json\n";
    writeText(path, text);
    auto report = pruneRecordFile(path.toStdString(), path.toStdString(), {1, false, false});
    QVERIFY(!report);
    QCOMPARE(report.error().location, path.toStdString());
    QVERIFY2(report.error().message.find("line 3") != std::string::npos, report.error().toString().c_str());
    QCOMPARE(readText(path), text);

    // Elsewhere (-o) is fine: the input stays as it is.
    QString out = file("pruned-elsewhere.jsonl");
    report = pruneRecordFile(path.toStdString(), out.toStdString(), {1, false, false});
    QVERIFY(report);
    QCOMPARE(report->problems.size(), size_t(1));
    QCOMPARE(readText(out), linesOf({measured(kConv, 1)}));
    QCOMPARE(readText(path), text);

    report = pruneRecordFile(path.toStdString(), path.toStdString(), {1, false, /*force=*/true});
    QVERIFY(report);
    QCOMPARE(readText(path), linesOf({measured(kConv, 1)}));
  }

  // A rewrite would leave a running session appending to the replaced file: refused.
  void rewritingAFileASessionAppendsToIsRefused() {
    QString path = file("live.jsonl");
    writeText(path, linesOf({measured(kConv, 2), measured(kConv, 1)}));
    {
      auto writer = RecordWriter::open(path.toStdString());
      QVERIFY(writer);
      auto pruned = pruneRecordFile(path.toStdString(), path.toStdString(), {1, false, false});
      QVERIFY(!pruned);
      QCOMPARE(pruned.error().message, std::string("a tuning session is appending to this record file"));
      writeText(file("more.jsonl"), linesOf({measured(kDense, 1)}));
      QVERIFY(!mergeRecordFiles({file("more.jsonl").toStdString()}, path.toStdString()));
      QVERIFY(writer->append(measured(kConv, 3)));
    }
    QVERIFY(pruneRecordFile(path.toStdString(), path.toStdString(), {1, false, false}));
    QCOMPARE(readText(path), linesOf({measured(kConv, 1)}));
  }

  // A session starting during a rewrite waits for it and appends to the rewritten file.
  void aWriterOpenedDuringARewriteAppendsToTheNewFile() {
    QString path = file("rewritten.jsonl");
    writeText(path, linesOf({measured(kConv, 2), measured(kConv, 1)}));
    auto acquired = RecordRewriteLock::acquire(path.toStdString());
    QVERIFY(acquired);
    std::optional<RecordRewriteLock> lock(std::move(*acquired));
    std::atomic<bool> appended = false;
    std::thread session([&] {
      auto writer = RecordWriter::open(path.toStdString());
      appended = writer && writer->append(measured(kDense, 5));
    });
    QThread::msleep(100);
    QVERIFY(!appended);  // still waiting for the lock
    QVERIFY(writeRecordFileAtomically(path.toStdString(), {measured(kConv, 1)}));
    lock.reset();  // the rewrite is done
    session.join();
    QVERIFY(appended);
    QCOMPARE(readText(path), linesOf({measured(kConv, 1), measured(kDense, 5)}));
  }
};

QTEST_GUILESS_MAIN(TestRecordsDatabase)
#include "test_records_database.moc"
