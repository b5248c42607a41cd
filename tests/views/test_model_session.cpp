// Background jobs and the model session: results arrive on the GUI thread, the latest
// request wins, cancelled work never delivers, and a bad model reports its diagnostic.
#include <QtTest>

#include <atomic>
#include <thread>

#include "views/common/JobRunner.h"
#include "views/session/ModelSession.h"

using namespace tessel;
using namespace tessel::views;

namespace {
QString example(const char* name) { return QStringLiteral(TESSEL_SOURCE_DIR "/resources/examples/") + name; }
}  // namespace

class TestModelSession : public QObject {
  Q_OBJECT
private slots:
  void deliversOnTheGuiThread() {
    JobRunner jobs;
    QThread* worker = nullptr;
    QThread* delivery = nullptr;
    int value = 0;
    jobs.start<int>(
        "work", "compute",
        [&](JobContext&) {
          worker = QThread::currentThread();
          return 42;
        },
        [&](int result) {
          delivery = QThread::currentThread();
          value = result;
        });
    QTRY_COMPARE(value, 42);
    QVERIFY(worker != QThread::currentThread());
    QCOMPARE(delivery, QThread::currentThread());
  }

  void latestRequestWins() {
    JobRunner jobs;
    QSignalSpy finished(&jobs, &JobRunner::jobFinished);
    std::atomic<bool> release{false};
    QList<int> delivered;
    jobs.start<int>(
        "lower", "slow",
        [&](JobContext&) {
          while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
          return 1;
        },
        [&](int v) { delivered << v; });
    jobs.start<int>("lower", "fast", [](JobContext&) { return 2; }, [&](int v) { delivered << v; });
    release = true;
    jobs.waitForAll();
    QTRY_COMPARE(delivered, QList<int>{2});
    QCoreApplication::processEvents();
    QCOMPARE(delivered, QList<int>{2});
    // The superseded job ended as cancelled, the second one delivered.
    QCOMPARE(finished.count(), 2);
    QCOMPARE(finished.at(0).at(1).toBool(), true);
    QCOMPARE(finished.at(1).at(1).toBool(), false);
  }

  void cancelledJobSeesTheFlagAndNeverDelivers() {
    JobRunner jobs;
    std::atomic<bool> started{false}, sawCancel{false};
    bool delivered = false;
    jobs.start<int>(
        "compile", "long",
        [&](JobContext& job) {
          started = true;
          while (!job.cancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
          sawCancel = true;
          return 0;
        },
        [&](int) { delivered = true; });
    QTRY_VERIFY(started.load());
    QVERIFY(jobs.isRunning("compile"));
    jobs.cancel("compile");
    QVERIFY(!jobs.isRunning("compile"));
    jobs.waitForAll();
    QCoreApplication::processEvents();
    QVERIFY(sawCancel.load());
    QVERIFY(!delivered);
  }

  void compilesTheExampleModel() {
    ModelSession session;
    QSignalSpy compiled(&session, &ModelSession::compiled);
    QSignalSpy failed(&session, &ModelSession::failed);
    session.open(example("tiny_resnet.onnx"));
    QVERIFY(session.isBusy());
    QVERIFY(compiled.wait(60000));
    QCOMPARE(failed.count(), 0);
    auto model = session.compiledModel();
    QVERIFY(model);
    QVERIFY(session.imported());
    // One snapshot per pass of the standard pipeline, the last being the optimized graph.
    QCOMPARE(model->snapshots.size(), driver::standardPasses().passes().size());
    QVERIFY(!model->kernels.empty());
    QVERIFY(model->snapshots.back().graph.operations().size() < session.imported()->operations().size());
  }

  void badModelReportsTheFileAndKeepsTheOldResult() {
    QTemporaryDir dir;
    QString path = dir.filePath("broken.onnx");
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("this is not a protobuf");
    file.close();
    ModelSession session;
    QSignalSpy failed(&session, &ModelSession::failed);
    session.open(path);
    QVERIFY(failed.wait(30000));
    QVERIFY2(failed.at(0).at(0).toString().contains("broken.onnx"), qPrintable(failed.at(0).at(0).toString()));
    QCOMPARE(failed.at(0).at(1).toString(), path);
    QVERIFY(!session.compiledModel());

    // A good model, then a broken one: the good one stays, with its path and graphs.
    QSignalSpy compiled(&session, &ModelSession::compiled);
    session.open(example("tiny_resnet.onnx"));
    QVERIFY(compiled.wait(60000));
    auto good = session.compiledModel();
    auto imported = session.imported();
    QVERIFY(good && imported);
    session.open(path);
    QVERIFY(failed.wait(30000));
    QCOMPARE(session.compiledModel(), good);
    QCOMPARE(session.imported(), imported);
    QCOMPARE(session.modelPath(), example("tiny_resnet.onnx"));
  }
};

QTEST_MAIN(TestModelSession)
#include "test_model_session.moc"
