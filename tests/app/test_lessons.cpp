// The schedule lessons: every shipped lesson loads, every step's solution reaches its goal and
// its starting schedule does not, a broken lesson file or schedule is a clear error, and
// `tessel lesson` grades a student's file with the exit status a teacher's script reads.
#include <QRegularExpression>
#include <QtTest>

#include <fstream>

#include "CliTestSupport.h"

#include "app/lessons/Lesson.h"
#include "app/lessons/LessonCheck.h"

using namespace tessel;
using testing::describe;
using testing::keyValues;
using testing::Run;
using testing::runTessel;

namespace {

const std::string kLessons = TESSEL_SOURCE_DIR "/resources/lessons";

const std::vector<lessons::Lesson>& shippedLessons() {
  static std::vector<lessons::Lesson> all = [] {
    auto loaded = lessons::loadLessons(kLessons);
    if (!loaded) qFatal("%s", loaded.error().toString().c_str());
    return *loaded;
  }();
  return all;
}

QString describeGrade(const lessons::StepGrade& grade) {
  QString text;
  for (const lessons::CheckResult& result : grade.results)
    text += QString("%1: %2: %3\n").arg(QString::fromStdString(result.check.kind), result.passed ? "PASS" : "FAIL",
                                        QString::fromStdString(result.message));
  return text;
}

}  // namespace

class TestLessons : public QObject {
  Q_OBJECT

private slots:
  void theShippedLessonsCoverTheTopics() {
    const auto& all = shippedLessons();
    QStringList ids;
    for (const lessons::Lesson& lesson : all) {
      ids << QString::fromStdString(lesson.id);
      QVERIFY2(lesson.steps.size() >= 2, lesson.id.c_str());
      QCOMPARE(lesson.number, int(ids.size()));
    }
    QCOMPARE(ids, QStringList({"loop-order", "tiling", "vectorize-unroll", "parallel", "pipelines", "caching",
                               "reductions", "tuner"}));
  }

  void everySolutionReachesItsGoal_data() {
    QTest::addColumn<int>("lesson");
    QTest::addColumn<int>("step");
    const auto& all = shippedLessons();
    for (size_t l = 0; l < all.size(); ++l)
      for (size_t s = 0; s < all[l].steps.size(); ++s)
        QTest::newRow((all[l].id + "/" + all[l].steps[s].id).c_str()) << int(l) << int(s);
  }
  void everySolutionReachesItsGoal() {
    QFETCH(int, lesson);
    QFETCH(int, step);
    const lessons::LessonStep& theStep = shippedLessons()[lesson].steps[step];
    lessons::GradeOptions options;
    options.measureSeconds = 0.6;
    auto grade = lessons::gradeSchedule(theStep, theStep.solution, options);
    QVERIFY2(grade, grade ? "" : grade.error().toString().c_str());
    QVERIFY2(grade->passed, qPrintable(describeGrade(*grade)));
    QCOMPARE(grade->results.size(), theStep.checks.size());
  }

  void everyStartingScheduleMissesItsGoal_data() { everySolutionReachesItsGoal_data(); }
  void everyStartingScheduleMissesItsGoal() {
    QFETCH(int, lesson);
    QFETCH(int, step);
    const lessons::LessonStep& theStep = shippedLessons()[lesson].steps[step];
    lessons::GradeOptions options;
    options.measureSeconds = 0.6;
    auto grade = lessons::gradeSchedule(theStep, theStep.start, options);
    QVERIFY2(grade, grade ? "" : grade.error().toString().c_str());
    QVERIFY2(!grade->passed, qPrintable(describeGrade(*grade)));
    // The starting schedule is a real one: whatever it misses, its results are right.
    for (const lessons::CheckResult& result : grade->results)
      if (result.check.kind == "matches_reference") QVERIFY2(result.passed, result.message.c_str());
  }

  void aMissedGoalSaysWhatIsMissing() {
    const lessons::LessonStep* step = lessons::findLesson(shippedLessons(), "loop-order")->findStep("reorder");
    QVERIFY(step);
    auto grade = lessons::gradeSchedule(*step, "reorder(C, j, i, k)\n");
    QVERIFY(grade);
    QVERIFY(!grade->passed);
    QCOMPARE(grade->results[0].passed, false);
    QCOMPARE(QString::fromStdString(grade->results[0].message),
             QString("the innermost loop of C is 'k', from axis k; the goal wants one from axis j"));
    QVERIFY(grade->results[1].passed);
  }

