// Tuning records in the Studio: File > Apply Tuning Records recompiles the open model with them
// and the status bar says how many kernels are tuned; the project keeps the file, so reopening it
// applies them again; a file with a bad line or none at all is put before the user naming the
// file (and the line), and the model stays on screen.
#include <QDockWidget>
#include <QLabel>
#include <QTableView>
#include <QTextCursor>
#include <QtTest>

#include "StudioTestSupport.h"
#include "app/project/Project.h"
#include "app/studio/MainWindow.h"
#include "compiler/driver/ScheduleTask.h"
#include "tuner/records/RecordFile.h"
#include "views/schedule/ScheduleEditor.h"
#include "views/schedule/ScheduleWorkbench.h"
#include "views/schedule/TaskListModel.h"

using namespace tessel;
using namespace tessel::studio;
using testing::example;

namespace {

// The 3x3 convolution of tiny_resnet's block: one kernel of its own workload.
const std::string kConvTask = "ConvPrepacked__block_block_3_Conv";

// The line of a trace that splits the convolution's pixels (the one the tuned record changes;
// the default's factor follows the machine's vector width).
const std::string kPixelSplit = "xo, xi = split(conv, x, factor=";
QString pixelSplit(const std::string& trace) {
  size_t at = trace.find(kPixelSplit);
  return QString::fromStdString(trace.substr(at, trace.find('\n', at) - at));
}

struct Notice {
  QString title, text;
};

bool waitIdle(MainWindow& window) {
  return QTest::qWaitFor([&] { return window.isIdle(); }, 120000);
}

bool convIsTuned(MainWindow& window) {
  auto model = window.session().compiledModel();
  if (!model) return false;
  for (const auto& kernel : model->kernels)
    if (kernel.name == kConvTask) return kernel.tuned;
  return false;
}

QString statusText(MainWindow& window) {
  auto* label = window.findChild<QLabel*>("ModelInfo");
  return label ? label->text() : QString();
}

}  // namespace

class TestStudioTuningRecords : public QObject {
  Q_OBJECT

  QTemporaryDir settingsDir_;
  QTemporaryDir dir_;
  QString records_;  // the convolution tuned for this machine's target
  std::string convKey_, convTrace_, defaultConvTrace_;

  // A window with the notice answered (and remembered) instead of a message box.
  void prepare(MainWindow& window, std::vector<Notice>* notices) {
    window.tuningRecords().setProblemNotice(
        [notices](const QString& title, const QString& text) { notices->push_back({title, text}); });
  }

  void writeRecords(const QString& path, const std::string& target, const std::string& extraLine = "") {
    tuner::TuningRecord record;
    record.workload = convKey_;
    record.workloadHash = "0123456789abcdef";
    record.target = target;
    record.trace = convTrace_;
    record.outcome = tuner::MeasuredTime{1.0, 1.0, 1.0, 10, std::nullopt};
    record.time = "2026-11-25T12:34:56Z";
    QFile::remove(path);
    auto writer = tuner::RecordWriter::open(path.toStdString());
    QVERIFY(writer);
    QVERIFY(writer->append(record).ok());
    if (!extraLine.empty()) {
      QFile file(path);
      QVERIFY(file.open(QIODevice::Append));
      file.write(QByteArray::fromStdString(extraLine + "\n"));
    }
  }

private slots:
  void initTestCase() {
    testing::isolateSettings(settingsDir_);
    QVERIFY(dir_.isValid());
    // The convolution's key and a schedule for it other than the default (a split factor changed).
    auto graph = driver::loadModel(example("tiny_resnet.onnx").toStdString());
    QVERIFY(graph);
    driver::CompileOptions options;
    auto model = driver::compileGraph(*graph, options);
    QVERIFY(model);
    auto tasks = driver::extractTasks(*model);
    QVERIFY(tasks);
    for (const auto& task : *tasks)
      if (task.name == kConvTask) {
        convKey_ = task.workloadKey;
        convTrace_ = task.defaultTraceText();
        defaultConvTrace_ = convTrace_;
      }
    QVERIFY(!convKey_.empty());
    QVERIFY(!pixelSplit(defaultConvTrace_).isEmpty() && pixelSplit(defaultConvTrace_) != "xo, xi = split(conv, x, factor=2)");
    convTrace_.replace(convTrace_.find(kPixelSplit), pixelSplit(convTrace_).size(), kPixelSplit + "2)");
    records_ = dir_.filePath("tiny_resnet.jsonl");
    writeRecords(records_, options.target.toString());
  }
  void init() { testing::clearSettings(); }

