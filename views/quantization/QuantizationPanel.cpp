// The Quantization panel: settings, the child `tessel quantize`, and its report drawn as a
// table and two plots.
#include "views/quantization/QuantizationPanel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include "compiler/driver/IsolatedMeasure.h"

namespace tessel::views {

namespace {

QString rangeText(const QuantizedTensorReport& t, bool dynamic) {
  if (dynamic) return QObject::tr("at run time");
  if (!t.quantized) return QObject::tr("float");
  return QStringLiteral("[%1, %2]").arg(t.clipLow, 0, 'g', 3).arg(t.clipHigh, 0, 'g', 3);
}

// Bars of SQNR: below 20 dB a layer loses visibly (the report's usual suspects), above 30 dB
// its noise is a thirtieth of its signal or less.
QColor sqnrColour(double db) {
  if (db < 20) return QColor(0xcf, 0x22, 0x2e);
  if (db < 30) return QColor(0xd4, 0xa7, 0x2c);
  return QColor(0x1a, 0x7f, 0x37);
}

}  // namespace

QuantizationPanel::QuantizationPanel(QWidget* parent) : QWidget(parent) {
  calibration_ = new QLineEdit;
  calibration_->setObjectName("QuantizationCalibration");
  calibration_->setPlaceholderText(tr("inputs: .npy (samples stacked), .npz, or a folder of .npy"));
  // Calibration comes as one file or as a folder of per-sample files: a file dialog cannot
  // pick a folder, so the button offers both.
  auto* browse = new QPushButton(tr("Browse…"));
  browse->setObjectName("QuantizationBrowse");
  auto* browseMenu = new QMenu(browse);
  browseMenu->addAction(tr("Inputs File (.npy, .npz)…"), this, [this] {
    QString path = QFileDialog::getOpenFileName(this, tr("Calibration inputs"), QFileInfo(modelPath_).path(),
                                                tr("NumPy arrays (*.npy *.npz);;All files (*)"));
    if (!path.isEmpty()) calibration_->setText(path);
  });
  browseMenu->addAction(tr("Folder of .npy Samples…"), this, [this] {
    QString path = QFileDialog::getExistingDirectory(this, tr("Calibration samples folder"), QFileInfo(modelPath_).path());
    if (!path.isEmpty()) calibration_->setText(path);
  });
  browse->setMenu(browseMenu);
  auto* calibrationRow = new QHBoxLayout;
  calibrationRow->addWidget(calibration_, 1);
  calibrationRow->addWidget(browse);
  mode_ = new QComboBox;
  mode_->setObjectName("QuantizationMode");
  mode_->addItems({tr("Static: calibrated ranges (convolutions and dense layers)"),
                   tr("Dynamic: dense layers, ranges taken at run time")});
  mode_->setToolTip(tr("Dynamic is ONNX Runtime's quantize_dynamic: no calibration needed (given, it only measures "
                       "the output's SQNR); the usual choice for transformer encoders"));
  connect(mode_, &QComboBox::currentIndexChanged, this, [this] { updateControls(); });
  method_ = new QComboBox;
  method_->addItems({QStringLiteral("minmax"), QStringLiteral("percentile"), QStringLiteral("entropy")});
  method_->setToolTip(tr("minmax: the whole range; percentile: |x| clipped at its 99.99th percentile; entropy: the "
                         "clip with the least KL divergence (clips hard)"));
  perChannel_ = new QCheckBox(tr("One weight scale per output channel"));
  perChannel_->setChecked(true);
  output_ = new QLineEdit;
  output_->setObjectName("QuantizationOutput");
  auto* form = new QFormLayout;
  form->addRow(tr("Mode"), mode_);
  form->addRow(tr("Calibration"), calibrationRow);
  form->addRow(tr("Ranges"), method_);
  form->addRow(tr("Weights"), perChannel_);
  form->addRow(tr("Write to"), output_);

  quantize_ = new QPushButton(tr("Quantize"));
  quantize_->setObjectName("QuantizeButton");
  quantize_->setToolTip(tr("Run tessel quantize; layers ticked \"keep float\" are skipped"));
  connect(quantize_, &QPushButton::clicked, this, [this] {
    QString error;
    if (!quantize(&error)) {
      status_->setText(error);
      emit message(error);
    }
  });
  cancel_ = new QPushButton(tr("Cancel"));
  connect(cancel_, &QPushButton::clicked, this, &QuantizationPanel::cancel);
  open_ = new QPushButton(tr("Open Quantized Model"));
  connect(open_, &QPushButton::clicked, this, [this] {
    if (report_) emit openRequested(report_->output);
  });
  status_ = new QLabel(tr("Open a model, choose calibration inputs, then Quantize."));
  status_->setWordWrap(true);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(quantize_);
  buttons->addWidget(cancel_);
  buttons->addWidget(open_);
  buttons->addStretch(1);

  layers_.setHorizontalHeaderLabels({tr("Keep float"), tr("Layer"), tr("Op"), tr("Input range"), tr("Output range"),
                                     tr("SQNR dB")});
  table_ = new QTableView;
  table_->setObjectName("QuantizationLayers");
  table_->setModel(&layers_);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setAlternatingRowColors(true);
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) { showHistogram(current.row()); });

  sqnrPlot_ = new QCustomPlot;
  sqnrPlot_->setObjectName("QuantizationSqnrPlot");
  sqnrPlot_->setMinimumHeight(140);
  sqnrPlot_->xAxis->setLabel(tr("layer"));
  sqnrPlot_->yAxis->setLabel(tr("SQNR dB"));
  histogramPlot_ = new QCustomPlot;
  histogramPlot_->setObjectName("QuantizationHistogramPlot");
  histogramPlot_->setMinimumHeight(140);
  histogramPlot_->xAxis->setLabel(tr("|x|"));
  histogramPlot_->yAxis->setLabel(tr("share of values"));
  histogramPlot_->legend->setVisible(true);
  histogramPlot_->setToolTip(tr("Calibration histogram of |x| for the selected layer's input and output; dashed: the "
                                "clip chosen (values beyond it saturate)"));

  auto* plots = new QSplitter(Qt::Vertical);
  plots->addWidget(table_);
  plots->addWidget(sqnrPlot_);
  plots->addWidget(histogramPlot_);
  plots->setSizes({220, 170, 230});
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addLayout(buttons);
  layout->addWidget(status_);
  layout->addWidget(plots, 1);

  connect(&process_, &QProcess::finished, this, &QuantizationPanel::processFinished);
  connect(&process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
    if (error != QProcess::FailedToStart) return;
    status_->setText(tr("tessel quantize did not start: %1").arg(process_.errorString()));
    emit message(status_->text());
    updateControls();
  });
  updateControls();
}

