// The Tuning view in the main window: a model whose records file has its session's events
// beside it opens with that session in the dashboard (Ctrl+4); the graph is coloured by the
// session's results on request, with a legend, and only the tuned kernels' nodes are; selecting
// a task in the dashboard highlights its node in the graph; a trial clicked in the dashboard
// opens its schedule, found in the records file, in the schedule editor. A model without records
// lists the tasks a session would tune; Build > Profile Model measures where its time goes, which
// the Share column and the graph's time colouring then show, and which reopening keeps.
#include <QLabel>
#include <QPlainTextEdit>
#include <QTabWidget>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTableView>
#include <QtTest>

#include "StudioTestSupport.h"
#include "app/studio/MainWindow.h"
#include "compiler/driver/ModelProfile.h"
#include "views/graph/GraphScene.h"
#include "views/graph/GraphView.h"
#include "views/graph/GraphWorkbench.h"
#include "views/schedule/ScheduleDiff.h"
#include "views/schedule/ScheduleWorkbench.h"
#include "views/timeline/PassTimelineModel.h"
#include "views/timeline/TimelineWorkbench.h"
#include "tuner/records/RecordFile.h"
#include "views/tuning/TuningDashboard.h"
#include "views/tuning/TuningTaskModel.h"

using namespace tessel;
using namespace tessel::studio;
using testing::example;

namespace {

const QString kSession = TESSEL_SOURCE_DIR "/tests/views/data/tiny_resnet_session.events";

bool waitIdle(MainWindow& window) {
  return QTest::qWaitFor([&] { return window.isIdle(); }, 120000);
}

/// Shows `window` at a size where every view lays out, and opens `model` in it.
void showAndOpen(MainWindow& window, const QString& model) {
  window.resize(1400, 900);
  window.show();
  window.openFile(model);
}

}  // namespace

class TestStudioTuningView : public QObject {
  Q_OBJECT

  QTemporaryDir settingsDir_;

private slots:
  void initTestCase() { testing::isolateSettings(settingsDir_); }

