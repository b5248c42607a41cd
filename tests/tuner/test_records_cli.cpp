// `tessel records`: show summarizes a record file per workload with the speedup over the
// default, best prints the fastest schedule, merge and prune rewrite files, and every mistake
// (missing file, unknown flag, unreadable file) exits 2 with a message naming it.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "../app/CliTestSupport.h"
#include "RecordsTestSupport.h"

using namespace tessel::tuner;
using namespace testing;

namespace {

const std::string kOtherTarget = "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=skylake-avx512 -cores=8";

QJsonObject jsonOf(const Run& run) { return QJsonDocument::fromJson(run.out.toUtf8()).object(); }

}  // namespace

class TestRecordsCli : public QObject {
  Q_OBJECT

  QTemporaryDir directory_;
  QString records_;  // conv: default 4 ms, best 1 ms, a failure; dense: 2 ms; line 4 corrupt
  QString file(const QString& name) const { return directory_.filePath(name); }

private slots:
  void initTestCase() {
    QVERIFY2(QFileInfo(kTessel).isExecutable(),
             qPrintable(kTessel + " is not built (cmake --build build --target tessel)"));
    QVERIFY(directory_.isValid());
    records_ = file("session.jsonl");
    writeText(records_, linesOf({measured(kConv, 4, kTarget, RecordOrigin::Default, "# default"),
                                 measured(kConv, 1, kTarget, RecordOrigin::Search, "split(i, 16)\nvectorize(i.inner)"),
                                 failed(kConv)}) +
                            "{\"version\": 1, \"workload\": 3}\n" + linesOf({measured(kDense, 2)}));
  }

  void showSummarizesPerWorkload() {
    QStringList arguments = {"records", "show", records_};
    Run run = runTessel(arguments);
    QVERIFY2(run.exitCode == 0, qPrintable(describe(arguments, run)));
    QVERIFY2(run.out.contains("target: " + QString::fromStdString(kTarget)), qPrintable(run.out));
    QRegularExpression conv(R"(fused_Conv_Relu_3\s+3\s+1\s+1\s+100\.0\s+4\.00x\s+conv2d\|)");
    QVERIFY2(conv.match(run.out).hasMatch(), qPrintable(run.out));
    QRegularExpression dense(R"(fused_Dense_7\s+1\s+0\s+2\s+50\.0\s+-\s+dense\|)");
    QVERIFY2(dense.match(run.out).hasMatch(), qPrintable(run.out));
    QVERIFY2(run.err.contains(records_ + ": line 4: field 'workload': expected a string"), qPrintable(run.err));

    arguments = QStringList{"records", "show", records_, "--workload", "dense", "--json"};
    run = runTessel(arguments);
    QVERIFY2(run.exitCode == 0, qPrintable(describe(arguments, run)));
    QJsonArray workloads = jsonOf(run)["workloads"].toArray();
    QCOMPARE(workloads.size(), 1);
    QCOMPARE(workloads[0].toObject()["best_ms"].toDouble(), 2.0);
    QCOMPARE(jsonOf(run)["problems"].toArray()[0].toObject()["line"].toInt(), 4);
  }

  void bestPrintsTheFastestSchedule() {
    QStringList arguments = {"records", "best", records_, "--target", QString::fromStdString(kTarget)};
    Run run = runTessel(arguments);
    QVERIFY2(run.exitCode == 0, qPrintable(describe(arguments, run)));
    QVERIFY2(
        run.out.contains("# fused_Conv_Relu_3: 1 ms, 100.0 GFLOP/s (origin search, round 1, 2026-11-25T12:34:56Z)\n"
                         "# workload: " +
                         QString::fromStdString(kConv) +
                         "\n"
                         "# target: " +
                         QString::fromStdString(kTarget) +
                         "\n"
                         "split(i, 16)\nvectorize(i.inner)\n"),
        qPrintable(run.out));

    arguments = QStringList{"records", "best", records_, "--target", QString::fromStdString(kOtherTarget)};
    run = runTessel(arguments);
    QVERIFY2(run.exitCode == 2, qPrintable(describe(arguments, run)));
    QVERIFY2(run.err.contains("no record is for the target") && run.err.contains(QString::fromStdString(kTarget)),
             qPrintable(run.err));
  }

