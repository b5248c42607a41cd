// The pass timeline model over a real compile of the example model: one row per step, the
// roles a timeline shows, skipped passes marked, and a model that stays consistent.
#include <QAbstractItemModelTester>
#include <QtTest>

#include "compiler/driver/Driver.h"
#include "views/timeline/PassTimelineModel.h"

using namespace tessel;
using namespace tessel::views;

namespace {
QString example(const char* name) { return QStringLiteral(TESSEL_SOURCE_DIR "/resources/examples/") + name; }

struct Compiled {
  std::shared_ptr<const graph::Graph> imported;
  std::shared_ptr<const driver::CompiledModel> model;
};

Compiled compileExample(const graph::PassOptions& passes = {}) {
  auto imported = driver::loadModel(example("tiny_resnet.onnx").toStdString());
  if (!imported) qFatal("%s", imported.error().toString().c_str());
  driver::CompileOptions options;
  options.passes = passes;
  auto model = driver::compileGraph(*imported, options);
  if (!model) qFatal("%s", model.error().toString().c_str());
  return {std::make_shared<const graph::Graph>(std::move(*imported)),
          std::make_shared<const driver::CompiledModel>(std::move(*model))};
}

int rowNamed(const PassTimelineModel& model, const QString& name) {
  for (int row = 0; row < model.rowCount(); ++row)
    if (model.index(row).data(PassTimelineModel::PassNameRole).toString() == name) return row;
  return -1;
}
}  // namespace

class TestTimelineModel : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() { compiled_ = compileExample(); }

  void oneRowPerPassAfterTheImportedGraph() {
    PassTimelineModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setCompiledModel(compiled_.imported, compiled_.model);
    QCOMPARE(model.rowCount(), int(compiled_.model->snapshots.size()) + 1);
    QCOMPARE(model.index(0).data(PassTimelineModel::PassNameRole).toString(), QString("Imported"));
    QVERIFY(!model.index(0).data(PassTimelineModel::MillisecondsRole).isValid());
    QCOMPARE(model.index(0).data(PassTimelineModel::NodeCountRole).toInt(), int(compiled_.imported->operationCount()));
    for (size_t i = 0; i < compiled_.model->snapshots.size(); ++i) {
      const auto& snapshot = compiled_.model->snapshots[i];
      QModelIndex index = model.index(int(i) + 1);
      QCOMPARE(index.data(PassTimelineModel::PassNameRole).toString(), QString::fromStdString(snapshot.passName));
      QCOMPARE(index.data(PassTimelineModel::MillisecondsRole).toDouble(), snapshot.milliseconds);
      QCOMPARE(index.data(PassTimelineModel::NodeCountRole).toInt(), int(snapshot.graph.operationCount()));
      double fraction = index.data(PassTimelineModel::TimeFractionRole).toDouble();
      QVERIFY(fraction >= 0 && fraction <= 1);
      QVERIFY(index.data(Qt::DisplayRole).toString().startsWith(QString::fromStdString(snapshot.passName)));
    }
    // The step graph is the snapshot itself, not a copy.
    QCOMPARE(model.graphAt(model.rowCount() - 1).get(), &compiled_.model->snapshots.back().graph);
    QCOMPARE(model.graphAt(0).get(), compiled_.imported.get());
  }

  void summariesSayWhatEachPassDid() {
    PassTimelineModel model;
    model.setCompiledModel(compiled_.imported, compiled_.model);
    int fuse = rowNamed(model, "FuseOps");
    int alter = rowNamed(model, "AlterLayout");
    QVERIFY(fuse > 0 && alter > 0);
    // FuseOps merged the conv/relu/add chains: the summary gives the node count's change and
    // the number of fused groups of its graph.
    int fusedGroups = 0;
    for (const graph::OperationNode* op : model.graphAt(fuse)->operations()) fusedGroups += op->isFused() ? 1 : 0;
    QVERIFY(fusedGroups >= 3);
    int removed = int(model.graphAt(fuse - 1)->operationCount()) - int(model.graphAt(fuse)->operationCount());
    QString fuseSummary = model.index(fuse).data(PassTimelineModel::ChangeSummaryRole).toString();
    QCOMPARE(fuseSummary, QString("-%1 nodes, %2 fused").arg(removed).arg(fusedGroups));
    QString alterSummary = model.index(alter).data(PassTimelineModel::ChangeSummaryRole).toString();
    QVERIFY2(alterSummary.contains("relaid"), qPrintable(alterSummary));
    // A pass with nothing to do on this model says so.
    int cse = rowNamed(model, "EliminateCommonSubexpr");
    QCOMPARE(model.index(cse).data(PassTimelineModel::ChangeSummaryRole).toString(), QString("no change"));
  }

  void disabledPassIsMarkedSkipped() {
    graph::PassOptions options;
    options.disabledPasses = {"FuseOps"};
    Compiled compiled = compileExample(options);
    PassTimelineModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setCompiledModel(compiled.imported, compiled.model);
    int fuse = rowNamed(model, "FuseOps");
    QVERIFY(model.index(fuse).data(PassTimelineModel::SkippedRole).toBool());
    QCOMPARE(model.index(fuse).data(PassTimelineModel::ChangeSummaryRole).toString(), QString("skipped"));
    QVERIFY(!model.index(rowNamed(model, "AlterLayout")).data(PassTimelineModel::SkippedRole).toBool());
    QVERIFY(model.index(fuse).data(Qt::ToolTipRole).toString().contains("Skipped"));
  }

  void clearingAndResettingKeepTheModelConsistent() {
    PassTimelineModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
    model.setCompiledModel(compiled_.imported, compiled_.model);
    model.clear();
    QCOMPARE(model.rowCount(), 0);
    QVERIFY(!model.graphAt(0));
    QVERIFY(!model.step(-1));
    model.setCompiledModel(compiled_.imported, nullptr);  // imported but not compiled yet
    QCOMPARE(model.rowCount(), 0);
    QCOMPARE(resets.count(), 3);
  }

  void timesAreFormattedForPeople() {
    QCOMPARE(formatMilliseconds(0.1034), QString("0.103 ms"));
    QCOMPARE(formatMilliseconds(12.66), QString("12.7 ms"));
    QCOMPARE(formatMilliseconds(1234), QString("1.23 s"));
  }

private:
  Compiled compiled_;
};

QTEST_GUILESS_MAIN(TestTimelineModel)
#include "test_timeline_model.moc"
