// Calibration for post-training quantization: the FP32 model run by Tessel itself on sample
// inputs, with the ranges of chosen tensors collected and turned into uint8 scales.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "compiler/driver/Driver.h"

namespace tessel::driver {

/// How a tensor's range is chosen from what calibration saw.
enum class CalibrationMethod {
  MinMax,      ///< The smallest and largest value seen.
  Percentile,  ///< |x| clipped at its 99.99th percentile: a few outliers do not stretch the scale.
  Entropy,     ///< The clip that loses least information (KL divergence, as TensorRT chooses).
};
/// "minmax", "percentile", "entropy"; parseCalibrationMethod reads them back.
const char* calibrationMethodName(CalibrationMethod method);
std::optional<CalibrationMethod> parseCalibrationMethod(const std::string& name);

/// A tensor of the graph: an operation's output (by node name) or a graph input.
struct TensorRef {
  std::string node;
  int index = 0;
  bool operator<(const TensorRef& other) const {
    return node != other.node ? node < other.node : index < other.index;
  }
};

/// What calibration learned about one tensor.
struct TensorRange {
  double min = 0, max = 0;         ///< Over every sample.
  double clipLow = 0, clipHigh = 0;  ///< The range the method chose (within min..max, holding 0).
  double scale = 1;                ///< uint8: (clipHigh - clipLow) / 255.
  int zeroPoint = 0;               ///< uint8 value of 0.
  /// Counts of |x| in kCalibrationHistogramBins bins over [0, max |x|] (every method).
  std::vector<int64_t> histogram;
};
inline constexpr int kCalibrationHistogramBins = 2048;

/// One calibration sample: a value for each graph input, by name.
using CalibrationSample = std::map<std::string, runtime::NDArray>;

/// Runs `graph` (as compiled by `options`) on every sample and returns the range of each of
/// `tensors`. A Diagnostic names a tensor the graph lacks, an input a sample misses or gives
/// in the wrong shape or type (with the sample's number), a tensor that is not float32, or a
/// tensor that was never anything but 0 (its scale would be 0) with the fix.
Expected<std::map<TensorRef, TensorRange>> calibrate(const graph::Graph& graph, const std::vector<TensorRef>& tensors,
                                                     const std::vector<CalibrationSample>& samples,
                                                     CalibrationMethod method, const CompileOptions& options = {});

/// The values of `tensors` (and of the graph's outputs, after them) for one sample: what the
/// quantization report compares the FP32 and the quantized model on.
Expected<std::vector<std::vector<runtime::NDArray>>> evaluateTensors(const graph::Graph& graph,
                                                                     const std::vector<TensorRef>& tensors,
                                                                     const std::vector<CalibrationSample>& samples,
                                                                     const CompileOptions& options = {});

/// The signal-to-quantization-noise ratio of `approximation` against `reference` in dB:
/// 10 log10(sum x^2 / sum (x - y)^2); +inf when they are equal.
double sqnrDecibels(const std::vector<float>& reference, const std::vector<float>& approximation);

}  // namespace tessel::driver
