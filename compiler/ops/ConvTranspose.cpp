// ConvTranspose compute and default schedule.
#include "compiler/ops/ConvTranspose.h"

#include "core/ir/IROperators.h"

namespace tessel {

std::vector<int64_t> ConvTransposeParams::outputShape() const {
  std::vector<int64_t> shape = {inputShape[0], weightShape[1] * groups};
  for (size_t d = 0; d + 2 < inputShape.size(); ++d)
    shape.push_back(strides[d] * (inputShape[d + 2] - 1) + outputPadding[d] + dilations[d] * (weightShape[d + 2] - 1) +
                    1 - padsBegin[d] - padsEnd[d]);
  return shape;
}

std::string ConvTransposeParams::validate() const {
  if (std::string problem = convOperandProblem(inputShape, weightShape); !problem.empty()) return problem;
  size_t rank = inputShape.size() - 2;
  for (const auto* list : {&strides, &dilations, &padsBegin, &padsEnd, &outputPadding})
    if (list->size() != rank) return "strides, dilations, pads and output_padding need one entry per spatial axis";
  if (groups < 1 || inputShape[1] % groups != 0) return "group must divide the input channels";
  if (weightShape[0] != inputShape[1]) return "the weight's first axis must equal the input channels";
  for (size_t d = 0; d < rank; ++d) {
    if (strides[d] < 1 || dilations[d] < 1) return "strides and dilations must be positive";
    // Negative pads are allowed: they extend the output (ONNX output_shape larger than natural).
    if (outputPadding[d] < 0) return "output_padding must not be negative";
  }
  for (int64_t d : outputShape())
    if (d < 1) return "the padding removes the whole output";
  return "";
}

Expected<Workload> convTranspose(const ConvTransposeParams& p, DataType dtype) {
  if (std::string problem = p.validate(); !problem.empty()) return Diagnostic{problem, "convtranspose", 0, 0, ""};
  size_t rank = p.inputShape.size() - 2;
  std::vector<int64_t> outShape = p.outputShape();
  int64_t channelsPerGroup = p.inputShape[1] / p.groups, filtersPerGroup = p.weightShape[1];
  te::Tensor x = te::placeholder(toExprs(p.inputShape), dtype, "x");
  te::Tensor w = te::placeholder(toExprs(p.weightShape), dtype, "w");
  te::Tensor bias = p.bias ? te::placeholder({Expr(outShape[1])}, dtype, "bias") : te::Tensor();
  IterVar c = te::reduceAxis(Expr(channelsPerGroup), "c");
  std::vector<IterVar> taps;
  std::vector<IterVar> reduceAxes = {c};
  std::vector<std::string> names = {"n", "m"};
  for (size_t d = 0; d < rank; ++d) {
    taps.push_back(te::reduceAxis(Expr(p.weightShape[d + 2]), "k" + std::to_string(d)));
    reduceAxes.push_back(taps.back());
    names.push_back("o" + std::to_string(d));
  }
  te::Tensor out = te::compute(
      toExprs(outShape),
      [&](const std::vector<Var>& at) {
        Expr group = floordiv(at[1], Expr(filtersPerGroup));
        Expr channel = group * channelsPerGroup + c.var();
        std::vector<Expr> xi = {at[0], channel};
        std::vector<Expr> wi = {channel, floormod(at[1], Expr(filtersPerGroup))};
        Expr valid;
        for (size_t d = 0; d < rank; ++d) {
          // Input position i with i * stride + k * dilation - padBegin == o, if any.
          Expr scaled = at[d + 2] + p.padsBegin[d] - taps[d].var() * p.dilations[d];
          Expr position = floordiv(scaled, Expr(p.strides[d]));
          Expr hits = scaled >= Expr(int64_t(0)) && position < Expr(p.inputShape[d + 2]);
          if (p.strides[d] > 1) hits = hits && eq(floormod(scaled, Expr(p.strides[d])), Expr(int64_t(0)));
          valid = valid.defined() ? valid && hits : hits;
          xi.push_back(min(max(position, Expr(int64_t(0))), Expr(p.inputShape[d + 2] - 1)));
          wi.push_back(taps[d].var());
        }
        Expr sum = te::sum(select(valid, x(xi) * w(wi), makeZero(dtype)), reduceAxes);
        return sum;
      },
      p.bias ? "convT.sum" : "convT", names, "conv_transpose");
  Workload wl;
  wl.name = "conv_transpose_" + shapeName(p.inputShape) + "_w" + shapeName(p.weightShape) + "_s" +
            shapeName(p.strides) + "_d" + shapeName(p.dilations) + "_p" + shapeName(p.padsBegin) + "_" +
            shapeName(p.padsEnd) + "_op" + shapeName(p.outputPadding) + "_g" + std::to_string(p.groups) +
            (p.bias ? "_bias" : "");
  wl.inputs = {x, w};
  if (p.bias) {
    te::Tensor sum = out;
    out = te::compute(
        toExprs(outShape), [&](const std::vector<Var>& at) { return sum(asExprs(at)) + bias(at[1]); }, "convT", names,
        "conv_transpose");
    wl.inputs.push_back(bias);
  }
  wl.outputs = {out};
  wl.flops = 2.0 * double(elementCount(p.inputShape)) * double(elementCount(p.weightShape)) / double(p.inputShape[1]);
  return wl;
}

Expected<Schedule> defaultConvTransposeSchedule(const Workload& workload, const Target& target) {
  Schedule s(workload.outputs);
  if (!s.findStage("convT")) return Diagnostic{"the workload has no stage named 'convT'", workload.name, 0, 0, ""};
  const auto& shape = workload.outputs[0].shape();
  int64_t planes = *asConstInt(shape[0]) * *asConstInt(shape[1]);
  std::vector<Status> steps;
  parallelizeRows(s, "convT", {"n", "m"}, planes, target, steps);
  // With a bias, the sum is computed per output element right before the bias is added.
  if (s.findStage("convT.sum")) {
    std::string inner = "o" + std::to_string(shape.size() - 3);
    steps.push_back(s.computeAt("convT.sum", "convT", inner));
  }
  for (const Status& status : steps)
    if (!status) return status.error();
  return s;
}

}  // namespace tessel