  void applyingRecordsTunesKernelsAndTheProjectKeepsThem() {
    QFile::copy(example("tiny_resnet.onnx"), dir_.filePath("model.onnx"));
    MainWindow window;
    std::vector<Notice> notices;
    prepare(window, &notices);
    QVERIFY(testing::openAndWait(window, dir_.filePath("model.onnx")));
    QVERIFY(!convIsTuned(window));
    QVERIFY(!statusText(window).contains("kernels tuned"));
    QVERIFY(!window.studioAction("actionStopTuningRecords")->isEnabled());

    window.applyTuningRecords(records_);
    QTRY_VERIFY_WITH_TIMEOUT(convIsTuned(window), 60000);
    QVERIFY(waitIdle(window));
    QVERIFY(notices.empty());
    QVERIFY2(statusText(window).contains("1 of 8 kernels tuned"), qPrintable(statusText(window)));
    QCOMPARE(QString::fromStdString(window.projects().project()->tuningRecords), records_);
    QVERIFY(window.isWindowModified());
    bool logged = false;
    for (int row = 0; row < window.diagnostics().rowCount(); ++row)
      logged |= window.diagnostics().entry(row).message.contains("1 of 8 kernels tuned");
    QVERIFY(logged);
    // The task list marks the tuned kernel.
    auto* tasks = window.findChild<QTableView*>("TaskOverview");
    QVERIFY(tasks);
    QAbstractItemModel* taskModel = tasks->model();
    QStringList tunedTasks;
    for (int row = 0; row < taskModel->rowCount(); ++row)
      if (!taskModel->index(row, views::TaskListModel::Tuned).data().toString().isEmpty())
        tunedTasks << taskModel->index(row, views::TaskListModel::Name).data().toString();
    QCOMPARE(tunedTasks, QStringList{QString::fromStdString(kConvTask)});
    // The schedule editor shows what the tuned kernel runs, the record's schedule, and that is
    // not an edit of the user's (a project does not store it).
    auto* workbench = window.findChild<views::ScheduleWorkbench*>();
    QVERIFY(workbench);
    const QString convTask = QString::fromStdString(kConvTask);
    QTRY_VERIFY_WITH_TIMEOUT(workbench->scheduleText(convTask).contains(pixelSplit(convTrace_)), 60000);
    QVERIFY(workbench->editedSchedules().empty());
    // Typing the default schedule over it is an edit the project keeps (it overrides the
    // record); Reset goes back to the record's schedule and the project forgets the edit.
    window.setCurrentView(StudioView::Schedule);
    QVERIFY(workbench->openTask(convTask));
    QTextCursor all = workbench->editor()->textCursor();
    all.select(QTextCursor::Document);
    all.insertText(QString::fromStdString(defaultConvTrace_));
    QTRY_VERIFY_WITH_TIMEOUT(window.projects().project()->findTask(kConvTask) != nullptr, 5000);
    QCOMPARE(QString::fromStdString(window.projects().project()->findTask(kConvTask)->trace).trimmed(),
             QString::fromStdString(defaultConvTrace_).trimmed());
    workbench->resetToDefault();
    QVERIFY(workbench->scheduleText(convTask).contains(pixelSplit(convTrace_)));
    QTRY_VERIFY_WITH_TIMEOUT(window.projects().project()->findTask(kConvTask) == nullptr, 5000);

    // Saved, the project names the records relative to itself; reopened, it applies them again.
    QString project = dir_.filePath("kept.tessel");
    window.projects().setSaveAsPrompt([&](const QString&) { return project; });
    QVERIFY(window.projects().saveAs());
    QFile saved(project);
    QVERIFY(saved.open(QIODevice::ReadOnly));
    QVERIFY2(saved.readAll().contains("\"tuning_records\": \"tiny_resnet.jsonl\""), qPrintable(project));

    MainWindow reopened;
    prepare(reopened, &notices);
    QVERIFY(testing::openAndWait(reopened, project));
    QVERIFY(convIsTuned(reopened));
    QVERIFY2(statusText(reopened).contains("1 of 8 kernels tuned"), qPrintable(statusText(reopened)));
    QVERIFY(!reopened.isWindowModified());

    // Stopping recompiles with the defaults, and the project forgets the file.
    QVERIFY(reopened.studioAction("actionStopTuningRecords")->isEnabled());
    reopened.studioAction("actionStopTuningRecords")->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(!convIsTuned(reopened), 60000);
    QVERIFY(waitIdle(reopened));
    // ... and the editor is back at the default schedule.
    auto* reopenedWorkbench = reopened.findChild<views::ScheduleWorkbench*>();
    QTRY_VERIFY_WITH_TIMEOUT(reopenedWorkbench->scheduleText(convTask).contains(pixelSplit(defaultConvTrace_)), 60000);
    QVERIFY(!reopenedWorkbench->scheduleText(convTask).contains(pixelSplit(convTrace_)));
    QVERIFY(reopenedWorkbench->editedSchedules().empty());
    QVERIFY(!statusText(reopened).contains("kernels tuned"));
    QVERIFY(reopened.projects().project()->tuningRecords.empty());
  }

