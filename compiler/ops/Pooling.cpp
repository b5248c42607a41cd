// Pooling computes (ONNX MaxPool, AveragePool, GlobalMaxPool, GlobalAveragePool) and their default schedule.
#include "compiler/ops/Pooling.h"

#include <optional>

#include "compiler/ops/LayoutTransform.h"
#include "compiler/ops/Reduction.h"
#include "core/ir/IROperators.h"

namespace tessel {

namespace {
// Spatial axis names read like the loops people write: x, y x, z y x.
std::vector<std::string> spatialAxisNames(size_t rank) {
  static const char* named[] = {"z", "y", "x"};
  std::vector<std::string> names;
  for (size_t d = 0; d < rank; ++d)
    names.push_back(rank <= 3 ? named[3 - rank + d] : "d" + std::to_string(d));
  return names;
}

const char* poolName(PoolKind kind) {
  return kind == PoolKind::Max ? "maxpool" : kind == PoolKind::Average ? "avgpool" : "lppool";
}

Diagnostic poolError(PoolKind kind, std::string message, std::string hint = "") {
  return Diagnostic{std::move(message), poolName(kind), 0, 0, std::move(hint)};
}

// `values` resized to `rank` entries of `fallback` when empty; an error when the count is wrong.
std::optional<Diagnostic> perAxis(PoolKind kind, const char* attribute, std::vector<int64_t>& values, size_t rank,
                                  int64_t fallback) {
  if (values.empty()) values.assign(rank, fallback);
  if (values.size() != rank)
    return poolError(kind,
                     std::string(attribute) + " has " + std::to_string(values.size()) + " entries, expected one per " +
                         "spatial axis (" + std::to_string(rank) + ")");
  return std::nullopt;
}

// Parameters with every per-axis list filled in, or why they are invalid.
Expected<PoolParams> normalized(PoolParams p) {
  if (p.inputShape.size() < 3)
    return poolError(p.kind, "the input must be N x C x D1 .. Dn with at least one spatial axis, got rank " +
                                 std::to_string(p.inputShape.size()));
  for (int64_t d : p.inputShape)
    if (d < 1) return poolError(p.kind, "input dimensions must be positive, got " + shapeName(p.inputShape));
  size_t rank = p.inputShape.size() - 2;
  if (p.kernel.size() != rank)
    return poolError(p.kind, "kernel_shape has " + std::to_string(p.kernel.size()) + " entries for " +
                                 std::to_string(rank) + " spatial axes");
  if (auto e = perAxis(p.kind, "strides", p.strides, rank, 1)) return *e;
  if (auto e = perAxis(p.kind, "pads (begin)", p.padsBegin, rank, 0)) return *e;
  if (auto e = perAxis(p.kind, "pads (end)", p.padsEnd, rank, 0)) return *e;
  if (auto e = perAxis(p.kind, "dilations", p.dilations, rank, 1)) return *e;
  for (size_t d = 0; d < rank; ++d) {
    std::string axis = " (spatial axis " + std::to_string(d) + ")";
    if (p.kernel[d] < 1) return poolError(p.kind, "kernel_shape must be positive" + axis);
    if (p.strides[d] < 1) return poolError(p.kind, "strides must be positive" + axis);
    if (p.dilations[d] < 1) return poolError(p.kind, "dilations must be positive" + axis);
    if (p.padsBegin[d] < 0 || p.padsEnd[d] < 0) return poolError(p.kind, "pads must not be negative" + axis);
    int64_t window = p.dilations[d] * (p.kernel[d] - 1) + 1;
    // A pad as wide as the window would allow windows that see only padding.
    if (p.padsBegin[d] >= window || p.padsEnd[d] >= window)
      return poolError(p.kind, "pads must be smaller than the (dilated) kernel" + axis,
                       "a window made only of padding has no value");
    if (p.inputShape[d + 2] + p.padsBegin[d] + p.padsEnd[d] < window)
      return poolError(p.kind, "the kernel is larger than the padded input" + axis);
  }
  if (p.channelBlock < 0) return poolError(p.kind, "the channel block must not be negative");
  if (p.channelBlock > 0 && (rank != 2 || p.inputShape[1] % p.channelBlock != 0))
    return poolError(p.kind, "a channel-blocked input must be 2-D with channels (" + std::to_string(p.inputShape[1]) +
                                 ") in whole blocks of " + std::to_string(p.channelBlock),
                     "transform the input to NCHW first");
  return p;
}

int64_t outputExtent(const PoolParams& p, size_t d) {
  int64_t window = p.dilations[d] * (p.kernel[d] - 1) + 1;
  int64_t span = p.inputShape[d + 2] + p.padsBegin[d] + p.padsEnd[d] - window;
  int64_t out = (p.ceilMode ? (span + p.strides[d] - 1) / p.strides[d] : span / p.strides[d]) + 1;
  // ONNX (like PyTorch): with ceil_mode, a window that would start in the end padding is dropped.
  if (p.ceilMode && (out - 1) * p.strides[d] >= p.inputShape[d + 2] + p.padsBegin[d]) --out;
  return out;
}

// How many of `kernel` taps at start + t*dilation fall in [low, high): the divisor of an average.
Expr tapsInside(Expr start, int64_t kernel, int64_t dilation, int64_t low, int64_t high) {
  Expr first = max(floordiv(Expr(low) - start + Expr(dilation - 1), Expr(dilation)), Expr(int64_t(0)));
  Expr last = min(floordiv(Expr(high - 1) - start, Expr(dilation)), Expr(kernel - 1));
  return max(last - first + Expr(int64_t(1)), Expr(int64_t(0)));
}
}  // namespace

Status resolveAutoPad(PoolParams& params, const std::string& autoPad) {
  if (autoPad == "NOTSET") return Status::success();
  if (autoPad != "VALID" && autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER")
    return poolError(params.kind, "unknown auto_pad '" + autoPad + "'", "use NOTSET, VALID, SAME_UPPER or SAME_LOWER");
  // Validate everything but the pads, which are about to be replaced.
  PoolParams unpadded = params;
  unpadded.padsBegin.clear();
  unpadded.padsEnd.clear();
  unpadded.ceilMode = false;
  auto p = normalized(unpadded);
  if (!p) return p.error();
  size_t rank = p->kernel.size();
  params.padsBegin.assign(rank, 0);
  params.padsEnd.assign(rank, 0);
  if (autoPad == "VALID") return Status::success();
  for (size_t d = 0; d < rank; ++d) {
    int64_t extent = p->inputShape[d + 2], stride = p->strides[d];
    int64_t window = p->dilations[d] * (p->kernel[d] - 1) + 1;
    int64_t out = (extent + stride - 1) / stride;
    int64_t total = std::max<int64_t>((out - 1) * stride + window - extent, 0);
    int64_t small = total / 2, large = total - small;
    params.padsBegin[d] = autoPad == "SAME_UPPER" ? small : large;
    params.padsEnd[d] = autoPad == "SAME_UPPER" ? large : small;
  }
  return Status::success();
}

Expected<std::vector<int64_t>> poolOutputShape(const PoolParams& params) {
  auto p = normalized(params);
  if (!p) return p.error();
  std::vector<int64_t> shape = {p->inputShape[0], p->inputShape[1]};
  for (size_t d = 0; d + 2 < p->inputShape.size(); ++d) shape.push_back(outputExtent(*p, d));
  return shape;
}

Expected<Workload> pool(const PoolParams& params, DataType dtype) {
  auto normalizedParams = normalized(params);
  if (!normalizedParams) return normalizedParams.error();
  const PoolParams& p = *normalizedParams;
  auto outShape = poolOutputShape(p);
  if (!outShape) return outShape.error();
  size_t rank = p.inputShape.size() - 2;
  std::vector<std::string> spatial = spatialAxisNames(rank);
  // A blocked tensor is indexed [n][c / b][y][x][c % b]: the block lane is one more
  // per-channel axis, after the spatial ones.
  int64_t block = p.channelBlock;
  std::vector<std::string> axisNames = {"n", block ? "co" : "c"};
  axisNames.insert(axisNames.end(), spatial.begin(), spatial.end());
  if (block) axisNames.push_back("ci");
  std::vector<int64_t> storedOutShape = blockedChannelShape(*outShape, block);

  Workload w;
  w.name = std::string(poolName(p.kind)) + "_" + shapeName(p.inputShape) + "_k" + shapeName(p.kernel) + "_s" +
           shapeName(p.strides) + "_p" + shapeName(p.padsBegin) + "_" + shapeName(p.padsEnd) + "_d" +
           shapeName(p.dilations) + (p.ceilMode ? "_ceil" : "") + (p.countIncludePad ? "_incpad" : "") +
           (block ? "_" + blockedChannelLayout(block) : "");
  te::Tensor data = te::placeholder(toExprs(blockedChannelShape(p.inputShape, block)), dtype, "data");
  std::vector<IterVar> window;
  for (size_t d = 0; d < rank; ++d) window.push_back(te::reduceAxis(Expr(p.kernel[d]), "r" + spatial[d]));

  // The window element at output position `out`, tap `window`: the padding value outside the
  // input. Reads are clamped so they stay in bounds where the value is discarded.
  Expr padValue = p.kind == PoolKind::Max ? minValue(dtype) : makeZero(dtype);
  auto tap = [&](const std::vector<Var>& out) {
    std::vector<Expr> indices = {out[0], out[1]};
    Expr inside;
    for (size_t d = 0; d < rank; ++d) {
      Expr position = out[d + 2] * p.strides[d] + window[d].var() * p.dilations[d] - p.padsBegin[d];
      int64_t extent = p.inputShape[d + 2];
      bool canLeave = p.padsBegin[d] > 0 || p.padsEnd[d] > 0 || p.ceilMode;
      if (canLeave) {
        Expr axisInside = likely(position >= Expr(int64_t(0)) && position < Expr(extent));
        inside = inside.defined() ? (inside && axisInside) : axisInside;
        position = min(max(position, Expr(int64_t(0))), Expr(extent - 1));
      }
      indices.push_back(position);
    }
    if (block) indices.push_back(out[rank + 2]);
    Expr value = data(indices);
    return inside.defined() ? select(inside, value, padValue) : value;
  };
  w.inputs = {data};
  int64_t outputs = 1, taps = 1;
  for (int64_t d : *outShape) outputs *= d;  // logical: blocking moves elements, adds none
  for (int64_t k : p.kernel) taps *= k;
  w.flops = double(outputs) * double(taps);

  if (p.kind == PoolKind::Max) {
    w.outputs = {te::compute(
        toExprs(storedOutShape), [&](const std::vector<Var>& out) { return te::maximum(tap(out), window); }, "pool",
        axisNames, "pool")};
    return w;
  }
  if (p.kind == PoolKind::Lp) {
    if (p.lpExponent < 1) return poolError(p.kind, "p must be at least 1, got " + std::to_string(p.lpExponent));
    w.name += "_p" + std::to_string(p.lpExponent);
    auto power = [&](Expr v) {
      if (p.lpExponent == 1) return select(v < makeZero(dtype), -v, v);
      if (p.lpExponent == 2) return v * v;
      return pow(fabs(v), makeConst(dtype, double(p.lpExponent)));
    };
    te::Tensor powers = te::compute(
        toExprs(storedOutShape), [&](const std::vector<Var>& out) { return te::sum(power(tap(out)), window); },
        "pool.sum", axisNames, "pool");
    w.outputs = {te::compute(
        toExprs(storedOutShape),
        [&](const std::vector<Var>& out) {
          Expr total = powers(asExprs(out));
          if (p.lpExponent == 1) return total;
          if (p.lpExponent == 2) return sqrt(total);
          return pow(total, makeConst(dtype, 1.0 / double(p.lpExponent)));
        },
        "pool", axisNames, "pool")};
    w.flops += double(outputs);
    return w;
  }
  te::Tensor sum = te::compute(
      toExprs(storedOutShape), [&](const std::vector<Var>& out) { return te::sum(tap(out), window); }, "pool.sum",
      axisNames, "pool");
  w.outputs = {te::compute(
      toExprs(storedOutShape),
      [&](const std::vector<Var>& out) {
        // count_include_pad counts padded taps but not those past the end padding (ceil_mode).
        Expr count;
        for (size_t d = 0; d < rank; ++d) {
          Expr start = out[d + 2] * p.strides[d] - p.padsBegin[d];
          int64_t low = p.countIncludePad ? -p.padsBegin[d] : 0;
          int64_t high = p.inputShape[d + 2] + (p.countIncludePad ? p.padsEnd[d] : 0);
          Expr taps = tapsInside(start, p.kernel[d], p.dilations[d], low, high);
          count = count.defined() ? count * taps : taps;
        }
        Expr divisor = cast(dtype, max(count, Expr(int64_t(1))));
        std::vector<Expr> indices(out.begin(), out.end());
        return sum(indices) / divisor;
      },
      "pool", axisNames, "pool")};
  w.flops += double(outputs);
  return w;
}

namespace {
// GlobalAveragePool / GlobalMaxPool on NCHW: each (n, c) plane is contiguous, so it is
// reduced as one flat row split across vector lanes (laneSplitReduce), not tap by tap
// along the spatial axes: that was one serial chain of scalar adds per plane (3136 of them
// for 56x56, each waiting on the last), 15% of the memory bound. Stages: "pool.sum" (and
// "pool.sum.lanes") then "pool" = sum / count for the average; "pool" (and "pool.lanes")
// for the maximum.
Workload globalPlanePool(PoolKind kind, const std::vector<int64_t>& inputShape, DataType dtype) {
  size_t rank = inputShape.size() - 2;
  std::vector<std::string> spatial = spatialAxisNames(rank);
  std::vector<std::string> axisNames = {"n", "c"};
  axisNames.insert(axisNames.end(), spatial.begin(), spatial.end());
  std::vector<int64_t> outShape = {inputShape[0], inputShape[1]};
  outShape.resize(inputShape.size(), 1);
  int64_t plane = 1;
  for (size_t d = 0; d < rank; ++d) plane *= inputShape[d + 2];
  Workload w;
  w.name = std::string("global_") + poolName(kind) + "_" + shapeName(inputShape);
  te::Tensor data = te::placeholder(toExprs(inputShape), dtype, "data");
  w.inputs = {data};
  // Element k of the plane, row-major (the simplifier folds the digits back into k).
  auto source = [&](const std::vector<Expr>& row, Expr k) {
    std::vector<Expr> indices = {row[0], row[1]};
    int64_t stride = plane;
    for (size_t d = 0; d < rank; ++d) {
      stride /= inputShape[d + 2];
      Expr digit = stride == 1 ? k : floordiv(k, Expr(stride));
      indices.push_back(d == 0 ? digit : floormod(digit, Expr(inputShape[d + 2])));
    }
    return data(indices);
  };
  int64_t outputs = inputShape[0] * inputShape[1];
  w.flops = double(outputs) * double(plane);
  if (kind == PoolKind::Max) {
    w.outputs = {laneSplitReduce(Reducer::Max, toExprs(outShape), axisNames, plane, source, dtype, "pool", "pool")};
    return w;
  }
  te::Tensor sum = laneSplitReduce(Reducer::Sum, toExprs(outShape), axisNames, plane, source, dtype, "pool.sum", "pool");
  w.outputs = {te::compute(
      toExprs(outShape), [&](const std::vector<Var>& out) { return sum(asExprs(out)) / makeConst(dtype, double(plane)); },
      "pool", axisNames, "pool")};
  w.flops += double(outputs);
  return w;
}
}  // namespace

Expected<Workload> globalPool(PoolKind kind, const std::vector<int64_t>& inputShape, DataType dtype,
                              int64_t lpExponent, int64_t channelBlock) {
  if (inputShape.size() < 3)
    return poolError(kind, "the input must be N x C x D1 .. Dn with at least one spatial axis, got rank " +
                               std::to_string(inputShape.size()));
  bool positive = true;
  for (int64_t d : inputShape) positive = positive && d > 0;
  if (channelBlock == 0 && kind != PoolKind::Lp && positive) return globalPlanePool(kind, inputShape, dtype);
  PoolParams p;
  p.kind = kind;
  p.inputShape = inputShape;
  p.kernel.assign(inputShape.begin() + 2, inputShape.end());
  p.lpExponent = lpExponent;
  p.channelBlock = channelBlock;
  auto w = pool(p, dtype);
  if (w)
    w->name = std::string("global_") + poolName(kind) + "_" + shapeName(inputShape) +
              (channelBlock ? "_" + blockedChannelLayout(channelBlock) : "");
  return w;
}

Expected<Workload> maxPoolWithIndices(const PoolParams& params, bool columnMajor, DataType dtype) {
  if (params.kind != PoolKind::Max) return poolError(params.kind, "only max pooling returns indices");
  if (params.channelBlock != 0)
    return poolError(params.kind, "indices count NCHW offsets: the input must be NCHW, not channel-blocked",
                     "transform the input to NCHW first");
  auto maxWorkload = pool(params, dtype);
  if (!maxWorkload) return maxWorkload.error();
  PoolParams p = *normalized(params);
  size_t rank = p.inputShape.size() - 2;
  std::vector<std::string> spatial = spatialAxisNames(rank);
  std::vector<std::string> axisNames = {"n", "c"};
  axisNames.insert(axisNames.end(), spatial.begin(), spatial.end());
  te::Tensor data = maxWorkload->inputs[0];
  te::Tensor maximum = maxWorkload->outputs[0];
  std::vector<IterVar> window;
  for (size_t d = 0; d < rank; ++d) window.push_back(te::reduceAxis(Expr(p.kernel[d]), "r" + spatial[d]));
  // Flat offsets into the whole input (ONNX counts N and C too); the spatial part row-major,
  // or column-major (the last axis varying slowest) with storage_order 1.
  int64_t planeSize = 1;
  for (size_t d = 0; d < rank; ++d) planeSize *= p.inputShape[d + 2];
  DataType i64 = DataType::int64();
  Expr none = makeConst(i64, double(elementCount(p.inputShape)));
  te::Tensor index = te::compute(
      maximum.shape(),
      [&](const std::vector<Var>& out) {
        std::vector<Expr> indices = {out[0], out[1]};
        std::vector<Expr> positions;
        Expr inside = makeConst(DataType::boolean(), 1.0);
        for (size_t d = 0; d < rank; ++d) {
          Expr position = out[d + 2] * p.strides[d] + window[d].var() * p.dilations[d] - p.padsBegin[d];
          int64_t extent = p.inputShape[d + 2];
          inside = inside && position >= Expr(int64_t(0)) && position < Expr(extent);
          positions.push_back(position);
          indices.push_back(min(max(position, Expr(int64_t(0))), Expr(extent - 1)));
        }
        Expr offset = (out[0] * p.inputShape[1] + out[1]) * planeSize;
        Expr spatialOffset = Expr(int64_t(0));
        for (size_t step = 0; step < rank; ++step) {
          size_t d = columnMajor ? rank - 1 - step : step;
          spatialOffset = spatialOffset * p.inputShape[d + 2] + positions[d];
        }
        std::vector<Expr> at(out.begin(), out.end());
        Expr hit = inside && eq(data(indices), maximum(at));
        return te::minimum(select(hit, cast(i64, offset + spatialOffset), none), window);
      },
      "pool.index", axisNames, "pool");
  Workload w = *maxWorkload;
  w.name += columnMajor ? "_indices_colmajor" : "_indices";
  w.outputs.push_back(index);
  w.flops *= 2;
  return w;
}

Expected<Schedule> defaultMaxPoolWithIndicesSchedule(const Workload& workload, const Target& target) {
  Schedule s(workload.outputs);
  if (!s.findStage("pool") || !s.findStage("pool.index"))
    return Diagnostic{"the workload has no stages named 'pool' and 'pool.index'", workload.name, 0, 0, ""};
  const auto& shape = workload.outputs[0].shape();
  int64_t planes = *asConstInt(shape[0]) * *asConstInt(shape[1]);
  std::vector<Status> steps;
  // Both outputs are stored, so each runs its planes in parallel at root.
  for (const char* stage : {"pool", "pool.index"}) {
    steps.push_back(s.fuse(stage, {"n", "c"}, "planes"));
    if (target.cores > 1 && planes > 1) steps.push_back(s.parallel(stage, "planes"));
  }
  for (const Status& status : steps)
    if (!status) return status.error();
  return s;
}

namespace {
// Over NCHW<b>c: the same per-element accumulator, with every window tap a vector load of the
// block's b channels (contiguous in memory) instead of a scalar.
Expected<Schedule> blockedPoolSchedule(Schedule s, const Workload& workload, const Target& target) {
  const auto& shape = workload.outputs[0].shape();
  int64_t rows = *asConstInt(shape[0]) * *asConstInt(shape[1]) * *asConstInt(shape[2]);
  bool hasSum = s.findStage("pool.sum") != nullptr;
  std::string accumulator = hasSum ? "pool.sum" : "pool.local";
  std::vector<Status> steps;
  if (!hasSum) steps.push_back(s.cacheWrite("pool", "local", accumulator));
  parallelizeRows(s, "pool", {"n", "co", "y"}, rows, target, steps);
  steps.push_back(s.computeAt(accumulator, "pool", "x"));
  // The block lane innermost, inside the window loops, so each tap is one vector operation.
  steps.push_back(s.reorder(accumulator, {"ry", "rx", "ci"}));
  steps.push_back(s.vectorize(accumulator, "ci"));
  steps.push_back(s.vectorize("pool", "ci"));
  for (const Status& status : steps)
    if (!status) return status.error();
  return s;
}
// Whether the workload is a globalPlanePool(): its reduction runs over one flat axis of the
// plane ("k", or "j" and "lane" split across lanes), not over window taps.
bool reducesFlatPlanes(const Schedule& s) {
  const Stage* reduction = s.findStage("pool.sum") ? s.findStage("pool.sum") : s.findStage("pool");
  const auto* compute = te::asCompute(reduction->op);
  if (!compute || compute->reduceAxes.empty()) return false;
  const std::string& axis = compute->reduceAxes[0].name();
  return axis == "k" || axis == "lane";
}

// (n, c) planes in parallel, each plane's reduction right before its result is stored, its
// lanes (if split) as vectors.
Expected<Schedule> globalPlanePoolSchedule(Schedule s, const Target& target) {
  const Stage* out = s.findStage("pool");
  std::vector<std::string> axes;
  for (const IterVar& axis : te::asCompute(out->op)->axes) axes.push_back(axis.name());
  const auto& shape = te::asCompute(out->op)->axes;
  int64_t planes = *asConstInt(shape[0]->dom.extent) * *asConstInt(shape[1]->dom.extent);
  std::vector<Status> steps;
  steps.push_back(s.fuse("pool", axes, "planes"));
  if (target.cores > 1 && planes > 1) steps.push_back(s.parallel("pool", "planes"));
  bool average = s.findStage("pool.sum") != nullptr;
  if (average) steps.push_back(s.computeAt("pool.sum", "pool", "planes"));
  scheduleLaneSplitReduce(s, average ? "pool.sum" : "pool", steps);
  for (const Status& status : steps)
    if (!status) return status.error();
  return s;
}
}  // namespace

Expected<Schedule> defaultPoolSchedule(const Workload& workload, const Target& target) {
  Schedule s(workload.outputs);
  const Stage* out = s.findStage("pool");
  if (!out) return Diagnostic{"the workload has no stage named 'pool'", workload.name, 0, 0, ""};
  if (out->findIterVar("ci").defined()) return blockedPoolSchedule(std::move(s), workload, target);
  if (reducesFlatPlanes(s)) return globalPlanePoolSchedule(std::move(s), target);
  const Stage* sumStage = s.findStage("pool.sum");
  const auto& shape = workload.outputs[0].shape();
  size_t rank = shape.size() - 2;
  std::vector<std::string> spatial = spatialAxisNames(rank);
  const std::string& inner = spatial.back();
  int64_t planes = *asConstInt(shape[0]) * *asConstInt(shape[1]);

  std::vector<Status> steps;
  // Window sums or maxima accumulate in a local (the average's "pool.sum" already is
  // one; the max gets a local cache stage) that is stored once per output element.
  std::string accumulator = sumStage ? "pool.sum" : "pool.local";
  if (!sumStage) steps.push_back(s.cacheWrite("pool", "local", accumulator));
  // Every (n, c) plane is an independent task; the spatial loops stay separate so loop
  // partitioning can peel the padded border rows.
  steps.push_back(s.fuse("pool", {"n", "c"}, "planes"));
  if (target.cores > 1 && planes > 1) steps.push_back(s.parallel("pool", "planes"));
  // One accumulator per output element, its window loops inside the row loop. The
  // window loops are short and fully unrolled by LLVM, which then vectorizes the row
  // itself; explicit vector lanes along the row measured about 1.5x (stride 1) and 2x or
  // more (stride 2: strided loads) slower than that on an AVX-512 host.
  steps.push_back(s.computeAt(accumulator, "pool", inner));
  for (const Status& status : steps)
    if (!status) return status.error();
  return s;
}

}  // namespace tessel