  void mergeAndPrune() {
    QString other = file("other.jsonl"), merged = file("merged.jsonl");
    writeText(other, linesOf({measured(kDense, 2), measured(kDense, 0.5, kTarget, RecordOrigin::Random, "x")}));
    QStringList arguments = {"records", "merge", merged, records_, other};
    Run run = runTessel(arguments);
    QVERIFY2(run.exitCode == 0, qPrintable(describe(arguments, run)));
    QVERIFY2(run.out.contains("merged 5 records into " + merged + " (1 duplicates dropped)"), qPrintable(run.out));

    arguments = QStringList{"records", "prune", merged, "--keep", "1", "--drop-errors"};
    run = runTessel(arguments);
    QVERIFY2(run.exitCode == 0, qPrintable(describe(arguments, run)));
    QVERIFY2(run.out.contains("kept 3 of 5 records in " + merged + " (dropped 1 slower, 1 failed)"),
             qPrintable(run.out));

    // Pruning the file with a corrupt line in place would lose that line.
    arguments = QStringList{"records", "prune", records_, "--keep", "1"};
    run = runTessel(arguments);
    QVERIFY2(run.exitCode == 2 && run.err.contains("--force"), qPrintable(describe(arguments, run)));
  }

  void mistakesExitWithTwo_data() {
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("message");
    QString missing = QStringLiteral("/nonexistent/records.jsonl");
    QTest::newRow("missing file") << QStringList{"records", "show", missing}
                                  << missing + ": error: no such record file";
    QTest::newRow("missing input") << QStringList{"records", "merge", file("never-written.jsonl"), missing} << missing;
    QTest::newRow("unknown flag") << QStringList{"records", "best", "x.jsonl", "--fastest"} << "unknown flag --fastest";
    QTest::newRow("no file") << QStringList{"records", "show"} << "expected FILE";
    QTest::newRow("keep missing") << QStringList{"records", "prune", "x.jsonl"} << "--keep N is required";
    QTest::newRow("keep zero") << QStringList{"records", "prune", "x.jsonl", "--keep", "0"}
                               << "--keep must be at least 1";
    QTest::newRow("unknown subcommand") << QStringList{"records", "list"} << "unknown subcommand 'list'";
  }
  void mistakesExitWithTwo() {
    QFETCH(QStringList, arguments);
    QFETCH(QString, message);
    Run run = runTessel(arguments);
    QVERIFY2(run.exitCode == 2 && run.err.contains(message), qPrintable(describe(arguments, run)));
  }

  void unreadableFileExitsWithTwo() {
    QString garbage = file("garbage.jsonl");
    writeText(garbage, "not a record\nnor this\n");
    QStringList arguments = {"records", "show", garbage};
    Run run = runTessel(arguments);
    QVERIFY2(run.exitCode == 2 && run.err.contains("has no readable tuning record"),
             qPrintable(describe(arguments, run)));
    writeText(file("empty.jsonl"), "");
    arguments = QStringList{"records", "show", file("empty.jsonl")};
    run = runTessel(arguments);
    QVERIFY2(run.exitCode == 0 && run.out.contains("no records"), qPrintable(describe(arguments, run)));
  }

  void everySubcommandHasHelp() {
    for (QString subcommand : {"show", "best", "merge", "prune"}) {
      QStringList arguments = {"records", subcommand, "--help"};
      Run run = runTessel(arguments);
      QVERIFY2(run.exitCode == 0 && run.out.startsWith("usage: tessel records " + subcommand),
               qPrintable(describe(arguments, run)));
    }
  }
};

QTEST_GUILESS_MAIN(TestRecordsCli)
#include "test_records_cli.moc"