  void aModelOpensWithItsLastSessionAndColoursItsGraph() {
    // The model beside its records (MODEL.tuning.jsonl) and their events, as a session left them.
    QTemporaryDir dir;
    QString model = dir.filePath("tiny_resnet.onnx");
    QVERIFY(QFile::copy(example("tiny_resnet.onnx"), model));
    QVERIFY(QFile::copy(kSession, dir.filePath("tiny_resnet.tuning.jsonl.events")));

    MainWindow window;
    showAndOpen(window, model);
    QVERIFY(waitIdle(window));
    auto* dashboard = window.findChild<views::TuningDashboard*>();
    QVERIFY(dashboard);
    QCOMPARE(dashboard->recordsPath(), dir.filePath("tiny_resnet.tuning.jsonl"));
    QTRY_VERIFY(!dashboard->feed()->busy());
    const tuner::TuningEventLog& log = dashboard->feed()->log();
    QVERIFY(log.ended());
    window.setCurrentView(StudioView::Tuning);
    QCOMPARE(window.currentView(), StudioView::Tuning);
    QCOMPARE(dashboard->taskModel()->rowCount(), int(log.tasks().size()));

    // View > Colour Graph by Tuning > Speedup: a legend, and a badge on each tuned node only.
    auto* graph = window.findChild<views::GraphWorkbench*>();
    QVERIFY(graph);
    QVERIFY(graph->colouringLegend().isEmpty());
    window.setHeatMode(views::HeatMode::Speedup);
    QVERIFY2(graph->colouringLegend().contains("Speedup"), qPrintable(graph->colouringLegend()));
    auto compiled = window.session().compiledModel();
    QVERIFY(compiled);
    int decorated = 0, tunedNodes = 0;
    for (const driver::CompiledKernel& kernel : compiled->kernels) {
      if (!kernel.node) continue;
      bool searched = false;
      for (size_t task = 0; task < log.tasks().size(); ++task)
        for (const std::string& name : log.tasks()[task].kernels)
          if (name == kernel.name && log.taskStates()[task].trials > 0) searched = true;
      tunedNodes += searched ? 1 : 0;
      decorated += graph->view()->graphScene()->nodeDecorationBadge(QString::fromStdString(kernel.node->name)).isEmpty()
                       ? 0
                       : 1;
    }
    QVERIFY(tunedNodes > 0);
    QCOMPARE(decorated, tunedNodes);
    // The Timeline's last step (the compiled graph) shows the same colouring and legend.
    auto* timeline = window.findChild<views::TimelineWorkbench*>();
    QVERIFY(timeline);
    QVERIFY2(timeline->nodeColouringLegend().contains("Speedup"), qPrintable(timeline->nodeColouringLegend()));
    window.setCurrentView(StudioView::Timeline);
    timeline->selectStep(timeline->timelineModel()->rowCount() - 1);
    auto timelineDecorated = [&] {
      int count = 0;
      for (const driver::CompiledKernel& kernel : compiled->kernels)
        if (kernel.node &&
            !timeline->stepView()->graphScene()->nodeDecorationBadge(QString::fromStdString(kernel.node->name)).isEmpty())
          ++count;
      return count;
    };
    QTRY_COMPARE_WITH_TIMEOUT(timelineDecorated(), tunedNodes, 60000);
    window.setHeatMode(views::HeatMode::None);
    QVERIFY(graph->colouringLegend().isEmpty());
    QVERIFY(timeline->nodeColouringLegend().isEmpty());
    window.setCurrentView(StudioView::Tuning);
    for (const driver::CompiledKernel& kernel : compiled->kernels)
      if (kernel.node)
        QVERIFY(graph->view()->graphScene()->nodeDecorationBadge(QString::fromStdString(kernel.node->name)).isEmpty());

    // Selecting a task in the dashboard selects its kernel's node in the graph.
    dashboard->selectTask(0);
    QString node;
    for (const driver::CompiledKernel& kernel : compiled->kernels)
      if (kernel.node && kernel.name == log.tasks()[0].kernels.front()) node = QString::fromStdString(kernel.node->name);
    QVERIFY(!node.isEmpty());
    QCOMPARE(graph->view()->graphScene()->selectedNode(), node);
    // ... and opens it in the schedule editor (without leaving the Tuning view).
    auto* editorBench = window.findChild<views::ScheduleWorkbench*>();
    QVERIFY(editorBench);
    QCOMPARE(editorBench->currentTaskName(), QString::fromStdString(log.tasks()[0].kernels.front()));
    QCOMPARE(window.currentView(), StudioView::Tuning);
    // A node selected in the graph selects its task in the dashboard.
    QVERIFY(log.tasks().size() >= 2);
    QString otherNode;
    for (const driver::CompiledKernel& kernel : compiled->kernels)
      if (kernel.node && kernel.name == log.tasks()[1].kernels.front()) otherNode = QString::fromStdString(kernel.node->name);
    QVERIFY(!otherNode.isEmpty());
    graph->view()->graphScene()->selectNode(otherNode);
    QCOMPARE(dashboard->selectedTasks(), std::set<int>{1});
    dashboard->selectTask(0);

    // A trial clicked in the dashboard opens its schedule from the records (the newest record
    // of its point), searched off the GUI thread.
    auto* workbench = window.findChild<views::ScheduleWorkbench*>();
    QVERIFY(workbench);
    const QString kernel = QString::fromStdString(log.tasks()[0].name);
    const QString defaultText = workbench->scheduleText(kernel);
    QVERIFY(!defaultText.isEmpty());
    tuner::TuningRecord record;
    record.workload = "w";
    record.workloadHash = "0123456789abcdef";
    record.task = kernel.toStdString();
    record.target = "llvm";
    record.point = "0:1,2";
    record.outcome = tuner::MeasuredTime{0.1, 0.1, 0.1, 3, std::nullopt};
    record.time = tuner::utcTimestamp();
    record.trace = "# an older measurement of the point\n" + defaultText.toStdString();
    std::string lines = tuner::toJsonLine(record) + "\n";
    // The trial's schedule: the default without its last primitive.
    QStringList defaultLines = defaultText.trimmed().split('\n');
    const QString dropped = defaultLines.takeLast().trimmed();
    record.trace = "# the trial's schedule\n" + defaultLines.join('\n').toStdString() + "\n";
    lines += tuner::toJsonLine(record) + "\n";
    QFile records(dashboard->recordsPath());
    QVERIFY(records.open(QIODevice::WriteOnly));
    records.write(QByteArray::fromStdString(lines));
    records.close();
    emit dashboard->trialActivated(kernel, "0:1,2", 7);
    QTRY_COMPARE(window.currentView(), StudioView::Schedule);
    QCOMPARE(workbench->scheduleText(kernel), QString::fromStdString(record.trace));
    // The status bar says what the trial changed against the default, and the diff tab comes
    // forward with the dropped primitive opposite a gap.
    QVERIFY2(window.statusBar()->currentMessage().contains("against the default: - " + dropped),
             qPrintable(window.statusBar()->currentMessage()));
    QCOMPARE(workbench->toolTabs()->currentWidget(), static_cast<QWidget*>(workbench->diffView()));
    QVERIFY2(workbench->diffView()->summary().contains("1 removed"), qPrintable(workbench->diffView()->summary()));
    bool droppedShown = false;
    QStringList defaultSide = workbench->diffView()->leftPane()->toPlainText().split('\n');
    for (size_t row = 0; row < workbench->diffView()->rows().size(); ++row)
      if (workbench->diffView()->rows()[row].kind == views::DiffRow::Kind::Removed &&
          defaultSide[qsizetype(row)].trimmed() == dropped)
        droppedShown = true;
    QVERIFY(droppedShown);
    // A point the records do not have leaves the editor as it is and says so.
    emit dashboard->trialActivated(kernel, "9:9", 8);
    QTRY_VERIFY2(window.statusBar()->currentMessage().contains("is not in"),
                 qPrintable(window.statusBar()->currentMessage()));
    QCOMPARE(workbench->scheduleText(kernel), QString::fromStdString(record.trace));
  }

