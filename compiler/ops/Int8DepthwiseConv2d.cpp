// The int8 depthwise convolution: compute, weight packing and default schedule.
#include "compiler/ops/Int8DepthwiseConv2d.h"

#include "compiler/ops/Quantized.h"
#include "core/ir/IROperators.h"

namespace tessel {

std::vector<int64_t> Int8DepthwiseConv2dParams::weightShape() const {
  return {conv.channels / block, conv.kernelH, conv.kernelW, block};
}

std::string Int8DepthwiseConv2dParams::validate() const {
  if (std::string problem = conv.validate(); !problem.empty()) return problem;
  if (!conv.isDepthwise() || conv.filters != conv.channels)
    return "the int8 depthwise kernel takes one filter per channel (groups == channels == filters)";
  if (block <= 0 || conv.channels % block != 0)
    return "block " + std::to_string(block) + " does not divide " + std::to_string(conv.channels) + " channels";
  for (DataType type : {dataType, outputType})
    if (type != DataType::uint8() && type != DataType::int8()) return "the data and output must be uint8 or int8";
  if (!zeroPointFits(dataType, dataZeroPoint) || !zeroPointFits(outputType, outputZeroPoint))
    return "a zero point lies outside its tensor's type";
  return "";
}

Workload int8DepthwiseConv2d(const Int8DepthwiseConv2dParams& params) {
  TESSEL_ICHECK(params.validate().empty()) << "int8DepthwiseConv2d: " << params.validate();
  const Conv2dParams& p = params.conv;
  const int64_t b = params.block;
  DataType i32 = DataType::int32();
  te::Tensor data = te::placeholder({Expr(p.batch), Expr(p.channels / b), Expr(p.height), Expr(p.width), Expr(b)},
                                    params.dataType, "data");
  te::Tensor weight = te::placeholder(toExprs(params.weightShape()), DataType::int8(), "weight");
  te::Tensor offset = te::placeholder({Expr(p.channels)}, i32, "offset");
  te::Tensor scale = te::placeholder({Expr(p.channels)}, DataType::float32(), "scale");

  // Padding reads the data's zero point (the offset takes it out again, as for real data).
  te::Tensor padded =
      padBlockedConv2dInput(p, data, b, makeConst(params.dataType, double(params.dataZeroPoint)));

  int64_t sh = p.strideAlongHeight(), sw = p.strideAlongWidth();
  IterVar r = te::reduceAxis(Expr(p.kernelH), "r");
  IterVar s = te::reduceAxis(Expr(p.kernelW), "s");
  std::vector<Expr> shape = {Expr(p.batch), Expr(p.channels / b), Expr(p.outHeight()), Expr(p.outWidth()), Expr(b)};
  te::Tensor acc = te::compute(
      shape,
      [&](const std::vector<Var>& v) {
        Expr n = v[0], co = v[1], y = v[2], x = v[3], ci = v[4];
        Expr pixel = padded(n, co, y * sh + r * p.dilationH, x * sw + s * p.dilationW, ci);
        return te::sum(cast(i32, pixel) * cast(i32, weight(co, r, s, ci)), {r, s});
      },
      "conv.acc", {"n", "co", "y", "x", "ci"}, "depthwise_conv2d");
  te::Tensor out = te::compute(
      shape,
      [&](const std::vector<Var>& v) {
        Expr c = v[1] * b + v[4];
        Expr q = requantize(acc(v[0], v[1], v[2], v[3], v[4]) + offset(c), scale(c), Expr(params.outputZeroPoint),
                            params.outputType);
        return params.relu ? max(q, makeConst(params.outputType, double(params.outputZeroPoint))) : q;
      },
      "conv", {"n", "co", "y", "x", "ci"}, "quantized");

  Workload w;
  w.name = "int8_depthwise_" + conv2dName(p) + "_in" + std::to_string(b) + "c" + (params.relu ? "_relu" : "");
  if (params.dataType != DataType::uint8() || params.outputType != DataType::uint8())
    w.name += "_" + params.dataType.toString() + "_" + params.outputType.toString();
  w.inputs = {data, weight, offset, scale};
  w.outputs = {out};
  w.flops = 2.0 * double(p.batch) * double(p.channels) * double(p.outHeight()) * double(p.outWidth()) *
            double(p.kernelH) * double(p.kernelW);
  return w;
}

std::vector<int8_t> packInt8DepthwiseWeight(const Int8DepthwiseConv2dParams& params, const int8_t* oihw) {
  const Conv2dParams& p = params.conv;
  const int64_t b = params.block, R = p.kernelH, S = p.kernelW;
  std::vector<int8_t> packed(size_t(p.channels * R * S));
  size_t at = 0;
  for (int64_t co = 0; co < p.channels / b; ++co)
    for (int64_t r = 0; r < R; ++r)
      for (int64_t s = 0; s < S; ++s)
        for (int64_t ci = 0; ci < b; ++ci) packed[at++] = oihw[((co * b + ci) * R + r) * S + s];
  return packed;
}

Expected<Schedule> defaultInt8DepthwiseConv2dSchedule(const Workload& workload, const Int8DepthwiseConv2dParams& params,
                                                      const Target& target) {
  return defaultConv2dSchedule(workload, params.conv, Conv2dActivationLayout{params.block, true}, target);
}

}  // namespace tessel
