// The pass timeline's widgets: the diff overlay's colours on a known diff, synchronized
// comparison, picking steps on the strip, the options panel and the workbench on a real
// compile (offscreen). Set TESSEL_TIMELINE_SCREENSHOTS=DIR to save what they look like.
#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QComboBox>
#include <QListView>
#include <QPushButton>
#include <QtTest>

#include "../compiler/GraphPassTestSupport.h"

#include "ModularGraphSupport.h"
#include "compiler/driver/Driver.h"
#include "compiler/graph/FuseOps.h"
#include "views/common/Theme.h"
#include "views/graph/GraphNodeItem.h"
#include "views/graph/GraphScene.h"
#include "views/graph/GraphView.h"
#include "views/session/ModelSession.h"
#include "views/timeline/DiffDecorations.h"
#include "views/timeline/GraphCompareView.h"
#include "views/timeline/PassOptionsPanel.h"
#include "views/timeline/PassTimelineModel.h"
#include "views/timeline/PassTimelineView.h"
#include "views/timeline/TimelineWorkbench.h"

using namespace tessel;
using namespace tessel::graph;
using namespace tessel::views;

namespace {
using testing::f32;
using testing::filled;
using testing::op;

// x -> conv -> add(bias) -> relu -> sigmoid, and what FuseOps makes of it.
std::shared_ptr<const Graph> convBlock() {
  Value x = makeInput("x", f32({1, 3, 8, 8}));
  Value weight = makeConstant("conv.w", filled({4, 3, 3, 3}, 0.5f));
  Value bias = makeConstant("bias", filled({4, 1, 1}, 0.25f));
  Value conv = op("conv", "Conv", {x, weight}, f32({1, 4, 8, 8}), {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  Value add = op("add", "Add", {conv, bias}, f32({1, 4, 8, 8}));
  Value relu = op("relu", "Relu", {add}, f32({1, 4, 8, 8}));
  Value pool = op("pool", "GlobalAveragePool", {relu}, f32({1, 4, 1, 1}));
  return std::make_shared<const Graph>(Graph{{x}, {pool}, {"y"}});
}

std::shared_ptr<const Graph> fused(const Graph& graph) {
  auto result = fuseOps(graph);
  if (!result) qFatal("%s", result.error().toString().c_str());
  return std::make_shared<const Graph>(std::move(*result));
}

QString example(const char* name) { return QStringLiteral(TESSEL_SOURCE_DIR "/resources/examples/") + name; }

void screenshot(QWidget& widget, const char* name) {
  QByteArray dir = qgetenv("TESSEL_TIMELINE_SCREENSHOTS");
  if (dir.isEmpty()) return;
  QTest::qWait(50);  // Let pending layout requests resize the labels first.
  widget.grab().save(QString::fromLocal8Bit(dir) + "/" + name);
}

const NodeDecoration* decorationOf(const std::vector<NodeDecoration>& decorations, const QString& id) {
  for (auto& d : decorations)
    if (d.nodeId == id) return &d;
  return nullptr;
}

QPoint cardCenter(PassTimelineView& view, int row) {
  return view.listView()->visualRect(view.model()->index(row, 0)).center();
}
}  // namespace

class TestTimelineViews : public QObject {
  Q_OBJECT
private slots:
  void fusionDecoratesBothSides() {
    auto before = convBlock();
    auto after = fused(*before);
    GraphDiff diff = diffGraphs(*before, *after);
    auto afterSide = diffDecorations(diff, DiffSide::After);
    auto beforeSide = diffDecorations(diff, DiffSide::Before);
    // B: the fused node, purple, saying how many it absorbed and naming them.
    QCOMPARE(int(afterSide.size()), 1);
    QCOMPARE(afterSide[0].nodeId, QString("fused_Conv_Add_Relu"));
    QCOMPARE(afterSide[0].change, NodeChange::Fused);
    QCOMPARE(afterSide[0].colour, diffColour(NodeChange::Fused));
    QCOMPARE(afterSide[0].badge, QString("fused 3"));
    for (const char* absorbed : {"conv", "add", "relu"})
      QVERIFY2(afterSide[0].tooltip.contains(absorbed), qPrintable(afterSide[0].tooltip));
    // A: each absorbed node in the fused colour; the input and the pool untouched.
    QCOMPARE(int(beforeSide.size()), 3);
    for (const char* absorbed : {"conv", "add", "relu"}) {
      const NodeDecoration* d = decorationOf(beforeSide, absorbed);
      QVERIFY(d);
      QCOMPARE(d->colour, diffColour(NodeChange::Fused));
      QVERIFY(d->tooltip.contains("fused_Conv_Add_Relu"));
    }
    QVERIFY(!decorationOf(beforeSide, "x"));
    QVERIFY(!decorationOf(beforeSide, "pool"));
  }

  void everyChangeHasItsOwnColour() {
    QSet<QRgb> colours;
    for (NodeChange change : {NodeChange::Added, NodeChange::Removed, NodeChange::Fused, NodeChange::Relaid,
                              NodeChange::Modified}) {
      QVERIFY(diffColour(change).isValid());
      colours.insert(diffColour(change).rgb());
      // The dark theme's variant is lighter, so outlines stay visible on a dark canvas.
      QVERIFY(diffColour(change, true).lightness() > diffColour(change).lightness());
    }
    QCOMPARE(colours.size(), 5);
    QVERIFY(!diffColour(NodeChange::Unchanged).isValid());
  }

  // A step drawn by module: a closed module's box counts the changes inside it, in the colour
  // of the most frequent one.
  void closedModulesSayWhatChangedInside() {
    auto graph = tessel::testing::modularGraph(3);
    ModuleGroups modules(*graph);
    std::vector<NodeDecoration> changes{
        {"/features/block2/layer1/conv/Conv", graph::NodeChange::Fused, diffColour(graph::NodeChange::Fused), "fused 2", {}},
        {"/features/block2/layer2/conv/Conv", graph::NodeChange::Fused, diffColour(graph::NodeChange::Fused), "fused 2", {}},
        {"/features/block2/layer2/relu/Relu", graph::NodeChange::Relaid, diffColour(graph::NodeChange::Relaid), "layout", {}},
        {"/classifier/Gemm", graph::NodeChange::Modified, diffColour(graph::NodeChange::Modified), "modified", {}}};
    std::vector<NodeDecoration> grouped = moduleDiffDecorations(changes, modules, *graph);
    auto find = [&](const QString& id) -> const NodeDecoration* {
      for (const NodeDecoration& d : grouped)
        if (d.nodeId == id) return &d;
      return nullptr;
    };
    const NodeDecoration* block2 = find("module:/features/block2");
    QVERIFY(block2);
    QCOMPARE(block2->badge, QString("3 changed"));
    QCOMPARE(block2->colour, diffColour(graph::NodeChange::Fused));
    QVERIFY2(block2->tooltip.contains("3 of its 9 operations changed"), qPrintable(block2->tooltip));
    QCOMPARE(find("module:/features/block2/layer1")->badge, QString("1 fused"));
    QVERIFY(!find("module:/features/block1"));  // nothing changed there
    QVERIFY(find("module:/features"));
  }

  void compareViewColoursTheGraphItems() {
    auto before = convBlock();
    auto after = fused(*before);
    GraphCompareView view;
    view.resize(1000, 600);
    view.show();
    QSignalSpy ready(&view, &GraphCompareView::comparisonReady);
    view.setGraphs(before, after, "Imported", "FuseOps");
    QVERIFY(ready.wait(30000));
    GraphNodeItem* fusedItem = view.view(DiffSide::After)->graphScene()->nodeItem("fused_Conv_Add_Relu");
    QVERIFY(fusedItem);
    QCOMPARE(fusedItem->decorationColour(), diffColour(NodeChange::Fused));
    QCOMPARE(fusedItem->badge(), QString("fused 3"));
    GraphNodeItem* relu = view.view(DiffSide::Before)->graphScene()->nodeItem("relu");
    QVERIFY(relu);
    QCOMPARE(relu->decorationColour(), diffColour(NodeChange::Fused));
    GraphNodeItem* pool = view.view(DiffSide::After)->graphScene()->nodeItem("pool");
    QVERIFY(pool);
    QVERIFY(!pool->decorationColour().isValid());
    screenshot(view, "timeline_compare_small.png");
  }

  void darkThemeSwitchesTheOverlayToItsDarkColours() {
    auto before = convBlock();
    auto after = fused(*before);
    GraphCompareView view;
    view.resize(1000, 600);
    view.show();
    QSignalSpy ready(&view, &GraphCompareView::comparisonReady);
    view.setGraphs(before, after, "Imported", "FuseOps");
    QVERIFY(ready.wait(30000));
    GraphNodeItem* item = view.view(DiffSide::After)->graphScene()->nodeItem("fused_Conv_Add_Relu");
    QCOMPARE(item->decorationColour(), diffColour(NodeChange::Fused, false));
    // A theme switch changes the palette while the comparison is shown.
    view.setPalette(themePalette(Theme::Dark));
    item = view.view(DiffSide::After)->graphScene()->nodeItem("fused_Conv_Add_Relu");
    QCOMPARE(item->decorationColour(), diffColour(NodeChange::Fused, true));
    QCOMPARE(view.decorations(DiffSide::Before).front().colour, diffColour(NodeChange::Fused, true));
    screenshot(view, "timeline_compare_small_dark.png");
  }

  void selectionAndZoomFollowThroughTheDiff() {
    auto before = convBlock();
    auto after = fused(*before);
    GraphCompareView view;
    view.resize(1000, 600);
    view.show();
    QSignalSpy ready(&view, &GraphCompareView::comparisonReady);
    view.setGraphs(before, after);
    QVERIFY(ready.wait(30000));
    GraphView* a = view.view(DiffSide::Before);
    GraphView* b = view.view(DiffSide::After);

    // An absorbed node selects the fused node that holds it, and back.
    a->selectNode("add");
    QCOMPARE(b->selectedNode(), QString("fused_Conv_Add_Relu"));
    b->selectNode("pool");
    QCOMPARE(a->selectedNode(), QString("pool"));
    b->selectNode("fused_Conv_Add_Relu");
    QCOMPARE(a->selectedNode(), QString("conv"));
    QCOMPARE(view.counterparts(DiffSide::After, "fused_Conv_Add_Relu"), (QStringList{"conv", "add", "relu"}));

    // Zoom is mirrored; turned off, the sides move alone.
    a->setZoom(0.5);
    QCOMPARE(b->zoom(), 0.5);
    view.setSynchronized(false);
    a->setZoom(0.8);
    QCOMPARE(b->zoom(), 0.5);
  }

  void stripPicksOneStepOrTwoToCompare() {
    auto imported = convBlock();
    auto after = fused(*imported);
    std::vector<TimelineStep> steps(3);
    steps[0] = {"Imported", -1, int(imported->operationCount()), "imported", false, imported};
    steps[1] = {"FoldConstant", 1.5, int(imported->operationCount()), "no change", false, imported};
    steps[2] = {"FuseOps", 0.5, int(after->operationCount()), "-2 nodes, 1 fused", false, after};
    PassTimelineModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setSteps(steps);
    PassTimelineView view;
    view.resize(700, 140);
    view.setModel(&model);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    // Opening shows the last step, the optimized graph.
    QCOMPARE(view.selectedStep(), 2);

    QSignalSpy selected(&view, &PassTimelineView::stepSelected);
    QSignalSpy compared(&view, &PassTimelineView::comparisonRequested);
    QSignalSpy cleared(&view, &PassTimelineView::comparisonCleared);
    QTest::mouseClick(view.listView()->viewport(), Qt::LeftButton, {}, cardCenter(view, 1));
    QCOMPARE(selected.count(), 1);
    QCOMPARE(selected.at(0).at(0).toInt(), 1);
    // Ctrl+click a second step: compare, the earlier one first.
    QTest::mouseClick(view.listView()->viewport(), Qt::LeftButton, Qt::ControlModifier, cardCenter(view, 0));
    QCOMPARE(compared.count(), 1);
    QCOMPARE(compared.at(0).at(0).toInt(), 0);
    QCOMPARE(compared.at(0).at(1).toInt(), 1);
    QCOMPARE(view.selectedStep(), 1);
    screenshot(view, "timeline_strip.png");
    // Escape leaves the comparison and shows the selected step again.
    QTest::keyClick(&view, Qt::Key_Escape);
    QCOMPARE(cleared.count(), 1);
    QVERIFY(!view.isComparing());
    QCOMPARE(selected.last().at(0).toInt(), 1);

    // A recompile keeps the selected step.
    model.setSteps(steps);
    QCOMPARE(view.selectedStep(), 1);
  }

  void optionsPanelEmitsWhatTheUserChose() {
    PassOptionsPanel panel;
    graph::PassOptions start;
    start.disabledPasses = {"EliminateCommonSubexpr"};
    panel.setOptions(start);
    QVERIFY(!panel.hasPendingChanges());
    QVERIFY(!panel.applyButton()->isEnabled());
    QVERIFY(!panel.passCheckBox("EliminateCommonSubexpr")->isChecked());
    QVERIFY(panel.passCheckBox("FuseOps")->isChecked());

    QSignalSpy changed(&panel, &PassOptionsPanel::optionsChanged);
    panel.passCheckBox("FuseOps")->setChecked(false);
    panel.passCheckBox("EliminateCommonSubexpr")->setChecked(true);
    panel.optLevelBox()->setCurrentIndex(2);
    QVERIFY(panel.hasPendingChanges());
    QTest::mouseClick(panel.applyButton(), Qt::LeftButton);
    QCOMPARE(changed.count(), 1);
    auto options = changed.at(0).at(0).value<graph::PassOptions>();
    QCOMPARE(options.optLevel, 2);
    QCOMPARE(options.disabledPasses, std::vector<std::string>{"FuseOps"});
    QVERIFY(!panel.hasPendingChanges());

    // At level 0, passes that need a higher level cannot be toggled: they will not run.
    panel.optLevelBox()->setCurrentIndex(0);
    auto passes = driver::standardPasses();
    for (const graph::Pass& pass : passes.passes())
      QCOMPARE(panel.passCheckBox(QString::fromStdString(pass.name))->isEnabled(), pass.minOptLevel == 0);
    panel.revert();
    QCOMPARE(panel.optLevelBox()->currentIndex(), 2);

    // A pass option (PassOptions::config) sits under its pass; only a change from the
    // default is written, and it follows its pass being enabled.
    QCheckBox* blocked = panel.configCheckBox("AlterLayout.blocked_activations");
    QVERIFY(blocked);
    const graph::PassOption* declared = nullptr;
    for (const graph::Pass& pass : passes.passes())
      for (const graph::PassOption& option : pass.options)
        if (pass.name == "AlterLayout" && option.name == "blocked_activations") declared = &option;
    QVERIFY(declared);
    QCOMPARE(blocked->isChecked(), declared->defaultValue == "true");
    blocked->setChecked(!blocked->isChecked());
    panel.apply();
    QCOMPARE(changed.count(), 2);
    auto withOption = changed.at(1).at(0).value<graph::PassOptions>();
    QCOMPARE(withOption.config.size(), size_t(1));
    QCOMPARE(withOption.config.at("AlterLayout.blocked_activations"), declared->defaultValue == "true" ? "false" : "true");
    panel.passCheckBox("AlterLayout")->setChecked(false);
    QVERIFY(!blocked->isEnabled());
    panel.setOptions(graph::PassOptions{});
    QCOMPARE(blocked->isChecked(), declared->defaultValue == "true");
    QVERIFY(blocked->isEnabled());
  }

  void workbenchShowsAStepAndComparesTwo() {
    auto imported = driver::loadModel(example("tiny_resnet.onnx").toStdString());
    QVERIFY(imported.ok());
    auto compiled = driver::compileGraph(*imported);
    QVERIFY(compiled.ok());
    auto importedGraph = std::make_shared<const Graph>(*imported);
    auto model = std::make_shared<const driver::CompiledModel>(std::move(*compiled));

    TimelineWorkbench workbench;
    workbench.resize(1400, 800);
    workbench.show();
    QSignalSpy shown(&workbench, &TimelineWorkbench::stepShown);
    QSignalSpy comparedSpy(&workbench, &TimelineWorkbench::comparisonShown);
    workbench.setModel(importedGraph, model);
    QVERIFY(shown.wait(30000));
    int last = int(model->snapshots.size());
    QCOMPARE(shown.last().at(0).toInt(), last);
    QVERIFY(workbench.stepView()->graphLayout());
    QCOMPARE(workbench.stepView()->graphLayout()->graph.get(), &model->snapshots.back().graph);
    screenshot(workbench, "timeline_step.png");

    // Expanding a fused group lays the step out again with the group's primitives inside.
    QString fusedName;
    for (const OperationNode* node : model->snapshots.back().graph.operations())
      if (node->isFused() && fusedName.isEmpty()) fusedName = QString::fromStdString(node->name);
    QVERIFY(!fusedName.isEmpty());
    QVERIFY(!workbench.stepView()->graphLayout()->findCluster(fusedName));
    workbench.stepView()->graphScene()->requestFusedToggle(fusedName, true);
    QVERIFY(shown.wait(30000));
    QVERIFY(workbench.stepView()->graphLayout()->findCluster(fusedName));

    // The imported graph against the optimized one: fused groups on B, absorbed nodes on A.
    workbench.compareSteps(0, last);
    QVERIFY(comparedSpy.wait(30000));
    QCOMPARE(comparedSpy.last().at(0).toInt(), 0);
    QCOMPARE(comparedSpy.last().at(1).toInt(), last);
    auto* compare = workbench.compareView();
    int fusedOnB = 0;
    for (auto& d : compare->decorations(DiffSide::After)) fusedOnB += d.change == NodeChange::Fused ? 1 : 0;
    QVERIFY(fusedOnB >= 3);
    const NodeDecoration* absorbedAdd = decorationOf(compare->decorations(DiffSide::Before), "/Add");
    QVERIFY(absorbedAdd);
    QCOMPARE(absorbedAdd->change, NodeChange::Fused);
    GraphNodeItem* item = compare->view(DiffSide::Before)->graphScene()->nodeItem("/Add");
    QVERIFY(item);
    QCOMPARE(item->decorationColour(), absorbedAdd->colour);
    screenshot(workbench, "timeline_compare.png");

    // Applying options asks for a recompile with them.
    QSignalSpy options(&workbench, &TimelineWorkbench::optionsChanged);
    workbench.optionsPanel()->passCheckBox("FuseOps")->setChecked(false);
    workbench.optionsPanel()->apply();
    QCOMPARE(options.count(), 1);

    workbench.setPalette(themePalette(Theme::Dark));
    screenshot(workbench, "timeline_compare_dark.png");

    // A recompile (same passes) keeps the comparison.
    workbench.setModel(importedGraph, model);
    QVERIFY(comparedSpy.wait(30000));
    QVERIFY(workbench.isComparing());

    // Another model (a new import) opens at its optimized graph, not at the old selection.
    workbench.selectStep(2);
    QVERIFY(shown.wait(30000));
    workbench.setModel(std::make_shared<const Graph>(*imported), model);
    QVERIFY(shown.wait(30000));
    QCOMPARE(workbench.selectedStep(), last);
    QVERIFY(!workbench.isComparing());
  }

  void applyingOptionsRecompilesAndTheTimelineFollows() {
    // The wiring the main window does: compiled results into the workbench, applied options
    // into a background recompile.
    ModelSession session;
    TimelineWorkbench workbench;
    workbench.resize(1200, 700);
    workbench.show();
    connect(&session, &ModelSession::compiled, &workbench, [&] {
      workbench.setModel(session.imported(), session.compiledModel());
      workbench.setPassOptions(session.compileOptions().passes);
    });
    connect(&workbench, &TimelineWorkbench::optionsChanged, &session, [&](const graph::PassOptions& options) {
      auto compile = session.compileOptions();
      compile.passes = options;
      session.recompile(compile);
    });
    QSignalSpy compiled(&session, &ModelSession::compiled);
    QSignalSpy shown(&workbench, &TimelineWorkbench::stepShown);
    session.open(example("tiny_resnet.onnx"));
    QVERIFY(compiled.wait(60000));
    QVERIFY(shown.wait(30000));
    PassTimelineModel* model = workbench.timelineModel();
    int fuse = model->rowCount() - 1;
    QCOMPARE(model->index(fuse).data(PassTimelineModel::PassNameRole).toString(), QString("FuseOps"));
    QVERIFY(!model->index(fuse).data(PassTimelineModel::SkippedRole).toBool());

    workbench.optionsPanel()->passCheckBox("FuseOps")->setChecked(false);
    QTest::mouseClick(workbench.optionsPanel()->applyButton(), Qt::LeftButton);
    QVERIFY(session.isBusy());
    QVERIFY(compiled.wait(60000));
    QTRY_VERIFY(model->index(fuse).data(PassTimelineModel::SkippedRole).toBool());
    QCOMPARE(session.compileOptions().passes.disabledPasses, std::vector<std::string>{"FuseOps"});
    // The panel shows what the model was compiled with, nothing pending.
    QVERIFY(!workbench.optionsPanel()->hasPendingChanges());
    QVERIFY(!workbench.optionsPanel()->passCheckBox("FuseOps")->isChecked());
  }
};

QTEST_MAIN(TestTimelineViews)
#include "test_timeline_views.moc"
