// RoiAlign and MaxUnpool: operators reading image regions picked at run time (regions of
// interest, max-pooling indices), written as gathers so every output element is computed on
// its own.
#include <cmath>

#include "compiler/opdefs/SignalVisionSupport.h"
#include "core/ir/IROperators.h"

namespace tessel::graph::signal_vision {

namespace {

using Shape = std::vector<int64_t>;

Expr f64(double value) { return FloatImmNode::make(DataType::float64(), value); }
Expr clampIndex(Expr value, int64_t extent) { return max(min(std::move(value), indexConst(extent - 1)), indexConst(0)); }

// ---- MaxUnpool -----------------------------------------------------------------------------

struct UnpoolParams {
  Shape inputShape;     ///< [N, C, spatial...]
  Shape inferredShape;  ///< [N, C, (in - 1) * stride - pads + kernel ...]
  Shape outputShape;    ///< output_shape when given, else inferredShape
  Shape kernel, strides, padsBegin;
};

Expected<UnpoolParams> unpoolParams(const OpCall& call) {
  UnpoolParams p;
  const TensorType& x = call.inputTypes[0];
  const TensorType& indices = call.inputTypes[1];
  if (x.shape.size() < 3) return call.error("input 0 must be [N, C, spatial...], got " + x.toString());
  if (indices.shape != x.shape || !indices.dtype.isIntegral())
    return call.error("the indices (input 1) must be integers shaped like input 0 " + x.toString() + ", got " +
                      indices.toString());
  size_t spatial = x.shape.size() - 2;
  auto kernel = call.intsAttr("kernel_shape", {});
  if (!kernel) return kernel.error();
  auto strides = call.intsAttr("strides", Shape(spatial, 1));
  if (!strides) return strides.error();
  auto pads = call.intsAttr("pads", Shape(2 * spatial, 0));
  if (!pads) return pads.error();
  if (kernel->size() != spatial || strides->size() != spatial || pads->size() != 2 * spatial)
    return call.error("kernel_shape, strides and pads must have one entry per spatial axis (" +
                      std::to_string(spatial) + ", pads two)");
  p.inputShape = x.shape;
  p.inferredShape = {x.shape[0], x.shape[1]};
  for (size_t d = 0; d < spatial; ++d) {
    if ((*kernel)[d] <= 0 || (*strides)[d] <= 0) return call.error("kernel_shape and strides must be positive");
    int64_t extent = (x.shape[d + 2] - 1) * (*strides)[d] - (*pads)[d] - (*pads)[d + spatial] + (*kernel)[d];
    if (extent <= 0) return call.error("the unpooled axis " + std::to_string(d + 2) + " would be empty");
    p.inferredShape.push_back(extent);
  }
  p.kernel = *kernel;
  p.strides = *strides;
  p.padsBegin.assign(pads->begin(), pads->begin() + int64_t(spatial));
  p.outputShape = p.inferredShape;
  if (call.hasInput(2)) {
    auto given = call.constantInts(2, "output_shape");
    if (!given) return given.error();
    if (given->size() != x.shape.size()) return call.error("output_shape must have one entry per axis of input 0");
    for (size_t d = 0; d < given->size(); ++d)
      if ((*given)[d] < p.inferredShape[d] || (d < 2 && (*given)[d] != p.inferredShape[d]))
        return call.error("output_shape " + shapeName(*given) + " cannot hold the unpooled " +
                          shapeName(p.inferredShape));
    p.outputShape = *given;
  }
  return p;
}

/// ONNX's MaxUnpool scatters y[I[i]] = x[i], the indices flat over the whole tensor laid out
/// in the inferred shape, then pads that up to output_shape at the end of each axis. As a
/// gather, an output element looks only at the input elements whose pooling window covers it
/// (ceil(kernel / stride) per axis), which is where MaxPool's indices point; an index outside
/// its own window is dropped.
Expected<OpKernel> buildMaxUnpool(const OpCall& call) {
  auto p = unpoolParams(call);
  if (!p) return p.error();
  DataType dtype = call.inputTypes[0].dtype;
  size_t spatial = p->kernel.size();
  Workload w;
  w.name = "max_unpool_" + shapeName(p->inputShape) + "_to_" + shapeName(p->outputShape);
  te::Tensor x = te::placeholder(toExprs(p->inputShape), dtype, "x");
  te::Tensor indices = te::placeholder(toExprs(p->inputShape), call.inputTypes[1].dtype, "indices");
  w.inputs = {x, indices};
  const UnpoolParams& params = *p;

  // The candidates of output position `at` under reduction positions `offsets`: the input
  // position to read and whether its index names `at`.
  auto candidate = [&](const std::vector<Expr>& at, const std::vector<IterVar>& offsets) {
    std::vector<Expr> source{at[0], at[1]};
    Expr flat = at[0] * indexConst(params.inferredShape[1]) + at[1];
    Expr valid;
    for (size_t d = 0; d < spatial; ++d) {
      Expr position = at[d + 2];
      Expr window = floordiv(position + indexConst(params.padsBegin[d]), indexConst(params.strides[d])) -
                    Expr(offsets[d]->var);
      Expr inRange = window >= indexConst(0) && window < indexConst(params.inputShape[d + 2]) &&
                     position < indexConst(params.inferredShape[d + 2]);
      valid = valid.defined() ? valid && inRange : inRange;
      source.push_back(clampIndex(window, params.inputShape[d + 2]));
      flat = flat * indexConst(params.inferredShape[d + 2]) + position;
    }
    Expr names = eq(cast(DataType::int64(), indices(source)), flat);
    return std::make_pair(source, valid && names);
  };
  auto reduceAxes = [&](const std::string& prefix) {
    std::vector<IterVar> axes;
    for (size_t d = 0; d < spatial; ++d) {
      int64_t candidates = (params.kernel[d] + params.strides[d] - 1) / params.strides[d];
      axes.push_back(te::reduceAxis(indexConst(candidates), prefix + std::to_string(d)));
    }
    return axes;
  };
  std::vector<IterVar> hitAxes = reduceAxes("h");
  te::Tensor hits = te::compute(
      toExprs(p->outputShape),
      [&](const std::vector<Var>& axes) {
        Expr matches = candidate(asExprs(axes), hitAxes).second;
        return te::sum(select(matches, indexConst(1), indexConst(0)), hitAxes);
      },
      "unpool.hits", axisNames(p->outputShape.size()), "unpool");
  std::vector<IterVar> valueAxes = reduceAxes("v");
  te::Tensor value = te::compute(
      toExprs(p->outputShape),
      [&](const std::vector<Var>& axes) {
        auto [source, matches] = candidate(asExprs(axes), valueAxes);
        return te::maximum(x(source), valueAxes, matches);
      },
      "unpool.value", axisNames(p->outputShape.size()), "unpool");
  w.outputs = {te::compute(
      toExprs(p->outputShape),
      [&](const std::vector<Var>& axes) {
        std::vector<Expr> at = asExprs(axes);
        return select(hits(at) > indexConst(0), value(at), makeZero(dtype));
      },
      "out", axisNames(p->outputShape.size()), "unpool")};
  return opaqueKernel(call, std::move(w), {0, 1});
}

// ---- RoiAlign ------------------------------------------------------------------------------

struct RoiAlignParams {
  Shape inputShape;  ///< [N, C, H, W]
  int64_t rois = 0;
  int64_t outputHeight = 1, outputWidth = 1;
  int64_t samplingRatio = 0;
  double spatialScale = 1.0;
  bool halfPixel = true;
  bool maxMode = false;
};

Expected<RoiAlignParams> roiAlignParams(const OpCall& call) {
  RoiAlignParams p;
  const TensorType& x = call.inputTypes[0];
  const TensorType& rois = call.inputTypes[1];
  const TensorType& batch = call.inputTypes[2];
  if (!x.dtype.isFloat() || x.shape.size() != 4)
    return call.error("input 0 must be a floating-point [N, C, H, W] tensor, got " + x.toString());
  if (rois.shape.size() != 2 || rois.shape[1] != 4 || rois.dtype != x.dtype)
    return call.error("the rois (input 1) must be [num_rois, 4] of input 0's type, got " + rois.toString());
  if (batch.shape != Shape{rois.shape[0]} || !batch.dtype.isIntegral())
    return call.error("batch_indices (input 2) must be [num_rois] integers, got " + batch.toString());
  p.inputShape = x.shape;
  p.rois = rois.shape[0];
  auto height = call.intAttr("output_height", 1);
  if (!height) return height.error();
  auto width = call.intAttr("output_width", 1);
  if (!width) return width.error();
  auto sampling = call.intAttr("sampling_ratio", 0);
  if (!sampling) return sampling.error();
  auto scale = call.floatAttr("spatial_scale", 1.0);
  if (!scale) return scale.error();
  auto mode = call.stringAttr("mode", "avg");
  if (!mode) return mode.error();
  // Opset 16 added the attribute with half_pixel as default; opset 10's behaviour is
  // output_half_pixel.
  auto transform = call.stringAttr("coordinate_transformation_mode",
                                   call.opset != 0 && call.opset < 16 ? "output_half_pixel" : "half_pixel");
  if (!transform) return transform.error();
  if (*height <= 0 || *width <= 0) return call.error("output_height and output_width must be positive");
  if (*sampling < 0) return call.error("sampling_ratio must not be negative");
  if (*mode != "avg" && *mode != "max") return call.error("mode '" + *mode + "' is not one of avg, max");
  if (*transform != "half_pixel" && *transform != "output_half_pixel")
    return call.error("coordinate_transformation_mode '" + *transform + "' is not one of half_pixel, output_half_pixel");
  p.outputHeight = *height;
  p.outputWidth = *width;
  p.samplingRatio = *sampling;
  p.spatialScale = *scale;
  p.halfPixel = *transform == "half_pixel";
  p.maxMode = *mode == "max";
  return p;
}

/// Each output bin averages (or takes the max of) a grid of bilinear samples inside its part
/// of the region, as ONNX's reference does: samples more than one pixel outside the image
/// count as zeros, a max sample is the max of the four weighted corners. With sampling_ratio
/// 0 the grid adapts to the region's size at run time, up to a bound: a region more than twice
/// the feature map's size is sampled more coarsely than the reference does.
Expected<OpKernel> buildRoiAlign(const OpCall& call) {
  auto p = roiAlignParams(call);
  if (!p) return p.error();
  const RoiAlignParams& params = *p;
  DataType dtype = call.inputTypes[0].dtype;
  int64_t batches = params.inputShape[0], height = params.inputShape[2], width = params.inputShape[3];
  Workload w;
  w.name = "roi_align_" + shapeName(params.inputShape) + "_" + std::to_string(params.rois);
  te::Tensor x = te::placeholder(toExprs(params.inputShape), dtype, "x");
  te::Tensor rois = te::placeholder(toExprs({params.rois, 4}), dtype, "rois");
  te::Tensor batchIndices = te::placeholder(toExprs({params.rois}), call.inputTypes[2].dtype, "batch_indices");
  w.inputs = {x, rois, batchIndices};
  Shape outShape{params.rois, params.inputShape[1], params.outputHeight, params.outputWidth};

  // The adaptive grid (ceil of the bin size) is known only at run time; the loops run to a
  // bound that covers regions up to twice the feature map's size and skip the rest.
  auto gridBound = [&](int64_t extent, int64_t bins) {
    return params.samplingRatio > 0 ? params.samplingRatio : (2 * extent + bins - 1) / bins + 1;
  };
  int64_t gridBoundH = gridBound(height, params.outputHeight), gridBoundW = gridBound(width, params.outputWidth);

  // The region of roi `r` in feature-map coordinates: start and size per axis, and the
  // sampling grid per bin.
  struct Region {
    Expr startH, startW, binH, binW, gridH, gridW;
  };
  auto regionOf = [&](const Expr& r) {
    DataType f = DataType::float64();
    double offset = params.halfPixel ? 0.5 : 0.0;
    auto coordinate = [&](int64_t k) { return cast(f, rois({r, indexConst(k)})) * f64(params.spatialScale) - f64(offset); };
    Region region;
    region.startW = coordinate(0);
    region.startH = coordinate(1);
    Expr roiW = coordinate(2) - region.startW, roiH = coordinate(3) - region.startH;
    if (!params.halfPixel) {  // malformed regions become 1x1
      roiW = max(roiW, f64(1));
      roiH = max(roiH, f64(1));
    }
    region.binH = roiH / f64(double(params.outputHeight));
    region.binW = roiW / f64(double(params.outputWidth));
    if (params.samplingRatio > 0) {
      region.gridH = region.gridW = indexConst(params.samplingRatio);
    } else {
      auto adaptive = [&](const Expr& bin, int64_t bound) {
        return min(max(cast(DataType::index(), tessel::call(Intrinsic::Ceil, {bin})), indexConst(0)), indexConst(bound));
      };
      region.gridH = adaptive(region.binH, gridBoundH);
      region.gridW = adaptive(region.binW, gridBoundW);
    }
    return region;
  };

  IterVar iy = te::reduceAxis(indexConst(gridBoundH), "iy"), ix = te::reduceAxis(indexConst(gridBoundW), "ix");
  te::Tensor pooled = te::compute(
      toExprs(outShape),
      [&](const std::vector<Var>& axes) {
        DataType f = DataType::float64();
        Expr r = axes[0], c = axes[1], ph = axes[2], pw = axes[3];
        Region region = regionOf(r);
        Expr y = region.startH + cast(f, ph) * region.binH +
                 (cast(f, Expr(iy->var)) + f64(0.5)) * region.binH / cast(f, region.gridH);
        Expr xs = region.startW + cast(f, pw) * region.binW +
                  (cast(f, Expr(ix->var)) + f64(0.5)) * region.binW / cast(f, region.gridW);
        Expr inside = !(y < f64(-1) || y > f64(double(height)) || xs < f64(-1) || xs > f64(double(width)));
        Expr b = clampIndex(cast(DataType::index(), batchIndices({r})), batches);
        // Bilinear corners; at the last row/column both corners are that row/column.
        auto corners = [&](Expr coordinate, int64_t extent) {
          coordinate = max(coordinate, f64(0));
          Expr low = cast(DataType::index(), tessel::call(Intrinsic::Floor, {coordinate}));
          Expr atEdge = low >= indexConst(extent - 1);
          Expr fraction = select(atEdge, f64(0), coordinate - cast(f, low));
          Expr lowIndex = clampIndex(low, extent);
          Expr highIndex = clampIndex(low + indexConst(1), extent);
          return std::make_tuple(lowIndex, highIndex, fraction);
        };
        auto [yLow, yHigh, ly] = corners(y, height);
        auto [xLow, xHigh, lx] = corners(xs, width);
        auto at = [&](const Expr& row, const Expr& column) { return cast(f, x({b, c, row, column})); };
        Expr v1 = (f64(1) - ly) * (f64(1) - lx) * at(yLow, xLow);
        Expr v2 = (f64(1) - ly) * lx * at(yLow, xHigh);
        Expr v3 = ly * (f64(1) - lx) * at(yHigh, xLow);
        Expr v4 = ly * lx * at(yHigh, xHigh);
        Expr inGrid = Expr(iy->var) < region.gridH && Expr(ix->var) < region.gridW;
        if (params.maxMode) return te::maximum(select(inside, max(max(v1, v2), max(v3, v4)), f64(0)), {iy, ix}, inGrid);
        return te::sum(select(inside, v1 + v2 + v3 + v4, f64(0)), {iy, ix}, inGrid);
      },
      params.maxMode ? "roi.max" : "roi.sum", {"roi", "c", "ph", "pw"}, "roi_align");
  w.outputs = {te::compute(
      toExprs(outShape),
      [&](const std::vector<Var>& axes) {
        Region region = regionOf(axes[0]);
        Expr samples = region.gridH * region.gridW;
        std::vector<Expr> at = asExprs(axes);
        Expr value = params.maxMode ? pooled(at) : pooled(at) / cast(DataType::float64(), max(samples, indexConst(1)));
        return cast(dtype, select(samples > indexConst(0), value, f64(0)));
      },
      "out", {"roi", "c", "ph", "pw"}, "roi_align")};
  w.flops = 12.0 * double(elementCount(outShape)) * double(gridBoundH * gridBoundW);
  return opaqueKernel(call, std::move(w), {0, 1, 2});
}

}  // namespace

void registerImageRegionOps(OpRegistry& registry) {
  registry.add(kernelTypedOpaqueOp("MaxUnpool", 2, 3, {2}, buildMaxUnpool));
  registry.add(kernelTypedOpaqueOp("RoiAlign", 3, 3, {}, buildRoiAlign));
}

}  // namespace tessel::graph::signal_vision