  // The working set is the widest reuse distance: in the natural order every element of B
  // comes back one iteration of i later, after all of B (256 KiB) and a row of A and of C;
  // a 32 x 32 tile brings each element of C back after one 32 x 32 block (about 4 KiB); a
  // 128 x 128 one after 64 KiB, too much for the goal's 32 KiB.
  void theWorkingSetCheckMeasuresReuseDistance() {
    const lessons::LessonStep* step = lessons::findLesson(shippedLessons(), "tiling")->findStep("tile");
    QVERIFY(step);
    auto workingSetResult = [&](const std::string& schedule) {
      auto grade = lessons::gradeSchedule(*step, schedule);
      if (!grade) qFatal("%s", grade.error().toString().c_str());
      for (const lessons::CheckResult& result : grade->results)
        if (result.check.kind == "working_set") return result;
      qFatal("no working_set check in tiling/tile");
    };
    lessons::CheckResult natural = workingSetResult("");
    QVERIFY(!natural.passed);
    QCOMPARE(QString::fromStdString(natural.message).section(';', 0, 0),
             QString("the widest reuse: each element of B is used again in the next iteration of loop i, after 258 KiB of data"));
    QVERIFY2(natural.message.find("the goal: at most 32 KiB") != std::string::npos, natural.message.c_str());

    lessons::CheckResult tiled = workingSetResult("io, jo, ii, ji = tile(C, i, j, 32, 32)\nreorder(C, io, jo, k, ii, ji)\n");
    QVERIFY2(tiled.passed, tiled.message.c_str());
    QCOMPARE(QString::fromStdString(tiled.message).section(';', 0, 0),
             QString("the widest reuse: each element of C is used again in the next iteration of loop k, after 4.2 KiB of data"));

    lessons::CheckResult wide = workingSetResult("io, jo, ii, ji = tile(C, i, j, 128, 128)\nreorder(C, io, jo, k, ii, ji)\n");
    QVERIFY2(!wide.passed, wide.message.c_str());
    QVERIFY2(wide.message.find("each element of C is used again in the next iteration of loop k, after 65 KiB") !=
                 std::string::npos,
             wide.message.c_str());
  }

  void aBrokenScheduleIsAnErrorNamingItsLine() {
    const lessons::LessonStep* step = lessons::findLesson(shippedLessons(), "tiling")->findStep("split");
    auto grade = lessons::gradeSchedule(*step, "jo, ji = split(C, j, factor=16)\nreorder(C, i, jo, kk, ji)\n");
    QVERIFY(!grade);
    QCOMPARE(grade.error().line, 2);
    QVERIFY2(grade.error().message.find("kk") != std::string::npos, grade.error().toString().c_str());
  }

  void aBrokenLessonFileNamesThePlace_data() {
    QTest::addColumn<QString>("change");
    QTest::addColumn<QString>("expected");
    QTest::newRow("unknown check") << "\"kind\": \"innermost_axis\"|\"kind\": \"innermost\""
                                   << "steps[0].goal.checks[0].kind: unknown check 'innermost'";
    QTest::newRow("unknown key") << "\"hints\"|\"hint\"" << "steps[0].hint: unknown key";
    QTest::newRow("unknown operator") << "\"name\": \"matmul\"|\"name\": \"matmull\""
                                      << "steps[0].operator.name: unknown operator 'matmull'";
    QTest::newRow("newer version") << "\"version\": 1|\"version\": 9" << "written for a newer Tessel (version 9)";
    QTest::newRow("not JSON") << "\"steps\": [|\"steps\": [[" << "not valid JSON";
    QTest::newRow("tune too short") << "\"hints\"|\"tune\": {\"trials\": 3}, \"hints\""
                                    << "steps[0].tune.trials: expected from 8 to 2000 trials";
    QTest::newRow("working set without a bound") << "{\"kind\": \"matches_reference\"}|{\"kind\": \"working_set\"}"
                                                 << "at_most_kib";
    QTest::newRow("working set of nothing") << "{\"kind\": \"matches_reference\"}|{\"kind\": \"working_set\", \"at_most_kib\": 0}"
                                            << "at_most_kib: expected a size in KiB above 0";
    QTest::newRow("tune unknown key") << "\"hints\"|\"tune\": {\"minutes\": 3}, \"hints\""
                                      << "steps[0].tune.minutes: unknown key";
  }
  void aBrokenLessonFileNamesThePlace() {
    QFETCH(QString, change);
    QFETCH(QString, expected);
    QFile file(QString::fromStdString(kLessons + "/01-loop-order.json"));
    QVERIFY(file.open(QIODevice::ReadOnly));
    QString text = QString::fromUtf8(file.readAll());
    QStringList parts = change.split('|');
    QVERIFY(text.contains(parts[0]));
    text.replace(text.indexOf(parts[0]), parts[0].size(), parts[1]);
    auto lesson = lessons::parseLesson(text.toStdString(), "broken.json");
    QVERIFY(!lesson);
    QString message = QString::fromStdString(lesson.error().toString());
    QVERIFY2(message.contains("broken.json") && message.contains(expected), qPrintable(message));
  }

