// Project files as a user meets them: save and open give the same project back, a failed save
// leaves the old file whole, damaged or newer files are refused with a message that says where
// and what to do (and are never overwritten), and an autosave is offered after a crash.
#include <QtTest>

#include <filesystem>
#include <fstream>

#include "app/project/AtomicFile.h"
#include "app/project/Autosave.h"
#include "app/project/Project.h"
#include "compiler/driver/Driver.h"

namespace {

using namespace tessel;
namespace fs = std::filesystem;

const std::string kExamples = TESSEL_SOURCE_DIR "/resources/examples";
const std::string kModel = kExamples + "/tiny_resnet.onnx";
const std::string kDataSet = kExamples + "/tiny_resnet/test_data_set_0";

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeFile(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// A pass option and a value it accepts, from the pass manager (empty when no pass has one).
std::pair<std::string, std::string> someConfigEntry() {
  graph::PassManager passes = driver::standardPasses();
  for (auto& pass : passes.passes())
    for (auto& option : pass.options)
      if (!option.values.empty()) return {pass.name + "." + option.name, option.values.back()};
  return {};
}

// A project with every setting away from its default.
project::Project fullProject(const std::string& directory) {
  project::Project p;
  p.model = kModel;
  p.inputShapes["image"] = {1, 3, 32, 32};
  p.target = {4, 8};
  p.passes.optLevel = 2;
  p.passes.disabledPasses = {driver::standardPasses().passNames().front()};
  if (auto entry = someConfigEntry(); !entry.first.empty()) p.passes.config[entry.first] = entry.second;
  p.tasks.push_back({"Softmax__Softmax", "softmax_1x10_axis1", "vectorize(softmax.exp, ax1)\n"});
  p.tasks.push_back({"fused_DensePrepacked_Add", "fused_DensePrepacked_Add_1x10", "compute_inline(C)"});
  p.tuningRecords = directory + "/records/tiny_resnet.jsonl";
  p.exportSettings = {true, directory + "/deploy"};
  p.reference = {kDataSet, 1e-4, 1e-6};
  p.benchmark.repeats = 7;
  p.benchmark.threads = 2;
  p.benchmark.maxLatencyMs = 12.5;
  p.benchmark.baselineMs = 0.25;
  p.benchmark.maxRatio = 1.5;
  p.measurements = R"({"Softmax__Softmax":[{"medianMs":0.02,"number":1,"trace":""}]})";
  p.metadata = R"({"owner":"ci","ticket":42})";
  return p;
}

// A minimal valid document around `body` (extra top-level members, each followed by a comma).
std::string documentWith(const std::string& body, const std::string& model = kModel) {
  return "{\n  \"format\": \"tessel-project\",\n  \"version\": 1,\n" + body + "  \"model\": \"" + model + "\"\n}\n";
}

}  // namespace

class TestProjectFile : public QObject {
  Q_OBJECT
private slots:
  void init() {
    QVERIFY(directory_.isValid());
    root_ = directory_.path().toStdString();
    qputenv("XDG_STATE_HOME", QByteArray::fromStdString(root_ + "/state"));
  }

  void saveThenLoadGivesTheSameProject() {
    std::string path = root_ + "/projects/tiny.tessel";
    fs::create_directories(root_ + "/projects");
    project::Project original = fullProject(root_);
    Status saved = project::saveProject(original, path);
    QVERIFY2(saved.ok(), saved.ok() ? "" : saved.error().toString().c_str());
    auto loaded = project::loadProject(path);
    QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().toString().c_str());
    QVERIFY(*loaded == original);
    // Saved again, the file is byte for byte the same: no churn in version control.
    std::string first = readFile(path);
    QVERIFY(project::saveProject(*loaded, path).ok());
    QCOMPARE(QString::fromStdString(readFile(path)), QString::fromStdString(first));
  }

  void pathsAreStoredRelativeSoAProjectCanMove() {
    fs::create_directories(root_ + "/a/models");
    fs::copy_file(kModel, root_ + "/a/models/net.onnx");
    project::Project p;
    p.model = root_ + "/a/models/net.onnx";
    p.exportSettings.directory = root_ + "/a/out";
    QVERIFY(project::saveProject(p, root_ + "/a/net.tessel").ok());
    QString text = QString::fromStdString(readFile(root_ + "/a/net.tessel"));
    QVERIFY2(text.contains("\"models/net.onnx\"") && !text.contains(QString::fromStdString(root_)), qPrintable(text));

    fs::rename(root_ + "/a", root_ + "/b");
    auto moved = project::loadProject(root_ + "/b/net.tessel");
    QVERIFY2(moved.ok(), moved.ok() ? "" : moved.error().toString().c_str());
    QCOMPARE(QString::fromStdString(moved->model), QString::fromStdString(root_ + "/b/models/net.onnx"));
    QCOMPARE(QString::fromStdString(moved->exportSettings.directory), QString::fromStdString(root_ + "/b/out"));
  }