QuantizationPanel::~QuantizationPanel() {
  if (process_.state() != QProcess::NotRunning) {
    process_.kill();
    process_.waitForFinished(2000);
  }
}

void QuantizationPanel::setModel(const QString& modelPath, const QStringList& loadArguments) {
  if (modelPath == modelPath_ && loadArguments == loadArguments_) return;
  modelPath_ = modelPath;
  loadArguments_ = loadArguments;
  if (!modelPath.isEmpty()) {
    QFileInfo model(modelPath);
    output_->setText(model.absolutePath() + '/' + model.completeBaseName() + QStringLiteral(".int8.onnx"));
  }
  updateControls();
}

void QuantizationPanel::setCalibrationPath(const QString& path) { calibration_->setText(path); }
void QuantizationPanel::setDynamic(bool dynamic) { mode_->setCurrentIndex(dynamic ? 1 : 0); }
void QuantizationPanel::setOutputPath(const QString& path) { output_->setText(path); }
QString QuantizationPanel::outputPath() const { return output_->text(); }
QString QuantizationPanel::statusText() const { return status_->text(); }
QString QuantizationPanel::reportPath() const { return runningOutput_ + QStringLiteral(".report.json"); }

bool QuantizationPanel::quantize(QString* error) {
  auto fail = [&](const QString& why) {
    if (error) *error = why;
    return false;
  };
  if (isRunning()) return fail(tr("a quantization is running already"));
  if (modelPath_.isEmpty()) return fail(tr("open a model to quantize first"));
  const bool dynamic = mode_->currentIndex() == 1;
  if (calibration_->text().isEmpty() && !dynamic) return fail(tr("choose calibration inputs first"));
  if (output_->text().isEmpty()) return fail(tr("choose where to write the quantized model"));
  if (QFileInfo(output_->text()).absoluteFilePath() == QFileInfo(modelPath_).absoluteFilePath())
    return fail(tr("the quantized model would replace the model itself: write it to another file"));
  auto tessel = driver::findTesselExecutable(tesselPath_.toStdString());
  if (!tessel) return fail(QString::fromStdString(tessel.error().toString()));
  runningOutput_ = output_->text();
  QStringList arguments = {QStringLiteral("quantize"), modelPath_, QStringLiteral("-o"), runningOutput_,
                           QStringLiteral("--report"), reportPath()};
  if (!calibration_->text().isEmpty()) arguments << QStringLiteral("--calibration") << calibration_->text();
  if (dynamic) arguments << QStringLiteral("--dynamic");
  else arguments << QStringLiteral("--method") << method_->currentText();
  if (perChannel_->isChecked()) arguments << QStringLiteral("--per-channel");
  for (int row = 0; row < layers_.rowCount(); ++row)
    if (layers_.item(row, KeepFloat)->checkState() == Qt::Checked)
      arguments << QStringLiteral("--skip") << layers_.item(row, Layer)->text();
  arguments << loadArguments_;
  process_.setProgram(QString::fromStdString(*tessel));
  process_.setArguments(arguments);
  process_.setProcessChannelMode(QProcess::MergedChannels);
  status_->setText(tr("Calibrating and quantizing %1…").arg(QFileInfo(modelPath_).fileName()));
  process_.start();
  updateControls();
  return true;
}

