// The Studio's Quantization panel: quantizes the open model with `tessel quantize` in a child
// process (the GUI never waits), then shows its per-layer report: a table of ranges and SQNR
// with a "keep float" box per layer, an SQNR bar chart, and the calibration histogram of the
// selected layer's input and output with the chosen clip. Ticking boxes and quantizing again
// re-quantizes without those layers (--skip).
#pragma once

#include <QProcess>
#include <QStandardItemModel>
#include <QWidget>

#include <optional>

#include "views/quantization/QuantizationReport.h"

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QLabel;
class QLineEdit;
class QPushButton;
class QTableView;

namespace tessel::views {

class QuantizationPanel : public QWidget {
  Q_OBJECT

public:
  /// Table columns.
  enum Column { KeepFloat, Layer, Op, InputRange, OutputRange, Sqnr, ColumnCount };

  explicit QuantizationPanel(QWidget* parent = nullptr);
  ~QuantizationPanel() override;

  /// The FP32 model to quantize (empty: none open) and the flags it loads with
  /// (--input-shape ...). Proposes an output path beside it.
  void setModel(const QString& modelPath, const QStringList& loadArguments);
  void setCalibrationPath(const QString& path);
  /// Dynamic quantization of the dense layers (`--dynamic`): no calibration needed.
  void setDynamic(bool dynamic);
  void setOutputPath(const QString& path);
  QString outputPath() const;
  /// The tessel executable (empty: found beside the Studio or on PATH).
  void setTesselPath(const QString& path) { tesselPath_ = path; }

  /// Starts `tessel quantize` with the panel's settings, skipping the layers whose "keep
  /// float" box is ticked. False, with the reason in `error`, when it cannot start.
  bool quantize(QString* error = nullptr);
  void cancel();
  bool isRunning() const { return process_.state() != QProcess::NotRunning; }

  const std::optional<QuantizationReport>& report() const { return report_; }
  QStandardItemModel* layerModel() { return &layers_; }
  /// Ticks (or clears) the "keep float" box of layer `node`; false for an unknown layer.
  bool setKeptFloat(const QString& node, bool keep);
  /// Selects a layer row: the histogram shows its tensors.
  void selectLayer(int row);
  QCustomPlot* sqnrPlot() const { return sqnrPlot_; }
  QCustomPlot* histogramPlot() const { return histogramPlot_; }
  QString statusText() const;

signals:
  /// A quantization finished and wrote `outputPath` (the report beside it).
  void quantized(const QString& outputPath);
  /// One line for the Studio's diagnostics (a failure, with tessel's message).
  void message(const QString& text);
  /// "Open" was clicked: open the quantized model.
  void openRequested(const QString& path);

private:
  void processFinished(int exitCode, QProcess::ExitStatus status);
  void showReport();
  void showHistogram(int row);
  void updateControls();
  QString reportPath() const;

  QString modelPath_, tesselPath_;
  QStringList loadArguments_;
  QLineEdit* calibration_ = nullptr;
  QLineEdit* output_ = nullptr;
  QComboBox* method_ = nullptr;
  QComboBox* mode_ = nullptr;
  QCheckBox* perChannel_ = nullptr;
  QPushButton* quantize_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QPushButton* open_ = nullptr;
  QLabel* status_ = nullptr;
  QTableView* table_ = nullptr;
  QStandardItemModel layers_;
  QCustomPlot* sqnrPlot_ = nullptr;
  QCustomPlot* histogramPlot_ = nullptr;
  QProcess process_;
  QString runningOutput_;
  std::optional<QuantizationReport> report_;
};

}  // namespace tessel::views
