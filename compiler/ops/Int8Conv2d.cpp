// The int8 VNNI convolution: compute, weight packing and default schedule.
#include "compiler/ops/Int8Conv2d.h"

#include "compiler/ops/Quantized.h"
#include "compiler/schedule/TensorIntrinsic.h"
#include "core/ir/IROperators.h"

namespace tessel {

namespace {
// The intrinsic's lanes and products per lane: 16 int32 outputs, 4 channels each.
constexpr int64_t kLanes = 16;
constexpr int64_t kChannelsPerLane = 4;
// The channels of a tile row: 64 bytes, one tdpbusd's reduction.
constexpr int64_t kTileChannels = 64;
}  // namespace

std::vector<int64_t> Int8Conv2dParams::weightShape() const {
  return {paddedFilters() / filterBlock, paddedChannels() / kChannelsPerLane, conv.kernelH, conv.kernelW, filterBlock,
          kChannelsPerLane};
}

std::string Int8Conv2dParams::validate() const {
  if (std::string problem = conv.validate(); !problem.empty()) return problem;
  if (conv.groups != 1) return "groups is " + std::to_string(conv.groups) + "; the int8 kernel takes dense convolutions";
  if (filterBlock != 16 && filterBlock != 32 && filterBlock != 64) return "filterBlock must be 16, 32 or 64";
  if (!nchwOutput && conv.filters % filterBlock != 0)
    return std::to_string(conv.filters) + " filters do not divide into blocks of " + std::to_string(filterBlock);
  // NCHW data is regrouped into blocks anyway, so its channels may be padded to a multiple of 4.
  int64_t channels = paddedChannels();
  if (inputBlock <= 0 || inputBlock % kChannelsPerLane != 0 || channels % inputBlock != 0)
    return "inputBlock " + std::to_string(inputBlock) + " must be a multiple of 4 dividing " +
           std::to_string(channels) + " channels";
  for (DataType type : {dataType, outputType})
    if (type != DataType::uint8() && type != DataType::int8()) return "the data and output must be uint8 or int8";
  if (!zeroPointFits(dataType, dataZeroPoint) || !zeroPointFits(outputType, outputZeroPoint))
    return "a zero point lies outside its tensor's type";
  return "";
}

int64_t Int8Conv2dParams::paddedFilters() const {
  return nchwOutput ? (conv.filters + filterBlock - 1) / filterBlock * filterBlock : conv.filters;
}

int64_t Int8Conv2dParams::paddedChannels() const {
  if (!nchwInput) return conv.channels;
  return (conv.channels + kChannelsPerLane - 1) / kChannelsPerLane * kChannelsPerLane;
}

int64_t Int8Conv2dParams::unsignedDataZeroPoint() const {
  return dataZeroPoint + (dataType == DataType::int8() ? 128 : 0);
}

Workload int8Conv2d(const Int8Conv2dParams& params) {
  TESSEL_ICHECK(params.validate().empty()) << "int8Conv2d: " << params.validate();
  const Conv2dParams& p = params.conv;
  const int64_t ib = params.inputBlock, kb = params.filterBlock;
  const int64_t channels = params.paddedChannels();
  DataType u8 = DataType::uint8(), i32 = DataType::int32();
  te::Tensor data =
      params.nchwInput
          ? te::placeholder({Expr(p.batch), Expr(p.channels), Expr(p.height), Expr(p.width)}, params.dataType, "data")
          : te::placeholder({Expr(p.batch), Expr(p.channels / ib), Expr(p.height), Expr(p.width), Expr(ib)},
                            params.dataType, "data");
  te::Tensor weight = te::placeholder(toExprs(params.weightShape()), DataType::int8(), "weight");
  te::Tensor offset = te::placeholder({Expr(p.filters)}, i32, "offset");
  te::Tensor scale = te::placeholder({Expr(p.filters)}, DataType::float32(), "scale");

  // Padding reads the input's zero point: the quantized value of a real 0. int8 data moves
  // up by 128 into uint8, as VNNI's unsigned operand.
  auto unsignedValue = [&](Expr value) {
    if (params.dataType == u8) return value;
    return cast(u8, cast(DataType::int32(), value) + Expr(int32_t(128)));
  };
  int64_t top = p.paddingTop(), left = p.paddingLeft();
  int64_t paddedH = p.height + top + p.paddingBottom(), paddedW = p.width + left + p.paddingRight();
  te::Tensor padded = te::compute(
      {Expr(p.batch), Expr(channels / ib), Expr(paddedH), Expr(paddedW), Expr(ib)},
      [&](const std::vector<Var>& v) {
        Expr y = v[2], x = v[3];
        Expr inside = likely(y >= top && y < p.height + top) && likely(x >= left && x < p.width + left);
        Expr yy = min(max(y - top, Expr(0)), Expr(p.height - 1)), xx = min(max(x - left, Expr(0)), Expr(p.width - 1));
        // Padded channels read any real one: their weights are 0.
        Expr channel = v[1] * ib + v[4];
        if (channels != p.channels) channel = min(channel, Expr(p.channels - 1));
        Expr value = params.nchwInput ? data(v[0], channel, yy, xx) : data(v[0], v[1], yy, xx, v[4]);
        return select(inside, unsignedValue(value), makeConst(u8, double(params.unsignedDataZeroPoint())));
      },
      "data.pad", {"n", "co", "y", "x", "ci"}, "pad");

  // Channels as the packed weight groups them: block co of the input, quad cg within it, and
  // channel ci of the quad, so that ci is contiguous in both operands.
  IterVar co = te::reduceAxis(Expr(channels / ib), "co");
  IterVar r = te::reduceAxis(Expr(p.kernelH), "r");
  IterVar s = te::reduceAxis(Expr(p.kernelW), "s");
  IterVar cg = te::reduceAxis(Expr(ib / kChannelsPerLane), "cg");
  IterVar ci = te::reduceAxis(Expr(kChannelsPerLane), "ci");
  int64_t sh = p.strideAlongHeight(), sw = p.strideAlongWidth();
  te::Tensor acc = te::compute(
      {Expr(p.batch), Expr(params.paddedFilters() / kb), Expr(p.outHeight()), Expr(p.outWidth()), Expr(kb)},
      [&](const std::vector<Var>& v) {
        Expr n = v[0], ko = v[1], y = v[2], x = v[3], ki = v[4];
        Expr quad = Expr(co) * (ib / kChannelsPerLane) + cg;
        return te::sum(cast(i32, padded(n, co, y * sh + r * p.dilationH, x * sw + s * p.dilationW,
                                         Expr(cg) * kChannelsPerLane + ci)) *
                           cast(i32, weight(ko, quad, r, s, ki, ci)),
                       {co, r, s, cg, ci});
      },
      "conv.acc", {"n", "ko", "y", "x", "ki"}, "conv2d");
  auto requantized = [&](Expr accumulated, Expr k) {
    Expr q = requantize(accumulated + offset(k), scale(k), Expr(params.outputZeroPoint), params.outputType);
    return params.relu ? max(q, makeConst(params.outputType, double(params.outputZeroPoint))) : q;
  };
  te::Tensor out =
      params.nchwOutput
          ? te::compute(
                {Expr(p.batch), Expr(p.filters), Expr(p.outHeight()), Expr(p.outWidth())},
                [&](const std::vector<Var>& v) {
                  return requantized(acc(v[0], v[1] / kb, v[2], v[3], v[1] % kb), v[1]);
                },
                "conv", {"n", "k", "y", "x"}, "quantized")
          : te::compute(
                {Expr(p.batch), Expr(p.filters / kb), Expr(p.outHeight()), Expr(p.outWidth()), Expr(kb)},
                [&](const std::vector<Var>& v) {
                  return requantized(acc(v[0], v[1], v[2], v[3], v[4]), v[1] * kb + v[4]);
                },
                "conv", {"n", "ko", "y", "x", "ki"}, "quantized");

  Workload w;
  w.name = "int8_" + conv2dName(p) + (params.nchwInput ? "" : "_in" + std::to_string(ib) + "c") +
           (params.nchwOutput ? "" : "_out" + std::to_string(kb) + "c") + (params.relu ? "_relu" : "");
  if (params.dataType != u8 || params.outputType != u8)
    w.name += "_" + params.dataType.toString() + "_" + params.outputType.toString();
  w.inputs = {data, weight, offset, scale};
  w.outputs = {out};
  w.flops = 2.0 * double(p.batch) * double(p.filters) * double(p.outHeight()) * double(p.outWidth()) *
            double(p.channels) * double(p.kernelH) * double(p.kernelW);
  return w;
}

std::vector<int8_t> packInt8Conv2dWeight(const Int8Conv2dParams& params, const int8_t* oihw) {
  const Conv2dParams& p = params.conv;
  const int64_t kb = params.filterBlock, C = p.channels, R = p.kernelH, S = p.kernelW;
  const int64_t padded = params.paddedChannels();
  std::vector<int8_t> packed(size_t(params.paddedFilters() * padded * R * S));
  size_t at = 0;
  for (int64_t ko = 0; ko < params.paddedFilters() / kb; ++ko)
    for (int64_t quad = 0; quad < padded / kChannelsPerLane; ++quad)
      for (int64_t r = 0; r < R; ++r)
        for (int64_t s = 0; s < S; ++s)
          for (int64_t ki = 0; ki < kb; ++ki)
            for (int64_t ci = 0; ci < kChannelsPerLane; ++ci) {
              int64_t k = ko * kb + ki, c = quad * kChannelsPerLane + ci;
              packed[at++] = c < C && k < p.filters ? oihw[((k * C + c) * R + r) * S + s] : int8_t(0);
            }
  return packed;
}

bool int8Conv2dUsesTiles(const Int8Conv2dParams& params, const Target& target) {
  // A tile row holds one pixel's 64 channels. (A first layer's few channels could fill one
  // with the taps of a kernel row instead, 28 of 64 bytes for a 7x7 over 3 colours; measured
  // on ResNet-18's first layer that was slower than VNNI, 0.38 against 0.34 ms.)
  return hasIntegerTiles(target) && params.filterBlock % 16 == 0 && !params.nchwInput &&
         params.inputBlock == kTileChannels;
}

namespace {
// "data.pad": a copy made in parallel rows when it pads, regroups NCHW channels, shifts int8
// to uint8, or when a pixel tile does not divide the row (`tail`: inlined, the tile's guard
// would sit inside the product tensorize matches); else read in place.
void scheduleDataCopy(Schedule& s, const Int8Conv2dParams& params, bool tail, const Target& target,
                      std::vector<Status>& steps) {
  const Conv2dParams& p = params.conv;
  bool padded = p.paddingTop() || p.paddingLeft() || p.paddingBottom() || p.paddingRight();
  if (padded || tail || params.nchwInput || params.dataType != DataType::uint8()) {
    int64_t rows =
        p.batch * (params.paddedChannels() / params.inputBlock) * (p.height + p.paddingTop() + p.paddingBottom());
    parallelizeRows(s, "data.pad", {"n", "co", "y"}, rows, target, steps);
    steps.push_back(s.vectorize("data.pad", "ci"));
  } else {
    steps.push_back(s.computeInline("data.pad"));
  }
}

// The AMX schedule: per tile of pixels (of one output row, or of several when rows are short)
// the whole reduction in tile registers (tile_u8i8), then the requantization vectorized over
// the filter block from the accumulators it left in L1.
Expected<Schedule> tileInt8Conv2dSchedule(const Workload& workload, const Int8Conv2dParams& params,
                                          const Target& target) {
  const Conv2dParams& p = params.conv;
  // Pixels of a row fill at most two tiles (a tile is as fast with 14 rows as with 16). A row
  // shorter than a tile leaves its rows part empty and each weight tile feeds few products,
  // so such a tile takes several output rows, each its own tile (up to 64 pixels in all).
  int64_t xb = widestDivisor(p.outWidth(), 32);
  int64_t yb = p.outWidth() < 16 ? widestDivisor(p.outHeight(), 64 / p.outWidth()) : 1;
  Schedule s(workload.outputs);
  std::vector<Status> steps;
  if (params.nchwOutput) {
    // Each tile is copied out filter by filter, its pixels contiguous in NCHW.
    steps = {s.split("conv", "k", params.filterBlock, "ko", "ki"), s.split("conv", "y", yb, "yo", "yi"),
             s.split("conv", "x", xb, "xo", "xi"), s.reorder("conv", {"n", "ko", "yo", "xo", "ki", "yi", "xi"})};
  } else {
    steps = {s.split("conv", "y", yb, "yo", "yi"), s.split("conv", "x", xb, "xo", "xi"),
             s.reorder("conv", {"n", "ko", "yo", "xo", "yi", "xi", "ki"}), s.vectorize("conv", "ki")};
  }
  steps.insert(steps.end(), {
      s.fuse("conv", {"n", "ko", "yo"}, "rows"),
      s.parallel("conv", "rows"),
      s.computeAt("conv.acc", "conv", "xo"),
      s.reorder("conv.acc", {"y", "x", "ki", "co", "r", "s", "cg", "ci"}),
      s.tensorize("conv.acc", yb > 1 ? "y" : "x", "tile_u8i8"),
  });
  scheduleDataCopy(s, params, /*tail=*/false, target, steps);
  for (const Status& status : steps)
    if (!status) return status.error();
  return s;
}
}  // namespace

Expected<Schedule> defaultInt8Conv2dSchedule(const Workload& workload, const Int8Conv2dParams& params,
                                             const Target& target) {
  if (int8Conv2dUsesTiles(params, target)) return tileInt8Conv2dSchedule(workload, params, target);
  const Conv2dParams& p = params.conv;
  int64_t filterVectors = params.filterBlock / kLanes;
  int64_t xb = conv2dPixelBlock(p.outWidth(), filterVectors, target);
  const char* intrinsic = target.vectorLanes() >= 16 ? "dot_16x4_u8i8" : "dot_8x4_u8i8";
  int64_t lanes = findTensorIntrinsic(intrinsic)->lanes;
  Schedule s(workload.outputs);
  std::vector<Status> steps;
  if (params.nchwOutput) {
    // Each tile is copied out filter by filter, its pixels contiguous in NCHW.
    steps = {s.split("conv", "k", params.filterBlock, "ko", "ki"), s.split("conv", "x", xb, "xo", "xi"),
             s.reorder("conv", {"n", "ko", "y", "xo", "ki", "xi"})};
  } else {
    steps = {s.split("conv", "x", xb, "xo", "xi"), s.reorder("conv", {"n", "ko", "y", "xo", "xi", "ki"}),
             s.vectorize("conv", "ki")};
  }
  steps.insert(steps.end(), {
      s.fuse("conv", {"n", "ko", "y"}, "rows"),
      s.parallel("conv", "rows"),
      s.computeAt("conv.acc", "conv", "xo"),
      // Per tile: the reduction outermost, then pixels and filter vectors unrolled (their
      // accumulators stay in registers), each vector's 4 channels one instruction. The
      // reduction walks the packed weights in memory order ([C/4][R][S]): a tile streams
      // its filters' weights from L2 once, and striding across them instead (r, s outside
      // the channels) cost 10-30% on ResNet-18's 3x3 convolutions.
      s.split("conv.acc", "ki", lanes, "kv", "kl"),
      s.reorder("conv.acc", {"co", "cg", "r", "s", "x", "kv", "kl", "ci"}),
      s.unroll("conv.acc", "x"),
      s.unroll("conv.acc", "kv"),
      s.tensorize("conv.acc", "kl", intrinsic),
  });
  scheduleDataCopy(s, params, p.outWidth() % xb != 0, target, steps);
  for (const Status& status : steps)
    if (!status) return status.error();
  return s;
}

}  // namespace tessel
