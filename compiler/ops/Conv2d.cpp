// Conv2d compute and default schedules (dense/grouped in a filter-blocked layout, depthwise
// along the output width).
#include "compiler/ops/Conv2d.h"
#include "compiler/ops/GpuSchedules.h"

#include "compiler/ops/WinogradConv2d.h"
#include "core/ir/IROperators.h"

namespace tessel {

namespace {
// Filters per vector block: two vectors when there are enough filters. A block never
// straddles two groups, so every lane of a block reads the same input channels; with groups
// it is a divisor of the filters per group (no zero filters padded in between groups).
int64_t filterBlock(const Conv2dParams& p, const Target& target) {
  int64_t lanes = target.vectorLanes();
  int64_t perGroup = p.filtersPerGroup();
  if (perGroup % (2 * lanes) == 0) return 2 * lanes;
  if (perGroup % lanes == 0) return lanes;
  if (p.groups == 1) return std::min<int64_t>(p.filters, lanes);
  int64_t best = 1;
  for (int64_t b = 1; b <= std::min(perGroup, lanes); ++b)
    if (perGroup % b == 0) best = b;
  return best;
}

// Output pixels per register tile: a divisor of the output width with at most ~20
// accumulators (pixels * filter vectors). More would fill the register file once LLVM
// unrolls the reduction loop, and spills cost more than the extra reuse gains.
int64_t pixelBlock(int64_t outWidth, int64_t filterVectors, const Target& target) {
  int maxAccumulators = target.vectorLanes() >= 16 ? 20 : 10;
  int64_t limit = std::max<int64_t>(1, maxAccumulators / filterVectors);
  int64_t best = 1;
  for (int64_t x = 1; x <= limit; ++x)
    if (outWidth % x == 0) best = x;
  if (best * 2 <= limit && outWidth > limit) best = limit;  // no good divisor: accept a tail
  return best;
}

// Depthwise output pixels per tile along the width: the largest divisor of the output width
// up to four vectors (so no row ends in a scalar tail; LLVM splits an odd-sized vector into
// full ones plus a short one), or two vectors with a tail when the width has no such divisor.
int64_t depthwiseWidthBlock(const Conv2dParams& p, const Target& target) {
  int64_t lanes = target.vectorLanes(), width = p.outWidth();
  int64_t best = 1;
  for (int64_t x = 1; x <= std::min(width, 4 * lanes); ++x)
    if (width % x == 0) best = x;
  if (best < lanes && width > 2 * lanes) return 2 * lanes;
  return best;
}


// The zero-padded input of a channel-blocked input [n][c / b][y][x][b], in the same layout.
te::Tensor padBlockedInput(const Conv2dParams& p, const te::Tensor& data, int64_t block, DataType dtype) {
  return padBlockedConv2dInput(p, data, block, makeZero(dtype));
}

// The zero-padded input with its columns split by phase for a horizontal stride sw > 1:
// element [n, c, y, phase, q] is padded column q * sw + phase. A strided convolution then
// reads consecutive output pixels from consecutive elements (vector loads, no gathers).
te::Tensor padInputByPhase(const Conv2dParams& p, const te::Tensor& data, DataType dtype) {
  int64_t top = p.paddingTop(), left = p.paddingLeft(), sw = p.strideAlongWidth();
  int64_t paddedH = p.height + top + p.paddingBottom(), paddedW = p.width + left + p.paddingRight();
  int64_t columns = (paddedW + sw - 1) / sw;
  return te::compute(
      {Expr(p.batch), Expr(p.channels), Expr(paddedH), Expr(sw), Expr(columns)},
      [&](const std::vector<Var>& v) {
        Expr n = v[0], c = v[1], y = v[2], x = v[4] * sw + v[3];
        Expr inside = y >= top && y < p.height + top && x >= left && x < p.width + left;
        Expr yy = min(max(y - top, Expr(0)), Expr(p.height - 1));
        Expr xx = min(max(x - left, Expr(0)), Expr(p.width - 1));
        return select(inside, data(n, c, yy, xx), makeZero(dtype));
      },
      "data.pad", {"n", "c", "y", "phase", "x"}, "pad");
}

// A depthwise convolution (one filter per channel) over NCHW<b>c activations: each vector of
// the block is b channels of one pixel, so strides and narrow rows cost nothing extra. The
// weight is OIHW or packed in the same blocks ([C / b, 1, R, S, b]).
Workload blockedDepthwiseConv2d(const Conv2dParams& p, int64_t block, bool prepacked, DataType dtype,
                                const te::Tensor& data, const te::Tensor& weight, const te::Tensor& bias) {
  te::Tensor padded = padBlockedInput(p, data, block, dtype);
  int64_t sh = p.strideAlongHeight(), sw = p.strideAlongWidth();
  IterVar r = te::reduceAxis(Expr(p.kernelH), "r");
  IterVar s = te::reduceAxis(Expr(p.kernelW), "s");
  std::vector<Expr> shape = {Expr(p.batch), Expr(p.channels / block), Expr(p.outHeight()), Expr(p.outWidth()),
                             Expr(block)};
  te::Tensor acc = te::compute(
      shape,
      [&](const std::vector<Var>& v) {
        Expr n = v[0], co = v[1], y = v[2], x = v[3], ci = v[4];
        Expr tap = prepacked ? weight(co, 0, r, s, ci) : weight(co * block + ci, 0, r, s);
        return te::sum(padded(n, co, y * sh + r * p.dilationH, x * sw + s * p.dilationW, ci) * tap, {r, s});
      },
      "conv.acc", {"n", "co", "y", "x", "ci"}, "depthwise_conv2d");
  te::Tensor out = te::compute(
      shape,
      [&](const std::vector<Var>& v) {
        Expr value = acc(v[0], v[1], v[2], v[3], v[4]);
        return p.bias ? value + bias(v[1] * block + v[4]) : value;
      },
      "conv", {"n", "co", "y", "x", "ci"}, "bias");
  Workload w;
  w.outputs = {out};
  return w;
}

Workload depthwiseConv2d(const Conv2dParams& p, DataType dtype, const te::Tensor& data, const te::Tensor& weight,
                         const te::Tensor& bias) {
  int64_t multiplier = p.filtersPerGroup();
  int64_t sh = p.strideAlongHeight(), sw = p.strideAlongWidth();
  te::Tensor padded = sw == 1 ? padConv2dInput(p, data, dtype) : padInputByPhase(p, data, dtype);
  // Input column x * sw + s * dilationW, in whichever layout the padded input has.
  auto readPadded = [&](Expr n, Expr channel, Expr row, Expr x, Expr s) {
    if (sw == 1) return padded(n, channel, row, x + s * p.dilationW);
    Expr tap = s * p.dilationW;
    return padded(n, channel, row, floormod(tap, Expr(sw)), x + floordiv(tap, Expr(sw)));
  };
  IterVar r = te::reduceAxis(Expr(p.kernelH), "r");
  IterVar s = te::reduceAxis(Expr(p.kernelW), "s");
  te::Tensor acc = te::compute(
      {Expr(p.batch), Expr(p.filters), Expr(p.outHeight()), Expr(p.outWidth())},
      [&](Var n, Var k, Var y, Var x) {
        Expr channel = multiplier == 1 ? Expr(k) : k / multiplier;
        return te::sum(readPadded(n, channel, y * sh + r * p.dilationH, x, s) * weight(k, 0, r, s), {r, s});
      },
      "conv.acc", {"n", "k", "y", "x"}, "depthwise_conv2d");
  te::Tensor out = te::compute(
      {Expr(p.batch), Expr(p.filters), Expr(p.outHeight()), Expr(p.outWidth())},
      [&](Var n, Var k, Var y, Var x) { return p.bias ? acc(n, k, y, x) + bias(k) : acc(n, k, y, x); }, "conv",
      {"n", "k", "y", "x"}, "bias");
  Workload w;
  w.outputs = {out};
  return w;
}
}  // namespace

std::string Conv2dParams::validate() const {
  if (batch < 1 || channels < 1 || height < 1 || width < 1) return "input dimensions must be positive";
  if (filters < 1 || kernelH < 1 || kernelW < 1) return "filter count and kernel size must be positive";
  if (strideAlongHeight() < 1 || strideAlongWidth() < 1) return "stride must be positive";
  if (paddingTop() < 0 || paddingLeft() < 0 || paddingBottom() < 0 || paddingRight() < 0)
    return "padding must not be negative";
  if (dilationH < 1 || dilationW < 1) return "dilation must be positive";
  if (groups < 1) return "groups must be positive";
  if (channels % groups != 0 || filters % groups != 0)
    return "groups (" + std::to_string(groups) + ") must divide the channels (" + std::to_string(channels) +
           ") and the filters (" + std::to_string(filters) + ")";
  if (outHeight() < 1 || outWidth() < 1) return "the kernel is larger than the padded input";
  if (winogradTile != 0 && ((winogradTile != 2 && winogradTile != 4) || !winogradApplies(*this)))
    return "winograd_tile " + std::to_string(winogradTile) +
           " needs a tile of 2 or 4 and a dense 3x3 convolution of stride 1 whose output splits into its"
           " dilation's phases";
  return "";
}

Workload conv2d(const Conv2dParams& p, DataType dtype, const Target& target) {
  return conv2d(p, Conv2dWeightLayout::Plain, dtype, target);
}

Workload conv2d(const Conv2dParams& p, Conv2dWeightLayout layout, DataType dtype, const Target& target) {
  return conv2d(p, layout, Conv2dActivationLayout{}, dtype, target);
}

bool conv2dSupportsActivationLayout(const Conv2dParams& p, const Conv2dActivationLayout& layout,
                                    const Target& target) {
  if (layout == Conv2dActivationLayout{}) return true;
  if (p.isDepthwise())  // one filter per channel: blocked in and out, in the same blocks
    return p.filters == p.channels && layout.inputBlock > 0 && p.channels % layout.inputBlock == 0 &&
           layout.blockedOutput;
  if (p.groups != 1) return false;
  if (layout.inputBlock < 0 || (layout.inputBlock > 0 && p.channels % layout.inputBlock != 0)) return false;
  return !layout.blockedOutput || p.filters % filterBlock(p, target) == 0;
}

Workload conv2d(const Conv2dParams& p, Conv2dWeightLayout layout, const Conv2dActivationLayout& activations,
                DataType dtype, const Target& target) {
  TESSEL_ICHECK(p.validate().empty()) << "conv2d with invalid parameters: " << p.validate();
  if (target.kind != TargetKind::Cpu) return gpuConv2d(p, dtype);
  TESSEL_ICHECK(conv2dSupportsActivationLayout(p, activations, target))
      << "conv2d cannot read NCHW" << activations.inputBlock << "c or write blocked output for these parameters";
  if (p.winogradTile) {
    TESSEL_ICHECK(layout == Conv2dWeightLayout::Packed) << "a Winograd convolution reads its weight transformed";
    return winogradConv2d(p, activations, dtype, target);
  }
  int64_t cpg = p.channelsPerGroup();
  int64_t inputBlock = activations.inputBlock;
  // An NCHW depthwise convolution reads OIHW whichever layout was asked for.
  bool prepacked = layout == Conv2dWeightLayout::Packed && (!p.isDepthwise() || inputBlock > 0);
  te::Tensor data = inputBlock > 0 ? te::placeholder({Expr(p.batch), Expr(p.channels / inputBlock), Expr(p.height),
                                                      Expr(p.width), Expr(inputBlock)},
                                                     dtype, "data")
                                   : te::placeholder({Expr(p.batch), Expr(p.channels), Expr(p.height), Expr(p.width)},
                                                     dtype, "data");
  te::Tensor weight = prepacked ? te::placeholder(toExprs(conv2dPackedWeightShape(p, activations, target)), dtype,
                                                  "weight")
                                : te::placeholder({Expr(p.filters), Expr(cpg), Expr(p.kernelH), Expr(p.kernelW)},
                                                  dtype, "weight");
  te::Tensor bias = p.bias ? te::placeholder({Expr(p.filters)}, dtype, "bias") : te::Tensor();
  Workload w;
  if (p.isDepthwise() && inputBlock > 0) {
    w = blockedDepthwiseConv2d(p, inputBlock, prepacked, dtype, data, weight, bias);
  } else if (p.isDepthwise()) {
    w = depthwiseConv2d(p, dtype, data, weight, bias);
  } else {
    te::Tensor padded = inputBlock > 0 ? padBlockedInput(p, data, inputBlock, dtype) : padConv2dInput(p, data, dtype);
    int64_t kb = filterBlock(p, target);
    int64_t blocks = (p.filters + kb - 1) / kb;
    int64_t blocksPerGroup = p.filtersPerGroup() / kb;  // exact when groups > 1
    int64_t sh = p.strideAlongHeight(), sw = p.strideAlongWidth();
    te::Tensor packed = prepacked ? weight : te::compute(
        {Expr(blocks), Expr(cpg), Expr(p.kernelH), Expr(p.kernelW), Expr(kb)},
        [&](const std::vector<Var>& v) {
          Expr filter = v[0] * kb + v[4];
          if (p.filters % kb == 0) return weight(filter, v[1], v[2], v[3]);
          return select(filter < p.filters, weight(min(filter, Expr(p.filters - 1)), v[1], v[2], v[3]),
                        makeZero(dtype));
        },
        "weight.packed", {"ko", "c", "r", "s", "ki"}, "pack");
    IterVar r = te::reduceAxis(Expr(p.kernelH), "r");
    IterVar s = te::reduceAxis(Expr(p.kernelW), "s");
    // The reduction runs in a blocked layout, filters innermost, so a tile of accumulators is
    // contiguous vectors; the output copies it back to NCHW tile by tile (or keeps it).
    te::Tensor blocked;
    if (inputBlock > 0) {
      // Channels split as the input is: the reads of one channel block are contiguous.
      IterVar co = te::reduceAxis(Expr(p.channels / inputBlock), "co");
      IterVar ci = te::reduceAxis(Expr(inputBlock), "ci");
      blocked = te::compute(
          {Expr(p.batch), Expr(blocks), Expr(p.outHeight()), Expr(p.outWidth()), Expr(kb)},
          [&](const std::vector<Var>& v) {
            Expr n = v[0], ko = v[1], y = v[2], x = v[3], ki = v[4];
            return te::sum(padded(n, co, y * sh + r * p.dilationH, x * sw + s * p.dilationW, ci) *
                               packed(ko, Expr(co) * inputBlock + ci, r, s, ki),
                           {co, ci, r, s});
          },
          "conv.blocked", {"n", "ko", "y", "x", "ki"}, "conv2d");
    } else {
      IterVar c = te::reduceAxis(Expr(cpg), "c");
      blocked = te::compute(
          {Expr(p.batch), Expr(blocks), Expr(p.outHeight()), Expr(p.outWidth()), Expr(kb)},
          [&](const std::vector<Var>& v) {
            Expr n = v[0], ko = v[1], y = v[2], x = v[3], ki = v[4];
            Expr channel = p.groups == 1 ? Expr(c) : (ko / blocksPerGroup) * cpg + c;
            return te::sum(padded(n, channel, y * sh + r * p.dilationH, x * sw + s * p.dilationW) *
                               packed(ko, c, r, s, ki),
                           {c, r, s});
          },
          "conv.blocked", {"n", "ko", "y", "x", "ki"}, "conv2d");
    }
    te::Tensor out = activations.blockedOutput ? te::compute(
        {Expr(p.batch), Expr(blocks), Expr(p.outHeight()), Expr(p.outWidth()), Expr(kb)},
        [&](const std::vector<Var>& v) {
          Expr value = blocked(v[0], v[1], v[2], v[3], v[4]);
          return p.bias ? value + bias(v[1] * kb + v[4]) : value;
        },
        "conv", {"n", "ko", "y", "x", "ki"}, "bias") : te::compute(
        {Expr(p.batch), Expr(p.filters), Expr(p.outHeight()), Expr(p.outWidth())},
        [&](const std::vector<Var>& v) {
          Expr value = blocked(v[0], v[1] / kb, v[2], v[3], v[1] % kb);
          return p.bias ? value + bias(v[1]) : value;
        },
        "conv", {"n", "k", "y", "x"}, "layout");
    w.outputs = {out};
  }
  w.name = conv2dName(p) + (prepacked ? "_packed" : "");
  if (inputBlock > 0) w.name += "_in" + std::to_string(inputBlock) + "c";
  if (activations.blockedOutput) w.name += "_out" + std::to_string(conv2dFilterBlock(p, activations, target)) + "c";
  w.inputs = {data, weight};
  if (p.bias) w.inputs.push_back(bias);
  w.flops = 2.0 * double(p.batch) * double(p.filters) * double(p.outHeight()) * double(p.outWidth()) * double(cpg) *
            double(p.kernelH) * double(p.kernelW);
  if (p.bias) w.flops += double(p.batch) * double(p.filters) * double(p.outHeight()) * double(p.outWidth());
  return w;
}

int64_t conv2dFilterBlock(const Conv2dParams& p, const Target& target) { return filterBlock(p, target); }

te::Tensor padConv2dInput(const Conv2dParams& p, const te::Tensor& data, DataType dtype) {
  int64_t top = p.paddingTop(), left = p.paddingLeft();
  int64_t paddedH = p.height + top + p.paddingBottom(), paddedW = p.width + left + p.paddingRight();
  bool padsRows = top > 0 || p.paddingBottom() > 0, padsColumns = left > 0 || p.paddingRight() > 0;
  return te::compute(
      {Expr(p.batch), Expr(p.channels), Expr(paddedH), Expr(paddedW)},
      [&](Var n, Var c, Var y, Var x) {
        if (!padsRows && !padsColumns) return data(n, c, y, x);
        // One likely() per axis: loop partitioning then gives the interior rows and columns
        // their own loops in which the select is gone.
        Expr inside;
        if (padsRows) inside = likely(y >= top && y < p.height + top);
        if (padsColumns) {
          Expr columns = likely(x >= left && x < p.width + left);
          inside = inside.defined() ? inside && columns : columns;
        }
        // Clamp the read so it stays in bounds even where the value is discarded.
        Expr yy = padsRows ? min(max(y - top, Expr(0)), Expr(p.height - 1)) : Expr(y);
        Expr xx = padsColumns ? min(max(x - left, Expr(0)), Expr(p.width - 1)) : Expr(x);
        return select(inside, data(n, c, yy, xx), makeZero(dtype));
      },
      "data.pad", {"n", "c", "y", "x"}, "pad");
}

te::Tensor padBlockedConv2dInput(const Conv2dParams& p, const te::Tensor& data, int64_t block, Expr padValue) {
  int64_t top = p.paddingTop(), left = p.paddingLeft();
  int64_t paddedH = p.height + top + p.paddingBottom(), paddedW = p.width + left + p.paddingRight();
  bool padsRows = top > 0 || p.paddingBottom() > 0, padsColumns = left > 0 || p.paddingRight() > 0;
  return te::compute(
      {Expr(p.batch), Expr(p.channels / block), Expr(paddedH), Expr(paddedW), Expr(block)},
      [&](const std::vector<Var>& v) {
        Expr n = v[0], co = v[1], y = v[2], x = v[3], ci = v[4];
        if (!padsRows && !padsColumns) return data(n, co, y, x, ci);
        Expr inside;
        if (padsRows) inside = likely(y >= top && y < p.height + top);
        if (padsColumns) {
          Expr columns = likely(x >= left && x < p.width + left);
          inside = inside.defined() ? inside && columns : columns;
        }
        Expr yy = padsRows ? min(max(y - top, Expr(0)), Expr(p.height - 1)) : y;
        Expr xx = padsColumns ? min(max(x - left, Expr(0)), Expr(p.width - 1)) : x;
        return select(inside, data(n, co, yy, xx, ci), padValue);
      },
      "data.pad", {"n", "co", "y", "x", "ci"}, "pad");
}

std::string conv2dName(const Conv2dParams& p) {
  std::string name = "conv2d_n" + std::to_string(p.batch) + "c" + std::to_string(p.channels) + "h" +
                     std::to_string(p.height) + "w" + std::to_string(p.width) + "k" + std::to_string(p.filters) + "r" +
                     std::to_string(p.kernelH) + "s" + std::to_string(p.kernelW) + "st" + std::to_string(p.stride) +
                     "p" + std::to_string(p.pad);
  // Only what differs from the symmetric case, so existing names stay the same.
  if (p.strideAlongHeight() != p.stride || p.strideAlongWidth() != p.stride)
    name += "_st" + std::to_string(p.strideAlongHeight()) + "x" + std::to_string(p.strideAlongWidth());
  if (p.paddingTop() != p.pad || p.paddingLeft() != p.pad || p.paddingBottom() != p.pad || p.paddingRight() != p.pad)
    name += "_p" + std::to_string(p.paddingTop()) + "_" + std::to_string(p.paddingLeft()) + "_" +
            std::to_string(p.paddingBottom()) + "_" + std::to_string(p.paddingRight());
  if (p.dilationH != 1 || p.dilationW != 1)
    name += "_d" + std::to_string(p.dilationH) + "x" + std::to_string(p.dilationW);
  if (p.groups != 1) name += "_g" + std::to_string(p.groups);
  if (p.bias) name += "_bias";
  return name;
}

int64_t conv2dPixelBlock(int64_t outWidth, int64_t filterVectors, const Target& target) {
  return pixelBlock(outWidth, filterVectors, target);
}

int64_t conv2dFilterBlock(const Conv2dParams& p, const Conv2dActivationLayout& activations, const Target& target) {
  if (p.isDepthwise() && activations.inputBlock > 0) return activations.inputBlock;
  return filterBlock(p, target);
}

std::vector<int64_t> conv2dPackedWeightShape(const Conv2dParams& p, const Target& target) {
  return conv2dPackedWeightShape(p, Conv2dActivationLayout{}, target);
}

std::vector<int64_t> conv2dPackedWeightShape(const Conv2dParams& p, const Conv2dActivationLayout& activations,
                                             const Target& target) {
  if (p.winogradTile) return winogradPackedWeightShape(p, target);
  int64_t kb = conv2dFilterBlock(p, activations, target);
  return {(p.filters + kb - 1) / kb, p.channelsPerGroup(), p.kernelH, p.kernelW, kb};
}

std::string conv2dPackedWeightLayout(const Conv2dParams& p, const Target& target) {
  return conv2dPackedWeightLayout(p, Conv2dActivationLayout{}, target);
}

std::string conv2dPackedWeightLayout(const Conv2dParams& p, const Conv2dActivationLayout& activations,
                                     const Target& target) {
  std::string blocks = std::to_string(conv2dFilterBlock(p, activations, target)) + "o";
  // [K / kb][alpha][alpha][C][kb]: each filter's transformed taps before its channels.
  std::string positions = std::to_string(p.winogradTile + 2);
  if (p.winogradTile) return "O" + positions + "x" + positions + "I" + blocks;
  return "OIHW" + blocks;
}

namespace {
template <class T>
void packWeightBlocks(const Conv2dParams& p, int64_t kb, const T* source, T* packed) {
  int64_t taps = p.channelsPerGroup() * p.kernelH * p.kernelW;  // one filter's weights, in (c, r, s) order
  int64_t blocks = (p.filters + kb - 1) / kb;
  for (int64_t block = 0; block < blocks; ++block)
    for (int64_t tap = 0; tap < taps; ++tap)
      for (int64_t lane = 0; lane < kb; ++lane) {
        int64_t filter = block * kb + lane;
        packed[(block * taps + tap) * kb + lane] = filter < p.filters ? source[filter * taps + tap] : T(0);
      }
}
}  // namespace

runtime::NDArray packConv2dWeight(const Conv2dParams& p, const runtime::NDArray& weight, const Target& target) {
  return packConv2dWeight(p, Conv2dActivationLayout{}, weight, target);
}

runtime::NDArray packConv2dWeight(const Conv2dParams& p, const Conv2dActivationLayout& activations,
                                  const runtime::NDArray& weight, const Target& target) {
  TESSEL_ICHECK(weight.defined() && weight.shape() == std::vector<int64_t>({p.filters, p.channelsPerGroup(),
                                                                              p.kernelH, p.kernelW}))
      << "packConv2dWeight: the weight is not [K, C/G, R, S] of the convolution";
  if (p.isDepthwise() && activations.inputBlock == 0) return weight;
  if (p.winogradTile) return packWinogradWeight(p, weight, target);
  runtime::NDArray packed = runtime::NDArray::empty(conv2dPackedWeightShape(p, activations, target), weight.dtype());
  int64_t kb = conv2dFilterBlock(p, activations, target);
  if (weight.dtype() == runtime::DataType::float32())
    packWeightBlocks(p, kb, weight.dataAs<float>(), packed.dataAs<float>());
  else if (weight.dtype() == runtime::DataType::float64())
    packWeightBlocks(p, kb, weight.dataAs<double>(), packed.dataAs<double>());
  else
    TESSEL_ICHECK(false) << "packConv2dWeight: unsupported element type " << weight.dtype().toString();
  return packed;
}

Expected<Workload> checkedConv2d(const Conv2dParams& p, DataType dtype, const Target& target) {
  if (std::string problem = p.validate(); !problem.empty())
    return Diagnostic{problem, "Conv", 0, 0, "check the kernel shape, strides, pads, dilations and group"};
  return conv2d(p, dtype, target);
}

namespace {
Expected<Schedule> depthwiseSchedule(const Workload& workload, const Conv2dParams& p, const Target& target) {
  int64_t xb = depthwiseWidthBlock(p, target);
  // Rows per tile: narrow rows (MobileNet's 14x14 and 7x7 layers) take several per tile, so
  // the zeroing, stores and loop overhead of a tile are shared by up to 8 accumulator vectors.
  int64_t vectorsPerRow = (xb + target.vectorLanes() - 1) / target.vectorLanes();
  int64_t yb = 1;
  for (int64_t y = 1; y * vectorsPerRow <= 8 && y <= p.outHeight(); ++y)
    if (p.outHeight() % y == 0) yb = y;
  Schedule s(workload.outputs);
  auto steps = {
      // The accumulators for a tile of yb x xb pixels live in registers (conv.acc.local);
      // the bias is added as they are stored. One task per row block of each channel.
      s.cacheWrite("conv.acc", "local", "conv.acc.local"),
      s.computeInline("conv.acc"),
      s.split("conv", "y", yb, "yo", "yi"),
      s.split("conv", "x", xb, "xo", "xi"),
      s.reorder("conv", {"n", "k", "yo", "xo", "yi", "xi"}),
      s.fuse("conv", {"n", "k", "yo"}, "rows"),
      s.parallel("conv", "rows"),
      s.vectorize("conv", "xi"),
      s.computeAt("conv.acc.local", "conv", "xo"),
      // Per tile: kernel taps outermost and unrolled, rows unrolled, pixels as vector lanes.
      s.reorder("conv.acc.local", {"r", "s", "y", "x"}),
      s.unroll("conv.acc.local", "r"),
      s.unroll("conv.acc.local", "s"),
      s.unroll("conv.acc.local", "y"),
      s.vectorize("conv.acc.local", "x"),
      s.parallel("data.pad", "c"),
  };
  for (const Status& status : steps)
    if (!status) return status.error();
  return s;
}

// Output rows per task of a blocked depthwise convolution. Each task pads the input rows its
// band reads into a buffer of its own, so bands overlap by the kernel's height less the
// stride: the band grows (through divisors of the output height) until it pads at most 1.5
// input rows per row it consumes, while its buffer stays within a quarter of L2 and there
// are tasks enough to keep the cores busy.
int64_t depthwiseRowBand(const Conv2dParams& p, int64_t block, const Target& target) {
  int64_t sh = p.strideAlongHeight(), reach = p.dilationH * (p.kernelH - 1) + 1;
  int64_t paddedWidth = p.width + p.paddingLeft() + p.paddingRight();
  int64_t rowBytes = paddedWidth * block * 4;
  int64_t budget = target.l2CacheBytes > 0 ? target.l2CacheBytes / 4 : 256 * 1024;
  int64_t blocks = p.batch * (p.channels / block);
  int64_t band = 1;
  for (int64_t yb = 1; yb <= p.outHeight(); ++yb) {
    if (p.outHeight() % yb != 0) continue;
    int64_t window = (yb - 1) * sh + reach;
    if (yb > 1 && (window * rowBytes > budget || blocks * (p.outHeight() / yb) < 4 * target.cores)) break;
    band = yb;
    if (2 * window <= 3 * yb * sh) break;
  }
  return band;
}

// Depthwise over NCHW<b>c: accumulators for a segment of output pixels times the block's
// vectors in registers, the kernel taps unrolled, bands of rows of every channel block in
// parallel, each padding the input rows it reads into a buffer of its own (padding the whole
// input first costs a pass over memory and a second parallel loop).
Expected<Schedule> blockedDepthwiseSchedule(const Workload& workload, const Conv2dParams& p, int64_t block,
                                            const Target& target) {
  int64_t vectorsPerPixel = (block + target.vectorLanes() - 1) / target.vectorLanes();
  int64_t xb = pixelBlock(p.outWidth(), vectorsPerPixel, target);
  int64_t yb = depthwiseRowBand(p, block, target);
  bool padded = p.paddingTop() || p.paddingLeft() || p.paddingBottom() || p.paddingRight();
  Schedule s(workload.outputs);
  std::vector<Status> steps = {
      s.cacheWrite("conv.acc", "local", "conv.acc.local"),
      s.computeInline("conv.acc"),
      s.split("conv", "y", yb, "yo", "yi"),
      s.split("conv", "x", xb, "xo", "xi"),
      s.reorder("conv", {"n", "co", "yo", "yi", "xo", "xi", "ci"}),
      s.fuse("conv", {"n", "co", "yo"}, "rows"),
      s.parallel("conv", "rows"),
      s.vectorize("conv", "ci"),
      s.computeAt("conv.acc.local", "conv", "xo"),
      s.reorder("conv.acc.local", {"r", "s", "x", "ci"}),
      s.unroll("conv.acc.local", "r"),
      s.unroll("conv.acc.local", "s"),
      s.unroll("conv.acc.local", "x"),
      s.vectorize("conv.acc.local", "ci"),
  };
  if (padded) {
    steps.push_back(s.computeAt("data.pad", "conv", "rows"));
    steps.push_back(s.vectorize("data.pad", "ci"));
  } else {
    steps.push_back(s.computeInline("data.pad"));
  }
  for (const Status& status : steps)
    if (!status) return status.error();
  return s;
}
}  // namespace

Expected<Schedule> defaultConv2dSchedule(const Workload& workload, const Conv2dParams& p,
                                         const Target& target) {
  if (target.kind != TargetKind::Cpu) return defaultGpuConv2dSchedule(workload, p, target);
  return defaultConv2dSchedule(workload, p, Conv2dActivationLayout{}, target);
}

namespace {
// The dense schedule over blocked activations: the same tiles as the NCHW one, the output
// written tile by tile in the layout the accumulators already have.
Expected<Schedule> blockedActivationSchedule(const Workload& workload, const Conv2dParams& p,
                                             const Conv2dActivationLayout& activations, const Target& target) {
  int64_t kb = filterBlock(p, target);
  int64_t filterVectors = std::max<int64_t>(1, kb / target.vectorLanes());
  int64_t xb = pixelBlock(p.outWidth(), filterVectors, target);
  Schedule s(workload.outputs);
  std::vector<Status> steps;
  if (activations.blockedOutput) {
    steps = {s.split("conv", "x", xb, "xo", "xi"), s.reorder("conv", {"n", "ko", "y", "xo", "xi", "ki"}),
             s.fuse("conv", {"n", "ko", "y"}, "rows"), s.parallel("conv", "rows"), s.vectorize("conv", "ki")};
  } else {
    steps = {s.split("conv", "k", kb, "ko", "ki"), s.split("conv", "x", xb, "xo", "xi"),
             s.reorder("conv", {"n", "ko", "y", "xo", "ki", "xi"}), s.fuse("conv", {"n", "ko", "y"}, "rows"),
             s.parallel("conv", "rows")};
  }
  steps.push_back(s.computeAt("conv.blocked", "conv", "xo"));
  // Channels outside the taps, as the packed weight is laid out ([ko][c][r][s][kb]): the
  // weights stream in order. A blocked input's block lanes go inside the taps instead, so
  // each tap broadcasts consecutive floats of one pixel: with them outside, LLVM spilled an
  // accumulator of Inception v3's 5x5 convolutions (48 -> 64 filters, 35x35) into their
  // innermost loop, 2.2x slower.
  if (activations.inputBlock > 0)
    steps.push_back(s.reorder("conv.blocked", {"co", "r", "s", "ci", "x", "ki"}));
  else
    steps.push_back(s.reorder("conv.blocked", {"c", "r", "s", "x", "ki"}));
  steps.push_back(s.unroll("conv.blocked", "x"));
  steps.push_back(s.vectorize("conv.blocked", "ki"));
  for (const Status& status : steps)
    if (!status) return status.error();
  bool padded = p.paddingTop() || p.paddingLeft() || p.paddingBottom() || p.paddingRight();
  if (!padded) {
    steps = {s.computeInline("data.pad")};
  } else if (activations.inputBlock > 0) {
    // Blocked padding copies whole channel blocks: rows in parallel, the block as vector lanes.
    steps.clear();
    int64_t paddedRows = p.height + p.paddingTop() + p.paddingBottom();
    parallelizeRows(s, "data.pad", {"n", "co", "y"}, p.batch * (p.channels / activations.inputBlock) * paddedRows,
                    target, steps);
    steps.push_back(s.vectorize("data.pad", "ci"));
  } else {
    steps = {s.parallel("data.pad", "c")};
  }
  for (const Status& status : steps)
    if (!status) return status.error();
  if (s.findStage("weight.packed")) {
    for (const Status& status : {s.parallel("weight.packed", "ko"), s.vectorize("weight.packed", "ki")})
      if (!status) return status.error();
  }
  return s;
}
}  // namespace

Expected<Schedule> defaultConv2dSchedule(const Workload& workload, const Conv2dParams& p,
                                         const Conv2dActivationLayout& activations, const Target& target) {
  if (p.winogradTile) return defaultWinogradConv2dSchedule(workload, p, activations, target);
  if (p.isDepthwise() && activations.inputBlock > 0)
    return blockedDepthwiseSchedule(workload, p, activations.inputBlock, target);
  if (p.isDepthwise()) return depthwiseSchedule(workload, p, target);
  if (!(activations == Conv2dActivationLayout{})) return blockedActivationSchedule(workload, p, activations, target);
  int64_t kb = filterBlock(p, target);
  int64_t filterVectors = std::max<int64_t>(1, kb / target.vectorLanes());
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
      // The tile goes out a filter at a time as a vector of its pixels (contiguous in NCHW):
      // copied element by element, it cost more than computing it where the reduction is
      // short (3 input channels: 28 against 177 GFLOP/s for 8x3x64x64 -> 64).
      s.vectorize("conv", "xi"),
  };
  for (const Status& status : steps)
    if (!status) return status.error();
  // Without padding "data.pad" is a plain copy of the input (most 1x1 convolutions): read the
  // input in place instead of copying all of it on every call.
  bool padded = p.paddingTop() || p.paddingLeft() || p.paddingBottom() || p.paddingRight();
  if (Status placed = padded ? s.parallel("data.pad", "c") : s.computeInline("data.pad"); !placed)
    return placed.error();
  if (s.findStage("weight.packed")) {  // packed per call (a prepacked weight has no such stage)
    for (const Status& status : {s.parallel("weight.packed", "ko"), s.vectorize("weight.packed", "ki")})
      if (!status) return status.error();
  }
  return s;
}

}  // namespace tessel
