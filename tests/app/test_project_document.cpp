// The open project's life as the Studio's File menu drives it: an untitled project needs a
// name, edits mark it modified, the autosave follows unsaved changes only, a crash is recovered
// into the original file, and a failed save keeps the changes.
#include <QtTest>

#include <filesystem>
#include <fstream>

#include "app/project/Autosave.h"
#include "app/project/ProjectDocument.h"

namespace {

using namespace tessel;
namespace fs = std::filesystem;

const std::string kModel = TESSEL_SOURCE_DIR "/resources/examples/tiny_resnet.onnx";

project::Project withRepeats(int repeats) {
  project::Project p = project::starterProject(kModel);
  p.benchmark.repeats = repeats;
  return p;
}

}  // namespace

class TestProjectDocument : public QObject {
  Q_OBJECT
private slots:
  void init() {
    QVERIFY(directory_.isValid());
    root_ = directory_.path().toStdString() + "/" + QTest::currentTestFunction();
    fs::create_directories(root_);
    qputenv("XDG_STATE_HOME", QByteArray::fromStdString(root_ + "/state"));
  }

  void untitledProjectIsSavedUnderAName() {
    project::ProjectDocument document(withRepeats(5));
    QVERIFY(document.isUntitled());
    QVERIFY(!document.isModified());
    document.setProject(withRepeats(6));
    QVERIFY(document.isModified());
    QVERIFY(document.autosave().ok());
    QVERIFY(project::findRecoverableAutosave(""));

    Status unnamed = document.save();
    QVERIFY(!unnamed.ok());
    QVERIFY2(QString::fromStdString(unnamed.error().toString()).contains("Save As"), unnamed.error().toString().c_str());
    QVERIFY(document.isModified());

    std::string path = root_ + "/named.tessel";
    QVERIFY(document.saveAs(path).ok());
    QCOMPARE(QString::fromStdString(document.path()), QString::fromStdString(path));
    QVERIFY(!document.isModified());
    QVERIFY2(!project::findRecoverableAutosave(""), "the untitled autosave outlived Save As");
    auto reopened = project::ProjectDocument::open(path);
    QVERIFY(reopened.ok());
    QCOMPARE(reopened->project().benchmark.repeats, 6);
    QVERIFY(!reopened->isModified());
  }

  void settingTheSameProjectIsNotAnEdit() {
    project::ProjectDocument document(withRepeats(5));
    document.setProject(withRepeats(5));
    QVERIFY(!document.isModified());
  }

  void autosaveFollowsUnsavedChangesAndRecovers() {
    std::string path = root_ + "/work.tessel";
    QVERIFY(project::saveProject(withRepeats(5), path).ok());
    auto document = project::ProjectDocument::open(path);
    QVERIFY(document.ok());
    QVERIFY(document->autosave().ok());
    QVERIFY2(!fs::exists(project::autosavePath(path)), "autosaved without changes");

    document->setProject(withRepeats(9));
    QVERIFY(document->autosave().ok());
    // The session ends without saving (a crash): the next one finds the autosave.
    QVERIFY(project::findRecoverableAutosave(path));
    auto recovered = project::ProjectDocument::recover(path);
    QVERIFY2(recovered.ok(), recovered.ok() ? "" : recovered.error().toString().c_str());
    QCOMPARE(QString::fromStdString(recovered->path()), QString::fromStdString(path));
    QVERIFY(recovered->isModified());
    QCOMPARE(recovered->project().benchmark.repeats, 9);
    QCOMPARE(project::loadProject(path)->benchmark.repeats, 5);

    QVERIFY(recovered->save().ok());
    QCOMPARE(project::loadProject(path)->benchmark.repeats, 9);
    QVERIFY(!project::findRecoverableAutosave(path));
  }

  void discardingChangesRemovesTheAutosave() {
    std::string path = root_ + "/discard.tessel";
    QVERIFY(project::saveProject(withRepeats(5), path).ok());
    auto document = project::ProjectDocument::open(path);
    QVERIFY(document.ok());
    document->setProject(withRepeats(7));
    QVERIFY(document->autosave().ok());
    QVERIFY(document->discardChanges().ok());
    QVERIFY(!project::findRecoverableAutosave(path));
    QCOMPARE(project::loadProject(path)->benchmark.repeats, 5);
  }

  void failedSaveKeepsTheChanges() {
    std::string path = root_ + "/locked.tessel";
    QVERIFY(project::saveProject(withRepeats(5), path).ok());
    auto document = project::ProjectDocument::open(path);
    QVERIFY(document.ok());
    document->setProject(withRepeats(8));
    // Meanwhile a newer Tessel rewrote the file: this build must not overwrite it.
    std::string newer = R"({"format": "tessel-project", "version": 2, "model": "tiny_resnet.onnx"})";
    std::ofstream(path) << newer;
    Status saved = document->save();
    QVERIFY(!saved.ok());
    QVERIFY(document->isModified());
    std::ifstream in(path);
    QCOMPARE(QString::fromStdString(std::string(std::istreambuf_iterator<char>(in), {})), QString::fromStdString(newer));
    QVERIFY(document->saveAs(root_ + "/copy.tessel").ok());
    QVERIFY(!document->isModified());
  }

private:
  QTemporaryDir directory_;
  std::string root_;
};

QTEST_GUILESS_MAIN(TestProjectDocument)
#include "test_project_document.moc"
