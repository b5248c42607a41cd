// The graph workbench on the example model: coloured boxes, selection feeding the properties
// panel, find, decorations, expanding a fused group, zoom keys, synchronized viewports, the
// minimap, and PNG/SVG export. Saves a screenshot to the build folder for a person to look at.
#include <QtTest>

#include <QLineEdit>
#include <QScrollBar>
#include <QToolButton>
#include <QTreeView>
#include <QSvgRenderer>

#include "compiler/driver/Driver.h"
#include "tests/views/ModularGraphSupport.h"
#include "tests/views/PixelCount.h"
#include "views/graph/GraphBreadcrumbs.h"
#include "views/graph/GraphExport.h"
#include "views/graph/GraphFindBar.h"
#include "views/graph/GraphMinimap.h"
#include "views/graph/GraphNodeItem.h"
#include "views/graph/GraphScene.h"
#include "views/graph/GraphView.h"
#include "views/graph/GraphWorkbench.h"
#include "views/graph/NodePropertiesModel.h"
#include "views/graph/NodePropertiesPanel.h"
#include "views/graph/UnsupportedNodesModel.h"
#include "views/graph/UnsupportedNodesPanel.h"

using namespace tessel;
using namespace tessel::views;
using tessel::views::testing::pixelsOf;

namespace {

std::shared_ptr<const graph::Graph> compiledModel(const QString& path) {
  auto imported = driver::loadModel(path.toStdString());
  if (!imported) qFatal("%s", imported.error().toString().c_str());
  auto compiled = driver::compileGraph(*imported);
  if (!compiled) qFatal("%s", compiled.error().toString().c_str());
  return std::make_shared<const graph::Graph>(compiled->optimized);
}

std::shared_ptr<const graph::Graph> optimizedExample() {
  static auto graph = compiledModel(TESSEL_SOURCE_DIR "/resources/examples/tiny_resnet.onnx");
  return graph;
}

bool layOutAndWait(GraphWorkbench& workbench, std::shared_ptr<const graph::Graph> graph = nullptr) {
  QSignalSpy finished(&workbench, &GraphWorkbench::layoutFinished);
  if (graph) workbench.setGraph(graph);
  if (!finished.wait(60000)) return false;
  return !finished.at(0).at(0).toBool();
}

QString firstFusedName(const graph::Graph& graph) {
  for (const auto* op : graph.operations())
    if (op->isFused()) return QString::fromStdString(op->name);
  return {};
}

void saveScreenshot(GraphWorkbench& workbench, const QString& name) {
  QString path = QStringLiteral(TESSEL_BINARY_DIR "/") + name;
  workbench.grab().save(path);
  qInfo("screenshot: %s", qPrintable(path));
}

}  // namespace

class TestGraphView : public QObject {
  Q_OBJECT
private slots:
  void showsTheExampleModelColouredByCategory() {
    GraphWorkbench workbench;
    workbench.resize(1100, 800);
    workbench.show();
    QVERIFY(QTest::qWaitForWindowExposed(&workbench));
    auto graph = optimizedExample();
    QVERIFY(layOutAndWait(workbench, graph));
    auto layout = workbench.currentLayout();
    QVERIFY(layout);
    for (const auto& node : layout->nodes) QVERIFY2(workbench.view()->graphScene()->nodeItem(node.id), qPrintable(node.id));
    workbench.view()->setZoom(1.0);
    workbench.view()->centerOnNode(firstFusedName(*graph));
    QTest::qWait(50);
    QImage shot = workbench.grab().toImage();
    const GraphPalette palette = workbench.view()->graphScene()->graphPalette();
    QVERIFY2(pixelsOf(shot, palette.category(NodeCategory::Fused)) > 200, "fused kernels are drawn in their colour");
    saveScreenshot(workbench, "graph_tiny_resnet.png");
    workbench.setAllFusedGroupsExpanded(true);
    QVERIFY(layOutAndWait(workbench));
    workbench.view()->fitToView();
    QTest::qWait(50);
    shot = workbench.grab().toImage();
    QVERIFY2(pixelsOf(shot, palette.category(NodeCategory::Compute)) > 50, "expanded convolutions show in blue");
    saveScreenshot(workbench, "graph_tiny_resnet_expanded.png");
    // The dark theme keeps the category colours.
    workbench.setGraphPalette(GraphPalette::dark());
    QTest::qWait(50);
    QVERIFY(pixelsOf(workbench.grab().toImage(), GraphPalette::dark().category(NodeCategory::Compute)) > 50);
    saveScreenshot(workbench, "graph_tiny_resnet_dark.png");
  }

