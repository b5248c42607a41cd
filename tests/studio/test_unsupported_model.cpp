// A model with operators Tessel does not implement opens in the Studio as Netron would show it:
// every node in the graph, the unsupported ones marked and listed; what needs a compiled model
// is disabled or says why not.
#include <QAbstractItemModelTester>
#include <QLabel>
#include <QStackedWidget>
#include <QTreeView>
#include <QtTest>

#include "StudioTestSupport.h"
#include "tests/compiler/UnsupportedOperatorsModel.h"
#include "tests/views/PixelCount.h"

#include "views/graph/GraphNodeItem.h"
#include "views/graph/GraphScene.h"
#include "views/graph/GraphView.h"
#include "views/graph/GraphWorkbench.h"
#include "views/graph/NodePropertiesModel.h"
#include "views/graph/NodePropertiesPanel.h"
#include "views/graph/UnsupportedNodesModel.h"
#include "views/graph/UnsupportedNodesPanel.h"

using namespace tessel;
using namespace tessel::studio;
namespace support = tessel::studio::testing;
namespace models = ::testing;
using tessel::views::testing::pixelsOf;

namespace {

views::GraphWorkbench* graphOf(MainWindow& window) {
  return qobject_cast<views::GraphWorkbench*>(window.viewWidget(StudioView::Graph));
}

QWidget* centralPage(MainWindow& window) {
  return qobject_cast<QStackedWidget*>(window.centralWidget())->currentWidget();
}

}  // namespace

class TestUnsupportedModel : public QObject {
  Q_OBJECT

private slots:
  void initTestCase() {
    support::isolateSettings(settingsDir_);
    model_ = modelDir_.filePath("unsupported.onnx");
    QVERIFY(models::writeUnsupportedOperatorsModel(model_.toStdString()));
  }
  void init() { support::clearSettings(); }

  void showsEveryNodeWithTheUnsupportedOnesMarked() {
    MainWindow window;
    window.resize(1280, 900);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(support::openAndWait(window, model_));
    QCOMPARE(window.currentFile(), model_);
    QVERIFY(window.hasModel());
    QVERIFY(window.isViewOnly());
    QCOMPARE(centralPage(window), window.viewWidget(StudioView::Graph));

    // The whole topology: every operation has its box, the unsupported ones in their category
    // under the ONNX operator's name.
    views::GraphWorkbench* graph = graphOf(window);
    auto layout = graph->currentLayout();
    QVERIFY(layout);
    int operations = 0;
    QStringList unsupported;
    for (const views::LayoutNode& box : layout->nodes) {
      if (!graph::asOperation(box.source) || box.op == "Output") continue;
      ++operations;
      if (box.category == views::NodeCategory::Unsupported) unsupported << box.id + "=" + box.title;
    }
    QCOMPARE(operations, models::kUnsupportedModelOperations);
    QStringList expected;
    for (const models::UnsupportedNode& node : models::kUnsupportedNodes)
      expected << QString::fromStdString(node.name + "=" + node.opType);
    QCOMPARE(unsupported, expected);
    QVERIFY(layout->findNode("relu") && layout->findNode("relu")->category != views::NodeCategory::Unsupported);
    QVERIFY2(layout->edges.size() >= 8, "the edges run through the unsupported nodes too");
    views::GraphNodeItem* item = graph->view()->graphScene()->nodeItem("gelu");
    QVERIFY(item);
    QVERIFY2(item->toolTip().contains("Tessel does not implement this operator"), qPrintable(item->toolTip()));
    // Drawn in the unsupported colour.
    graph->view()->setZoom(1.0);
    graph->view()->centerOnNode("imagine_1");
    QTest::qWait(50);
    QColor marked = graph->view()->graphScene()->graphPalette().category(views::NodeCategory::Unsupported);
    QVERIFY2(pixelsOf(graph->grab().toImage(), marked) > 200, "unsupported nodes are drawn in their colour");

    // Listed above the graph, with what it means.
    views::UnsupportedNodesPanel* panel = graph->unsupportedNodesPanel();
    QVERIFY(panel->isVisible());
    QVERIFY2(panel->message().contains("This model cannot be compiled"), qPrintable(panel->message()));
    QVERIFY2(panel->message().contains("3 of its operators, used by 4 nodes"), qPrintable(panel->message()));
    views::UnsupportedNodesModel* list = panel->model();
    QAbstractItemModelTester tester(list, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(list->rowCount(), int(models::kUnsupportedNodes.size()));
    QCOMPARE(list->operatorCount(), 3);
    QCOMPARE(list->index(3, views::UnsupportedNodesModel::OperatorColumn).data().toString(),
             QString("CustomGelu (com.example)"));
    QCOMPARE(list->index(3, views::UnsupportedNodesModel::NodeColumn).data().toString(), QString("gelu"));

    // Clicking an entry selects its node in the graph, and the properties say what it is.
    QTreeView* view = panel->list();
    QModelIndex second = list->index(2, views::UnsupportedNodesModel::NodeColumn);
    QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, view->visualRect(second).center());
    QCOMPARE(graph->view()->selectedNode(), QString("imagine_2"));
    views::NodePropertiesModel* properties = graph->propertiesPanel()->model();
    QCOMPARE(properties->index(0, 1).data().toString(), QString("ImaginaryOp"));
    QModelIndex category = properties->findRow("Category");
    QCOMPARE(properties->index(category.row(), 1).data().toString(), QString("Unsupported operator"));
    // Selecting one in the graph marks its row.
    graph->view()->selectNode("normalize");
    QCOMPARE(view->currentIndex().row(), 0);

    // The log keeps the compiler's diagnostic naming them all.
    bool logged = false;
    for (int row = 0; row < window.diagnostics().rowCount(); ++row) {
      const views::DiagnosticEntry& entry = window.diagnostics().entry(row);
      logged = logged || (entry.severity == views::Severity::Warning &&
                          entry.message.contains("uses 3 unsupported operators in 4 nodes"));
    }
    QVERIFY2(logged, "the diagnostic listing the unsupported nodes is in the log");
    QCOMPARE(window.diagnostics().errorCount(), 0);
  }

