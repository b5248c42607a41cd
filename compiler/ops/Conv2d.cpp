// Conv2d compute and default schedule.
#include "compiler/ops/Conv2d.h"

#include "core/ir/IROperators.h"

namespace tessel {

namespace {
// Filters per vector block: two vectors when there are enough filters.
int64_t filterBlock(const Conv2dParams& p, const ScheduleTarget& target) {
  int64_t lanes = target.vectorLanes;
  if (p.filters % (2 * lanes) == 0) return 2 * lanes;
  if (p.filters % lanes == 0) return lanes;
  return std::min<int64_t>(p.filters, lanes);
}

// Output pixels per register tile: a divisor of the output width with at most ~20
// accumulators (pixels * filter vectors). More would fill the register file once LLVM
// unrolls the reduction loop, and spills cost more than the extra reuse gains.
int64_t pixelBlock(int64_t outWidth, int64_t filterVectors, const ScheduleTarget& target) {
  int maxAccumulators = target.vectorLanes >= 16 ? 20 : 10;
  int64_t limit = std::max<int64_t>(1, maxAccumulators / filterVectors);
  int64_t best = 1;
  for (int64_t x = 1; x <= limit; ++x)
    if (outWidth % x == 0) best = x;
  if (best * 2 <= limit && outWidth > limit) best = limit;  // no good divisor: accept a tail
  return best;
}
}  // namespace

std::string Conv2dParams::validate() const {
  if (batch < 1 || channels < 1 || height < 1 || width < 1) return "input dimensions must be positive";
  if (filters < 1 || kernelH < 1 || kernelW < 1) return "filter count and kernel size must be positive";
  if (stride < 1) return "stride must be positive";
  if (pad < 0) return "padding must not be negative";
  if (outHeight() < 1 || outWidth() < 1) return "the kernel is larger than the padded input";
  return "";
}

Workload conv2d(const Conv2dParams& p, DataType dtype, const ScheduleTarget& target) {
  Workload w;
  w.name = "conv2d_n" + std::to_string(p.batch) + "c" + std::to_string(p.channels) + "h" + std::to_string(p.height) +
           "w" + std::to_string(p.width) + "k" + std::to_string(p.filters) + "r" + std::to_string(p.kernelH) + "s" +
           std::to_string(p.kernelW) + "st" + std::to_string(p.stride) + "p" + std::to_string(p.pad);
  te::Tensor data = te::placeholder({Expr(p.batch), Expr(p.channels), Expr(p.height), Expr(p.width)}, dtype, "data");
  te::Tensor weight =
      te::placeholder({Expr(p.filters), Expr(p.channels), Expr(p.kernelH), Expr(p.kernelW)}, dtype, "weight");
  int64_t paddedH = p.height + 2 * p.pad, paddedW = p.width + 2 * p.pad;
  te::Tensor padded = te::compute(
      {Expr(p.batch), Expr(p.channels), Expr(paddedH), Expr(paddedW)},
      [&](Var n, Var c, Var y, Var x) {
        if (p.pad == 0) return data(n, c, y, x);
        // One likely() per axis: loop partitioning then gives the interior rows and columns
        // their own loops in which the select is gone.
        Expr inside = likely(y >= p.pad && y < p.height + p.pad) && likely(x >= p.pad && x < p.width + p.pad);
        // Clamp the read so it stays in bounds even where the value is discarded.
        Expr yy = min(max(y - p.pad, Expr(0)), Expr(p.height - 1));
        Expr xx = min(max(x - p.pad, Expr(0)), Expr(p.width - 1));
        return select(inside, data(n, c, yy, xx), makeZero(dtype));
      },
      "data.pad", {"n", "c", "y", "x"}, "pad");
  int64_t kb = filterBlock(p, target);
  int64_t blocks = (p.filters + kb - 1) / kb;
  te::Tensor packed = te::compute(
      {Expr(blocks), Expr(p.channels), Expr(p.kernelH), Expr(p.kernelW), Expr(kb)},
      [&](const std::vector<Var>& v) {
        Expr filter = v[0] * kb + v[4];
        if (p.filters % kb == 0) return weight(filter, v[1], v[2], v[3]);
        return select(filter < p.filters, weight(min(filter, Expr(p.filters - 1)), v[1], v[2], v[3]),
                      makeZero(dtype));
      },
      "weight.packed", {"ko", "c", "r", "s", "ki"}, "pack");
  IterVar c = te::reduceAxis(Expr(p.channels), "c");
  IterVar r = te::reduceAxis(Expr(p.kernelH), "r");
  IterVar s = te::reduceAxis(Expr(p.kernelW), "s");
  // The reduction runs in a blocked layout, filters innermost, so a tile of accumulators is
  // contiguous vectors; the output copies it back to NCHW tile by tile.
  te::Tensor blocked = te::compute(
      {Expr(p.batch), Expr(blocks), Expr(p.outHeight()), Expr(p.outWidth()), Expr(kb)},
      [&](const std::vector<Var>& v) {
        Expr n = v[0], ko = v[1], y = v[2], x = v[3], ki = v[4];
        return te::sum(padded(n, c, y * p.stride + r, x * p.stride + s) * packed(ko, c, r, s, ki), {c, r, s});
      },
      "conv.blocked", {"n", "ko", "y", "x", "ki"}, "conv2d");
  te::Tensor out = te::compute(
      {Expr(p.batch), Expr(p.filters), Expr(p.outHeight()), Expr(p.outWidth())},
      [&](const std::vector<Var>& v) { return blocked(v[0], v[1] / kb, v[2], v[3], v[1] % kb); }, "conv",
      {"n", "k", "y", "x"}, "layout");
  w.inputs = {data, weight};
  w.outputs = {out};
  w.flops = 2.0 * double(p.batch) * double(p.filters) * double(p.outHeight()) * double(p.outWidth()) *
            double(p.channels) * double(p.kernelH) * double(p.kernelW);
  return w;
}

Expected<Schedule> defaultConv2dSchedule(const Workload& workload, const Conv2dParams& p,
                                         const ScheduleTarget& target) {
  int64_t kb = filterBlock(p, target);
  int64_t filterVectors = std::max<int64_t>(1, kb / target.vectorLanes);
  int64_t xb = pixelBlock(p.outWidth(), filterVectors, target);
  Schedule s(workload.outputs);
  auto steps = {
      // One task per output row and filter block; each tile is computed right before it is
      // copied out, so the blocked result never leaves the cache.
      s.split("conv", "k", kb, "ko", "ki"),
      s.split("conv", "x", xb, "xo", "xi"),
      s.reorder("conv", {"n", "ko", "y", "xo", "ki", "xi"}),
      s.fuse("conv", {"n", "ko", "y"}, "rows"),
      s.parallel("conv", "rows"),
      s.computeAt("conv.blocked", "conv", "xo"),
      // Per tile: reduction outermost, pixels unrolled, filters as vector lanes.
      s.reorder("conv.blocked", {"c", "r", "s", "x", "ki"}),
      s.unroll("conv.blocked", "x"),
      s.vectorize("conv.blocked", "ki"),
      s.parallel("data.pad", "c"),
      s.parallel("weight.packed", "ko"),
      s.vectorize("weight.packed", "ki"),
  };
  for (const Status& status : steps)
    if (!status) return status.error();
  return s;
}

}  // namespace tessel