  void aModelWithoutRecordsListsItsTasksAndItsProfileShowsWhereTheTimeGoes() {
    QTemporaryDir dir;
    QString model = dir.filePath("tiny_resnet.onnx");
    QVERIFY(QFile::copy(example("tiny_resnet.onnx"), model));
    MainWindow window;
    showAndOpen(window, model);
    QVERIFY(waitIdle(window));
    auto* dashboard = window.findChild<views::TuningDashboard*>();
    QVERIFY(dashboard);
    // Before any session: every task of the model, not started, their kernels all counted.
    QTRY_VERIFY(dashboard->showsPreview());
    QTRY_VERIFY(!dashboard->feed()->busy());
    auto compiled = window.session().compiledModel();
    QVERIFY(compiled);
    const tuner::TuningEventLog& log = dashboard->feed()->log();
    QVERIFY(!log.tasks().empty());
    int kernels = 0;
    for (const tuner::LoggedTask& task : log.tasks()) kernels += task.weight;
    int scheduled = 0;
    for (const driver::CompiledKernel& kernel : compiled->kernels) scheduled += kernel.node ? 1 : 0;
    QCOMPARE(kernels, scheduled);
    views::TuningTaskModel* tasks = dashboard->taskModel();
    QCOMPARE(tasks->rowCount(), int(log.tasks().size()));
    QCOMPARE(tasks->index(0, views::TuningTaskModel::StateColumn).data().toString(), QString("not started"));
    QCOMPARE(tasks->headerData(views::TuningTaskModel::ShareColumn, Qt::Horizontal).toString(), QString("Share (est.)"));
    // Nothing is measured yet, so no share is claimed.
    QVERIFY(std::isnan(tasks->index(0, views::TuningTaskModel::ShareColumn).data(views::TuningTaskModel::SortRole).toDouble()));

    // Build > Profile Model: runs the model, saves the profile beside it, and the shares add up.
    QSignalSpy profiled(&window, &MainWindow::modelProfiled);
    window.studioAction("actionProfileModel")->trigger();
    QTRY_COMPARE_WITH_TIMEOUT(profiled.count(), 1, 120000);
    QVERIFY2(profiled.first().at(0).toBool(), qPrintable(profiled.first().at(1).toString()));
    QVERIFY(window.modelProfile());
    QVERIFY(window.modelProfile()->runs >= 10);
    QVERIFY(window.modelProfile()->latencyMs > 0);
    const QString saved = dir.filePath("tiny_resnet.profile.json");
    QVERIFY(QFileInfo::exists(saved));
    QCOMPARE(tasks->headerData(views::TuningTaskModel::ShareColumn, Qt::Horizontal).toString(),
             QString("Share (profiled)"));
    double shares = 0;
    for (int row = 0; row < tasks->rowCount(); ++row) {
      double share = tasks->index(row, views::TuningTaskModel::ShareColumn).data(views::TuningTaskModel::SortRole).toDouble();
      QVERIFY2(std::isfinite(share) && share >= 0, qPrintable(QString("row %1: %2").arg(row).arg(share)));
      shares += share;
    }
    // Kernels outside any task (copies into outputs) take the rest.
    QVERIFY2(shares > 90 && shares <= 100.0001, qPrintable(QString::number(shares)));

    // View > Colour Graph by > Share of Model Time: every node that took time has a badge.
    auto* graph = window.findChild<views::GraphWorkbench*>();
    QVERIFY(graph);
    window.setHeatMode(views::HeatMode::Time);
    QVERIFY2(graph->colouringLegend().contains("time"), qPrintable(graph->colouringLegend()));
    int badges = 0;
    for (const driver::ProfiledNode& node : window.modelProfile()->nodes)
      if (!graph->view()->graphScene()->nodeDecorationBadge(QString::fromStdString(node.node)).isEmpty()) ++badges;
    QVERIFY2(badges >= scheduled, qPrintable(QString("%1 of %2").arg(badges).arg(scheduled)));

    // While a tuning session runs, profiling is refused: both would time each other's noise.
    views::TuningRunRequest request = dashboard->request();
    request.tesselPath = TESSEL_BINARY_DIR "/bin/tessel";
    request.threads = 1;
    QString error;
    QVERIFY2(dashboard->runner()->start(request, &error), qPrintable(error));
    profiled.clear();
    window.studioAction("actionProfileModel")->trigger();
    QCOMPARE(profiled.count(), 1);
    QVERIFY(!profiled.first().at(0).toBool());
    QVERIFY2(profiled.first().at(1).toString().contains("tuning session is running"),
             qPrintable(profiled.first().at(1).toString()));
    QSignalSpy finished(dashboard->runner(), &views::TuningRunner::finished);
    dashboard->runner()->stop();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);

