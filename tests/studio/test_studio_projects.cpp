// Projects in the Studio: opening a .tessel opens its model with its options, edits mark it
// modified, Save writes them, an autosave is offered back after a crash, closing with unsaved
// changes asks, an untitled project's autosave is offered at the next start, a model opened on
// its own saves as a new project, and a corrupt project file is reported without losing the
// model on screen. File > Export for CI writes a folder whose jobs are valid YAML and whose
// command passes; File > Open Example Project opens an editable copy of the shipped example.
#include <QDockWidget>
#include <QtTest>

#include "StudioTestSupport.h"
#include "app/project/Autosave.h"
#include "app/project/CiExport.h"
#include "app/project/InstallLocation.h"
#include "app/project/Project.h"
#include "app/studio/MainWindow.h"
#include "views/schedule/MeasureHistory.h"
#include "views/schedule/MeasurePanel.h"
#include "views/schedule/ScheduleEditor.h"
#include "views/schedule/ScheduleWorkbench.h"

using namespace tessel;
using namespace tessel::studio;
using testing::example;
using Recovery = ProjectController::RecoveryChoice;
using Unsaved = ProjectController::UnsavedChoice;

namespace {

/// The example project and its model copied into `dir`, with the opt level set to
/// `optLevel`; returns the project's path.
QString copyExampleProject(const QTemporaryDir& dir, int optLevel, const QByteArray& maxLatencyMs = "50.0") {
  QFile::copy(example("tiny_resnet.onnx"), dir.filePath("tiny_resnet.onnx"));
  QFile source(example("tiny_resnet.tessel"));
  if (!source.open(QIODevice::ReadOnly)) return {};
  QByteArray text = source.readAll();
  text.replace("\"opt_level\": 3", QByteArray("\"opt_level\": ") + QByteArray::number(optLevel));
  // The reference data stays with the example.
  text.replace("\"directory\": \"tiny_resnet/test_data_set_0\"", "\"directory\": \"\"");
  text.replace("\"max_latency_ms\": 50.0", "\"max_latency_ms\": " + maxLatencyMs);
  QFile copy(dir.filePath("tiny_resnet.tessel"));
  if (!copy.open(QIODevice::WriteOnly)) return {};
  copy.write(text);
  return copy.fileName();
}

int savedOptLevel(const QString& path) {
  auto project = project::loadProject(path.toStdString());
  return project ? project->passes.optLevel : -1;
}

graph::PassOptions withOptLevel(const driver::CompileOptions& options, int level) {
  graph::PassOptions passes = options.passes;
  passes.optLevel = level;
  return passes;
}

}  // namespace

class TestStudioProjects : public QObject {
  Q_OBJECT

  QTemporaryDir settingsDir_;

private slots:
  void initTestCase() {
    testing::isolateSettings(settingsDir_);
    // Measuring runs the tessel tool, which lives in bin/, not beside this test.
    qputenv("TESSEL_CLI", TESSEL_BINARY_DIR "/bin/tessel");
  }
  void init() { testing::clearSettings(); }

  void opensAProjectWithItsOptions() {
    QTemporaryDir dir;
    QString path = copyExampleProject(dir, 1);
    MainWindow window;
    QVERIFY(testing::openAndWait(window, path));
    QCOMPARE(window.currentFile(), path);
    QVERIFY(window.windowTitle().contains("tiny_resnet.tessel"));
    QCOMPARE(window.session().compileOptions().passes.optLevel, 1);
    QCOMPARE(QFileInfo(window.session().modelPath()), QFileInfo(dir.filePath("tiny_resnet.onnx")));
    QVERIFY(!window.isWindowModified());
    QCOMPARE(window.recentFiles().files().value(0), path);
  }

  void editsMarkTheProjectModifiedAndSaveWritesThem() {
    QTemporaryDir dir;
    QString path = copyExampleProject(dir, 3);
    MainWindow window;
    QVERIFY(testing::openAndWait(window, path));
    window.projects().setPassOptions(withOptLevel(window.session().compileOptions(), 2));
    QVERIFY(window.isWindowModified());
    QVERIFY(window.projects().isModified());
    QCOMPARE(savedOptLevel(path), 3);  // nothing written before Save
    window.studioAction("actionSave")->trigger();
    QVERIFY(!window.isWindowModified());
    QCOMPARE(savedOptLevel(path), 2);
  }

