// Convolution operators: ONNX Conv (1-D and 2-D on conv2d(), 3-D and more direct), ConvInteger and
// ConvTranspose.
#include "compiler/opdefs/NeuralNetSupport.h"
#include "compiler/ops/Conv2d.h"
#include "compiler/ops/ConvTranspose.h"
#include "compiler/ops/DirectConv.h"
#include "compiler/ops/UnitAxisView.h"

namespace tessel::graph::nn {

namespace {

// Per spatial axis: (begin, end) padding that ONNX's auto_pad asks for, or the explicit pads.
struct SpatialPadding {
  std::vector<int64_t> begin, end;
};

// Resolves ONNX auto_pad for a forward window op: SAME_* makes the output ceil(input / stride)
// long, with an odd total pad's extra element at the end (UPPER) or the start (LOWER).
Expected<SpatialPadding> resolvePadding(const OpCall& call, const std::vector<int64_t>& input,
                                        const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
                                        const std::vector<int64_t>& dilations) {
  size_t rank = kernel.size();
  auto autoPad = call.stringAttr("auto_pad", "NOTSET");
  if (!autoPad) return autoPad.error();
  SpatialPadding pads{std::vector<int64_t>(rank, 0), std::vector<int64_t>(rank, 0)};
  if (*autoPad == "NOTSET") {
    auto explicitPads = call.intsAttr("pads", std::vector<int64_t>(2 * rank, 0));
    if (!explicitPads) return explicitPads.error();
    if (explicitPads->size() != 2 * rank)
      return call.error("pads has " + std::to_string(explicitPads->size()) + " entries, expected " +
                        std::to_string(2 * rank) + " (begin and end for each spatial axis)");
    for (size_t d = 0; d < rank; ++d) {
      pads.begin[d] = (*explicitPads)[d];
      pads.end[d] = (*explicitPads)[d + rank];
      if (pads.begin[d] < 0 || pads.end[d] < 0) return call.error("pads must not be negative");
    }
    return pads;
  }
  if (*autoPad == "VALID") return pads;
  if (*autoPad != "SAME_UPPER" && *autoPad != "SAME_LOWER")
    return call.error("unknown auto_pad '" + *autoPad + "'", "use NOTSET, VALID, SAME_UPPER or SAME_LOWER");
  for (size_t d = 0; d < rank; ++d) {
    int64_t out = (input[d] + strides[d] - 1) / strides[d];
    int64_t window = dilations[d] * (kernel[d] - 1) + 1;
    int64_t total = std::max<int64_t>((out - 1) * strides[d] + window - input[d], 0);
    int64_t small = total / 2, large = total - small;
    pads.begin[d] = *autoPad == "SAME_UPPER" ? small : large;
    pads.end[d] = *autoPad == "SAME_UPPER" ? large : small;
  }
  return pads;
}

// An ints attribute with one entry per spatial axis (`fallback` in each when absent).
Expected<std::vector<int64_t>> perAxis(const OpCall& call, const char* name, size_t rank, int64_t fallback) {
  auto values = call.intsAttr(name, std::vector<int64_t>(rank, fallback));
  if (!values) return values.error();
  if (values->size() != rank)
    return call.error(std::string(name) + " has " + std::to_string(values->size()) + " entries, expected " +
                      std::to_string(rank) + " (one per spatial axis)");
  for (int64_t v : *values)
    if (v < 1) return call.error(std::string(name) + " must be positive");
  return values;
}

// The spatial kernel shape of a convolution (Conv, ConvInteger, ConvTranspose): X has a batch,
// a channel and at least one spatial axis, W the same rank, and a kernel_shape attribute,
// where given, must agree with W's spatial extents.
Expected<std::vector<int64_t>> convKernelShape(const OpCall& call) {
  if (auto e = requireRank(call, 0, 3, "X", true)) return *e;
  const auto& x = call.inputTypes[0].shape;
  const auto& w = call.inputTypes[1].shape;
  if (w.size() != x.size())
    return call.error("W has rank " + std::to_string(w.size()) + ", expected " + std::to_string(x.size()) + " like X");
  std::vector<int64_t> kernel(w.begin() + 2, w.end());
  if (call.hasAttr("kernel_shape")) {
    auto given = call.intsAttr("kernel_shape", {});
    if (!given) return given.error();
    if (*given != kernel)
      return call.error("kernel_shape " + shapeName(*given) + " differs from the weight's " + shapeName(kernel));
  }
  return kernel;
}

// Conv's (and ConvInteger's) attributes and input shapes, for any number of spatial axes.
Expected<DirectConvParams> convGeometry(const OpCall& call) {
  auto kernelShape = convKernelShape(call);
  if (!kernelShape) return kernelShape.error();
  const std::vector<int64_t>& kernel = *kernelShape;
  const auto& x = call.inputTypes[0].shape;
  const auto& w = call.inputTypes[1].shape;
  size_t rank = x.size() - 2;
  auto strides = perAxis(call, "strides", rank, 1);
  if (!strides) return strides.error();
  auto dilations = perAxis(call, "dilations", rank, 1);
  if (!dilations) return dilations.error();
  auto group = call.intAttr("group", 1);
  if (!group) return group.error();
  std::vector<int64_t> spatial(x.begin() + 2, x.end());
  auto pads = resolvePadding(call, spatial, kernel, *strides, *dilations);
  if (!pads) return pads.error();
  DirectConvParams p;
  p.inputShape = x;
  p.weightShape = w;
  p.strides = *strides;
  p.dilations = *dilations;
  p.padsBegin = pads->begin;
  p.padsEnd = pads->end;
  p.groups = *group;
  if (*group >= 1 && x[1] % *group == 0 && w[1] != x[1] / *group)
    return call.error("W has " + std::to_string(w[1]) + " input channels per filter, expected C / group = " +
                      std::to_string(x[1] / *group));
  if (std::string problem = p.validate(); !problem.empty()) return call.error(problem);
  return p;
}

// A 1-D convolution as a 2-D one of height 1.
Conv2dParams asConv2dOfHeightOne(const DirectConvParams& g) {
  Conv2dParams p;
  p.batch = g.inputShape[0];
  p.channels = g.inputShape[1];
  p.height = 1;
  p.width = g.inputShape[2];
  p.filters = g.weightShape[0];
  p.kernelH = 1;
  p.kernelW = g.weightShape[2];
  p.stride = g.strides[0];
  p.strideH = 1;
  p.strideW = g.strides[0];
  p.padTop = 0;
  p.padBottom = 0;
  p.padLeft = g.padsBegin[0];
  p.padRight = g.padsEnd[0];
  p.dilationH = 1;
  p.dilationW = g.dilations[0];
  p.groups = g.groups;
  p.bias = g.bias;
  return p;
}

// A 2-D convolution as conv2d parameters (conv2d's blocked kernels).
Conv2dParams asConv2d(const DirectConvParams& g) {
  Conv2dParams p;
  p.batch = g.inputShape[0];
  p.channels = g.inputShape[1];
  p.height = g.inputShape[2];
  p.width = g.inputShape[3];
  p.filters = g.weightShape[0];
  p.kernelH = g.weightShape[2];
  p.kernelW = g.weightShape[3];
  p.stride = g.strides[0];
  p.strideH = g.strides[0];
  p.strideW = g.strides[1];
  p.padTop = g.padsBegin[0];
  p.padLeft = g.padsBegin[1];
  p.padBottom = g.padsEnd[0];
  p.padRight = g.padsEnd[1];
  p.dilationH = g.dilations[0];
  p.dilationW = g.dilations[1];
  p.groups = g.groups;
  p.bias = g.bias;
  return p;
}

Expected<DirectConvParams> convParams(const OpCall& call) {
  if (auto e = requireFloat(call, 0, "X")) return *e;
  auto p = convGeometry(call);
  if (!p) return p.error();
  p->bias = call.hasInput(2);
  int64_t filters = call.inputTypes[1].shape[0];
  if (p->bias && call.inputTypes[2].shape != std::vector<int64_t>{filters})
    return call.error("B has shape " + shapeName(call.inputTypes[2].shape) + ", expected [" + std::to_string(filters) +
                      "] (one per filter)");
  return p;
}

OpDef convDef() {
  OpDef def;
  def.name = "Conv";
  def.pattern = OpPattern::OutElemwiseFusable;
  def.minInputs = 2;
  def.maxInputs = 3;
  def.inferTypes = [](const OpCall& call) -> Expected<std::vector<TensorType>> {
    auto p = convParams(call);
    if (!p) return p.error();
    return std::vector<TensorType>{typeLike(call, 0, p->outputShape())};
  };
  def.build = [](const OpCall& call) -> Expected<OpKernel> {
    auto p = convParams(call);
    if (!p) return p.error();
    DataType dtype = call.inputTypes[0].dtype;
    std::vector<int> inputs = {0, 1};
    if (p->bias) inputs.push_back(2);
    if (p->inputShape.size() == 4) {
      // 2-D: conv2d's register-blocked (or depthwise) kernels.
      Conv2dParams params = asConv2d(*p);
      auto w = checkedConv2d(params, dtype, call.target);
      if (!w) return atNode(call, w.error());
      return makeKernel(std::move(*w), inputs, [params](const Workload& workload, const Target& target) {
        return defaultConv2dSchedule(workload, params, target);
      });
    }
    if (p->inputShape.size() == 3) {
      // 1-D: conv2d's kernels over a height of 1; the kernel reads the 3-D tensors by
      // indexing (dropUnitAxis) and writes its result once more without the unit axis.
      Conv2dParams params = asConv2dOfHeightOne(*p);
      auto w = checkedConv2d(params, dtype, call.target);
      if (!w) return atNode(call, w.error());
      Workload viewed = dropUnitAxis(*w, {0, 1}, 2, "conv.view");
      return makeKernel(std::move(viewed), inputs, [params](const Workload& workload, const Target& target) {
        auto s = defaultConv2dSchedule(workload, params, target);
        if (!s) return s;
        std::vector<Status> steps;
        parallelizeRows(*s, "conv.view", {"n", "k"}, params.batch * params.filters, target, steps);
        if (params.outWidth() >= target.vectorLanes()) {
          steps.push_back(s->split("conv.view", "x", target.vectorLanes(), "xo", "xi"));
          steps.push_back(s->vectorize("conv.view", "xi"));
        }
        for (const Status& status : steps)
          if (!status) return Expected<Schedule>(status.error());
        return s;
      });
    }
    // 3-D and more: one direct reduction.
    auto w = directConv(*p, dtype, dtype, dtype);
    if (!w) return atNode(call, w.error());
    DirectConvParams params = *p;
    return makeKernel(std::move(*w), inputs, [params](const Workload& workload, const Target& target) {
      return defaultDirectConvSchedule(workload, params, target);
    });
  };
  return def;
}

// ConvInteger: integer operands shifted by their zero points, accumulated in int32.
Expected<DirectConvParams> convIntegerParams(const OpCall& call) {
  for (size_t i = 0; i < 2; ++i) {
    DataType dtype = call.inputTypes[i].dtype;
    if (dtype != DataType::uint8() && dtype != DataType::int8())
      return call.error(std::string(i == 0 ? "x" : "w") + " has element type " + dtype.toString() +
                        ", expected uint8 or int8");
  }
  auto p = convGeometry(call);
  if (!p) return p.error();
  int64_t filters = call.inputTypes[1].shape[0];
  for (size_t i = 2; i < 4; ++i) {
    if (!call.hasInput(i)) continue;
    const auto& shape = call.inputTypes[i].shape;
    bool scalar = shape.empty() || shape == std::vector<int64_t>{1};
    bool perFilter = i == 3 && shape == std::vector<int64_t>{filters};
    if (!scalar && !perFilter)
      return call.error(std::string(i == 2 ? "x_zero_point" : "w_zero_point") + " has shape " + shapeName(shape) +
                        ", expected a scalar" + (i == 3 ? " or one per filter" : ""));
    if (call.inputTypes[i].dtype != call.inputTypes[i - 2].dtype)
      return call.error("a zero point must have its operand's element type");
    (i == 2 ? p->inputZeroPoint : p->weightZeroPoint) = shape;
  }
  return p;
}

OpDef convIntegerDef() {
  OpDef def;
  def.name = "ConvInteger";
  def.pattern = OpPattern::OutElemwiseFusable;
  def.minInputs = 2;
  def.maxInputs = 4;
  def.inferTypes = [](const OpCall& call) -> Expected<std::vector<TensorType>> {
    auto p = convIntegerParams(call);
    if (!p) return p.error();
    return std::vector<TensorType>{TensorType{DataType::int32(), p->outputShape(), ""}};
  };
  def.build = [](const OpCall& call) -> Expected<OpKernel> {
    auto p = convIntegerParams(call);
    if (!p) return p.error();
    auto w = directConv(*p, call.inputTypes[0].dtype, call.inputTypes[1].dtype, DataType::int32());
    if (!w) return atNode(call, w.error());
    std::vector<int> inputs = {0, 1};
    if (p->inputZeroPoint) inputs.push_back(2);
    if (p->weightZeroPoint) inputs.push_back(3);
    DirectConvParams params = *p;
    return makeKernel(std::move(*w), inputs, [params](const Workload& workload, const Target& target) {
      return defaultDirectConvSchedule(workload, params, target);
    });
  };
  return def;
}

}  // namespace

// Padding: explicit pads; or, with output_shape or a SAME auto_pad, the total padding that
// yields the requested output split between the ends (SAME_UPPER puts the smaller half first,
// otherwise the larger).
Expected<ConvTransposeParams> convTransposeParams(const OpCall& call) {
  if (auto e = requireFloat(call, 0, "X")) return *e;
  auto kernelShape = convKernelShape(call);
  if (!kernelShape) return kernelShape.error();
  const std::vector<int64_t>& kernel = *kernelShape;
  const auto& x = call.inputTypes[0].shape;
  const auto& w = call.inputTypes[1].shape;
  size_t rank = x.size() - 2;
  ConvTransposeParams p;
  p.inputShape = x;
  p.weightShape = w;
  auto strides = perAxis(call, "strides", rank, 1);
  if (!strides) return strides.error();
  auto dilations = perAxis(call, "dilations", rank, 1);
  if (!dilations) return dilations.error();
  auto outputPadding = call.intsAttr("output_padding", std::vector<int64_t>(rank, 0));
  if (!outputPadding) return outputPadding.error();
  if (outputPadding->size() != rank) return call.error("output_padding needs one entry per spatial axis");
  auto group = call.intAttr("group", 1);
  if (!group) return group.error();
  auto autoPad = call.stringAttr("auto_pad", "NOTSET");
  if (!autoPad) return autoPad.error();
  auto outputShape = call.intsAttr("output_shape", {});
  if (!outputShape) return outputShape.error();
  p.strides = *strides;
  p.dilations = *dilations;
  p.outputPadding = *outputPadding;
  p.groups = *group;
  p.bias = call.hasInput(2);
  p.padsBegin.assign(rank, 0);
  p.padsEnd.assign(rank, 0);
  bool same = *autoPad == "SAME_UPPER" || *autoPad == "SAME_LOWER";
  if (*autoPad != "NOTSET" && *autoPad != "VALID" && !same)
    return call.error("unknown auto_pad '" + *autoPad + "'", "use NOTSET, VALID, SAME_UPPER or SAME_LOWER");
  std::vector<int64_t> wanted = *outputShape;
  // output_shape may list N and C too; only the spatial extents matter.
  if (wanted.size() == rank + 2) wanted.erase(wanted.begin(), wanted.begin() + 2);
  if (wanted.empty() && same)
    for (size_t d = 0; d < rank; ++d) wanted.push_back(x[d + 2] * p.strides[d]);
  if (!wanted.empty()) {
    if (wanted.size() != rank) return call.error("output_shape needs one entry per spatial axis");
    for (size_t d = 0; d < rank; ++d) {
      int64_t total = p.strides[d] * (x[d + 2] - 1) + p.outputPadding[d] + (kernel[d] - 1) * p.dilations[d] + 1 -
                      wanted[d];
      int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);  // floor division, as ONNX's reference
      p.padsBegin[d] = *autoPad == "SAME_UPPER" ? half : total - half;
      p.padsEnd[d] = *autoPad == "SAME_UPPER" ? total - half : half;
    }
  } else if (*autoPad == "NOTSET") {
    auto pads = call.intsAttr("pads", std::vector<int64_t>(2 * rank, 0));
    if (!pads) return pads.error();
    if (pads->size() != 2 * rank)
      return call.error("pads has " + std::to_string(pads->size()) + " entries, expected " +
                        std::to_string(2 * rank) + " (begin and end for each spatial axis)");
    p.padsBegin.assign(pads->begin(), pads->begin() + long(rank));
    p.padsEnd.assign(pads->begin() + long(rank), pads->end());
  }
  if (p.bias && call.inputTypes[2].shape != std::vector<int64_t>{w[1] * p.groups})
    return call.error("B has shape " + shapeName(call.inputTypes[2].shape) + ", expected [" +
                      std::to_string(w[1] * p.groups) + "] (one per output channel)");
  if (std::string problem = p.validate(); !problem.empty()) return call.error(problem);
  return p;
}