  void failedWriteLeavesTheOldFileWhole() {
    std::string path = root_ + "/keep.tessel";
    QVERIFY(project::saveProject(fullProject(root_), path).ok());
    std::string before = readFile(path);

    project::AtomicWriteHooks hooks;
    hooks.beforeRename = [](const std::string& temporary) -> Status {
      return Diagnostic{"injected failure (disk full)", temporary, 0, 0, ""};
    };
    Status failed = project::writeFileAtomically(path, "{ half a proj", hooks);
    QVERIFY(!failed.ok());
    QVERIFY2(QString::fromStdString(failed.error().toString()).contains("disk full"), failed.error().toString().c_str());
    QCOMPARE(QString::fromStdString(readFile(path)), QString::fromStdString(before));
    QVERIFY(!fs::exists(path + ".tmp"));

    // A real failure: the temporary file cannot be created (its name is taken by a directory).
    fs::create_directory(path + ".tmp");
    project::Project changed = fullProject(root_);
    changed.benchmark.repeats = 99;
    Status blocked = project::saveProject(changed, path);
    QVERIFY(!blocked.ok());
    QVERIFY2(QString::fromStdString(blocked.error().toString()).contains(QString::fromStdString(path)),
             blocked.error().toString().c_str());
    QCOMPARE(QString::fromStdString(readFile(path)), QString::fromStdString(before));
    fs::remove(path + ".tmp");
    QVERIFY(project::saveProject(changed, path).ok());
    QCOMPARE(project::loadProject(path)->benchmark.repeats, 99);
  }

  void savingThroughASymbolicLinkKeepsTheLink() {
    fs::create_directories(root_ + "/dotfiles");
    std::string target = root_ + "/dotfiles/real.tessel", link = root_ + "/linked.tessel";
    QVERIFY(project::saveProject(fullProject(root_), target).ok());
    fs::create_symlink("dotfiles/real.tessel", link);
    project::Project changed = fullProject(root_);
    changed.benchmark.repeats = 3;
    QVERIFY(project::saveProject(changed, link).ok());
    QVERIFY(fs::is_symlink(link));
    QVERIFY(*project::loadProject(link) == changed);
    QCOMPARE(project::loadProject(target, project::FileChecks::Skipped)->benchmark.repeats, 3);
  }