  void savedSchedulesOpenInTheEditorAndEditsMarkTheProject() {
    QTemporaryDir dir;
    QString path = copyExampleProject(dir, 3);
    MainWindow window;
    window.show();
    QVERIFY(testing::openAndWait(window, path));
    auto* workbench = window.findChild<views::ScheduleWorkbench*>();
    QVERIFY(workbench);
    // The example project's hand-written softmax schedule is what the editor shows.
    QTRY_VERIFY_WITH_TIMEOUT(workbench->taskNames().contains("Softmax__Softmax"), 30000);
    QTRY_VERIFY(workbench->scheduleText("Softmax__Softmax").contains("vectorize(softmax.exp, ax1)"));
    QVERIFY(!window.isWindowModified());

    window.setCurrentView(StudioView::Schedule);
    QVERIFY(workbench->openTask("Softmax__Softmax"));
    QTextCursor end = workbench->editor()->textCursor();
    end.movePosition(QTextCursor::End);
    workbench->editor()->setTextCursor(end);
    QTest::keyClick(workbench->editor(), Qt::Key_Return);
    QTest::keyClicks(workbench->editor(), "vectorize(softmax.max, ax1)");
    // After the typing pause the edit reaches the project, which is now modified.
    QTRY_VERIFY_WITH_TIMEOUT(window.isWindowModified(), 5000);
    const driver::ScheduleEdit* edit = window.projects().project()->findTask("Softmax__Softmax");
    QVERIFY(edit);
    QVERIFY(QString::fromStdString(edit->trace).contains("softmax.max"));
    window.studioAction("actionSave")->trigger();
    auto saved = project::loadProject(path.toStdString());
    QVERIFY(saved);
    QVERIFY(QString::fromStdString(saved->findTask("Softmax__Softmax")->trace).contains("softmax.max"));
  }

  void runProjectChecksTheExpectations_data() {
    QTest::addColumn<QByteArray>("maxLatencyMs");
    QTest::addColumn<bool>("passes");
    QTest::newRow("generous limit") << QByteArray("50.0") << true;
    QTest::newRow("impossible limit") << QByteArray("0.000001") << false;
  }
  void runProjectChecksTheExpectations() {
    QFETCH(QByteArray, maxLatencyMs);
    QFETCH(bool, passes);
    QTemporaryDir dir;
    QString path = copyExampleProject(dir, 3, maxLatencyMs);
    MainWindow window;
    QVERIFY(testing::openAndWait(window, path));
    int before = window.diagnostics().rowCount();
    window.studioAction("actionRunProject")->trigger();
    QVERIFY(!window.isIdle());
    QVERIFY(QTest::qWaitFor([&] { return window.isIdle(); }, 120000));
    QCOMPARE(window.diagnostics().rowCount(), before + 1);
    const views::DiagnosticEntry& entry = window.diagnostics().entry(before);
    QVERIFY2(entry.message.contains("max_latency_ms"), qPrintable(entry.message));
    QCOMPARE(entry.severity == views::Severity::Note, passes);
    QCOMPARE(entry.message.contains(passes ? "PASS" : "FAIL"), true);
  }

  void autosaveIsOfferedBackAfterACrash() {
    QTemporaryDir dir;
    QString path = copyExampleProject(dir, 3);
    QString autosave = QString::fromStdString(project::autosavePath(path.toStdString()));
    {
      MainWindow crashed;
      crashed.projects().setAutosaveInterval(50);
      QVERIFY(testing::openAndWait(crashed, path));
      crashed.projects().setPassOptions(withOptLevel(crashed.session().compileOptions(), 1));
      QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(autosave), 5000);
      // The session "crashes": the window goes away without being closed (no prompt, no save).
    }
    QCOMPARE(savedOptLevel(path), 3);