  void selectionFillsThePropertiesPanel() {
    GraphWorkbench workbench;
    workbench.resize(900, 700);
    auto graph = optimizedExample();
    QVERIFY(layOutAndWait(workbench, graph));
    QSignalSpy selected(&workbench, &GraphWorkbench::nodeSelected);
    QString fused = firstFusedName(*graph);
    workbench.view()->selectNode(fused);
    QCOMPARE(selected.count(), 1);
    QCOMPARE(selected.at(0).at(0).toString(), fused);
    QCOMPARE(workbench.view()->selectedNode(), fused);
    NodePropertiesPanel* panel = workbench.propertiesPanel();
    QVERIFY(panel);
    QCOMPARE(panel->model()->findRow("Name").siblingAtColumn(1).data().toString(), fused);
    QVERIFY(panel->model()->findRow("Fused operations").isValid());
    // Its weight's statistics are shown without another click.
    QVERIFY(!panel->statisticsTensor().isEmpty());
    QVERIFY(panel->statistics().has_value());
    // Clearing the selection empties the panel.
    workbench.view()->selectNode(QString());
    QCOMPARE(selected.last().at(0).toString(), QString());
    QCOMPARE(panel->model()->rowCount(), 0);
  }

  void selectionSurvivesARelayout() {
    GraphWorkbench workbench;
    auto graph = optimizedExample();
    QVERIFY(layOutAndWait(workbench, graph));
    workbench.view()->selectNode("/Softmax");
    QCOMPARE(workbench.view()->selectedNode(), QStringLiteral("/Softmax"));
    workbench.setAllFusedGroupsExpanded(true);
    QVERIFY(layOutAndWait(workbench));
    QCOMPARE(workbench.view()->selectedNode(), QStringLiteral("/Softmax"));
    QVERIFY(workbench.view()->graphScene()->nodeItem("/Softmax")->isSelected());
  }

