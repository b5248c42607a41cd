// `tessel project` as CI meets it: the shipped example runs and passes; a failed expectation,
// outputs that differ from the reference and a broken schedule each give their own exit status
// and say what went wrong; `project new` and `project check` make and validate projects.
#include <QProcess>
#include <QtTest>

#include <QJsonDocument>
#include <QJsonObject>
#include <QXmlStreamReader>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "CliTestSupport.h"

#include "app/project/Project.h"

namespace {

using testing::describe;
using testing::keyValues;
using testing::Run;
using testing::kTessel;
using testing::runTessel;
namespace fs = std::filesystem;

const QString kExampleProject = QStringLiteral(TESSEL_SOURCE_DIR "/resources/examples/tiny_resnet.tessel");
const QString kExampleModel = QStringLiteral(TESSEL_SOURCE_DIR "/resources/examples/tiny_resnet.onnx");

tessel::project::Project exampleProject() {
  auto loaded = tessel::project::loadProject(kExampleProject.toStdString());
  if (!loaded) qFatal("%s", loaded.error().toString().c_str());
  return *loaded;
}

/// A JUnit report as a CI test reporter reads it.
struct JUnit {
  bool wellFormed = false;
  QString error;
  QMap<QString, QString> suite;  ///< The <testsuite> element's attributes.
  /// Test case name -> "passed", "failure", "error" or "skipped".
  QMap<QString, QString> outcomes;
  QMap<QString, QString> messages;  ///< Test case name -> its failure/error/skipped message.
  QStringList order;                ///< Test case names as they appear.
};

JUnit readJUnit(const QString& path) {
  JUnit report;
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) {
    report.error = "cannot open " + path;
    return report;
  }
  QXmlStreamReader xml(&file);
  QString current;
  while (!xml.atEnd()) {
    if (xml.readNext() != QXmlStreamReader::StartElement) continue;
    if (xml.name() == u"testsuite") {
      for (const QXmlStreamAttribute& attribute : xml.attributes())
        report.suite[attribute.name().toString()] = attribute.value().toString();
    } else if (xml.name() == u"testcase") {
      current = xml.attributes().value("name").toString();
      report.order << current;
      report.outcomes[current] = "passed";
    } else if (xml.name() == u"failure" || xml.name() == u"error" || xml.name() == u"skipped") {
      report.outcomes[current] = xml.name().toString();
      report.messages[current] = xml.attributes().value("message").toString();
    }
  }
  report.wellFormed = !xml.hasError();
  if (xml.hasError()) report.error = xml.errorString();
  return report;
}

}  // namespace

