// Background jobs: a job that throws (an internal compiler error) is reported as failed and
// the runner goes on; the job list passes the failure on with the runner's owner.
#include <QtTest>

#include <stdexcept>

#include "views/common/JobListModel.h"
#include "views/common/JobRunner.h"

using namespace tessel::views;

class TestJobRunner : public QObject {
  Q_OBJECT
private slots:
  void aThrowingJobIsReportedAndTheRunnerGoesOn() {
    JobRunner runner;
    JobListModel list;
    list.watch(&runner, "Graph");
    QSignalSpy failed(&runner, &JobRunner::jobFailed);
    QSignalSpy listed(&list, &JobListModel::jobFailed);
    QSignalSpy finished(&runner, &JobRunner::jobFinished);
    bool delivered = false;
    runner.start<int>(
        "layout", "Laying out the graph", [](JobContext&) -> int { throw std::runtime_error("check failed: boom"); },
        [&](int) { delivered = true; });
    QTRY_COMPARE(failed.count(), 1);
    QCOMPARE(failed.at(0).at(0).toString(), QString("layout"));
    QCOMPARE(failed.at(0).at(1).toString(), QString("Laying out the graph"));
    QCOMPARE(failed.at(0).at(2).toString(), QString("check failed: boom"));
    QVERIFY(!delivered);
    QCOMPARE(finished.count(), 1);
    QCOMPARE(runner.activeJobCount(), 0);
    QVERIFY(list.allIdle());
    QCOMPARE(list.rowCount(), 0);
    QCOMPARE(listed.count(), 1);
    QCOMPARE(listed.at(0).at(0).toString(), QString("Graph"));

    // The same channel works again.
    int answer = 0;
    runner.start<int>("layout", "Again", [](JobContext&) { return 42; }, [&](int value) { answer = value; });
    QTRY_COMPARE(answer, 42);
    QCOMPARE(failed.count(), 1);
  }

  void aCancelledJobThatThrowsReportsNothing() {
    JobRunner runner;
    QSignalSpy failed(&runner, &JobRunner::jobFailed);
    std::atomic<bool> release{false};
    runner.start<int>(
        "compile", "Compiling",
        [&](JobContext&) -> int {
          while (!release) QThread::msleep(1);
          throw std::runtime_error("too late to matter");
        },
        [](int) {});
    runner.cancel("compile");
    release = true;
    runner.waitForAll();
    QTest::qWait(20);
    QCOMPARE(failed.count(), 0);
  }
};

QTEST_GUILESS_MAIN(TestJobRunner)
#include "test_job_runner.moc"
