// Direct N-D convolution compute and default schedule.
#include "compiler/ops/DirectConv.h"

#include "core/ir/IROperators.h"

namespace tessel {

std::vector<int64_t> DirectConvParams::outputShape() const {
  std::vector<int64_t> shape = {inputShape[0], weightShape[0]};
  for (size_t d = 0; d + 2 < inputShape.size(); ++d)
    shape.push_back((inputShape[d + 2] + padsBegin[d] + padsEnd[d] - dilations[d] * (weightShape[d + 2] - 1) - 1) /
                        strides[d] +
                    1);
  return shape;
}

std::string DirectConvParams::validate() const {
  if (std::string problem = convOperandProblem(inputShape, weightShape); !problem.empty()) return problem;
  size_t rank = inputShape.size() - 2;
  for (const auto* list : {&strides, &dilations, &padsBegin, &padsEnd})
    if (list->size() != rank) return "strides, dilations and pads need one entry per spatial axis";
  if (groups < 1 || inputShape[1] % groups != 0 || weightShape[0] % groups != 0)
    return "group must divide the input channels and the filters";
  if (weightShape[1] != inputShape[1] / groups) return "the weight must have C / group input channels per filter";
  for (size_t d = 0; d < rank; ++d) {
    if (strides[d] < 1 || dilations[d] < 1) return "strides and dilations must be positive";
    if (padsBegin[d] < 0 || padsEnd[d] < 0) return "pads must not be negative";
  }
  for (int64_t d : outputShape())
    if (d < 1) return "the kernel is larger than the padded input";
  return "";
}

Expected<Workload> directConv(const DirectConvParams& p, DataType inputType, DataType weightType,
                              DataType accumulate) {
  if (std::string problem = p.validate(); !problem.empty()) return Diagnostic{problem, "conv", 0, 0, ""};
  size_t rank = p.inputShape.size() - 2;
  std::vector<int64_t> outShape = p.outputShape();
  int64_t channelsPerGroup = p.weightShape[1], filtersPerGroup = p.weightShape[0] / p.groups;
  te::Tensor x = te::placeholder(toExprs(p.inputShape), inputType, "x");
  te::Tensor w = te::placeholder(toExprs(p.weightShape), weightType, "w");
  te::Tensor bias = p.bias ? te::placeholder({Expr(outShape[1])}, accumulate, "bias") : te::Tensor();
  te::Tensor xz = p.inputZeroPoint ? te::placeholder(toExprs(*p.inputZeroPoint), inputType, "x_zero_point") : te::Tensor();
  te::Tensor wz =
      p.weightZeroPoint ? te::placeholder(toExprs(*p.weightZeroPoint), weightType, "w_zero_point") : te::Tensor();
  auto zeroPointAt = [](const te::Tensor& zeroPoint, Expr channel) {
    std::vector<Expr> at;
    if (zeroPoint.ndim() == 1) at.push_back(*asConstInt(zeroPoint.shape()[0]) == 1 ? Expr(int64_t(0)) : channel);
    return zeroPoint(at);
  };
  IterVar c = te::reduceAxis(Expr(channelsPerGroup), "c");
  std::vector<IterVar> taps, reduceAxes = {c};
  std::vector<std::string> names = {"n", "m"};
  for (size_t d = 0; d < rank; ++d) {
    taps.push_back(te::reduceAxis(Expr(p.weightShape[d + 2]), "k" + std::to_string(d)));
    reduceAxes.push_back(taps.back());
    names.push_back("o" + std::to_string(d));
  }
  te::Tensor sum = te::compute(
      toExprs(outShape),
      [&](const std::vector<Var>& at) {
        Expr channel = floordiv(at[1], Expr(filtersPerGroup)) * channelsPerGroup + c.var();
        std::vector<Expr> xi = {at[0], channel}, wi = {at[1], c.var()};
        Expr inside;
        for (size_t d = 0; d < rank; ++d) {
          Expr position = at[d + 2] * p.strides[d] + taps[d].var() * p.dilations[d] - p.padsBegin[d];
          int64_t extent = p.inputShape[d + 2];
          if (p.padsBegin[d] > 0 || p.padsEnd[d] > 0) {
            Expr axisInside = likely(position >= Expr(int64_t(0)) && position < Expr(extent));
            inside = inside.defined() ? inside && axisInside : axisInside;
            position = min(max(position, Expr(int64_t(0))), Expr(extent - 1));
          }
          xi.push_back(position);
          wi.push_back(taps[d].var());
        }
        Expr xv = cast(accumulate, x(xi)), wv = cast(accumulate, w(wi));
        if (xz.defined()) xv = xv - cast(accumulate, zeroPointAt(xz, at[1]));
        if (wz.defined()) wv = wv - cast(accumulate, zeroPointAt(wz, at[1]));
        Expr product = xv * wv;
        if (inside.defined()) product = select(inside, product, makeZero(accumulate));
        return te::sum(product, reduceAxes);
      },
      p.bias ? "conv.sum" : "conv", names, "conv");
  Workload wl;
  wl.name = "direct_conv_" + shapeName(p.inputShape) + "_w" + shapeName(p.weightShape) + "_s" + shapeName(p.strides) +
            "_d" + shapeName(p.dilations) + "_p" + shapeName(p.padsBegin) + "_" + shapeName(p.padsEnd) + "_g" +
            std::to_string(p.groups) + (p.bias ? "_bias" : "") + (xz.defined() || wz.defined() ? "_zp" : "") + "_" +
            inputType.toString() + "_" + accumulate.toString();
  wl.inputs = {x, w};
  te::Tensor out = sum;
  if (p.bias) {
    out = te::compute(
        toExprs(outShape), [&](const std::vector<Var>& at) { return sum(asExprs(at)) + bias(at[1]); }, "conv", names,
        "conv");
    wl.inputs.push_back(bias);
  }
  if (xz.defined()) wl.inputs.push_back(xz);
  if (wz.defined()) wl.inputs.push_back(wz);
  wl.outputs = {out};
  wl.flops = 2.0 * double(elementCount(outShape)) * double(elementCount(p.weightShape) / p.weightShape[0]);
  return wl;
}

Expected<Schedule> defaultDirectConvSchedule(const Workload& workload, const DirectConvParams& p,
                                             const Target& target) {
  Schedule s(workload.outputs);
  if (!s.findStage("conv")) return Diagnostic{"the workload has no stage named 'conv'", workload.name, 0, 0, ""};
  std::vector<int64_t> outShape = p.outputShape();
  size_t rank = outShape.size() - 2;
  std::vector<Status> steps;
  std::string accumulator = s.findStage("conv.sum") ? "conv.sum" : "conv";
  parallelizeRows(s, "conv", {"n", "m"}, outShape[0] * outShape[1], target, steps);
  std::string inner = "o" + std::to_string(rank - 1);
  bool vectorize = p.strides[rank - 1] == 1 && outShape.back() >= target.vectorLanes();
  if (accumulator == "conv.sum") {
    // The sums of one output row are accumulated right before the bias is added to them.
    bool fusedPlanes = outShape[0] * outShape[1] >= 2 && target.cores >= 2;  // see parallelizeRows
    std::string row = rank > 1 ? "o" + std::to_string(rank - 2) : (fusedPlanes ? "rows" : "m");
    steps.push_back(s.computeAt("conv.sum", "conv", row));
  }
  if (vectorize) {
    steps.push_back(s.split(accumulator, inner, target.vectorLanes(), inner + "o", inner + "i"));
    std::vector<std::string> order = {inner + "o", "c"};
    for (size_t d = 0; d < rank; ++d) order.push_back("k" + std::to_string(d));
    order.push_back(inner + "i");
    steps.push_back(s.reorder(accumulator, order));
    steps.push_back(s.vectorize(accumulator, inner + "i"));
  }
  for (const Status& status : steps)
    if (!status) return status.error();
  return s;
}

}  // namespace tessel