namespace {

OpDef convTransposeDef() {
  OpDef def;
  def.name = "ConvTranspose";
  def.pattern = OpPattern::OutElemwiseFusable;
  def.minInputs = 2;
  def.maxInputs = 3;
  def.inferTypes = [](const OpCall& call) -> Expected<std::vector<TensorType>> {
    auto p = convTransposeParams(call);
    if (!p) return p.error();
    return std::vector<TensorType>{typeLike(call, 0, p->outputShape())};
  };
  def.build = [](const OpCall& call) -> Expected<OpKernel> {
    auto p = convTransposeParams(call);
    if (!p) return p.error();
    auto w = convTranspose(*p, call.inputTypes[0].dtype);
    if (!w) return atNode(call, w.error());
    std::vector<int> inputs = {0, 1};
    if (p->bias) inputs.push_back(2);
    return makeKernel(std::move(*w), inputs, [](const Workload& workload, const Target& target) {
      return defaultConvTransposeSchedule(workload, target);
    });
  };
  return def;
}

}  // namespace

Expected<DirectConvParams> convolutionGeometry(const OpCall& call) { return convGeometry(call); }

void registerConvolutionOps(OpRegistry& registry) {
  registry.add(convDef());
  registry.add(convIntegerDef());
  registry.add(convTransposeDef());
}

}  // namespace tessel::graph::nn