  void findHighlightsAndCentersMatches() {
    GraphWorkbench workbench;
    workbench.resize(900, 700);
    workbench.show();
    QVERIFY(QTest::qWaitForWindowExposed(&workbench));
    auto graph = optimizedExample();
    QVERIFY(layOutAndWait(workbench, graph));
    workbench.view()->setZoom(1.5);
    QTest::keyClick(workbench.view(), Qt::Key_F, Qt::ControlModifier);
    GraphFindBar* bar = workbench.findBar();
    QTRY_VERIFY(bar->isVisible());
    QVERIFY(bar->queryField()->hasFocus());
    QTest::keyClicks(bar->queryField(), "relu");
    QStringList matches = bar->matches();
    // Every box whose op, title or name mentions Relu, and nothing else.
    int expected = 0;
    for (const auto& node : workbench.currentLayout()->nodes) {
      bool mentions = node.title.contains("relu", Qt::CaseInsensitive) || node.name.contains("relu", Qt::CaseInsensitive) ||
                      node.op.contains("relu", Qt::CaseInsensitive);
      bool tensor = false;
      for (const auto& name : node.tensorNames) tensor |= name.contains("relu", Qt::CaseInsensitive);
      if (mentions || tensor) ++expected;
      QCOMPARE(matches.contains(node.id), mentions || tensor);
    }
    QVERIFY(expected >= 2);
    GraphScene* scene = workbench.view()->graphScene();
    QString first = bar->currentMatch();
    QCOMPARE(scene->nodeItem(first)->findState(), GraphNodeItem::FindState::Current);
    QCOMPARE(scene->nodeItem(matches[1])->findState(), GraphNodeItem::FindState::Match);
    auto visible = [&] { return workbench.view()->mapToScene(workbench.view()->viewport()->rect()).boundingRect(); };
    QVERIFY(visible().contains(scene->itemRect(first)));
    // Enter moves to the next match and centers on it.
    QTest::keyClick(bar->queryField(), Qt::Key_Return);
    QCOMPARE(bar->currentMatch(), matches[1]);
    QVERIFY(visible().contains(scene->itemRect(matches[1])));
    QCOMPARE(scene->nodeItem(first)->findState(), GraphNodeItem::FindState::Match);
    // A tensor name finds the node that reads it (the weight is folded into it).
    bar->setQuery("onnx::Conv_38");
    QCOMPARE(bar->matches().size(), 1);
    // Escape closes the bar and removes the highlights.
    QTest::keyClick(bar->queryField(), Qt::Key_Escape);
    QVERIFY(!bar->isVisible());
    QCOMPARE(scene->nodeItem(first)->findState(), GraphNodeItem::FindState::None);
  }

  void decorationsShowAndSurviveARelayout() {
    GraphWorkbench workbench;
    auto graph = optimizedExample();
    QVERIFY(layOutAndWait(workbench, graph));
    GraphView* view = workbench.view();
    view->setNodeDecoration("/Softmax", QColor(Qt::green), "+", "added by a pass");
    auto* item = view->graphScene()->nodeItem("/Softmax");
    QCOMPARE(item->decorationColour(), QColor(Qt::green));
    QCOMPARE(item->badge(), QStringLiteral("+"));
    QVERIFY(item->toolTip().contains("added by a pass"));
    workbench.setFusedGroupExpanded(firstFusedName(*graph), true);
    QVERIFY(layOutAndWait(workbench));
    item = view->graphScene()->nodeItem("/Softmax");
    QCOMPARE(item->decorationColour(), QColor(Qt::green));
    view->clearDecorations();
    QVERIFY(!item->decorationColour().isValid());
    QVERIFY(item->badge().isEmpty());
    QVERIFY(!item->toolTip().contains("added by a pass"));
  }

  void fusedGroupsExpandAndCollapseOnRequest() {
    GraphWorkbench workbench;
    auto graph = optimizedExample();
    QVERIFY(layOutAndWait(workbench, graph));
    QString fused = firstFusedName(*graph);
    GraphScene* scene = workbench.view()->graphScene();
    QVERIFY(scene->nodeItem(fused)->isCollapsedFused());
    // What a click on the box's "+" does.
    scene->requestFusedToggle(fused, true);
    QVERIFY(layOutAndWait(workbench));
    QVERIFY(workbench.currentLayout()->findCluster(fused));
    QVERIFY(!scene->nodeItem(fused));
    QVERIFY(workbench.expandedFusedGroups().count(fused));
    // What a click on the frame's "-" does.
    scene->requestFusedToggle(fused, false);
    QVERIFY(layOutAndWait(workbench));
    QVERIFY(!workbench.currentLayout()->findCluster(fused));
    QVERIFY(scene->nodeItem(fused));
  }