  void theCommandGradesAStudentsFile() {
    QTemporaryDir directory;
    auto write = [&](const QString& name, const QByteArray& text) {
      QFile file(directory.filePath(name));
      file.open(QIODevice::WriteOnly);
      file.write(text);
      return file.fileName();
    };
    QString good = write("good.sched", "reorder(C, i, k, j)\n");
    QString wrong = write("wrong.sched", "reorder(C, k, j, i)\n");
    QString broken = write("broken.sched", "reorder(C, i, k, jj)\n");

    QStringList arguments{"lesson", "check", "loop-order", "reorder", "--schedule", good};
    Run passed = runTessel(arguments);
    QVERIFY2(passed.exitCode == 0, qPrintable(describe(arguments, passed)));
    QCOMPARE(keyValues(passed.out)["goal"], QString("reached"));
    QVERIFY2(passed.out.contains("check innermost_axis: PASS"), qPrintable(passed.out));

    arguments = QStringList{"lesson", "check", "1", "1", "--schedule", wrong};
    Run failed = runTessel(arguments);
    QVERIFY2(failed.exitCode == 4, qPrintable(describe(arguments, failed)));
    QCOMPARE(keyValues(failed.out)["goal"], QString("not reached"));
    QVERIFY2(failed.out.contains("check innermost_axis: FAIL: the innermost loop of C is 'i'"), qPrintable(failed.out));
    QVERIFY2(failed.out.contains("hint: "), qPrintable(failed.out));

    arguments = QStringList{"lesson", "check", "loop-order", "reorder", "--schedule", broken};
    Run error = runTessel(arguments);
    QVERIFY2(error.exitCode == 2, qPrintable(describe(arguments, error)));
    QVERIFY2(error.err.contains(broken + ":1:") && error.err.contains("jj"), qPrintable(error.err));

    arguments = QStringList{"lesson", "check", "loop-order", "no-such-step", "--schedule", good};
    Run missing = runTessel(arguments);
    QVERIFY2(missing.exitCode == 2 && missing.err.contains("no-such-step"), qPrintable(describe(arguments, missing)));
  }

  // The tuner lesson from a terminal, as its hint says: tune with the command `lesson show`
  // prints (fewer trials here), save `records best`, grade it.
  void theTunerLessonRunsFromATerminal() {
    Run show = runTessel({"lesson", "show", "tuner", "search"});
    QVERIFY2(show.exitCode == 0, qPrintable(show.err));
    QRegularExpression tuneLine("tune it: tessel (tune lesson_matmul --m 256 --n 256 --k 256 --trials 64 --records (\\S+))");
    QRegularExpressionMatch match = tuneLine.match(show.out);
    QVERIFY2(match.hasMatch(), qPrintable(show.out));
    QTemporaryDir directory;
    QString records = directory.filePath("search.jsonl");
    QStringList tune = match.captured(1).split(' ');
    tune[tune.indexOf("--trials") + 1] = "8";
    tune[tune.indexOf("--records") + 1] = records;
    Run tuned = runTessel(tune);
    QVERIFY2(tuned.exitCode == 0, qPrintable(describe(tune, tuned)));
    Run best = runTessel({"records", "best", records});
    QVERIFY2(best.exitCode == 0 && best.out.contains("split("), qPrintable(best.out + best.err));
    QFile schedule(directory.filePath("tuned.txt"));
    QVERIFY(schedule.open(QIODevice::WriteOnly));
    schedule.write(best.out.toUtf8());
    schedule.close();
    QStringList check{"lesson", "check", "tuner", "search", "--schedule", schedule.fileName()};
    Run graded = runTessel(check);
    // Eight trials may or may not reach the step's fraction of peak; the schedule is read and right.
    QVERIFY2(graded.exitCode == 0 || graded.exitCode == 4, qPrintable(describe(check, graded)));
    QVERIFY2(graded.out.contains("check matches_reference: PASS"), qPrintable(graded.out));
  }

  void theCommandListsAndShowsLessons() {
    Run list = runTessel({"lesson", "list"});
    QCOMPARE(list.exitCode, 0);
    for (const char* id : {"loop-order", "tiling", "vectorize-unroll", "parallel", "pipelines", "caching", "reductions"})
      QVERIFY2(list.out.contains(id), qPrintable(list.out));
    Run start = runTessel({"lesson", "show", "caching", "cache-read", "--start"});
    QCOMPARE(start.exitCode, 0);
    QCOMPARE(start.out, QString("jo, ji = split(C, j, factor=32)\nreorder(C, jo, i, k, ji)\n"));
    Run show = runTessel({"lesson", "show", "pipelines", "2", "--hints"});
    QCOMPARE(show.exitCode, 0);
    QVERIFY2(show.out.contains("operator: blur height=256 width=256") && show.out.contains("hint 1:") &&
                 !show.out.contains("<code>"),
             qPrintable(show.out));
  }
};

QTEST_GUILESS_MAIN(TestLessons)
#include "test_lessons.moc"
