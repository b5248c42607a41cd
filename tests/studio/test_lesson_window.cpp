// The Lessons window as a learner and a teacher meet it: Help > Lessons opens it at the first
// step, a step opens its operator in the schedule editor, Check grades the editor's schedule
// and says what is missing, passed steps and schedules are kept per user, presenter mode
// enlarges and steps with Page Down, and the iteration order exports as an animated PNG.
#include <QListWidget>
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

using namespace tessel;
using namespace tessel::studio;

namespace {
const QString kLessons = QStringLiteral(TESSEL_SOURCE_DIR "/resources/lessons");
}

class TestLessonWindow : public QObject {
  Q_OBJECT

  QTemporaryDir settingsDir_;

private slots:
  void initTestCase() { testing::isolateSettings(settingsDir_); }
  void init() { testing::clearSettings(); }

  void helpLessonsOpensTheFirstStep() {
    MainWindow window;
    // Installed beside the program: the build tree's share/tessel/lessons.
    LessonWindow* lessons = window.openLessons();
    QVERIFY(lessons && lessons->isVisible());
    QCOMPARE(int(lessons->lessons().size()), 7);
    QCOMPARE(lessons->lessonTree()->topLevelItemCount(), 7);
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
};

QTEST_MAIN(TestLessonWindow)
#include "test_lesson_window.moc"
