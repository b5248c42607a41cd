// The Lessons window as a learner and a teacher meet it: Help > Lessons opens it at the first
// step, a step opens its operator in the schedule editor, Check grades the editor's schedule
// and says what is missing, passed steps and schedules are kept per user, presenter mode
// enlarges and steps with Page Down, the iteration order exports as an animated PNG, and the
// tuner lesson's Tune button runs the auto-tuner and puts its best schedule in the editor.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QListWidget>
#include <QPushButton>
#include <QTabWidget>
#include <QTextBrowser>
#include <QTreeWidget>
#include <QtTest>

#include "StudioTestSupport.h"
#include "app/studio/LessonWindow.h"
#include "app/studio/MainWindow.h"
#include "views/schedule/IterationOrderView.h"
#include "views/schedule/ScheduleEditor.h"
#include "views/schedule/ScheduleWorkbench.h"
#include "tuner/records/RecordFile.h"
#include "tuner/records/TuningDatabase.h"

using namespace tessel;
using namespace tessel::studio;

namespace {
const QString kLessons = QStringLiteral(TESSEL_SOURCE_DIR "/resources/lessons");
}

class TestLessonWindow : public QObject {
  Q_OBJECT

  QTemporaryDir settingsDir_;

private slots:
  void initTestCase() {
    testing::isolateSettings(settingsDir_);
    qputenv("TESSEL_CLI", TESSEL_BINARY_DIR "/bin/tessel");  // Tune runs it, as Measure does
  }
  void init() { testing::clearSettings(); }

  void helpLessonsOpensTheFirstStep() {
    MainWindow window;
    // Installed beside the program: the build tree's share/tessel/lessons.
    LessonWindow* lessons = window.openLessons();
    QVERIFY(lessons && lessons->isVisible());
    QCOMPARE(int(lessons->lessons().size()), 8);
    QCOMPARE(lessons->lessonTree()->topLevelItemCount(), 8);
    QCOMPARE(lessons->currentLessonId(), QString("loop-order"));
    QCOMPARE(lessons->currentStepId(), QString("reorder"));
    QVERIFY(lessons->stepText()->toPlainText().contains("Walk memory in the order it is stored"));
    QVERIFY(lessons->workbench()->taskNames().contains("lesson_matmul"));
    QCOMPARE(window.openLessons(), lessons);  // one window, raised again
  }

  void checkSaysWhatIsMissingThenPasses() {
    LessonWindow lessons;
    QVERIFY(lessons.loadLessons(kLessons));
    QVERIFY(lessons.openStep("tiling", "split"));
    QCOMPARE(lessons.scheduleText(), QString("reorder(C, i, k, j)\n"));

    QSignalSpy checked(&lessons, &LessonWindow::checked);
    lessons.check();
    QVERIFY(checked.wait(60000));
    QCOMPARE(checked.at(0).at(0).toBool(), false);
    QStringList results = checked.at(0).at(1).toStringList();
    QVERIFY2(results.join('\n').contains("FAIL: the schedule does not use split on C"), qPrintable(results.join('\n')));
    QVERIFY(!LessonWindow::isStepPassed("tiling", "split"));

    lessons.setScheduleText("jo, ji = split(C, j, factor=16)\nreorder(C, i, jo, k, ji)\n");
    lessons.check();
    QVERIFY(checked.wait(60000));
    QCOMPARE(checked.at(1).at(0).toBool(), true);
    QVERIFY(LessonWindow::isStepPassed("tiling", "split"));
    QVERIFY(lessons.checkResults()->item(0)->text().startsWith(QStringLiteral("✓")));

    // A schedule with an error is reported with its line, not graded.
    QSignalSpy failed(&lessons, &LessonWindow::checkFailed);
    lessons.setScheduleText("reorder(C, i, k, nope)\n");
    lessons.check();
    QVERIFY(failed.wait(60000));
    QVERIFY2(failed.at(0).at(0).toString().contains(":1:"), qPrintable(failed.at(0).at(0).toString()));
  }

