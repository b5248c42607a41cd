// Operator definitions of the sampling operators: Resize (opsets 10-18) and Upsample
// (opsets 7-9), whose scales or sizes are needed by value, and GridSample (opset 16), whose
// sampling positions are a tensor.
#include <cmath>

#include "compiler/opdefs/ShapeOpSupport.h"
#include "compiler/ops/GridSample.h"
#include "compiler/ops/Resize.h"

namespace tessel::graph::shape_ops {

namespace {
using Shape = std::vector<int64_t>;

Expected<ResizeInterpolation> interpolationOf(const OpCall& call) {
  auto mode = call.stringAttr("mode", "nearest");
  if (!mode) return mode.error();
  if (*mode == "nearest") return ResizeInterpolation::Nearest;
  if (*mode == "linear" || *mode == "bilinear") return ResizeInterpolation::Linear;
  if (*mode == "cubic") return ResizeInterpolation::Cubic;
  return call.error("mode '" + *mode + "' is not supported", "use nearest, linear or cubic");
}

Expected<ResizeCoordinates> coordinatesOf(const OpCall& call) {
  auto mode = call.stringAttr("coordinate_transformation_mode", "half_pixel");
  if (!mode) return mode.error();
  if (*mode == "half_pixel") return ResizeCoordinates::HalfPixel;
  if (*mode == "pytorch_half_pixel") return ResizeCoordinates::PytorchHalfPixel;
  if (*mode == "align_corners") return ResizeCoordinates::AlignCorners;
  if (*mode == "asymmetric") return ResizeCoordinates::Asymmetric;
  if (*mode == "tf_half_pixel_for_nn") return ResizeCoordinates::TfHalfPixelForNearest;
  if (*mode == "tf_crop_and_resize") return ResizeCoordinates::TfCropAndResize;
  return call.error("coordinate_transformation_mode '" + *mode + "' is not supported");
}

Expected<ResizeRounding> roundingOf(const OpCall& call) {
  auto mode = call.stringAttr("nearest_mode", "round_prefer_floor");
  if (!mode) return mode.error();
  if (*mode == "round_prefer_floor") return ResizeRounding::RoundPreferFloor;
  if (*mode == "round_prefer_ceil") return ResizeRounding::RoundPreferCeil;
  if (*mode == "floor") return ResizeRounding::Floor;
  if (*mode == "ceil") return ResizeRounding::Ceil;
  return call.error("nearest_mode '" + *mode + "' is not supported");
}

// The kernel for scales (output over input extent per axis) or sizes, whichever is given.
Expected<OpKernel> resizeKernel(const OpCall& call, const ResizeOptions& options, std::vector<double> scales,
                                const Shape& sizes) {
  const TensorType& in = inputType(call, 0);
  size_t rank = in.shape.size();
  Shape outShape(rank);
  if (!sizes.empty()) {
    if (sizes.size() != rank)
      return call.error("sizes has " + std::to_string(sizes.size()) + " entries for a rank-" + std::to_string(rank) +
                        " input");
    scales.assign(rank, 1.0);
    for (size_t d = 0; d < rank; ++d) {
      outShape[d] = sizes[d];
      scales[d] = double(sizes[d]) / double(in.shape[d]);
    }
  } else {
    if (scales.size() != rank)
      return call.error(
          "scales has " + std::to_string(scales.size()) + " entries for a rank-" + std::to_string(rank) + " input",
          "give one scale per axis (or sizes)");
    for (size_t d = 0; d < rank; ++d) {
      if (!(scales[d] > 0)) return call.error("scale " + std::to_string(scales[d]) + " on axis " + std::to_string(d));
      outShape[d] = int64_t(std::floor(double(in.shape[d]) * scales[d]));
    }
  }
  return transformKernel(call, resize(in.shape, outShape, scales, options, in.dtype), {0});
}

Expected<OpKernel> buildResize(const OpCall& call) {
  ResizeOptions options;
  auto interpolation = interpolationOf(call);
  if (!interpolation) return interpolation.error();
  options.interpolation = *interpolation;
  // Resize-10 takes (X, scales); from opset 11 on, scales is input 2 after roi. A node of an
  // unknown opset with two inputs can only be the older form.
  bool opset10 = call.opset == 10 || (call.opset < 11 && call.inputTypes.size() == 2);
  if (opset10) {
    // Resize-10 had neither attribute: asymmetric coordinates, nearest rounds down.
    options.coordinates = ResizeCoordinates::Asymmetric;
    options.rounding = ResizeRounding::Floor;
    auto scales = call.constantDoubles(1, "scales");
    if (!scales) return scales.error();
    return resizeKernel(call, options, *scales, {});
  }
  auto coordinates = coordinatesOf(call);
  if (!coordinates) return coordinates.error();
  auto rounding = roundingOf(call);
  if (!rounding) return rounding.error();
  auto a = call.floatAttr("cubic_coeff_a", -0.75);
  if (!a) return a.error();
  auto exclude = call.intAttr("exclude_outside", 0);
  if (!exclude) return exclude.error();
  auto extrapolation = call.floatAttr("extrapolation_value", 0.0);
  if (!extrapolation) return extrapolation.error();
  auto antialias = call.intAttr("antialias", 0);
  if (!antialias) return antialias.error();
  if (*antialias != 0) return call.error("antialias is not supported");
  if (call.hasAttr("axes")) return call.error("attribute 'axes' (opset 18) is not supported", "resize every axis");
  auto aspectPolicy = call.stringAttr("keep_aspect_ratio_policy", "stretch");
  if (!aspectPolicy) return aspectPolicy.error();
  if (*aspectPolicy != "stretch")
    return call.error("keep_aspect_ratio_policy '" + *aspectPolicy + "' (opset 18) is not supported",
                      "give the output sizes explicitly");
  options.coordinates = *coordinates;
  options.rounding = *rounding;
  options.cubicCoefficient = *a;
  options.excludeOutside = *exclude != 0;
  options.extrapolationValue = *extrapolation;
  if (options.coordinates == ResizeCoordinates::TfCropAndResize) {
    auto roi = call.constantDoubles(1, "roi");
    if (!roi) return roi.error();
    options.regionOfInterest = *roi;
  }
  std::vector<double> scales;
  Shape sizes;
  if (call.hasInput(2)) {
    auto s = call.constantDoubles(2, "scales");
    if (!s) return s.error();
    scales = *s;
  }
  if (call.hasInput(3)) {
    auto s = call.constantInts(3, "sizes");
    if (!s) return s.error();
    sizes = *s;
  }
  if (!scales.empty() && !sizes.empty()) return call.error("both scales and sizes are given", "give only one");
  if (scales.empty() && sizes.empty()) return call.error("neither scales nor sizes is given");
  return resizeKernel(call, options, scales, sizes);
}

Expected<OpKernel> buildUpsample(const OpCall& call) {
  ResizeOptions options;
  auto interpolation = interpolationOf(call);
  if (!interpolation) return interpolation.error();
  if (*interpolation == ResizeInterpolation::Cubic) return call.error("Upsample has no cubic mode");
  options.interpolation = *interpolation;
  // Upsample repeats elements: asymmetric coordinates rounded down.
  options.coordinates = ResizeCoordinates::Asymmetric;
  options.rounding = ResizeRounding::Floor;
  std::vector<double> scales;
  if (call.hasAttr("scales")) {  // opset 7
    auto s = call.floatsAttr("scales", {});
    if (!s) return s.error();
    scales = *s;
  } else {  // opset 9: input
    auto s = call.constantDoubles(1, "scales");
    if (!s) return s.error();
    scales = *s;
  }
  return resizeKernel(call, options, scales, {});
}
Expected<OpKernel> buildGridSample(const OpCall& call) {
  auto mode = call.stringAttr("mode", "bilinear");
  if (!mode) return mode.error();
  GridSampleInterpolation interpolation;
  // Opset 20 renamed bilinear and bicubic to linear and cubic; both spellings are accepted.
  if (*mode == "bilinear" || *mode == "linear")
    interpolation = GridSampleInterpolation::Bilinear;
  else if (*mode == "nearest")
    interpolation = GridSampleInterpolation::Nearest;
  else if (*mode == "bicubic" || *mode == "cubic")
    interpolation = GridSampleInterpolation::Bicubic;
  else
    return call.error("mode '" + *mode + "' is not supported", "use bilinear, nearest or bicubic");
  auto paddingName = call.stringAttr("padding_mode", "zeros");
  if (!paddingName) return paddingName.error();
  GridSamplePadding padding;
  if (*paddingName == "zeros")
    padding = GridSamplePadding::Zeros;
  else if (*paddingName == "border")
    padding = GridSamplePadding::Border;
  else if (*paddingName == "reflection")
    padding = GridSamplePadding::Reflection;
  else
    return call.error("padding_mode '" + *paddingName + "' is not supported", "use zeros, border or reflection");
  auto alignCorners = call.intAttr("align_corners", 0);
  if (!alignCorners) return alignCorners.error();
  const TensorType& in = inputType(call, 0);
  const TensorType& grid = inputType(call, 1);
  if (grid.dtype != in.dtype)
    return call.error("grid is " + grid.dtype.toString() + ", the input " + in.dtype.toString());
  return transformKernel(call, gridSample(in.shape, grid.shape, interpolation, padding, *alignCorners != 0, in.dtype),
                         {0, 1});
}
}  // namespace

void registerResizeOps(OpRegistry& registry) {
  registry.add(kernelTypedOp("Resize", OpPattern::Injective, 1, 4, {1, 2, 3}, buildResize));
  registry.add(kernelTypedOp("Upsample", OpPattern::Injective, 1, 2, {1}, buildUpsample));
  registry.add(kernelTypedOp("GridSample", OpPattern::Injective, 2, 2, {}, buildGridSample));
}

}  // namespace tessel::graph::shape_ops