    MainWindow next;
    int asked = 0;
    next.projects().setRecoveryPrompt([&](const QString& project, const QDateTime&) {
      ++asked;
      return project == path ? Recovery::Recover : Recovery::OpenSaved;
    });
    QVERIFY(testing::openAndWait(next, path));
    QCOMPARE(asked, 1);
    // The recovered work is open, unsaved, and compiled with the recovered options.
    QCOMPARE(next.session().compileOptions().passes.optLevel, 1);
    QVERIFY(next.isWindowModified());
    next.studioAction("actionSave")->trigger();
    QCOMPARE(savedOptLevel(path), 1);
    QVERIFY(!QFile::exists(autosave));
  }

  void anUntitledProjectsAutosaveIsOfferedAtTheNextStart() {
    QTemporaryDir dir;
    QString model = dir.filePath("alone.onnx");
    QVERIFY(QFile::copy(example("tiny_resnet.onnx"), model));
    QString autosave = QString::fromStdString(project::autosavePath(""));
    {
      MainWindow crashed;
      crashed.projects().setAutosaveInterval(50);
      QVERIFY(testing::openAndWait(crashed, model));
      QVERIFY(crashed.projects().isUntitled());
      crashed.projects().setPassOptions(withOptLevel(crashed.session().compileOptions(), 1));
      QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(autosave), 5000);
    }
    QStringList askedAbout;
    auto answer = [&](Recovery choice) {
      return [&askedAbout, choice](const QString& modelPath, const QDateTime&) {
        askedAbout << modelPath;
        return choice;
      };
    };
    {
      // "Not Now" keeps the autosave for a later start; another model does not ask at all.
      MainWindow later;
      later.projects().setUntitledRecoveryPrompt(answer(Recovery::OpenSaved));
      QVERIFY(!later.offerUntitledRecovery());
      QCOMPARE(askedAbout.size(), 1);
      QCOMPARE(QFileInfo(askedAbout.first()), QFileInfo(model));
      QVERIFY(QFile::exists(autosave));
      QVERIFY(testing::openAndWait(later, example("tiny_resnet.onnx")));
      QCOMPARE(askedAbout.size(), 1);
      QCOMPARE(later.session().compileOptions().passes.optLevel, 3);
    }
    MainWindow next;
    next.projects().setUntitledRecoveryPrompt(answer(Recovery::Recover));
    QSignalSpy opened(&next, &MainWindow::fileOpened);
    QVERIFY(next.offerUntitledRecovery());
    QTRY_VERIFY_WITH_TIMEOUT(opened.count() > 0 && next.isIdle(), 120000);
    QCOMPARE(askedAbout.size(), 2);
    // The recovered work is open with its options, still untitled and unsaved.
    QCOMPARE(next.session().compileOptions().passes.optLevel, 1);
    QVERIFY(next.projects().isUntitled());
    QVERIFY(next.isWindowModified());
    QCOMPARE(QFileInfo(next.currentFile()), QFileInfo(model));
    // Discarding it on close removes the autosave: nothing is offered the next time.
    next.projects().setUnsavedPrompt([](const QString&) { return Unsaved::Discard; });
    QVERIFY(next.close());
    QVERIFY(!QFile::exists(autosave));
    MainWindow after;
    after.projects().setUntitledRecoveryPrompt(answer(Recovery::Recover));
    QVERIFY(!after.offerUntitledRecovery());
    QCOMPARE(askedAbout.size(), 2);
  }

  void openingTheSameModelAgainOffersItsUntitledAutosave() {
    QTemporaryDir dir;
    QString model = dir.filePath("again.onnx");
    QVERIFY(QFile::copy(example("tiny_resnet.onnx"), model));
    {
      MainWindow crashed;
      crashed.projects().setAutosaveInterval(50);
      QVERIFY(testing::openAndWait(crashed, model));
      crashed.projects().setPassOptions(withOptLevel(crashed.session().compileOptions(), 2));
      QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(QString::fromStdString(project::autosavePath(""))), 5000);
    }
    MainWindow next;
    int asked = 0;
    next.projects().setUntitledRecoveryPrompt([&](const QString&, const QDateTime&) {
      ++asked;
      return Recovery::Recover;
    });
    QVERIFY(testing::openAndWait(next, model));
    QCOMPARE(asked, 1);
    QCOMPARE(next.session().compileOptions().passes.optLevel, 2);
    QVERIFY(next.isWindowModified());
    next.projects().setUnsavedPrompt([](const QString&) { return Unsaved::Discard; });
    QVERIFY(next.close());
  }

  void measuredVariantsAreSavedWithTheProject() {
    QTemporaryDir dir;
    QString path = copyExampleProject(dir, 3);
    QString task;
    {
      MainWindow window;
      QVERIFY(testing::openAndWait(window, path));
      views::MeasureHistory* history = window.findChild<views::ScheduleWorkbench*>()->measurePanel()->history();
      QVERIFY(history->tasks().isEmpty());
      QVERIFY(!window.isWindowModified());
      task = QString::fromStdString(window.session().compiledModel()->kernels.front().name);
      // Measure (F5) times the open task in a child `tessel measure`.
      auto* workbench = window.findChild<views::ScheduleWorkbench*>();
      views::MeasurePanel* panel = workbench->measurePanel();
      driver::MeasureOptions quick;
      quick.minRepeats = 3;
      quick.minSeconds = 0.01;
      panel->setMeasureOptions(quick);
      QVERIFY(workbench->openTask(task));
      QSignalSpy measured(panel, &views::MeasurePanel::measured);
      QSignalSpy failed(panel, &views::MeasurePanel::measureFailed);
      window.studioAction("actionMeasure")->trigger();
      QTRY_VERIFY_WITH_TIMEOUT(measured.count() + failed.count() > 0, 120000);
      QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().at(1).toString()));
      QCOMPARE(history->variants(task).size(), size_t(1));
      driver::Measurement faster = history->variants(task)[0].measurement;
      QVERIFY(faster.medianMilliseconds > 0);
      QCOMPARE(QString::fromStdString(faster.kernelName), task);
      // A second, made-up variant twice as fast (timing is not what is tested here).
      faster.medianMilliseconds /= 2;
      history->add(task, "parallel(x, ax0)", faster);
      // A measurement is part of the work: the project has unsaved changes until saved.
      QVERIFY(window.isWindowModified());
      window.studioAction("actionSave")->trigger();
      QVERIFY(!window.isWindowModified());
    }
    MainWindow reopened;
    QVERIFY(testing::openAndWait(reopened, path));
    views::MeasureHistory* history = reopened.findChild<views::ScheduleWorkbench*>()->measurePanel()->history();
    QCOMPARE(history->tasks(), QStringList{task});
    QCOMPARE(history->variants(task).size(), size_t(2));
    QVERIFY(history->variants(task)[1].measurement.medianMilliseconds < history->variants(task)[0].measurement.medianMilliseconds);
    QCOMPARE(history->variants(task)[1].traceText, QStringLiteral("parallel(x, ax0)"));
    QCOMPARE(history->bestIndex(task), 1);
    // Restoring is not an edit.
    QVERIFY(!reopened.isWindowModified());
    // A model opened on its own starts with no history.
    QVERIFY(testing::openAndWait(reopened, example("tiny_resnet.onnx")));
    QVERIFY(history->tasks().isEmpty());
  }

  void closingWithUnsavedChangesAsks() {
    QTemporaryDir dir;
    QString path = copyExampleProject(dir, 3);
    MainWindow window;
    window.show();
    QVERIFY(testing::openAndWait(window, path));
    window.projects().setPassOptions(withOptLevel(window.session().compileOptions(), 0));
    int asked = 0;
    window.projects().setUnsavedPrompt([&](const QString&) {
      ++asked;
      return Unsaved::Cancel;
    });
    QVERIFY(!window.close());
    QCOMPARE(asked, 1);
    QVERIFY(window.isVisible());
    window.projects().setUnsavedPrompt([&](const QString&) {
      ++asked;
      return Unsaved::Save;
    });
    QVERIFY(window.close());
    QCOMPARE(asked, 2);
    QCOMPARE(savedOptLevel(path), 0);
  }

  void aModelOpenedAloneSavesAsANewProject() {
    QTemporaryDir dir;
    QString target = dir.filePath("mine.tessel");
    MainWindow window;
    QVERIFY(testing::openAndWait(window, example("tiny_resnet.onnx")));
    window.projects().setSaveAsPrompt([&](const QString& suggested) {
      // The suggestion is named after the model.
      return suggested.endsWith("tiny_resnet.tessel") ? target : QString();
    });
    window.studioAction("actionSave")->trigger();
    QVERIFY(QFile::exists(target));
    auto saved = project::loadProject(target.toStdString());
    QVERIFY(saved);
    QCOMPARE(QFileInfo(QString::fromStdString(saved->model)), QFileInfo(example("tiny_resnet.onnx")));
    QCOMPARE(window.currentFile(), target);
    QVERIFY(window.windowTitle().contains("mine.tessel"));
  }

  void aCorruptProjectIsReportedAndTheModelStays() {
    QTemporaryDir dir;
    QString corrupt = dir.filePath("broken.tessel");
    QFile file(corrupt);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("{\n  \"format\": \"tessel-project\",\n  \"version\": 1,\n  \"model\": \n}\n");
    file.close();
    MainWindow window;
    QVERIFY(testing::openAndWait(window, example("tiny_resnet.onnx")));
    QSignalSpy failed(&window, &MainWindow::openFailed);
    window.openFile(corrupt);
    QCOMPARE(failed.count(), 1);
    QString message = failed.at(0).at(1).toString();
    QVERIFY2(message.contains("broken.tessel"), qPrintable(message));
    QCOMPARE(QFileInfo(window.currentFile()), QFileInfo(example("tiny_resnet.onnx")));
    QVERIFY(window.session().compiledModel());
    // The corrupt file was not touched.
    QVERIFY(file.open(QIODevice::ReadOnly));
    QVERIFY(file.readAll().contains("\"model\": \n}"));
  }

  void exportForCiWritesAFolderWhoseJobRuns() {
    QTemporaryDir scratch;
    // The example with its reference data, copied so that the test edits nothing shipped.
    QDir examples(example(""));
    QVERIFY(QDir().mkpath(scratch.filePath("source/tiny_resnet/test_data_set_0")));
    for (const char* file : {"tiny_resnet.onnx", "tiny_resnet.tessel"})
      QVERIFY(QFile::copy(examples.filePath(file), scratch.filePath(QString("source/") + file)));
    for (const char* file : {"input_0.pb", "output_0.pb"})
      QVERIFY(QFile::copy(examples.filePath(QString("tiny_resnet/test_data_set_0/") + file),
                          scratch.filePath(QString("source/tiny_resnet/test_data_set_0/") + file)));
    MainWindow window;
    QVERIFY(testing::openAndWait(window, scratch.filePath("source/tiny_resnet.tessel")));
    QVERIFY(window.studioAction("actionExportForCi")->isEnabled());
    // An unsaved edit: the export is of the project as the Studio shows it.
    window.projects().setPassOptions(withOptLevel(window.session().compileOptions(), 2));
    QVERIFY(window.projects().isModified());

    // This Tessel's packages travel along (TESSEL_PACKAGES_DIR here; build/packages by default).
    QVERIFY(QDir().mkpath(scratch.filePath("debs")));
    QFile deb(scratch.filePath("debs/tessel_9.9_amd64.deb"));
    QVERIFY(deb.open(QIODevice::WriteOnly));
    deb.write("!<arch>\n");
    deb.close();
    qputenv("TESSEL_PACKAGES_DIR", scratch.filePath("debs").toUtf8());

    QString folder = scratch.filePath("for-ci");
    QSignalSpy exported(&window, &MainWindow::exportedForCi);
    window.exportForCi(folder);
    QVERIFY(exported.wait(60000));
    QVERIFY2(exported.at(0).at(1).toBool(), qPrintable(exported.at(0).at(2).toString()));
    for (const char* file : {"tiny_resnet.tessel", "model/tiny_resnet.onnx", "reference/input_0.pb", "reference/output_0.pb",
                             "ci/run-project.sh", ".gitlab-ci.yml", ".github/workflows/tessel.yml",
                             "tessel-packages/README.md", "tessel-packages/tessel_9.9_amd64.deb", "README.md"})
      QVERIFY2(QFileInfo::exists(folder + "/" + file), file);
    qunsetenv("TESSEL_PACKAGES_DIR");
    // Self-contained: the project names only files inside the folder, and keeps the edit.
    auto written = project::loadProject((folder + "/tiny_resnet.tessel").toStdString());
    QVERIFY2(written, written ? "" : written.error().toString().c_str());
    QCOMPARE(written->passes.optLevel, 2);
    QVERIFY(QString::fromStdString(written->model).startsWith(folder));
    QVERIFY(QString::fromStdString(written->reference.directory).startsWith(folder));
    QFile text(folder + "/tiny_resnet.tessel");
    QVERIFY(text.open(QIODevice::ReadOnly));
    QByteArray json = text.readAll();
    QVERIFY2(json.contains("\"model\": \"model/tiny_resnet.onnx\"") && !json.contains(scratch.path().toUtf8()),
             json.constData());

    // The jobs are YAML that GitLab and GitHub would accept: the structure they read, each
    // running the one script and publishing its JUnit report.
    QProcess python;
    python.start("/usr/bin/python3", {TESSEL_SOURCE_DIR "/tests/studio/check_ci_jobs.py", folder});
    QVERIFY(python.waitForFinished(30000));
    QVERIFY2(python.exitCode() == 0 && python.readAllStandardOutput().contains("yaml ok"),
             python.readAllStandardError().constData());

    // The command the jobs run, run here with the tessel just built.
    QProcess job;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert("PATH", TESSEL_BINARY_DIR "/bin:" + environment.value("PATH"));
    job.setProcessEnvironment(environment);
    job.setWorkingDirectory(scratch.path());  // the script finds its folder itself
    job.start("sh", {folder + "/ci/run-project.sh", "--repeat", "3"});
    QVERIFY(job.waitForFinished(120000));
    QByteArray output = job.readAllStandardOutput() + job.readAllStandardError();
    QVERIFY2(job.exitCode() == 0, output.constData());
    QVERIFY2(output.contains("verify=match"), output.constData());
    QFile report(folder + "/tessel-report.xml");
    QVERIFY(report.open(QIODevice::ReadOnly));
    QByteArray xml = report.readAll();
    QVERIFY2(xml.contains("<testcase") && xml.contains("failures=\"0\"") && xml.contains("errors=\"0\""), xml.constData());
  }

  void openExampleProjectOpensAnEditableCopy() {
    // The build tree has build/share/tessel beside build/bin and build/tests, as an install has.
    QVERIFY2(!project::exampleProjectPath().empty(), "no share/tessel/examples beside the test binary");
    QTemporaryDir data;
    qputenv("XDG_DATA_HOME", data.path().toUtf8());
    MainWindow window;
    window.studioAction("actionOpenExample")->trigger();
    QString copy = data.filePath("tessel/examples/tiny_resnet.tessel");
    QTRY_VERIFY_WITH_TIMEOUT(window.currentFile() == copy && window.session().compiledModel(), 120000);
    QVERIFY(QFileInfo(data.filePath("tessel/examples/tiny_resnet/test_data_set_0/output_0.pb")).exists());
    // The copy is the user's: an edit saved there is what the next Open Example opens.
    window.projects().setPassOptions(withOptLevel(window.session().compileOptions(), 1));
    window.studioAction("actionSave")->trigger();
    QCOMPARE(savedOptLevel(copy), 1);
    MainWindow again;
    again.studioAction("actionOpenExample")->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(again.currentFile() == copy && again.session().compiledModel(), 120000);
    QCOMPARE(again.session().compileOptions().passes.optLevel, 1);
    qunsetenv("XDG_DATA_HOME");
  }
};

QTEST_MAIN(TestStudioProjects)
#include "test_studio_projects.moc"
