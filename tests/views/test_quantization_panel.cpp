// The Studio's Quantization panel as a user drives it: the example model quantized in a child
// `tessel quantize` while the GUI keeps running, its report as a table, an SQNR bar per layer
// and the selected layer's calibration histograms; a layer ticked "keep float" and quantized
// again leaves the int8 layers; dynamic mode without calibration; calibration from a folder of
// samples; a failure (bad calibration data) is said, not crashed on.
#include <QtTest>

#include <QDir>
#include <QFile>
#include <QMenu>
#include <QPushButton>
#include <QTemporaryDir>

#include <qcustomplot.h>
#include <random>

#include "runtime/Npy.h"
#include "views/quantization/QuantizationPanel.h"

using namespace tessel;
using namespace tessel::views;

namespace {

const QString kModel = QStringLiteral(TESSEL_SOURCE_DIR "/resources/examples/tiny_resnet.onnx");
const QString kTessel = QStringLiteral(TESSEL_BINARY_DIR "/bin/tessel");

QString writeInputs(const QTemporaryDir& directory, std::vector<int64_t> shape) {
  auto array = runtime::NDArray::empty(shape, runtime::DataType::float32());
  std::mt19937 rng(4);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float& v : array.values<float>()) v = normal(rng);
  QString path = directory.filePath("calibration.npy");
  runtime::writeNpy(path.toStdString(), array);
  return path;
}

}  // namespace

class TestQuantizationPanel : public QObject {
  Q_OBJECT
private slots:
  void quantizesShowsTheReportAndRequantizesWithoutALayer() {
    QTemporaryDir directory;
    QuantizationPanel panel;
    panel.resize(700, 900);
    panel.show();
    panel.setTesselPath(kTessel);
    panel.setModel(kModel, {});
    QVERIFY2(panel.outputPath().endsWith("tiny_resnet.int8.onnx"), qPrintable(panel.outputPath()));
    QString error;
    QVERIFY(!panel.quantize(&error));  // no calibration inputs yet
    QVERIFY2(error.contains("calibration"), qPrintable(error));

    panel.setCalibrationPath(writeInputs(directory, {4, 3, 32, 32}));
    QString output = directory.filePath("tiny.int8.onnx");
    panel.setOutputPath(output);
    QSignalSpy done(&panel, &QuantizationPanel::quantized);
    QVERIFY2(panel.quantize(&error), qPrintable(error));
    QVERIFY(panel.isRunning());  // in a child process: the GUI thread is free meanwhile
    QTRY_VERIFY_WITH_TIMEOUT(!panel.isRunning(), 60000);
    QCOMPARE(done.count(), 1);
    QVERIFY(QFile::exists(output));
    QVERIFY(QFile::exists(output + ".report.json"));
    QVERIFY(panel.report().has_value());
    QCOMPARE(int(panel.report()->layers.size()), 4);
    QCOMPARE(panel.layerModel()->rowCount(), 4);
    bool sqnrParsed = false;
    double sqnr = panel.layerModel()->item(0, QuantizationPanel::Sqnr)->text().toDouble(&sqnrParsed);
    QVERIFY2(sqnrParsed && sqnr > 20, qPrintable(panel.layerModel()->item(0, QuantizationPanel::Sqnr)->text()));
    QVERIFY2(panel.statusText().contains("SQNR"), qPrintable(panel.statusText()));
    // One bar per layer; the selected layer's input and output histograms.
    QCOMPARE(panel.sqnrPlot()->plottableCount(), 4);
    panel.selectLayer(1);
    QCOMPARE(panel.histogramPlot()->graphCount(), 2);
    QVERIFY(panel.histogramPlot()->graph(0)->dataCount() > 10);

    // Keep the block's second convolution in float and quantize again.
    QVERIFY(panel.setKeptFloat("/block/block.3/Conv", true));
    QVERIFY2(panel.quantize(&error), qPrintable(error));
    QTRY_VERIFY_WITH_TIMEOUT(!panel.isRunning(), 60000);
    QCOMPARE(done.count(), 2);
    QCOMPARE(int(panel.report()->layers.size()), 3);
    for (const auto& layer : panel.report()->layers) QVERIFY(layer.node != "/block/block.3/Conv");
    // Still listed, ticked, so a third run keeps it float too.
    QCOMPARE(panel.layerModel()->rowCount(), 4);
    QCOMPARE(panel.layerModel()->item(3, QuantizationPanel::KeepFloat)->checkState(), Qt::Checked);
  }

