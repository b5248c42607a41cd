// Resize as one compute: per resized axis an input coordinate from the output index (in
// float64, as the ONNX reference computes it), then nearest, linear or cubic taps.
#include "compiler/ops/Resize.h"

#include <cmath>

#include "compiler/ops/TransformSupport.h"

namespace tessel {

namespace {
using namespace transform_support;

Expr f64(double v) { return makeConst(DataType::float64(), v); }
Expr floorOf(Expr x) { return call(Intrinsic::Floor, {std::move(x)}); }
Expr ceilOf(Expr x) { return call(Intrinsic::Ceil, {std::move(x)}); }

// The input coordinate (float64) of output index `i` along an axis. As in the ONNX
// reference, the resized length is the input extent times the scale, before flooring: with
// scales that do not divide evenly, align_corners maps onto that fractional length.
Expr inputCoordinate(const ResizeOptions& options, Expr i, int64_t inExtent, double scale, double roiStart,
                     double roiEnd) {
  Expr x = cast(DataType::float64(), std::move(i));
  double resizedLength = double(inExtent) * scale;
  switch (options.coordinates) {
    case ResizeCoordinates::HalfPixel: return (x + f64(0.5)) / f64(scale) - f64(0.5);
    case ResizeCoordinates::PytorchHalfPixel:
      return resizedLength > 1 ? (x + f64(0.5)) / f64(scale) - f64(0.5) : f64(0);
    case ResizeCoordinates::AlignCorners:
      return resizedLength == 1 ? f64(0) : x * f64(double(inExtent - 1)) / f64(resizedLength - 1);
    case ResizeCoordinates::Asymmetric: return x / f64(scale);
    case ResizeCoordinates::TfHalfPixelForNearest: return (x + f64(0.5)) / f64(scale);
    case ResizeCoordinates::TfCropAndResize:
      if (resizedLength > 1)
        return f64(roiStart * double(inExtent - 1)) +
               x * f64((roiEnd - roiStart) * double(inExtent - 1) / (resizedLength - 1));
      return f64(0.5 * (roiStart + roiEnd) * double(inExtent - 1));
  }
  return x;
}

Expr roundNearest(ResizeRounding rounding, Expr x) {
  switch (rounding) {
    case ResizeRounding::RoundPreferFloor: return ceilOf(x - f64(0.5));
    case ResizeRounding::RoundPreferCeil: return floorOf(x + f64(0.5));
    case ResizeRounding::Floor: return floorOf(x);
    case ResizeRounding::Ceil: return ceilOf(x);
  }
  return x;
}

// One interpolation tap along an axis: an input index (clamped) and its weight (float64).
struct Tap {
  Expr index;
  Expr weight;
};

// The cubic convolution weights of the taps at offsets -1, 0, 1, 2 from floor(x), for
// fraction r (Keys' kernel with coefficient a, as ONNX defines it).
std::vector<Expr> cubicWeights(Expr r, double a) {
  auto outer = [a](Expr d) {  // 1 < |d| < 2
    return ((f64(a) * d - f64(5 * a)) * d + f64(8 * a)) * d - f64(4 * a);
  };
  auto inner = [a](Expr d) {  // |d| <= 1
    return ((f64(a + 2) * d - f64(a + 3)) * d) * d + f64(1);
  };
  return {outer(r + f64(1)), inner(r), inner(f64(1) - r), outer(f64(2) - r)};
}

std::vector<Tap> axisTaps(const ResizeOptions& options, Expr x, int64_t extent) {
  std::vector<Tap> taps;
  if (options.interpolation == ResizeInterpolation::Nearest) {
    Expr index = cast(DataType::index(), roundNearest(options.rounding, x));
    taps.push_back({clampIndex(index, extent), f64(1)});
    return taps;
  }
  Expr base = floorOf(x);
  Expr fraction = x - base;
  Expr baseIndex = cast(DataType::index(), base);
  if (options.interpolation == ResizeInterpolation::Linear) {
    taps.push_back({clampIndex(baseIndex, extent), f64(1) - fraction});
    taps.push_back({clampIndex(baseIndex + Expr(int64_t(1)), extent), fraction});
    return taps;
  }
  std::vector<Expr> weights = cubicWeights(fraction, options.cubicCoefficient);
  std::vector<Expr> indices;
  for (int64_t offset = -1; offset <= 2; ++offset) indices.push_back(baseIndex + Expr(offset));
  if (options.excludeOutside) {
    // Taps outside the input get no weight; the others are renormalized to sum to 1.
    Expr total;
    for (size_t k = 0; k < 4; ++k) {
      Expr inside = indices[k] >= Expr(int64_t(0)) && indices[k] < Expr(extent);
      weights[k] = select(inside, weights[k], f64(0));
      total = total.defined() ? total + weights[k] : weights[k];
    }
    for (Expr& w : weights) w = w / total;
  }
  for (size_t k = 0; k < 4; ++k) taps.push_back({clampIndex(indices[k], extent), weights[k]});
  return taps;
}
}  // namespace

Expected<Workload> resize(const Shape& shape, const Shape& outShape, const std::vector<double>& scales,
                          const ResizeOptions& options, DataType dtype) {
  const std::string op = "Resize";
  if (auto e = checkShape(op, shape, "input")) return *e;
  if (auto e = checkShape(op, outShape, "output")) return *e;
  size_t rank = shape.size();
  if (outShape.size() != rank || scales.size() != rank)
    return opError(op, "the output shape and scales must have one entry per input axis");
  bool crop = options.coordinates == ResizeCoordinates::TfCropAndResize;
  if (crop && options.regionOfInterest.size() != 2 * rank)
    return opError(op, "tf_crop_and_resize needs a roi of " + std::to_string(2 * rank) + " values",
                   "give roi = [starts..., ends...]");
  for (double s : scales)
    if (!(s > 0)) return opError(op, "scale " + std::to_string(s), "scales must be positive");
  std::vector<bool> resized(rank);
  for (size_t d = 0; d < rank; ++d) resized[d] = crop || shape[d] != outShape[d] || scales[d] != 1.0;
  te::Tensor in = te::placeholder(toExprs(shape), dtype, "in");
  te::Tensor out = te::compute(
      toExprs(outShape),
      [&](const std::vector<Var>& i) {
        // Taps per axis (an unchanged axis has one tap of weight 1), then the sum over every
        // combination of taps, weighted by the product of their weights.
        std::vector<std::vector<Tap>> taps(rank);
        Expr outside;  // tf_crop_and_resize: coordinates beyond the input take the extrapolation value
        for (size_t d = 0; d < rank; ++d) {
          if (!resized[d]) {
            taps[d].push_back({Expr(i[d]), Expr()});
            continue;
          }
          double roiStart = crop ? options.regionOfInterest[d] : 0,
                 roiEnd = crop ? options.regionOfInterest[d + rank] : 1;
          Expr x = inputCoordinate(options, i[d], shape[d], scales[d], roiStart, roiEnd);
          if (crop) {
            Expr beyond = x < f64(0) || x > f64(double(shape[d] - 1));
            outside = outside.defined() ? outside || beyond : beyond;
          }
          taps[d] = axisTaps(options, x, shape[d]);
        }
        bool nearest = options.interpolation == ResizeInterpolation::Nearest;
        Expr value;
        std::vector<size_t> choice(rank, 0);
        while (true) {
          std::vector<Expr> read;
          Expr weight;
          for (size_t d = 0; d < rank; ++d) {
            const Tap& tap = taps[d][choice[d]];
            read.push_back(tap.index);
            if (tap.weight.defined() && !nearest) weight = weight.defined() ? weight * tap.weight : tap.weight;
          }
          Expr term = in(read);
          if (weight.defined()) term = cast(DataType::float64(), term) * weight;
          value = value.defined() ? value + term : term;
          size_t d = rank;
          while (d-- > 0) {
            if (++choice[d] < taps[d].size()) break;
            choice[d] = 0;
          }
          if (d == size_t(-1)) break;
        }
        if (value.dtype() != dtype) value = cast(dtype, value);
        if (outside.defined()) value = select(outside, makeConst(dtype, options.extrapolationValue), value);
        return value;
      },
      "out", axisNames(rank), "injective");
  static const char* interpolationNames[] = {"nearest", "linear", "cubic"};
  std::string name = "resize_" + std::string(interpolationNames[int(options.interpolation)]) + "_" + shapeName(shape) +
                     "_to_" + shapeName(outShape) + "_c" + std::to_string(int(options.coordinates)) + "_r" +
                     std::to_string(int(options.rounding));
  std::vector<double> parameters = scales;
  parameters.insert(parameters.end(), options.regionOfInterest.begin(), options.regionOfInterest.end());
  parameters.push_back(options.cubicCoefficient);
  parameters.push_back(options.excludeOutside ? 1 : 0);
  parameters.push_back(options.extrapolationValue);
  return singleOutput(name + "_" + parameterTag(parameters), {in}, out);
}

}  // namespace tessel