  // A graph of over 250 operations opens by module: "/features", holding all but the
  // classifier, is open from the start; the frame's - closes a group, the box's + opens it, and
  // find opens the modules down to what it found.
  void largeGraphsOpenByModuleAndFindOpensThem() {
    GraphWorkbench workbench;
    workbench.resize(900, 700);
    workbench.show();
    QVERIFY(QTest::qWaitForWindowExposed(&workbench));
    auto graph = tessel::testing::modularGraph(50);  // 303 operations
    QVERIFY(layOutAndWait(workbench, graph));
    QVERIFY(workbench.currentLayout()->groupedByModule());
    GraphScene* scene = workbench.view()->graphScene();
    QVERIFY(workbench.currentLayout()->findCluster("module:/features"));
    QVERIFY(scene->nodeItem("module:/features/block1")->isCollapsedFused());
    QVERIFY(scene->nodeItem("module:/features/block2"));
    scene->requestFusedToggle("module:/features", false);
    QVERIFY(layOutAndWait(workbench));
    QCOMPARE(workbench.currentLayout()->nodes.size(), size_t(4));  // input, features, classifier, output
    QVERIFY(scene->nodeItem("module:/features")->isCollapsedFused());
    scene->requestFusedToggle("module:/features", true);
    QVERIFY(layOutAndWait(workbench));
    QVERIFY(workbench.currentLayout()->findCluster("module:/features"));
    QVERIFY(scene->nodeItem("module:/features/block2"));

    workbench.showFindBar();
    GraphFindBar* bar = workbench.findBar();
    QSignalSpy finished(&workbench, &GraphWorkbench::layoutFinished);
    bar->setQuery("block2/layer17/relu");
    QCOMPARE(bar->currentMatch(), QString("module:/features/block2"));
    QVERIFY(finished.wait(60000));
    QTRY_COMPARE(bar->currentMatch(), QString("/features/block2/layer17/relu/Relu"));
    QVERIFY(workbench.currentLayout()->findCluster("module:/features/block2/layer17"));
    QVERIFY(!workbench.currentLayout()->findNode("/features/block1/layer3/conv/Conv"));  // block1 stays closed

    scene->requestFusedToggle("module:/features", false);
    QVERIFY(layOutAndWait(workbench));
    QVERIFY(scene->nodeItem("module:/features"));
    QVERIFY(!workbench.currentLayout()->findCluster("module:/features"));
  }

