// The report `tessel quantize --report` writes, read for the Studio's Quantization panel.
#pragma once

#include <QString>

#include <optional>
#include <vector>

#include "core/support/Error.h"

namespace tessel::views {

/// One quantized tensor of a layer: what calibration saw and the range it chose.
struct QuantizedTensorReport {
  QString tensor;
  bool quantized = true;  ///< False for a dense layer's float output (logits).
  double min = 0, max = 0, clipLow = 0, clipHigh = 0, scale = 0;
  int zeroPoint = 0;
  double histogramMaxAbs = 0;          ///< The histogram covers |x| in [0, histogramMaxAbs].
  std::vector<double> histogramCounts;  ///< Counts of |x| in equal bins.
};

struct QuantizedLayerReport {
  QString node, op, relu;
  bool dynamic = false;  ///< Quantized at run time: no calibrated ranges.
  QuantizedTensorReport input, output;
  std::optional<double> sqnrDb;  ///< Of the layer's output against FP32 (absent: not finite).
};

struct QuantizationReport {
  QString model, output, method;
  bool perChannel = false;
  int calibrationSamples = 0;
  std::vector<QuantizedLayerReport> layers;
  std::optional<double> outputSqnrDb;  ///< The model's first output.
  std::optional<double> top1Agreement, top5Agreement;
};

/// Parses a report's JSON text; a Diagnostic naming `source` for text that is not one.
Expected<QuantizationReport> parseQuantizationReport(const QByteArray& json, const QString& source);

}  // namespace tessel::views