  void aCorruptLineIsShownWithItsNumberAndTheRestApplied() {
    QString path = dir_.filePath("corrupt.jsonl");
    driver::CompileOptions options;
    writeRecords(path, options.target.toString(), "{\"version\": 1, \"workload\": ");
    MainWindow window;
    std::vector<Notice> notices;
    prepare(window, &notices);
    QVERIFY(testing::openAndWait(window, example("tiny_resnet.onnx")));
    window.applyTuningRecords(path);
    QTRY_VERIFY_WITH_TIMEOUT(convIsTuned(window), 60000);
    QVERIFY(waitIdle(window));
    QCOMPARE(notices.size(), size_t(1));
    QVERIFY2(notices[0].text.contains(path) && notices[0].text.contains("line 2"), qPrintable(notices[0].text));
  }

  void aFileThatCannotBeReadIsShownAndTheModelStays() {
    QString missing = dir_.filePath("no-such-records.jsonl");
    MainWindow window;
    std::vector<Notice> notices;
    prepare(window, &notices);
    QVERIFY(testing::openAndWait(window, example("tiny_resnet.onnx")));
    auto before = window.session().compiledModel();
    window.applyTuningRecords(missing);
    QTRY_COMPARE_WITH_TIMEOUT(notices.size(), size_t(1), 30000);
    QVERIFY(waitIdle(window));
    QVERIFY2(notices[0].text.contains(missing), qPrintable(notices[0].text));
    QCOMPARE(window.session().compiledModel(), before);  // not recompiled, still shown
    QVERIFY(window.projects().project()->tuningRecords.empty());

    // A project whose records file went missing still opens, with the default schedules.
    QString project = dir_.filePath("missing-records.tessel");
    project::Project settings = project::starterProject(example("tiny_resnet.onnx").toStdString());
    settings.tuningRecords = missing.toStdString();
    QVERIFY(project::saveProject(settings, project.toStdString()).ok());
    notices.clear();
    QVERIFY(testing::openAndWait(window, project));
    QCOMPARE(window.currentFile(), project);
    QVERIFY(!convIsTuned(window));
    QCOMPARE(notices.size(), size_t(1));
    QVERIFY2(notices[0].text.contains(missing), qPrintable(notices[0].text));
  }
};

QTEST_MAIN(TestStudioTuningRecords)
#include "test_studio_tuning_records.moc"
