// The Tuning view in the main window: a model whose records file has its session's events
// beside it opens with that session in the dashboard (Ctrl+4); the graph is coloured by the
// session's results on request, with a legend, and only the tuned kernels' nodes are; selecting
// a task in the dashboard highlights its node in the graph.
#include <QLabel>
#include <QTableView>
#include <QtTest>

#include "StudioTestSupport.h"
#include "app/studio/MainWindow.h"
#include "views/graph/GraphScene.h"
#include "views/graph/GraphView.h"
#include "views/graph/GraphWorkbench.h"
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
    window.resize(1400, 900);
    window.show();
    window.openFile(model);
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
    window.setHeatMode(views::HeatMode::None);
    QVERIFY(graph->colouringLegend().isEmpty());
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
  }
};

QTEST_MAIN(TestStudioTuningView)
#include "test_studio_tuning_view.moc"