  // Compiling, measuring, profiling and exporting are off; the views that need a compiled
  // model say why they are empty; nothing waits or crashes.
  void whatNeedsACompileSaysWhyNot() {
    MainWindow window;
    QVERIFY(support::openAndWait(window, model_));
    for (const char* action : {"actionRecompile", "actionMeasure", "actionProfileModel", "actionExportModule",
                               "actionInputShapes", "actionApplyTuningRecords", "actionRunProject"})
      QVERIFY2(!window.studioAction(action)->isEnabled(), action);
    QVERIFY(window.studioAction("actionFit")->isEnabled());
    for (StudioView view : {StudioView::Timeline, StudioView::Schedule, StudioView::Tuning}) {
      window.setCurrentView(view);
      QWidget* page = centralPage(window);
      QCOMPARE(page->objectName(), QString("NotCompiledPage"));
      auto* label = qobject_cast<QLabel*>(page);
      QVERIFY(label && label->text().contains("unsupported.onnx cannot be compiled"));
      QVERIFY(!window.studioAction("actionFit")->isEnabled());
    }
    window.setCurrentView(StudioView::Graph);
    QCOMPARE(centralPage(window), window.viewWidget(StudioView::Graph));
    // Asked anyway, an export says there is nothing to export.
    QSignalSpy exported(&window, &MainWindow::moduleExported);
    QTemporaryDir out;
    window.exportModule(out.filePath("module"));
    QCOMPARE(exported.count(), 1);
    QCOMPARE(exported.at(0).at(1).toBool(), false);
    QVERIFY(window.isIdle());
  }

  // A model Tessel compiles, opened next, brings everything back.
  void aSupportedModelOpenedNextCompilesAsUsual() {
    MainWindow window;
    QVERIFY(support::openAndWait(window, model_));
    QVERIFY(window.isViewOnly());
    QVERIFY(support::openAndWait(window, support::example("tiny_resnet.onnx")));
    QVERIFY(!window.isViewOnly());
    QVERIFY(window.session().compiledModel());
    QVERIFY(!graphOf(window)->unsupportedNodesPanel()->isVisibleTo(graphOf(window)));
    QVERIFY(window.studioAction("actionRecompile")->isEnabled());
    window.setCurrentView(StudioView::Timeline);
    QCOMPARE(centralPage(window), window.viewWidget(StudioView::Timeline));
  }

private:
  QTemporaryDir settingsDir_;
  QTemporaryDir modelDir_;
  QString model_;
};

QTEST_MAIN(TestUnsupportedModel)
#include "test_unsupported_model.moc"