void QuantizationPanel::cancel() {
  if (!isRunning()) return;
  process_.kill();
}

void QuantizationPanel::processFinished(int exitCode, QProcess::ExitStatus status) {
  QString output = QString::fromUtf8(process_.readAll()).trimmed();
  updateControls();
  if (status != QProcess::NormalExit) {
    status_->setText(tr("Quantization cancelled."));
    return;
  }
  if (exitCode != 0) {
    // tessel's last line says what is wrong and where.
    QString reason = output.section('\n', -1);
    status_->setText(tr("Quantization failed: %1").arg(reason));
    emit message(tr("tessel quantize: %1").arg(reason));
    return;
  }
  QFile file(reportPath());
  if (!file.open(QIODevice::ReadOnly)) {
    status_->setText(tr("Quantized, but the report %1 cannot be read").arg(reportPath()));
    return;
  }
  auto report = parseQuantizationReport(file.readAll(), reportPath());
  if (!report) {
    status_->setText(QString::fromStdString(report.error().toString()));
    return;
  }
  report_ = std::move(*report);
  showReport();
  emit quantized(report_->output);
}

void QuantizationPanel::showReport() {
  // Layers kept float by the last run stay in the table, ticked, so the next run keeps them.
  QStringList keptFloat;
  for (int row = 0; row < layers_.rowCount(); ++row)
    if (layers_.item(row, KeepFloat)->checkState() == Qt::Checked) keptFloat << layers_.item(row, Layer)->text();
  layers_.removeRows(0, layers_.rowCount());
  QVector<double> ticks, values;
  QVector<QString> labels;
  auto addRow = [&](const QString& node, const QString& op, const QString& in, const QString& out, const QString& sqnr,
                    bool kept) {
    QList<QStandardItem*> row;
    auto* keep = new QStandardItem;
    keep->setCheckable(true);
    keep->setCheckState(kept ? Qt::Checked : Qt::Unchecked);
    keep->setToolTip(tr("Tick to keep this layer in float the next time you quantize"));
    row << keep;
    for (const QString& text : {node, op, in, out, sqnr}) {
      auto* item = new QStandardItem(text);
      item->setEditable(false);
      row << item;
    }
    layers_.appendRow(row);
  };
  for (const QuantizedLayerReport& layer : report_->layers) {
    QString sqnr = layer.dynamic ? tr("—") : layer.sqnrDb ? QString::number(*layer.sqnrDb, 'f', 1) : tr("exact");
    addRow(layer.node, layer.op, rangeText(layer.input, layer.dynamic),
           layer.dynamic ? tr("float") : rangeText(layer.output, false), sqnr, false);
    ticks << double(ticks.size());
    values << (layer.sqnrDb ? *layer.sqnrDb : 0.0);
    labels << QString::number(ticks.size());
  }
  for (const QString& node : keptFloat) addRow(node, QString(), tr("float"), tr("float"), tr("kept float"), true);
  table_->resizeColumnsToContents();

  sqnrPlot_->clearPlottables();
  for (int i = 0; i < values.size(); ++i) {
    auto* bar = new QCPBars(sqnrPlot_->xAxis, sqnrPlot_->yAxis);
    bar->setWidth(0.7);
    bar->setData(QVector<double>{ticks[i]}, QVector<double>{values[i]});
    bar->setBrush(sqnrColour(values[i]));
    bar->setPen(Qt::NoPen);
    bar->setName(report_->layers[size_t(i)].node);
  }
  double highest = values.isEmpty() ? 40 : *std::max_element(values.begin(), values.end());
  sqnrPlot_->xAxis->setRange(-0.7, std::max(1.0, double(values.size()) - 0.3));
  sqnrPlot_->yAxis->setRange(0, std::max(40.0, highest * 1.1));
  sqnrPlot_->replot();

  QString summary = tr("Wrote %1: %2 layers in int8").arg(QFileInfo(report_->output).fileName()).arg(report_->layers.size());
  if (report_->outputSqnrDb) summary += tr("; model output SQNR %1 dB").arg(*report_->outputSqnrDb, 0, 'f', 1);
  if (report_->top1Agreement)
    summary += tr("; top-1 agrees with FP32 on %1% of %2 inputs")
                   .arg(qRound(*report_->top1Agreement * 100))
                   .arg(std::min(report_->calibrationSamples, 16));
  status_->setText(summary + '.');
  if (!report_->layers.empty()) {
    table_->selectRow(0);
    showHistogram(0);
  }
  updateControls();
}