  void progressAndSchedulesAreKeptPerUser() {
    {
      LessonWindow lessons;
      QVERIFY(lessons.loadLessons(kLessons));
      QVERIFY(lessons.openStep("loop-order", "reorder"));
      lessons.setScheduleText("reorder(C, i, k, j)\n");
      QSignalSpy checked(&lessons, &LessonWindow::checked);
      lessons.check();
      QVERIFY(checked.wait(60000));
      QVERIFY(checked.at(0).at(0).toBool());
      QVERIFY(lessons.openStep("loop-order", "column-order"));
      lessons.setScheduleText("reorder(C, j, i, k)\n");
    }
    LessonWindow again;
    QVERIFY(again.loadLessons(kLessons));
    // It resumes at the first step not passed, with the schedule left there.
    QCOMPARE(again.currentStepId(), QString("column-order"));
    QCOMPARE(again.scheduleText(), QString("reorder(C, j, i, k)\n"));
    QTreeWidgetItem* first = again.lessonTree()->topLevelItem(0)->child(0);
    QVERIFY2(first->text(0).startsWith(QStringLiteral("✓")), qPrintable(first->text(0)));
  }

  void presenterModeEnlargesAndSteps() {
    LessonWindow lessons;
    QVERIFY(lessons.loadLessons(kLessons));
    lessons.show();
    QVERIFY(QTest::qWaitForWindowExposed(&lessons));
    QVERIFY(lessons.openStep("pipelines", "inline"));
    double normal = lessons.stepText()->font().pointSizeF();
    lessons.setPresenterMode(true);
    QVERIFY2(lessons.stepText()->font().pointSizeF() > 1.5 * normal, qPrintable(QString("%1 -> %2, window %3").arg(normal).arg(lessons.stepText()->font().pointSizeF()).arg(lessons.font().pointSizeF())));
    QVERIFY(!lessons.lessonTree()->isVisible());
    QVERIFY(lessons.stepPaneShown() && !lessons.workbench()->isVisible());
    QTest::keyClick(&lessons, Qt::Key_PageDown);
    QCOMPARE(lessons.currentStepId(), QString("compute-at"));
    QTest::keyClick(&lessons, Qt::Key_F6);
    QVERIFY(!lessons.stepPaneShown() && lessons.workbench()->isVisible());
    QTest::keyClick(&lessons, Qt::Key_PageDown);  // the last step of the lesson: on to the next
    QCOMPARE(lessons.currentLessonId(), QString("caching"));
    lessons.setPresenterMode(false);
    QCOMPARE(lessons.stepText()->font().pointSizeF(), normal);
    QVERIFY(lessons.lessonTree()->isVisible() && lessons.workbench()->isVisible());
  }

  void theIterationOrderExportsAsAnAnimatedPng() {
    LessonWindow lessons;
    QVERIFY(lessons.loadLessons(kLessons));
    lessons.show();
    QVERIFY(QTest::qWaitForWindowExposed(&lessons));
    QVERIFY(lessons.openStep("tiling", "tile"));
    lessons.setScheduleText("io, jo, ii, ji = tile(C, i, j, 32, 32)\nreorder(C, io, jo, k, ii, ji)\n");
    views::IterationOrderView* order = lessons.workbench()->iterationOrderView();
    lessons.workbench()->toolTabs()->setCurrentWidget(order);
    QTRY_VERIFY_WITH_TIMEOUT(order->order() && order->stepCount() > 0, 60000);
    QTemporaryDir directory;
    QString path = directory.filePath("tile.png");
    Status written = lessons.exportAnimation(path);
    QVERIFY2(written.ok(), written.ok() ? "" : written.error().toString().c_str());
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QByteArray bytes = file.readAll();
    QVERIFY(bytes.startsWith("\x89PNG\r\n\x1a\n"));
    QVERIFY(bytes.contains("acTL"));
    QVERIFY(bytes.count("fcTL") >= 10);
    QVERIFY(bytes.contains("fdAT") && bytes.endsWith(QByteArray("IEND\xae\x42\x60\x82", 8)));
    // Its first frame is an ordinary PNG for viewers that do not animate.
    QImage still(path);
    QCOMPARE(still.size(), QSize(480, 480));
  }