  void badFilesAreReportedAndNeverOverwritten_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QStringList>("mentions");
    QTest::addColumn<int>("line");
    QTest::addColumn<int>("column");
    QString missingComma = "{\n  \"format\": \"tessel-project\",\n  \"version\": 1\n  \"model\": \"x.onnx\"\n}\n";
    QTest::newRow("corrupt JSON") << missingComma << QStringList{"not valid JSON"} << 4 << 3;
    QTest::newRow("truncated") << QString("{\n  \"format\": \"tessel-pro") << QStringList{"not valid JSON"} << 2 << 0;
    QTest::newRow("empty file") << QString("") << QStringList{"not valid JSON"} << 1 << 0;
    QTest::newRow("not an object") << QString("[1, 2]") << QStringList{"not a Tessel project"} << 0 << 0;
    QTest::newRow("other format") << QString(R"({"format": "netron-layout", "version": 1})")
                                  << QStringList{"not a Tessel project", "netron-layout"} << 0 << 0;
    QTest::newRow("newer version")
        << QString(R"({"format": "tessel-project", "version": 3, "model": "x.onnx", "gpu_graphs": {}})")
        << QStringList{"written by a newer Tessel (version 3); this build reads version 1"} << 0 << 0;
    QTest::newRow("version as text") << QString::fromStdString(documentWith("")).replace("\"version\": 1", "\"version\": \"1\"")
                                     << QStringList{"version", "whole number", "\"1\""} << 0 << 0;
    QTest::newRow("threads as text") << QString::fromStdString(documentWith("  \"target\": {\"threads\": \"four\"},\n"))
                                     << QStringList{"target.threads", "expected a whole number", "\"four\""} << 0 << 0;
    QTest::newRow("negative tolerance")
        << QString::fromStdString(documentWith("  \"reference\": {\"rtol\": -1},\n"))
        << QStringList{"reference.rtol", "non-negative"} << 0 << 0;
    QTest::newRow("misspelled key")
        << QString::fromStdString(documentWith("  \"benchmark\": {\"max_latncy_ms\": 5},\n"))
        << QStringList{"benchmark.max_latncy_ms", "unknown key", "max_latency_ms"} << 0 << 0;
    QTest::newRow("baseline without ratio")
        << QString::fromStdString(documentWith("  \"benchmark\": {\"baseline_ms\": 5},\n"))
        << QStringList{"benchmark.max_ratio", "baseline_ms"} << 0 << 0;
    QTest::newRow("unknown pass") << QString::fromStdString(documentWith("  \"passes\": {\"disabled\": [\"FuseEverything\"]},\n"))
                                  << QStringList{"passes", "FuseEverything"} << 0 << 0;
    QTest::newRow("task without trace")
        << QString::fromStdString(documentWith("  \"tasks\": [{\"name\": \"a\", \"workload\": \"w\"}],\n"))
        << QStringList{"tasks[0].trace", "missing"} << 0 << 0;
    QTest::newRow("bad trace on line 2 of task 2")
        << QString::fromStdString(documentWith("  \"tasks\": [{\"name\": \"a\", \"workload\": \"w\", \"trace\": \"\"},\n"
                                               "    {\"name\": \"b\", \"workload\": \"w\", \"trace\": [\"unroll(s, x)\", "
                                               "\"split(s x)\"]}],\n"))
        << QStringList{"tasks[1].trace", "line 2, column"} << 0 << 0;
    QTest::newRow("task edited twice")
        << QString::fromStdString(documentWith("  \"tasks\": [{\"name\": \"a\", \"workload\": \"w\", \"trace\": \"\"},\n"
                                               "    {\"name\": \"a\", \"workload\": \"w\", \"trace\": \"\"}],\n"))
        << QStringList{"tasks[1].name", "twice", "tasks[0]"} << 0 << 0;
  }
  void badFilesAreReportedAndNeverOverwritten() {
    QFETCH(QString, text);
    QFETCH(QStringList, mentions);
    QFETCH(int, line);
    QFETCH(int, column);
    std::string path = root_ + "/bad.tessel";
    writeFile(path, text.toStdString());

    auto loaded = project::loadProject(path);
    QVERIFY(!loaded.ok());
    QString message = QString::fromStdString(loaded.error().toString());
    QVERIFY2(message.startsWith(QString::fromStdString(path)), qPrintable(message));
    for (const QString& mention : mentions) QVERIFY2(message.contains(mention), qPrintable(message));
    QCOMPARE(loaded.error().line, line);
    if (column > 0) QCOMPARE(loaded.error().column, column);

    Status saved = project::saveProject(fullProject(root_), path);
    QVERIFY(!saved.ok());
    QVERIFY2(QString::fromStdString(saved.error().toString()).contains("another name"), saved.error().toString().c_str());
    QCOMPARE(QString::fromStdString(readFile(path)), text);
  }

  // A missing model is worth reporting when opening, but the file itself is fine: saving the
  // project with the model fixed may replace it.
  void missingModelIsReportedButTheFileMayBeSaved() {
    std::string path = root_ + "/moved.tessel";
    writeFile(path, documentWith("", "models/gone.onnx"));
    auto loaded = project::loadProject(path);
    QVERIFY(!loaded.ok());
    QString message = QString::fromStdString(loaded.error().toString());
    QVERIFY2(message.contains("model") && message.contains("models/gone.onnx") && message.contains("no such file"),
             qPrintable(message));
    QVERIFY(project::loadProject(path, project::FileChecks::Skipped).ok());
    QVERIFY(project::saveProject(fullProject(root_), path).ok());
    QVERIFY(project::loadProject(path).ok());
  }

  void inputShapesMustNameModelInputs() {
    std::string path = root_ + "/shapes.tessel";
    writeFile(path, documentWith("  \"input_shapes\": {\"imagee\": [1, 3, 32, 32]},\n"));
    auto loaded = project::loadProject(path);
    QVERIFY(!loaded.ok());
    QString message = QString::fromStdString(loaded.error().toString());
    QVERIFY2(message.contains("input_shapes.imagee") && message.contains("image"), qPrintable(message));
    writeFile(path, documentWith("  \"input_shapes\": {\"image\": [1, 3, 32, 32]},\n"));
    QVERIFY(project::loadProject(path).ok());
  }

  void measurementsAreCheckedAndKept() {
    std::string path = root_ + "/measured.tessel";
    writeFile(path, documentWith("  \"measurements\": {\"conv0\": [{\"medianMs\": 0.5}, {\"number\": 2}]},\n"));
    auto loaded = project::loadProject(path);
    QVERIFY(!loaded.ok());
    QString message = QString::fromStdString(loaded.error().toString());
    QVERIFY2(message.contains("measurements.conv0[1].medianMs") && message.contains("missing"), qPrintable(message));
    writeFile(path, documentWith("  \"measurements\": {\"conv0\": [{\"medianMs\": -1}]},\n"));
    loaded = project::loadProject(path);
    QVERIFY(!loaded.ok());
    message = QString::fromStdString(loaded.error().toString());
    QVERIFY2(message.contains("measurements.conv0[0].medianMs") && message.contains("positive"), qPrintable(message));
    writeFile(path, documentWith("  \"measurements\": {\"conv0\": [{\"medianMs\": 0.5, \"trace\": \"\"}]},\n"));
    loaded = project::loadProject(path);
    QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().toString().c_str());
    QVERIFY(project::saveProject(*loaded, path).ok());
    QVERIFY2(QString::fromStdString(readFile(path)).contains("\"medianMs\": 0.5"), readFile(path).c_str());
  }

  void unknownDataUnderMetadataIsKept() {
    std::string path = root_ + "/meta.tessel";
    writeFile(path, documentWith("  \"metadata\": {\"dashboard\": {\"pinned\": [3, 1]}},\n"));
    auto loaded = project::loadProject(path);
    QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().toString().c_str());
    QVERIFY(project::saveProject(*loaded, path).ok());
    QVERIFY2(QString::fromStdString(readFile(path)).contains("\"pinned\""), readFile(path).c_str());
  }

  void autosaveIsOfferedUntilSavedOrDiscarded() {
    std::string path = root_ + "/work.tessel";
    project::Project saved = fullProject(root_);
    QVERIFY(project::saveProject(saved, path).ok());
    QVERIFY(!project::findRecoverableAutosave(path));

    project::Project edited = saved;
    edited.tasks[0].trace = "unroll(softmax, ax1)\n";
    QVERIFY(project::saveAutosave(edited, path).ok());
    QCOMPARE(QString::fromStdString(project::autosavePath(path)), QString::fromStdString(path + ".autosave"));
    QCOMPARE(QString::fromStdString(readFile(path)), QString::fromStdString(project::formatProject(saved, path)));
    auto recoverable = project::findRecoverableAutosave(path);
    QVERIFY(recoverable.has_value());
    auto recovered = project::loadProject(recoverable->path);
    QVERIFY2(recovered.ok(), recovered.ok() ? "" : recovered.error().toString().c_str());
    QVERIFY(*recovered == edited);

    // Saving makes the autosave stale, and removes it.
    QVERIFY(project::saveProject(edited, path).ok());
    QVERIFY(!fs::exists(path + ".autosave"));
    QVERIFY(!project::findRecoverableAutosave(path));

    // An autosave older than the file (left from before the last save) is not offered, nor one
    // identical to the file.
    QVERIFY(project::saveAutosave(saved, path).ok());
    fs::last_write_time(path + ".autosave", fs::last_write_time(path) - std::chrono::hours(1));
    QVERIFY(!project::findRecoverableAutosave(path));
    QVERIFY(project::saveAutosave(edited, path).ok());
    QVERIFY(!project::findRecoverableAutosave(path));

    QVERIFY(project::saveAutosave(saved, path).ok());
    QVERIFY(project::findRecoverableAutosave(path));
    QVERIFY(project::discardAutosave(path).ok());
    QVERIFY(!project::findRecoverableAutosave(path));
    QVERIFY(project::discardAutosave(path).ok());
  }

  void untitledProjectsAutosavePerUser() {
    std::string path = project::autosavePath("");
    QVERIFY2(QString::fromStdString(path).startsWith(QString::fromStdString(root_ + "/state/")), path.c_str());
    QVERIFY(!project::findRecoverableAutosave(""));
    project::Project untitled = fullProject(root_);
    QVERIFY(project::saveAutosave(untitled, "").ok());
    auto recoverable = project::findRecoverableAutosave("");
    QVERIFY(recoverable.has_value());
    auto recovered = project::loadProject(recoverable->path);
    QVERIFY2(recovered.ok(), recovered.ok() ? "" : recovered.error().toString().c_str());
    QVERIFY(*recovered == untitled);
    QVERIFY(project::discardAutosave("").ok());
    QVERIFY(!project::findRecoverableAutosave(""));
  }

  void starterProjectFindsTheReferenceData() {
    project::Project starter = project::starterProject(kModel);
    QCOMPARE(QString::fromStdString(starter.model), QString::fromStdString(fs::path(kModel).lexically_normal().string()));
    QCOMPARE(QString::fromStdString(starter.reference.directory),
             QString::fromStdString(fs::path(kDataSet).lexically_normal().string()));
    QVERIFY(project::saveProject(starter, root_ + "/starter.tessel").ok());
    auto loaded = project::loadProject(root_ + "/starter.tessel");
    QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().toString().c_str());
    QVERIFY(*loaded == starter);
  }

private:
  QTemporaryDir directory_;
  std::string root_;
};

QTEST_GUILESS_MAIN(TestProjectFile)
#include "test_project_file.moc"
