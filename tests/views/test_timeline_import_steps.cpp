// The pass timeline of a model the import converted first (an old opset): the conversion is the
// first step, with its time and what it did, then the imported graph and the passes as usual.
#include <QAbstractItemModelTester>
#include <QtTest>

#include "compiler/driver/Driver.h"
#include "views/timeline/PassTimelineModel.h"

using namespace tessel;
using namespace tessel::views;

namespace {
// A PyTorch tensor addition exported at opset 6 (Add with broadcast=1): the import converts it.
const QString kOldModel =
    QStringLiteral("/usr/share/libonnx-testdata/data/pytorch-operator/test_operator_add_broadcast/model.onnx");
}  // namespace

class TestTimelineImportSteps : public QObject {
  Q_OBJECT
private slots:
  void conversionIsTheFirstStep() {
    if (!QFileInfo::exists(kOldModel)) QSKIP("libonnx-testdata's pytorch-operator tests are not installed");
    auto imported = driver::loadModel(kOldModel.toStdString());
    QVERIFY2(imported.ok(), imported.ok() ? "" : imported.error().toString().c_str());
    auto compiled = driver::compileGraph(*imported);
    QVERIFY2(compiled.ok(), compiled.ok() ? "" : compiled.error().toString().c_str());
    auto graph = std::make_shared<const graph::Graph>(std::move(*imported));
    auto model = std::make_shared<const driver::CompiledModel>(std::move(*compiled));

    PassTimelineModel timeline;
    QAbstractItemModelTester tester(&timeline, QAbstractItemModelTester::FailureReportingMode::QtTest);
    timeline.setCompiledModel(graph, model);
    QCOMPARE(timeline.rowCount(), int(model->snapshots.size()) + 2);

    QModelIndex conversion = timeline.index(0);
    QCOMPARE(conversion.data(PassTimelineModel::PassNameRole).toString(), QString("ConvertOpset 6→7"));
    QCOMPARE(conversion.data(PassTimelineModel::MillisecondsRole).toDouble(), graph->importSteps[0].milliseconds);
    QVERIFY(conversion.data(PassTimelineModel::MillisecondsRole).toDouble() > 0);
    QVERIFY2(conversion.data(Qt::ToolTipRole).toString().contains("version converter"),
             qPrintable(conversion.data(Qt::ToolTipRole).toString()));
    // There is no graph of the file before the import: the step shows the imported one.
    QCOMPARE(timeline.graphAt(0).get(), graph.get());

    QModelIndex importedRow = timeline.index(1);
    QCOMPARE(importedRow.data(PassTimelineModel::PassNameRole).toString(), QString("Imported"));
    QVERIFY(!importedRow.data(PassTimelineModel::MillisecondsRole).isValid());
    QVERIFY2(importedRow.data(Qt::ToolTipRole).toString().contains("as imported"),
             qPrintable(importedRow.data(Qt::ToolTipRole).toString()));
    QCOMPARE(timeline.index(2).data(PassTimelineModel::PassNameRole).toString(),
             QString::fromStdString(model->snapshots[0].passName));
  }
};

QTEST_GUILESS_MAIN(TestTimelineImportSteps)
#include "test_timeline_import_steps.moc"