class TestProjectCli : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() {
    QVERIFY2(QFileInfo(kTessel).isExecutable(), qPrintable(kTessel + " is not built"));
    QVERIFY(directory_.isValid());
  }

  void helpNamesTheSubcommandsAndExitCodes() {
    Run top = runTessel({"--help"});
    QVERIFY2(top.out.contains("project run"), qPrintable(top.out));
    Run project = runTessel({"project", "--help"});
    QVERIFY2(project.exitCode == 0, qPrintable(describe({"project", "--help"}, project)));
    for (const char* subcommand : {"run", "new", "check", "tasks", "export-ci"})
      QVERIFY2(project.out.contains(subcommand), qPrintable(project.out));
    Run run = runTessel({"project", "run", "--help"});
    for (const char* mention : {"--threads", "--repeat", "--export", "--json", "3", "4"})
      QVERIFY2(run.out.contains(mention), qPrintable(run.out));
  }

  // `project export-ci`: the Studio's Export for CI from a script, Tessel's packages included;
  // the folder's job command passes with the tessel just built.
  void exportCiWritesAFolderWithThePackages() {
    QTemporaryDir scratch;
    QDir().mkpath(scratch.filePath("debs"));
    for (const char* name : {"tessel_9.9_amd64.deb", "libtessel-runtime_9.9_amd64.deb", "unrelated_1.0_amd64.deb"}) {
      QFile deb(scratch.filePath(QString("debs/") + name));
      QVERIFY(deb.open(QIODevice::WriteOnly));
      deb.write("!<arch>\n");
    }
    QString folder = scratch.filePath("ci");
    QStringList arguments{"project", "export-ci", kExampleProject, "-o", folder, "--packages", scratch.filePath("debs")};
    Run exported = runTessel(arguments);
    QVERIFY2(exported.exitCode == 0, qPrintable(describe(arguments, exported)));
    auto values = keyValues(exported.out);
    QCOMPARE(values["packages"], QString("2"));  // Tessel's own, not the unrelated one
    QVERIFY(QFileInfo::exists(folder + "/tessel-packages/tessel_9.9_amd64.deb"));
    QVERIFY(!QFileInfo::exists(folder + "/tessel-packages/unrelated_1.0_amd64.deb"));
    QFile readme(folder + "/tessel-packages/README.md");
    QVERIFY(readme.open(QIODevice::ReadOnly));
    QVERIFY(readme.readAll().contains("libtessel-runtime_9.9_amd64.deb"));
    for (const char* file : {"tiny_resnet.tessel", "ci/run-project.sh", ".gitlab-ci.yml", ".github/workflows/tessel.yml"})
      QVERIFY2(QFileInfo::exists(folder + "/" + file), file);

    QProcess job;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert("PATH", QFileInfo(kTessel).absolutePath() + ":" + environment.value("PATH"));
    job.setProcessEnvironment(environment);
    job.start("sh", {folder + "/ci/run-project.sh", "--repeat", "3"});
    QVERIFY(job.waitForFinished(120000));
    QVERIFY2(job.exitCode() == 0, (job.readAllStandardOutput() + job.readAllStandardError()).constData());
    QVERIFY(QFileInfo::exists(folder + "/tessel-report.xml"));

    // No packages where it was told to look is an error; --no-packages says where they go.
    QStringList nowhere{"project", "export-ci", kExampleProject, "-o", scratch.filePath("ci2"), "--packages",
                        scratch.filePath("none")};
    Run refused = runTessel(nowhere);
    QVERIFY2(refused.exitCode == 2 && refused.err.contains("no Tessel .deb packages here"),
             qPrintable(describe(nowhere, refused)));
    QStringList without{"project", "export-ci", kExampleProject, "-o", scratch.filePath("ci3"), "--no-packages"};
    Run bare = runTessel(without);
    QVERIFY2(bare.exitCode == 0 && bare.err.contains("no .deb packages were copied"), qPrintable(describe(without, bare)));
    QCOMPARE(keyValues(bare.out)["packages"], QString("0"));
  }

  void exampleProjectRunsAndPasses() {
    QStringList arguments{"project", "run", kExampleProject, "--repeat", "5", "--threads", "1"};
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(arguments, run)));
    auto values = keyValues(run.out);
    QCOMPARE(values["verify"], QString("match"));
    QCOMPARE(values["tasks_edited"], QString("1"));
    QCOMPARE(values["runs"], QString("5"));
    QCOMPARE(values["threads"], QString("1"));
    QCOMPARE(values["expectations"], QString("pass"));
    bool ok = false;
    double latency = values["latency_ms"].toDouble(&ok);
    QVERIFY2(ok && latency > 0, qPrintable(describe(arguments, run)));
    QVERIFY2(run.out.contains("expectation max_latency_ms: measured") && run.out.contains(": PASS"),
             qPrintable(run.out));
    QVERIFY2(run.out.contains("output 'probabilities' matches"), qPrintable(run.out));
  }

  void jsonSummaryAndExport() {
    QString exportDir = directory_.filePath("module");
    QString junitPath = directory_.filePath("passing.xml");
    QStringList arguments{"project", "run", kExampleProject, "--repeat", "2", "--json", "--export", exportDir,
                          "--junit", junitPath};
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(arguments, run)));

    // Every check a test reporter should list, passed, in the order the run made them.
    JUnit junit = readJUnit(junitPath);
    QVERIFY2(junit.wellFormed, qPrintable(junit.error));
    QCOMPARE(junit.order, QStringList({"compile", "output probabilities", "benchmark", "expectation max_latency_ms",
                                       "export"}));
    for (const QString& test : junit.order) QCOMPARE(junit.outcomes[test], QString("passed"));
    QCOMPARE(junit.suite["name"], QString("tiny_resnet"));
    QCOMPARE(junit.suite["tests"], QString("5"));
    QCOMPARE(junit.suite["failures"], QString("0"));
    QCOMPARE(junit.suite["errors"], QString("0"));
    QVERIFY(!junit.suite["timestamp"].isEmpty());
    QJsonParseError error;
    QJsonObject summary = QJsonDocument::fromJson(run.out.toUtf8(), &error).object();
    QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(run.out));
    QCOMPARE(summary["verify"].toString(), QString("match"));
    QVERIFY(summary["latency_ms"].toDouble() > 0);
    QCOMPARE(summary["exported_to"].toString(), exportDir);
    QVERIFY2(QFileInfo(exportDir + "/graph.json").exists(), qPrintable(describe(arguments, run)));
  }

  void savedBaselineIsCheckedByLaterRuns() {
    tessel::project::Project project = exampleProject();
    project.benchmark.baselineMs.reset();
    project.benchmark.maxRatio.reset();
    std::string path = directory_.filePath("baseline.tessel").toStdString();
    QVERIFY(tessel::project::saveProject(project, path).ok());
    QStringList arguments{"project", "run", QString::fromStdString(path), "--repeat", "3", "--save-baseline"};
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 0, qPrintable(describe(arguments, run)));
    auto saved = tessel::project::loadProject(path);
    QVERIFY(saved.ok());
    QVERIFY(saved->benchmark.baselineMs && saved->benchmark.maxRatio);
    // The summary prints four decimals; the project keeps the full value.
    QVERIFY2(qAbs(*saved->benchmark.baselineMs - keyValues(run.out)["latency_ms"].toDouble()) <= 1e-4,
             qPrintable(describe(arguments, run)));
    QVERIFY2(run.err.contains("baseline_ms="), qPrintable(run.err));

    QStringList again{"project", "run", QString::fromStdString(path), "--repeat", "3"};
    Run checked = runTessel(again);
    QVERIFY2(checked.out.contains("expectation max_ratio: measured"), qPrintable(describe(again, checked)));
  }

  void failingExpectationExitsFour() {
    tessel::project::Project project = exampleProject();
    // No run of a real model takes a picosecond, however fast the machine.
    project.benchmark.maxLatencyMs = 1e-9;
    project.benchmark.baselineMs = 1e-6;
    project.benchmark.maxRatio = 1.5;
    std::string path = directory_.filePath("too_strict.tessel").toStdString();
    QVERIFY(tessel::project::saveProject(project, path).ok());
    QString junitPath = directory_.filePath("too_strict.xml");
    QStringList arguments{"project", "run", QString::fromStdString(path), "--repeat", "3", "--junit", junitPath};
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 4, qPrintable(describe(arguments, run)));
    JUnit junit = readJUnit(junitPath);
    QVERIFY2(junit.wellFormed, qPrintable(junit.error));
    QCOMPARE(junit.outcomes["output probabilities"], QString("passed"));
    QCOMPARE(junit.outcomes["benchmark"], QString("passed"));
    QCOMPARE(junit.outcomes["expectation max_latency_ms"], QString("failure"));
    QCOMPARE(junit.outcomes["expectation max_ratio"], QString("failure"));
    QVERIFY2(junit.messages["expectation max_latency_ms"].contains("limit 1e-09 ms: FAIL"),
             qPrintable(junit.messages["expectation max_latency_ms"]));
    QCOMPARE(junit.suite["failures"], QString("2"));
    auto values = keyValues(run.out);
    QCOMPARE(values["verify"], QString("match"));
    QCOMPARE(values["expectations"], QString("fail"));
    QVERIFY2(run.out.contains("expectation max_latency_ms: measured") && run.out.contains("limit 1e-09 ms: FAIL"),
             qPrintable(run.out));
    QVERIFY2(run.out.contains("expectation max_ratio: measured") && run.out.contains("baseline"), qPrintable(run.out));
    QVERIFY2(run.err.contains("expectation failed: max_latency_ms"), qPrintable(run.err));
  }

  void brokenScheduleExitsTwoNamingTaskAndLine() {
    tessel::project::Project project = exampleProject();
    QVERIFY(!project.tasks.empty());
    std::string task = project.tasks[0].task;
    project.tasks[0].trace = project.tasks[0].trace + "unroll(softmax, no_such_axis)\n";
    int badLine = int(std::count(project.tasks[0].trace.begin(), project.tasks[0].trace.end(), '\n'));
    std::string path = directory_.filePath("broken_schedule.tessel").toStdString();
    QVERIFY(tessel::project::saveProject(project, path).ok());
    QString junitPath = directory_.filePath("broken_schedule.xml");
    QStringList arguments{"project", "run", QString::fromStdString(path), "--junit", junitPath};
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 2, qPrintable(describe(arguments, run)));
    // The report exists though the run stopped: the error is its one test case.
    JUnit junit = readJUnit(junitPath);
    QVERIFY2(junit.wellFormed, qPrintable(junit.error));
    QCOMPARE(junit.order, QStringList({"compile"}));
    QCOMPARE(junit.outcomes["compile"], QString("error"));
    QVERIFY2(junit.messages["compile"].contains("no_such_axis") &&
                 junit.messages["compile"].contains(QString(":%1:").arg(badLine)),
             qPrintable(junit.messages["compile"]));
    QVERIFY2(run.err.contains(QString::fromStdString(task)), qPrintable(run.err));
    QVERIFY2(run.err.contains(QString(":%1:").arg(badLine)), qPrintable(run.err));
    QVERIFY2(run.err.contains("no_such_axis"), qPrintable(run.err));
    QVERIFY2(!run.out.contains("latency_ms="), qPrintable(run.out));
  }

  void outputsDifferingFromTheReferenceExitThree() {
    tessel::project::Project project = exampleProject();
    // The reference data with its expected output changed: the model cannot reproduce it.
    fs::path reference = directory_.filePath("wrong_reference").toStdString();
    fs::create_directories(reference);
    fs::copy_file(fs::path(project.reference.directory) / "input_0.pb", reference / "input_0.pb");
    fs::copy_file(fs::path(project.reference.directory) / "output_0.pb", reference / "output_0.pb");
    {
      // The float data is the end of the TensorProto: make the last probability a large number.
      std::fstream file(reference / "output_0.pb", std::ios::in | std::ios::out | std::ios::binary);
      file.seekp(-1, std::ios::end);
      file.put(char(0x4f));
    }
    project.reference.directory = reference.string();
    std::string path = directory_.filePath("mismatch.tessel").toStdString();
    QVERIFY(tessel::project::saveProject(project, path).ok());
    QString junitPath = directory_.filePath("mismatch.xml");
    QStringList arguments{"project", "run", QString::fromStdString(path), "--junit", junitPath};
    Run run = runTessel(arguments);
    QVERIFY2(run.finished && run.exitCode == 3, qPrintable(describe(arguments, run)));
    JUnit junit = readJUnit(junitPath);
    QVERIFY2(junit.wellFormed, qPrintable(junit.error));
    QCOMPARE(junit.outcomes["output probabilities"], QString("failure"));
    QVERIFY2(junit.messages["output probabilities"].contains("worst at"),
             qPrintable(junit.messages["output probabilities"]));
    QCOMPARE(junit.outcomes["benchmark"], QString("skipped"));
    QCOMPARE(keyValues(run.out)["verify"], QString("mismatch"));
    QVERIFY2(run.out.contains("worst at"), qPrintable(run.out));
    QVERIFY2(!run.out.contains("latency_ms="), qPrintable(run.out));
    QVERIFY2(run.err.contains(QString::fromStdString(reference.string())), qPrintable(run.err));
  }

  void badProjectFileExitsTwoAndIsLeftAlone() {
    QString path = directory_.filePath("newer.tessel");
    QByteArray text = R"({"format": "tessel-project", "version": 3, "model": "x.onnx"})";
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(text);
    file.close();
    for (const char* subcommand : {"run", "check"}) {
      QStringList arguments{"project", subcommand, path};
      Run run = runTessel(arguments);
      QVERIFY2(run.finished && run.exitCode == 2, qPrintable(describe(arguments, run)));
      QVERIFY2(run.err.contains(path) && run.err.contains("newer Tessel (version 3)"), qPrintable(run.err));
    }
    QString junitPath = directory_.filePath("newer.xml");
    Run reported = runTessel({"project", "run", path, "--junit", junitPath});
    QCOMPARE(reported.exitCode, 2);
    JUnit junit = readJUnit(junitPath);
    QVERIFY2(junit.wellFormed, qPrintable(junit.error));
    QCOMPARE(junit.outcomes["compile"], QString("error"));
    QVERIFY2(junit.messages["compile"].contains("newer Tessel"), qPrintable(junit.messages["compile"]));
    QFile again(path);
    QVERIFY(again.open(QIODevice::ReadOnly));
    QCOMPARE(again.readAll(), text);
  }

  void newWritesAProjectThatChecksAndRuns() {
    QString path = directory_.filePath("starter.tessel");
    QStringList arguments{"project", "new", kExampleModel, "-o", path};
    Run created = runTessel(arguments);
    QVERIFY2(created.finished && created.exitCode == 0, qPrintable(describe(arguments, created)));
    QVERIFY2(keyValues(created.out)["reference"].endsWith("test_data_set_0"), qPrintable(created.out));

    Run again = runTessel(arguments);
    QVERIFY2(again.exitCode == 2 && again.err.contains("--force"), qPrintable(describe(arguments, again)));

    QStringList check{"project", "check", path, "--compile"};
    Run checked = runTessel(check);
    QVERIFY2(checked.finished && checked.exitCode == 0, qPrintable(describe(check, checked)));
    QCOMPARE(keyValues(checked.out)["result"], QString("valid"));

    QStringList tasks{"project", "tasks", path};
    Run listed = runTessel(tasks);
    QVERIFY2(listed.finished && listed.exitCode == 0, qPrintable(describe(tasks, listed)));
    QVERIFY2(listed.out.contains("Softmax"), qPrintable(listed.out));

    QStringList run{"project", "run", path, "--repeat", "2"};
    Run ran = runTessel(run);
    QVERIFY2(ran.finished && ran.exitCode == 0, qPrintable(describe(run, ran)));
    QCOMPARE(keyValues(ran.out)["verify"], QString("match"));
    QCOMPARE(keyValues(ran.out)["expectations"], QString("none"));
  }

  void checkWithCompileCatchesAStaleWorkload() {
    tessel::project::Project project = exampleProject();
    project.tasks[0].workload = "softmax_1x1000_axis1";
    std::string path = directory_.filePath("stale.tessel").toStdString();
    QVERIFY(tessel::project::saveProject(project, path).ok());
    Run plain = runTessel({"project", "check", QString::fromStdString(path)});
    QCOMPARE(plain.exitCode, 0);
    QStringList arguments{"project", "check", QString::fromStdString(path), "--compile"};
    Run compiled = runTessel(arguments);
    QVERIFY2(compiled.exitCode == 2 && compiled.err.contains("model changed"), qPrintable(describe(arguments, compiled)));
  }

private:
  QTemporaryDir directory_;
};

QTEST_GUILESS_MAIN(TestProjectCli)
#include "test_project_cli.moc"