  // The tuner lesson as shipped, shortened for a test: its first step on a 64^3 matmul with the
  // fewest trials a lesson may ask for, graded on its results only (eight trials need not
  // reach the lesson's fraction of peak).
  void tuneRunsTheTunerAndPutsItsBestScheduleInTheEditor() {
    QFile shipped(kLessons + "/08-tuner.json");
    QVERIFY(shipped.open(QIODevice::ReadOnly));
    QJsonObject lesson = QJsonDocument::fromJson(shipped.readAll()).object();
    QJsonArray steps = lesson["steps"].toArray();
    QJsonObject search = steps[0].toObject();
    search["operator"] = QJsonObject{{"name", "matmul"}, {"m", 64}, {"n", 64}, {"k", 64}};
    search["tune"] = QJsonObject{{"trials", 8}};
    QJsonObject goal = search["goal"].toObject();
    goal["checks"] = QJsonArray{QJsonObject{{"kind", "matches_reference"}}};
    search["goal"] = goal;
    steps[0] = search;
    lesson["steps"] = steps;
    QTemporaryDir directory;
    QFile copy(directory.filePath("08-tuner.json"));
    QVERIFY(copy.open(QIODevice::WriteOnly));
    copy.write(QJsonDocument(lesson).toJson());
    copy.close();

    LessonWindow lessons;
    QVERIFY(lessons.loadLessons(directory.path()));
    lessons.show();
    QVERIFY(QTest::qWaitForWindowExposed(&lessons));
    auto* tuneButton = lessons.findChild<QPushButton*>("LessonTuneButton");
    QVERIFY(tuneButton);
    QVERIFY(lessons.openStep("tuner", "search"));
    QVERIFY(tuneButton->isVisible());
    QCOMPARE(lessons.scheduleText(), QString());  // it starts from the natural loop order

    QSignalSpy tuned(&lessons, &LessonWindow::tuned);
    QString error;
    QVERIFY2(lessons.tune(&error), qPrintable(error));
    QCOMPARE(tuneButton->text(), QString("Stop Tuning"));
    QVERIFY(tuned.wait(180000));
    QVERIFY2(tuned.at(0).at(0).toBool(), qPrintable(tuned.at(0).at(1).toString()));
    QString summary = tuned.at(0).at(1).toString();
    QVERIFY2(summary.contains("The tuner measured") && summary.contains("Its schedule is in the editor"),
             qPrintable(summary));
    QCOMPARE(tuneButton->text(), QString("Tune"));

    // The editor holds the fastest valid schedule of the session's records.
    auto records = tuner::readRecordFile(LessonWindow::tuneRecordsPath("tuner", "search").toStdString());
    QVERIFY(records);
    tuner::TuningDatabase database(records->records);
    const tuner::TuningRecord* best = nullptr;
    for (const auto& workload : database.statistics())
      if (workload.best) best = workload.best;
    QVERIFY(best);
    QCOMPARE(lessons.scheduleText(), QString::fromStdString(best->trace));
    QVERIFY(!best->trace.empty());

    QSignalSpy checked(&lessons, &LessonWindow::checked);
    lessons.check();
    QVERIFY(checked.wait(60000));
    QVERIFY2(checked.at(0).at(0).toBool(), qPrintable(checked.at(0).at(1).toStringList().join('\n')));

    // Steps about writing a schedule by hand offer no tuner.
    QVERIFY(lessons.loadLessons(kLessons));
    QVERIFY(lessons.openStep("tiling", "split"));
    QVERIFY(!tuneButton->isVisible());
    QVERIFY(!lessons.tune(&error));
    QVERIFY2(error.contains("offers no tuner"), qPrintable(error));
  }
};

QTEST_MAIN(TestLessonWindow)
#include "test_lesson_window.moc"
