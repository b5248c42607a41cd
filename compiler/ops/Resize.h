// ONNX Resize (and the older Upsample): nearest, n-linear and cubic interpolation with the
// ONNX coordinate transformation modes, on static shapes.
#pragma once

#include "compiler/ops/Workload.h"

namespace tessel {

/// Maps an output coordinate to an input coordinate along one axis (ONNX
/// coordinate_transformation_mode).
enum class ResizeCoordinates {
  HalfPixel,
  PytorchHalfPixel,
  AlignCorners,
  Asymmetric,
  TfHalfPixelForNearest,
  TfCropAndResize
};

/// How nearest mode rounds the input coordinate (ONNX nearest_mode).
enum class ResizeRounding { RoundPreferFloor, RoundPreferCeil, Floor, Ceil };

enum class ResizeInterpolation { Nearest, Linear, Cubic };

struct ResizeOptions {
  ResizeInterpolation interpolation = ResizeInterpolation::Nearest;
  ResizeCoordinates coordinates = ResizeCoordinates::HalfPixel;
  ResizeRounding rounding = ResizeRounding::RoundPreferFloor;
  double cubicCoefficient = -0.75;  ///< ONNX cubic_coeff_a.
  bool excludeOutside = false;      ///< Cubic weights of taps outside the input are dropped, the rest renormalized.
  double extrapolationValue = 0;    ///< TfCropAndResize: the value of coordinates outside the input.
  /// TfCropAndResize: [starts..., ends...] per axis, as fractions of the input extent.
  std::vector<double> regionOfInterest;
};

/// The input of `shape` resized to `outShape`; `scales[d]` (output over input extent, as
/// ONNX gives or derives it) is what the coordinate transformation divides by, and
/// shape[d] * scales[d] the resized length it uses (not floored). Input "in".
/// Axes whose extent and scale are unchanged are copied, unless TfCropAndResize crops them.
Expected<Workload> resize(const std::vector<int64_t>& shape, const std::vector<int64_t>& outShape,
                          const std::vector<double>& scales, const ResizeOptions& options,
                          DataType dtype = DataType::float32());

}  // namespace tessel
