// GridSample as one compute: the grid position un-normalized to pixel coordinates (float64),
// moved inside by the padding mode, then nearest, bilinear or bicubic taps. Follows the ONNX
// reference: nearest rounds half to even, bicubic uses Keys' kernel with a = -0.75, and taps
// outside the input read zero (zeros), the clamped pixel (border) or the reflected one.
#include "compiler/ops/GridSample.h"

#include "compiler/ops/TransformSupport.h"

namespace tessel {

namespace {
using namespace transform_support;

Expr f64(double v) { return makeConst(DataType::float64(), v); }
Expr floorOf(Expr x) { return call(Intrinsic::Floor, {std::move(x)}); }

// x reflected into [low, high] as many times as it takes (the ONNX reference's reflect).
Expr reflect(Expr x, double low, double high) {
  double span = high - low;
  if (span <= 0) return f64(low);
  auto bounce = [&](Expr distance, Expr fromNear, Expr fromFar, bool below) {
    Expr flips = floorOf(distance / f64(span));
    Expr rest = distance - flips * f64(span);
    Expr even = eq(floormod(cast(DataType::index(), flips), Expr(int64_t(2))), Expr(int64_t(0)));
    return below ? select(even, fromNear + rest, fromFar - rest) : select(even, fromNear - rest, fromFar + rest);
  };
  Expr belowLow = bounce(f64(low) - x, f64(low), f64(high), true);
  Expr aboveHigh = bounce(x - f64(high), f64(high), f64(low), false);
  return select(x < f64(low), belowLow, select(x > f64(high), aboveHigh, x));
}

// Rounds half to even (what std::nearbyint and numpy's rint do by default).
Expr roundHalfToEven(Expr x) {
  Expr low = floorOf(x);
  Expr fraction = x - low;
  Expr lowIsOdd = ne(low - f64(2) * floorOf(low / f64(2)), f64(0));
  Expr up = fraction > f64(0.5) || (eq(fraction, f64(0.5)) && lowIsOdd);
  return select(up, low + f64(1), low);
}

std::vector<Expr> cubicWeights(Expr t) {
  const double a = -0.75;
  auto outer = [a](Expr d) { return ((f64(a) * d - f64(5 * a)) * d + f64(8 * a)) * d - f64(4 * a); };
  auto inner = [a](Expr d) { return ((f64(a + 2) * d - f64(a + 3)) * d) * d + f64(1); };
  return {outer(t + f64(1)), inner(t), inner(f64(1) - t), outer(f64(2) - t)};
}
}  // namespace

Expected<Workload> gridSample(const Shape& shape, const Shape& gridShape, GridSampleInterpolation interpolation,
                              GridSamplePadding padding, bool alignCorners, DataType dtype) {
  const std::string op = "GridSample";
  if (auto e = checkShape(op, shape, "input")) return *e;
  if (auto e = checkShape(op, gridShape, "grid")) return *e;
  if (shape.size() != 4) return opError(op, "input has rank " + std::to_string(shape.size()), "the input is NCHW");
  if (gridShape.size() != 4 || gridShape[0] != shape[0] || gridShape[3] != 2)
    return opError(op, "grid has shape " + shapeName(gridShape) + " for input " + shapeName(shape),
                   "the grid is [N, H_out, W_out, 2]");
  if (!dtype.isFloat()) return opError(op, "element type " + dtype.toString(), "GridSample samples floating types");
  int64_t height = shape[2], width = shape[3];
  Shape outShape{shape[0], shape[1], gridShape[1], gridShape[2]};
  te::Tensor in = te::placeholder(toExprs(shape), dtype, "in");
  te::Tensor grid = te::placeholder(toExprs(gridShape), dtype, "grid");
  te::Tensor out = te::compute(
      toExprs(outShape),
      [&](const std::vector<Var>& i) {
        // Pixel coordinates of the sample; a sample outside the box the padding mode works in
        // (pixel centers with alignCorners, outer edges without) is moved inside it.
        auto pixel = [&](int64_t component, int64_t extent) {
          Expr g = cast(DataType::float64(), grid({Expr(i[0]), Expr(i[2]), Expr(i[3]), Expr(component)}));
          Expr x = alignCorners ? (g + f64(1)) / f64(2) * f64(double(extent - 1))
                                : ((g + f64(1)) * f64(double(extent)) - f64(1)) / f64(2);
          return interpolation == GridSampleInterpolation::Nearest ? roundHalfToEven(x) : x;
        };
        auto low = [&](int64_t) { return alignCorners ? 0.0 : -0.5; };
        auto high = [&](int64_t extent) { return alignCorners ? double(extent - 1) : double(extent) - 0.5; };
        Expr x = pixel(0, width), y = pixel(1, height);
        Expr outside = x < f64(low(width)) || x > f64(high(width)) || y < f64(low(height)) || y > f64(high(height));
        if (padding == GridSamplePadding::Border) {
          // As the ONNX reference: only a sample outside the box is clamped (to the border pixels).
          x = select(outside, min(max(x, f64(0)), f64(double(width - 1))), x);
          y = select(outside, min(max(y, f64(0)), f64(double(height - 1))), y);
        } else if (padding == GridSamplePadding::Reflection) {
          x = reflect(x, low(width), high(width));
          y = reflect(y, low(height), high(height));
        }
        // One tap: the pixel at integer (row, column) as the padding mode reads it, in float64.
        auto tap = [&](Expr row, Expr column) {
          Expr inside;
          if (padding == GridSamplePadding::Reflection) {
            row = cast(DataType::index(), reflect(cast(DataType::float64(), row), low(height), high(height)));
            column = cast(DataType::index(), reflect(cast(DataType::float64(), column), low(width), high(width)));
          } else if (padding == GridSamplePadding::Zeros) {
            inside =
                row >= Expr(int64_t(0)) && row < Expr(height) && column >= Expr(int64_t(0)) && column < Expr(width);
          }
          Expr read = cast(DataType::float64(),
                           in({Expr(i[0]), Expr(i[1]), clampIndex(row, height), clampIndex(column, width)}));
          return inside.defined() ? select(inside, read, f64(0)) : read;
        };
        Expr value;
        if (interpolation == GridSampleInterpolation::Nearest) {
          value = tap(cast(DataType::index(), y), cast(DataType::index(), x));
        } else if (interpolation == GridSampleInterpolation::Bilinear) {
          Expr x1 = floorOf(x), y1 = floorOf(y);
          Expr dx = x - x1, dy = y - y1;
          Expr column = cast(DataType::index(), x1), row = cast(DataType::index(), y1);
          Expr one = Expr(int64_t(1));
          value = (f64(1) - dy) * ((f64(1) - dx) * tap(row, column) + dx * tap(row, column + one)) +
                  dy * ((f64(1) - dx) * tap(row + one, column) + dx * tap(row + one, column + one));
        } else {
          Expr x0 = floorOf(x), y0 = floorOf(y);
          std::vector<Expr> wx = cubicWeights(x - x0), wy = cubicWeights(y - y0);
          Expr column = cast(DataType::index(), x0), row = cast(DataType::index(), y0);
          for (int64_t r = 0; r < 4; ++r) {
            Expr rowSum;
            for (int64_t c = 0; c < 4; ++c) {
              Expr term = wx[size_t(c)] * tap(row + Expr(r - 1), column + Expr(c - 1));
              rowSum = rowSum.defined() ? rowSum + term : term;
            }
            value = value.defined() ? value + wy[size_t(r)] * rowSum : wy[size_t(r)] * rowSum;
          }
        }
        return cast(dtype, value);
      },
      "out", axisNames(4), "injective");
  static const char* interpolationNames[] = {"nearest", "bilinear", "bicubic"};
  static const char* paddingNames[] = {"zeros", "border", "reflection"};
  return singleOutput("grid_sample_" + std::string(interpolationNames[int(interpolation)]) + "_" +
                          paddingNames[int(padding)] + (alignCorners ? "_aligned_" : "_") + shapeName(shape) + "_" +
                          shapeName(gridShape),
                      {in, grid}, out);
}

}  // namespace tessel