    // Opening the model again finds its last profile.
    MainWindow again;
    again.openFile(model);
    QVERIFY(waitIdle(again));
    QTRY_VERIFY(again.modelProfile());
    QCOMPARE(again.modelProfile()->latencyMs, window.modelProfile()->latencyMs);
    QCOMPARE(again.modelProfile()->nodes.size(), window.modelProfile()->nodes.size());

    // A damaged profile is a warning in the log, and the model opens all the same.
    QFile damaged(saved);
    QVERIFY(damaged.open(QIODevice::WriteOnly | QIODevice::Truncate));
    damaged.write("{\"format\": \"tessel-profile\", \"version\": 1, \"runs\": ");
    damaged.close();
    MainWindow third;
    third.openFile(model);
    QVERIFY(waitIdle(third));
    QVERIFY(!third.modelProfile());
    QVERIFY(third.hasModel());
    bool warned = false;
    for (int row = 0; row < third.diagnostics().rowCount(); ++row)
      if (third.diagnostics().entry(row).severity == views::Severity::Warning &&
          third.diagnostics().entry(row).message.contains("tiny_resnet.profile.json"))
        warned = true;
    QVERIFY(warned);
  }
};

QTEST_MAIN(TestStudioTuningView)
#include "test_studio_tuning_view.moc"
