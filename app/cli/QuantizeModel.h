// What `tessel quantize` and `tessel compile --quantize int8` share: the calibration flags,
// reading the calibration samples, and turning an FP32 ONNX model into a QDQ one in memory.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "app/cli/CommandLine.h"
#include "compiler/driver/Calibration.h"
#include "compiler/frontend/onnx/OnnxQuantize.h"

namespace tessel::cli {

/// --calibration, --method, --per-channel, --skip (repeatable), --samples and --dynamic.
std::vector<FlagSpec> quantizeFlags();

/// A model quantized by quantizeModel: the QDQ ONNX bytes and what the report needs.
struct QuantizedModel {
  std::string bytes;                                   ///< The QDQ model, serialized.
  frontend::QuantizableModel found;                    ///< The FP32 model with its nodes named.
  graph::Graph fp32;                                   ///< found.bytes imported (what calibration ran).
  std::vector<frontend::QuantizableLayer> layers;        ///< Those quantized (less --skip).
  std::map<std::string, frontend::ActivationQuantization> activations;  ///< By tensor name.
  std::map<std::string, driver::TensorRange> ranges;   ///< What calibration saw, by tensor name.
  std::vector<driver::CalibrationSample> samples;      ///< The calibration inputs used.
  driver::CalibrationMethod method = driver::CalibrationMethod::MinMax;
  /// --dynamic: the dense layers quantized at run time (no ranges, activations empty; the
  /// samples, when given, only serve the report).
  bool dynamic = false;
};

/// Quantizes the model at `path` with the flags quantizeFlags() declares (read from `line`):
/// calibrates it in Tessel on the samples and writes the QDQ model into the result. A
/// Diagnostic names the flag, file or tensor at fault; `usageError` is set (and the
/// Diagnostic carries it) for a malformed flag.
Expected<QuantizedModel> quantizeModel(const std::string& path, const CommandLine& line,
                                       const driver::LoadOptions& load, std::string* usageError);

}  // namespace tessel::cli