void QuantizationPanel::selectLayer(int row) {
  table_->selectRow(row);
  showHistogram(row);
}

void QuantizationPanel::showHistogram(int row) {
  histogramPlot_->clearGraphs();
  histogramPlot_->clearItems();
  if (!report_ || row < 0 || size_t(row) >= report_->layers.size()) {
    histogramPlot_->replot();
    return;
  }
  const QuantizedLayerReport& layer = report_->layers[size_t(row)];
  double widest = 0, tallest = 0;
  auto draw = [&](const QuantizedTensorReport& tensor, const QColor& colour, const QString& name) {
    if (tensor.histogramCounts.empty() || !(tensor.histogramMaxAbs > 0)) return;
    double total = 0;
    for (double count : tensor.histogramCounts) total += count;
    QVector<double> x, y;
    double width = tensor.histogramMaxAbs / double(tensor.histogramCounts.size());
    for (size_t i = 0; i < tensor.histogramCounts.size(); ++i) {
      x << (double(i) + 0.5) * width;
      y << (total > 0 ? tensor.histogramCounts[i] / total : 0);
      // The first bin holds a Relu's zeros, often most of the values: scaling to it would
      // flatten the rest of the distribution, so it may run off the top.
      if (i > 0) tallest = std::max(tallest, y.back());
    }
    QCPGraph* graph = histogramPlot_->addGraph();
    graph->setName(name);
    graph->setLineStyle(QCPGraph::lsStepCenter);
    graph->setPen(QPen(colour, 1.5));
    graph->setData(x, y, true);
    widest = std::max(widest, tensor.histogramMaxAbs);
    if (tensor.quantized) {
      // The chosen clip: values beyond it saturate.
      double clip = std::max(std::fabs(tensor.clipLow), std::fabs(tensor.clipHigh));
      auto* line = new QCPItemStraightLine(histogramPlot_);
      line->point1->setCoords(clip, 0);
      line->point2->setCoords(clip, 1);
      line->setPen(QPen(colour, 1, Qt::DashLine));
    }
  };
  draw(layer.input, QColor(0x09, 0x69, 0xda), tr("input %1").arg(layer.input.tensor));
  draw(layer.output, QColor(0xd9, 0x4a, 0x00), tr("output %1").arg(layer.output.tensor));
  histogramPlot_->xAxis->setRange(0, widest > 0 ? widest * 1.02 : 1);
  histogramPlot_->yAxis->setRange(0, tallest > 0 ? tallest * 1.1 : 1);
  histogramPlot_->replot();
}

bool QuantizationPanel::setKeptFloat(const QString& node, bool keep) {
  for (int row = 0; row < layers_.rowCount(); ++row)
    if (layers_.item(row, Layer)->text() == node) {
      layers_.item(row, KeepFloat)->setCheckState(keep ? Qt::Checked : Qt::Unchecked);
      return true;
    }
  return false;
}

void QuantizationPanel::updateControls() {
  bool running = isRunning();
  quantize_->setEnabled(!running && !modelPath_.isEmpty());
  quantize_->setText(report_ ? tr("Quantize Again") : tr("Quantize"));
  cancel_->setEnabled(running);
  open_->setEnabled(!running && report_.has_value());
  for (QWidget* setting : std::initializer_list<QWidget*>{mode_, calibration_, method_, perChannel_, output_})
    setting->setEnabled(!running);
  method_->setEnabled(!running && mode_->currentIndex() == 0);  // dynamic ranges are not chosen
}

}  // namespace tessel::views
