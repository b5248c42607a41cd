// Background jobs and the model session: results arrive on the GUI thread, the latest
// request wins, cancelled work never delivers, a bad model reports its diagnostic, and a
// compile shows its steps in the status bar and stops when cancelled.
#include <QtTest>

#include <atomic>
#include <mutex>
#include <thread>

#include "views/common/JobListModel.h"
#include "views/common/JobRunner.h"
#include "views/common/JobStatusWidget.h"
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

  void compileStepsReachTheJobList() {
    ModelSession session;
    JobListModel jobList;
    jobList.watch(&session.jobs(), "Model");
    JobStatusWidget statusBar(&jobList);
    // What the status bar showed and the job list said, each time the compile's row changed.
    QStringList shown, messages;
    QList<int> percents;
    auto record = [&] {
      for (int row = 0; row < jobList.rowCount(); ++row) {
        QModelIndex index = jobList.index(row);
        if (index.data(JobListModel::ChannelRole).toString() != "compile") continue;
        shown << statusBar.currentText();
        messages << index.data(JobListModel::MessageRole).toString();
        percents << index.data(JobListModel::PercentRole).toInt();
      }
    };
    connect(&jobList, &QAbstractItemModel::dataChanged, this, record);
    std::atomic<int> heardByCaller{0};
    driver::CompileOptions options;
    options.progress = [&](int, const std::string&) { ++heardByCaller; };
    QSignalSpy compiled(&session, &ModelSession::compiled);
    session.open(example("tiny_resnet.onnx"), {}, options);
    QVERIFY(compiled.wait(60000));

    QVERIFY2(shown.contains("Compiling tiny_resnet.onnx - FuseOps"), qPrintable(shown.join("\n")));
    for (const std::string& pass : driver::standardPasses().passNames())
      QVERIFY2(messages.contains(QString::fromStdString(pass)), qPrintable(messages.join("\n")));
    QVERIFY(messages.first() == "Importing");
    QVERIFY(std::any_of(messages.begin(), messages.end(), [](const QString& m) { return m.startsWith("Lowering"); }));
    // The import says what it does as well, before any pass.
    QVERIFY2(messages.indexOf(QRegularExpression("^Importing node 1 of \\d+$")) > 0 &&
                 messages.indexOf(QRegularExpression("^Importing node")) < messages.indexOf("InferTypes"),
             qPrintable(messages.join("\n")));
    QVERIFY(std::is_sorted(percents.begin(), percents.end()));
    QCOMPARE(percents.last(), 100);
    // The caller's own callback heard the compile too, and the session keeps no callback.
    QVERIFY(heardByCaller > 0);
    QVERIFY(!session.compileOptions().progress && !session.compileOptions().cancelled);
  }

  void cancelMidCompileStopsTheWorkerAndKeepsThePreviousModel() {
    ModelSession session;
    QSignalSpy compiled(&session, &ModelSession::compiled);
    QSignalSpy failed(&session, &ModelSession::failed);
    session.open(example("tiny_resnet.onnx"));
    QVERIFY(compiled.wait(60000));
    auto previous = session.compiledModel();

    // Recompile with other options; the compile waits inside FoldConstant's progress report
    // until the session has been cancelled, so the cancel lands mid-compile every time.
    std::atomic<bool> inFoldConstant{false}, cancelIssued{false};
    std::mutex mutex;
    QStringList steps;
    auto release = qScopeGuard([&] { cancelIssued = true; });
    driver::CompileOptions options = session.compileOptions();
    options.passes.optLevel = 1;
    options.progress = [&](int, const std::string& what) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        steps << QString::fromStdString(what);
      }
      if (what != "FoldConstant") return;
      inFoldConstant = true;
      while (!cancelIssued) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    };
    QSignalSpy finished(&session.jobs(), &JobRunner::jobFinished);
    session.recompile(options);
    QTRY_VERIFY(inFoldConstant.load());
    session.cancel();
    cancelIssued = true;
    QVERIFY(!session.isBusy());
    QTRY_COMPARE(session.jobs().activeJobCount(), 0);

    // The worker ran FoldConstant and stopped before the next pass: no lowering, no result.
    {
      std::lock_guard<std::mutex> lock(mutex);
      QCOMPARE(steps.last(), QString("FoldConstant"));
    }
    QCoreApplication::processEvents();
    QCOMPARE(finished.count(), 1);
    QCOMPARE(finished.at(0).at(1).toBool(), true);
    QCOMPARE(compiled.count(), 1);
    QCOMPARE(failed.count(), 0);
    QCOMPARE(session.compiledModel(), previous);
    QCOMPARE(session.compileOptions().passes.optLevel, 3);
  }
};

QTEST_MAIN(TestModelSession)
#include "test_model_session.moc"