  // Dynamic mode needs no calibration: the dense head is quantized at run time.
  void quantizesDynamicallyWithoutCalibration() {
    QTemporaryDir directory;
    QuantizationPanel panel;
    panel.setTesselPath(kTessel);
    panel.setModel(kModel, {});
    panel.setDynamic(true);
    panel.setOutputPath(directory.filePath("dynamic.int8.onnx"));
    QString error;
    QVERIFY2(panel.quantize(&error), qPrintable(error));
    QTRY_VERIFY_WITH_TIMEOUT(!panel.isRunning(), 60000);
    QVERIFY(panel.report().has_value());
    QCOMPARE(panel.report()->method, QString("dynamic"));
    QCOMPARE(panel.layerModel()->rowCount(), 1);
    QCOMPARE(panel.layerModel()->item(0, QuantizationPanel::Layer)->text(), QString("/head/Gemm"));
    QCOMPARE(panel.layerModel()->item(0, QuantizationPanel::InputRange)->text(), QString("at run time"));
  }

  // A folder of one .npy per sample, as Browse's folder choice gives: every file is a sample.
  void quantizesFromAFolderOfSamples() {
    QTemporaryDir directory;
    QDir(directory.path()).mkdir("samples");
    std::mt19937 rng(9);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (int sample = 0; sample < 3; ++sample) {
      auto array = runtime::NDArray::empty({1, 3, 32, 32}, runtime::DataType::float32());
      for (float& v : array.values<float>()) v = normal(rng);
      runtime::writeNpy(directory.filePath(QString("samples/%1.npy").arg(sample)).toStdString(), array);
    }
    QuantizationPanel panel;
    auto* browse = panel.findChild<QPushButton*>("QuantizationBrowse");
    QVERIFY(browse && browse->menu());
    QStringList choices;
    for (QAction* action : browse->menu()->actions()) choices << action->text();
    QVERIFY2(choices.size() == 2 && choices[1].contains("Folder"), qPrintable(choices.join(", ")));

    panel.setTesselPath(kTessel);
    panel.setModel(kModel, {});
    panel.setCalibrationPath(directory.filePath("samples"));
    panel.setOutputPath(directory.filePath("folder.int8.onnx"));
    QString error;
    QVERIFY2(panel.quantize(&error), qPrintable(error));
    QTRY_VERIFY_WITH_TIMEOUT(!panel.isRunning(), 60000);
    QVERIFY2(panel.report().has_value(), qPrintable(panel.statusText()));
    QCOMPARE(panel.report()->calibrationSamples, 3);
    QVERIFY(QFile::exists(directory.filePath("folder.int8.onnx")));
  }

  void aFailureIsSaidAndNothingIsWritten() {
    QTemporaryDir directory;
    QuantizationPanel panel;
    panel.setTesselPath(kTessel);
    panel.setModel(kModel, {});
    panel.setCalibrationPath(writeInputs(directory, {2, 3, 16, 16}));  // the wrong image size
    QString output = directory.filePath("bad.int8.onnx");
    panel.setOutputPath(output);
    QSignalSpy messages(&panel, &QuantizationPanel::message);
    QString error;
    QVERIFY2(panel.quantize(&error), qPrintable(error));
    QTRY_VERIFY_WITH_TIMEOUT(!panel.isRunning(), 60000);
    QCOMPARE(messages.count(), 1);
    QVERIFY2(messages.front().front().toString().contains("does not fit input"),
             qPrintable(messages.front().front().toString()));
    QVERIFY2(panel.statusText().startsWith("Quantization failed"), qPrintable(panel.statusText()));
    QVERIFY(!QFile::exists(output));
    QVERIFY(!panel.report().has_value());
  }
};

QTEST_MAIN(TestQuantizationPanel)
#include "test_quantization_panel.moc"