  // An unsupported operation inside a closed group is listed above the graph all the same;
  // choosing it opens the groups around it and selects it.
  void unsupportedNodesInsideClosedGroupsAreListedAndOpened() {
    GraphWorkbench workbench;
    workbench.resize(1000, 700);
    workbench.show();
    QVERIFY(QTest::qWaitForWindowExposed(&workbench));
    const QString hidden = "/features/block1/layer5/relu/Relu";
    QVERIFY(layOutAndWait(workbench, tessel::testing::modularGraph(50, hidden.toStdString())));
    QVERIFY(!workbench.currentLayout()->findNode(hidden));  // inside closed block1
    UnsupportedNodesPanel* panel = workbench.unsupportedNodesPanel();
    QVERIFY(panel->isVisible());
    QCOMPARE(panel->model()->rowCount(), 1);
    QCOMPARE(panel->model()->index(0, UnsupportedNodesModel::NodeColumn).data().toString(), hidden);
    QSignalSpy finished(&workbench, &GraphWorkbench::layoutFinished);
    QTreeView* list = panel->list();
    QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, list->visualRect(panel->model()->index(0, 1)).center());
    QVERIFY(finished.wait(60000));
    QVERIFY(workbench.currentLayout()->findNode(hidden));
    QTRY_COMPARE(workbench.view()->selectedNode(), hidden);
    QVERIFY(workbench.expandedModuleGroups().count("module:/features/block1/layer5"));
    // Still the one row (a layout of the same graph keeps the list).
    QCOMPARE(panel->model()->rowCount(), 1);
  }

  // Opening or closing a group keeps it where it was on screen (its title where the box's
  // was) and keeps the selection; a selected box whose group closes hands the selection to the
  // group's box. Going back to a state seen before reuses its layout.
  void expandAndCollapseKeepTheClickedGroupInPlace() {
    GraphWorkbench workbench;
    workbench.resize(1000, 700);
    workbench.show();
    QVERIFY(QTest::qWaitForWindowExposed(&workbench));
    QVERIFY(layOutAndWait(workbench, tessel::testing::modularGraph(50)));
    GraphScene* scene = workbench.view()->graphScene();
    GraphView* view = workbench.view();
    scene->requestFusedToggle("module:/features", true);
    QVERIFY(layOutAndWait(workbench));
    view->setZoom(2.0);  // the graph taller than the view: it can scroll to keep the group in place
    const QString clicked = "module:/features/block1";  // above the selection
    view->selectNode("/classifier/Gemm");
    QVERIFY(view->centerOnNode(clicked));
    auto titleOnScreen = [&](const QString& id) {
      QRectF rect = scene->itemRect(id);
      return view->mapFromScene(QPointF(rect.center().x(), rect.top()));
    };
    // Where the graph's edge stops the scroll (a frame wider than the rest of the graph), the
    // view goes as far as it can that way; down the graph it can go (checked below).
    auto near = [&](QPoint now, QPoint was) {
      auto anchored = [](int nowAt, int wasAt, const QScrollBar* bar) {
        return std::abs(nowAt - wasAt) <= 2 || bar->value() == bar->minimum() || bar->value() == bar->maximum();
      };
      return anchored(now.x(), was.x(), view->horizontalScrollBar()) &&
             anchored(now.y(), was.y(), view->verticalScrollBar()) && view->viewport()->rect().contains(now);
    };
    const QPoint before = titleOnScreen(clicked);
    QVERIFY(view->verticalScrollBar()->maximum() > 0);
    auto closedLayout = workbench.currentLayout();

    scene->requestFusedToggle(clicked, true);
    QVERIFY(layOutAndWait(workbench));
    QVERIFY(workbench.currentLayout()->findCluster(clicked));
    QVERIFY(std::abs(titleOnScreen(clicked).y() - before.y()) <= 2);
    QVERIFY2(near(titleOnScreen(clicked), before),
             qPrintable(QStringLiteral("the frame's title moved from %1,%2 to %3,%4")
                            .arg(before.x()).arg(before.y()).arg(titleOnScreen(clicked).x()).arg(titleOnScreen(clicked).y())));
    QCOMPARE(view->selectedNode(), QString("/classifier/Gemm"));

    // Select something inside, then close the group: the selection goes to the group's box.
    const QString inside = "module:/features/block1/layer7";
    QVERIFY(scene->nodeItem(inside));
    view->selectNode(inside);
    // Where the frame's "-" is, which the user clicks, magnified: the closed graph is taller
    // than the view then, so the box can be put where the frame's title was.
    view->setZoom(3.0);
    QRectF frame = scene->itemRect(clicked);
    view->centerOn(frame.center().x(), frame.top() + 100);
    const QPoint open = titleOnScreen(clicked);
    scene->requestFusedToggle(clicked, false);
    QVERIFY(layOutAndWait(workbench));
    QVERIFY(workbench.currentLayout()->findNode(clicked));
    QVERIFY(view->verticalScrollBar()->maximum() > 0);
    QVERIFY2(std::abs(titleOnScreen(clicked).y() - open.y()) <= 2 && near(titleOnScreen(clicked), open),
             qPrintable(QStringLiteral("the box's title is at %1,%2, the frame's was at %3,%4")
                            .arg(titleOnScreen(clicked).x()).arg(titleOnScreen(clicked).y()).arg(open.x()).arg(open.y())));
    QCOMPARE(view->selectedNode(), clicked);
    QVERIFY(scene->nodeItem(clicked)->isSelected());
    // The layout of this state was made once already: it is the same one.
    QCOMPARE(workbench.currentLayout(), closedLayout);
  }

  // The breadcrumbs say where the selected box sits in the module hierarchy; a crumb takes
  // the view to its group, the first one to the whole graph.
  void breadcrumbsShowWhereTheSelectionIsAndGoThere() {
    GraphWorkbench workbench;
    workbench.resize(1000, 700);
    workbench.show();
    QVERIFY(QTest::qWaitForWindowExposed(&workbench));
    // A small graph without groups has nothing to show there.
    QVERIFY(layOutAndWait(workbench, optimizedExample()));
    QVERIFY(!workbench.breadcrumbs()->isVisible());

    QVERIFY(layOutAndWait(workbench, tessel::testing::modularGraph(50)));
    QVERIFY(workbench.breadcrumbs()->isVisible());
    for (const char* group : {"module:/features", "module:/features/block2", "module:/features/block2/layer17"}) {
      workbench.setModuleGroupExpanded(group, true);
      QVERIFY(layOutAndWait(workbench));
    }
    GraphView* view = workbench.view();
    view->selectNode("/features/block2/layer17/relu/Relu");
    QCOMPARE(workbench.breadcrumbs()->text(), QString("Graph › features › block2 › layer17 › relu/Relu"));

    QToolButton* block2 = nullptr;
    QToolButton* whole = nullptr;
    for (QToolButton* button : workbench.breadcrumbs()->findChildren<QToolButton*>()) {
      if (button->text() == "block2") block2 = button;
      if (button->text() == "Graph") whole = button;
    }
    QVERIFY(block2 && whole);
    view->setZoom(1.0);
    view->centerOnNode("/features/conv0/Conv");
    QTest::mouseClick(block2, Qt::LeftButton);
    // The view shows the whole frame, zoomed out as far as that takes.
    QRectF frame = view->graphScene()->itemRect("module:/features/block2");
    QRectF visible = view->mapToScene(view->viewport()->rect()).boundingRect();
    QVERIFY(visible.adjusted(-2, -2, 2, 2).contains(frame));
    QVERIFY(view->zoom() < 1.0);
    QTest::mouseClick(whole, Qt::LeftButton);
    visible = view->mapToScene(view->viewport()->rect()).boundingRect();
    QVERIFY(visible.adjusted(-2, -2, 2, 2).contains(workbench.currentLayout()->bounds));

    // With nothing selected the breadcrumbs follow the middle of the view.
    view->selectNode(QString());
    view->setZoom(1.0);
    view->centerOnNode("module:/features/block1");
    QTRY_COMPARE(workbench.breadcrumbs()->text(), QString("Graph › features › block1"));
  }

  void zoomKeysAndFit() {
    GraphWorkbench workbench;
    workbench.resize(800, 600);
    workbench.show();
    QVERIFY(QTest::qWaitForWindowExposed(&workbench));
    QVERIFY(layOutAndWait(workbench, optimizedExample()));
    GraphView* view = workbench.view();
    view->setZoom(1.0);
    QTest::keyClick(view, Qt::Key_Equal, Qt::ControlModifier);
    QVERIFY(view->zoom() > 1.0);
    double zoomedIn = view->zoom();
    QTest::keyClick(view, Qt::Key_Minus, Qt::ControlModifier);
    QTest::keyClick(view, Qt::Key_Minus, Qt::ControlModifier);
    QVERIFY(view->zoom() < zoomedIn && view->zoom() < 1.0);
    QTest::keyClick(view, Qt::Key_0, Qt::ControlModifier);
    QRectF visible = view->mapToScene(view->viewport()->rect()).boundingRect().adjusted(-1, -1, 1, 1);
    QVERIFY(visible.contains(view->sceneRect()));
    // The wheel zooms too.
    double before = view->zoom();
    QWheelEvent wheel(QPointF(100, 100), view->viewport()->mapToGlobal(QPointF(100, 100)), QPoint(), QPoint(0, 120),
                      Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
    QCoreApplication::sendEvent(view->viewport(), &wheel);
    QVERIFY(view->zoom() > before);
  }

  void aTallGraphOpensReadableAtItsStart() {
    GraphWorkbench workbench;
    workbench.resize(800, 300);  // far too short to fit the example readably
    workbench.show();
    QVERIFY(QTest::qWaitForWindowExposed(&workbench));
    QVERIFY(layOutAndWait(workbench, optimizedExample()));
    GraphView* view = workbench.view();
    // Not shrunk to unreadable boxes: at the readable zoom, with the graph's input in sight.
    QCOMPARE(view->zoom(), GraphView::readableZoom);
    QRectF visible = view->mapToScene(view->viewport()->rect()).boundingRect();
    const GraphLayout& layout = *workbench.currentLayout();
    const LayoutNode* input = nullptr;
    for (const LayoutNode& node : layout.nodes)
      if (node.op == "Input") input = &node;
    QVERIFY(input);
    QVERIFY(visible.contains(input->box));
    QVERIFY(!visible.contains(view->sceneRect()));
    // Fit (Ctrl+0) still shows all of it.
    QTest::keyClick(view, Qt::Key_0, Qt::ControlModifier);
    QVERIFY(view->zoom() < GraphView::readableZoom);
    // A window tall enough fits the graph at once.
    workbench.resize(800, 1400);
    QVERIFY(layOutAndWait(workbench, optimizedExample()));
    visible = view->mapToScene(view->viewport()->rect()).boundingRect().adjusted(-1, -1, 1, 1);
    QVERIFY(visible.contains(view->sceneRect()));
  }

  // Whatever the graph, the first view shows its input at a legible zoom, never empty space:
  // the examples, a graph drawn by module, and one drawn operation by operation whose long
  // edges run in lanes beside the trunk (which widen the graph to one side).
  void theFirstViewShowsTheInput_data() {
    QTest::addColumn<QString>("which");
    QTest::newRow("tiny_resnet") << "tiny_resnet";
    QTest::newRow("long_chain") << "long_chain";
    QTest::newRow("by module") << "modules";
    QTest::newRow("with lanes") << "lanes";
  }
  void theFirstViewShowsTheInput() {
    QFETCH(QString, which);
    GraphWorkbench workbench;
    workbench.resize(500, 300);
    workbench.show();
    QVERIFY(QTest::qWaitForWindowExposed(&workbench));
    std::shared_ptr<const graph::Graph> graph;
    if (which == "modules") {
      graph = tessel::testing::modularGraph(50);
    } else if (which == "lanes") {
      graph = tessel::testing::modularGraph(30);
    } else {
      graph = compiledModel(QStringLiteral(TESSEL_SOURCE_DIR "/resources/examples/%1.onnx").arg(which));
    }
    QVERIFY(layOutAndWait(workbench, graph));
    if (which == "lanes") {
      for (const char* group : {"module:/features", "module:/features/block1"}) {
        workbench.setModuleGroupExpanded(group, true);
        QVERIFY(layOutAndWait(workbench));
      }
      QCOMPARE(workbench.currentLayout()->engine, QString("layered"));  // its rank gaps are too wide for dot
      workbench.view()->showStart();
    }
    GraphView* view = workbench.view();
    QRectF visible = view->mapToScene(view->viewport()->rect()).boundingRect();
    const LayoutNode* input = nullptr;
    for (const LayoutNode& node : workbench.currentLayout()->nodes)
      if (node.op == "Input") input = &node;
    QVERIFY(input);
    QVERIFY2(visible.intersects(input->box), qPrintable(which));
    QVERIFY(view->zoom() >= GraphView::readableZoom * 0.999 || visible.contains(view->sceneRect()));
  }

  void viewportStateSynchronizesTwoViews() {
    GraphView left, right;
    left.resize(600, 500);
    right.resize(600, 500);
    left.show();
    right.show();
    QVERIFY(QTest::qWaitForWindowExposed(&right));
    JobContext job;
    auto layout = layoutGraph(optimizedExample(), left.graphScene()->layoutOptions(), job);
    QVERIFY(layout);
    auto shared = std::make_shared<const GraphLayout>(std::move(*layout));
    left.setGraphLayout(shared);
    right.setGraphLayout(shared);
    QObject::connect(&left, &GraphView::viewportChanged, &right, &GraphView::setViewportState);
    left.setZoom(1.7);
    QVERIFY(left.centerOnNode("/Softmax"));
    QCOMPARE(right.zoom(), left.zoom());
    QVERIFY(QLineF(right.viewportState().center, left.viewportState().center).length() < 1.0);
    QVERIFY(!left.centerOnNode("no such node"));
  }

  void minimapClickMovesTheView() {
    GraphWorkbench workbench;
    workbench.resize(900, 700);
    workbench.show();
    QVERIFY(QTest::qWaitForWindowExposed(&workbench));
    QVERIFY(layOutAndWait(workbench, optimizedExample()));
    GraphView* view = workbench.view();
    view->setZoom(2.0);
    view->centerOnNode("image");
    GraphMinimap* minimap = workbench.minimap();
    QVERIFY(minimap->isVisible());
    QRectF before = minimap->visibleFrame();
    QVERIFY(!before.isEmpty());
    // Click near the bottom of the overview: the view moves down the graph.
    QPointF target(minimap->width() / 2.0, minimap->height() - 12.0);
    double centerBefore = view->viewportState().center.y();
    QTest::mouseClick(minimap, Qt::LeftButton, Qt::NoModifier, target.toPoint());
    QVERIFY(view->viewportState().center.y() > centerBefore + 50);
    QVERIFY(minimap->visibleFrame().center().y() > before.center().y());
  }

  void exportsPngAndSvg() {
    GraphWorkbench workbench;
    QVERIFY(layOutAndWait(workbench, optimizedExample()));
    QTemporaryDir dir;
    QString png = dir.filePath("graph.png"), svg = dir.filePath("graph.svg");
    QVERIFY(workbench.exportPng(png).ok());
    QVERIFY(workbench.exportSvg(svg).ok());
    QImage image(png);
    QVERIFY(!image.isNull());
    QVERIFY(image.width() > 100 && image.height() > 100);
    QFile file(svg);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QByteArray text = file.readAll();
    QVERIFY(text.size() > 1000);
    QVERIFY2(text.contains("/Softmax"), "node names are real text in the SVG");
    QVERIFY(QSvgRenderer(svg).isValid());
    // A folder that does not exist is reported with the file's name.
    Status failed = workbench.exportPng(dir.filePath("missing/graph.png"));
    QVERIFY(!failed.ok());
    QVERIFY(QString::fromStdString(failed.error().toString()).contains("graph.png"));
  }

  // Not a check: renders another model for a person to look at, when asked to with
  // TESSEL_GRAPH_SCREENSHOT_MODEL=path/to/model.onnx.
  void screenshotOfAnotherModel() {
    QString path = qEnvironmentVariable("TESSEL_GRAPH_SCREENSHOT_MODEL");
    if (path.isEmpty()) QSKIP("set TESSEL_GRAPH_SCREENSHOT_MODEL to render another model");
    GraphWorkbench workbench;
    workbench.resize(1400, 900);
    workbench.show();
    QVERIFY(QTest::qWaitForWindowExposed(&workbench));
    QVERIFY(layOutAndWait(workbench, compiledModel(path)));
    QString stem = QFileInfo(QFileInfo(path).absolutePath()).fileName();
    QTest::qWait(50);
    saveScreenshot(workbench, "graph_" + stem + "_fit.png");
    workbench.view()->setZoom(1.0);
    workbench.view()->centerOnNode(workbench.currentLayout()->nodes.front().id);
    QTest::qWait(50);
    saveScreenshot(workbench, "graph_" + stem + "_top.png");
    QVERIFY(workbench.exportPng(QStringLiteral(TESSEL_BINARY_DIR "/graph_") + stem + "_export.png").ok());
  }
};

QTEST_MAIN(TestGraphView)
#include "test_graph_view.moc"

