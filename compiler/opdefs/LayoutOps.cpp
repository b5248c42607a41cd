// Registration of the layout operators AlterLayout introduces: convolutions and matrix
// products whose constant weights were packed at compile time into the layout their kernels
// read (so no kernel repacks a weight on every call), convolutions over channel-blocked
// activations, and the LayoutTransform between NCHW and NCHW<b>c.
#include "compiler/opdefs/OpRegistry.h"
#include "compiler/ops/Conv2d.h"
#include "compiler/ops/LayoutTransform.h"
#include "compiler/ops/Matmul.h"
#include "compiler/ops/PackedConvParams.h"

namespace tessel::graph {

namespace {
std::string shapeText(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

// The channel block of a layout attribute ("NCHW": 0, "NCHW16c": 16).
Expected<int64_t> layoutAttributeBlock(const OpCall& call, const std::string& key) {
  auto layout = call.stringAttr(key, "NCHW");
  if (!layout) return layout.error();
  std::optional<int64_t> block = channelBlockOf(*layout);
  if (!block) return call.error("attribute '" + key + "' is '" + *layout + "', not NCHW or NCHW<block>c");
  return *block;
}

// The activation layouts of a ConvPrepacked node ("data_layout" and "out_layout", NCHW when
// absent), checked against its input type and what the kernel supports.
Expected<Conv2dActivationLayout> prepackedConvActivations(const OpCall& call, const Conv2dParams& p) {
  auto inputBlock = layoutAttributeBlock(call, "data_layout");
  if (!inputBlock) return inputBlock.error();
  auto outputBlock = layoutAttributeBlock(call, "out_layout");
  if (!outputBlock) return outputBlock.error();
  Conv2dActivationLayout layout{*inputBlock, *outputBlock != 0};
  if (!conv2dSupportsActivationLayout(p, layout, call.target))
    return call.error("this convolution cannot read or write channel-blocked activations",
                      "grouped convolutions, depthwise ones with NCHW on one side and channel counts the block "
                      "does not divide stay NCHW");
  if (*outputBlock != 0 && *outputBlock != conv2dFilterBlock(p, layout, call.target))
    return call.error("out_layout NCHW" + std::to_string(*outputBlock) + "c is not this target's filter block (" +
                          std::to_string(conv2dFilterBlock(p, layout, call.target)) + ")",
                      "rerun AlterLayout for this target");
  return layout;
}

// The convolution a ConvPrepacked node stands for: its Conv attributes, with the original
// OIHW weight shape kept in "weight_shape" (the packed input no longer shows it). A blocked
// input ("data_layout") is read by its logical NCHW shape.
Expected<Conv2dParams> prepackedConvParams(const OpCall& call) {
  auto weightShape = call.intsAttr("weight_shape", {});
  if (!weightShape) return weightShape.error();
  if (weightShape->size() != 4)
    return call.error("attribute 'weight_shape' must hold the 4 dimensions of the original OIHW weight",
                      "ConvPrepacked nodes are made by AlterLayout; rerun it on the Conv");
  auto inputBlock = layoutAttributeBlock(call, "data_layout");
  if (!inputBlock) return inputBlock.error();
  std::vector<int64_t> dataShape = call.inputTypes[0].shape;
  if (*inputBlock != 0) {
    if (dataShape.size() != 5 || dataShape[4] != *inputBlock ||
        call.inputTypes[0].layout != blockedChannelLayout(*inputBlock))
      return call.error("data_layout is " + blockedChannelLayout(*inputBlock) + " but the input is " +
                            call.inputTypes[0].toString(),
                        "insert a LayoutTransform before the convolution");
    dataShape = unblockedChannelShape(dataShape, *inputBlock);
  } else if (!call.inputTypes[0].layout.empty()) {
    return call.error("the input is " + call.inputTypes[0].toString() + " but data_layout is NCHW",
                      "insert a LayoutTransform to NCHW before the convolution");
  }
  auto params = conv2dParamsFromOnnx(call.attributes, dataShape, *weightShape, call.hasInput(2));
  if (!params) return call.error(params.error().message, params.error().hint);
  auto activations = prepackedConvActivations(call, *params);
  if (!activations) return activations.error();
  std::vector<int64_t> expected = conv2dPackedWeightShape(*params, *activations, call.target);
  if (call.inputTypes[1].shape != expected)
    return call.error("the packed weight is " + shapeText(call.inputTypes[1].shape) + ", this target's kernel reads " +
                          shapeText(expected),
                      "the weight was packed for another vector width: rerun AlterLayout for this target");
  if (params->bias && call.inputTypes[2].shape != std::vector<int64_t>{params->filters})
    return call.error("the bias must be a vector of " + std::to_string(params->filters) + " values");
  return params;
}

OpDef convPrepacked() {
  OpDef def;
  def.name = "ConvPrepacked";
  def.pattern = OpPattern::OutElemwiseFusable;
  def.minInputs = 2;
  def.maxInputs = 3;
  def.inferTypes = [](const OpCall& call) -> Expected<std::vector<TensorType>> {
    auto p = prepackedConvParams(call);
    if (!p) return p.error();
    auto activations = prepackedConvActivations(call, *p);
    if (!activations) return activations.error();
    TensorType out{call.inputTypes[0].dtype, {p->batch, p->filters, p->outHeight(), p->outWidth()}, ""};
    if (activations->blockedOutput) {
      int64_t kb = conv2dFilterBlock(*p, *activations, call.target);
      out.shape = blockedChannelShape(out.shape, kb);
      out.layout = blockedChannelLayout(kb);
    }
    return std::vector<TensorType>{out};
  };
  def.build = [](const OpCall& call) -> Expected<OpKernel> {
    auto p = prepackedConvParams(call);
    if (!p) return p.error();
    auto activations = prepackedConvActivations(call, *p);
    if (!activations) return activations.error();
    OpKernel kernel;
    kernel.workload = conv2d(*p, Conv2dWeightLayout::Packed, *activations, call.inputTypes[0].dtype, call.target);
    kernel.inputIndices = {0, 1};
    if (p->bias) kernel.inputIndices.push_back(2);
    Conv2dParams params = *p;
    Conv2dActivationLayout layout = *activations;
    kernel.schedule = [params, layout](const Workload& w, const Target& target) {
      return defaultConv2dSchedule(w, params, layout, target);
    };
    return kernel;
  };
  return def;
}

// A LayoutTransform node's source and destination channel blocks (0 for NCHW), checked
// against its 4-D (NCHW) or 5-D (NCHW<b>c) input.
struct ChannelRelayout {
  int64_t source = 0, destination = 0;
  std::vector<int64_t> logicalShape;  ///< NCHW.
};

Expected<ChannelRelayout> channelRelayout(const OpCall& call) {
  auto source = call.stringAttr("src_layout", "");
  if (!source) return source.error();
  auto destination = call.stringAttr("dst_layout", "");
  if (!destination) return destination.error();
  std::optional<int64_t> sourceBlock = channelBlockOf(*source), destinationBlock = channelBlockOf(*destination);
  if (!sourceBlock || !destinationBlock || source->empty() || destination->empty())
    return call.error("src_layout '" + *source + "' and dst_layout '" + *destination +
                          "' must each be NCHW or NCHW<block>c",
                      "LayoutTransform nodes are made by AlterLayout");
  if (*sourceBlock == *destinationBlock) return call.error("src_layout and dst_layout are the same layout");
  const TensorType& input = call.inputTypes[0];
  std::string expectedLayout = *sourceBlock ? blockedChannelLayout(*sourceBlock) : "";
  bool shapeFits = *sourceBlock ? input.shape.size() == 5 && input.shape[4] == *sourceBlock : input.shape.size() == 4;
  if (!shapeFits || input.layout != expectedLayout)
    return call.error("the input is " + input.toString() + ", not " + *source);
  ChannelRelayout relayout{*sourceBlock, *destinationBlock, unblockedChannelShape(input.shape, *sourceBlock)};
  if (*destinationBlock && relayout.logicalShape[1] % *destinationBlock != 0)
    return call.error("the " + std::to_string(relayout.logicalShape[1]) + " channels do not split into blocks of " +
                      std::to_string(*destinationBlock));
  return relayout;
}

OpDef layoutTransformOp() {
  OpDef def;
  def.name = "LayoutTransform";
  def.pattern = OpPattern::Injective;
  def.inferTypes = [](const OpCall& call) -> Expected<std::vector<TensorType>> {
    auto relayout = channelRelayout(call);
    if (!relayout) return relayout.error();
    std::string layout = relayout->destination ? blockedChannelLayout(relayout->destination) : "";
    return std::vector<TensorType>{TensorType{
        call.inputTypes[0].dtype, blockedChannelShape(relayout->logicalShape, relayout->destination), layout}};
  };
  def.build = [](const OpCall& call) -> Expected<OpKernel> {
    auto relayout = channelRelayout(call);
    if (!relayout) return relayout.error();
    OpKernel kernel;
    kernel.workload =
        layoutTransform(relayout->logicalShape, relayout->source, relayout->destination, call.inputTypes[0].dtype);
    kernel.inputIndices = {0};
    kernel.schedule = [](const Workload& w, const Target& target) {
      return defaultLayoutTransformSchedule(w, target);
    };
    return kernel;
  };
  return def;
}

// A DensePrepacked node: A [.., K] times B packed in panels [ceil(N / width)][K][width];
// attribute "n" is N (the panels round it up).
Expected<int64_t> prepackedDenseColumns(const OpCall& call) {
  auto n = call.intAttr("n", 0);
  if (!n) return n.error();
  const std::vector<int64_t>& a = call.inputTypes[0].shape;
  if (*n < 1) return call.error("attribute 'n' (the output columns) must be positive");
  if (a.empty()) return call.error("A must have at least one axis");
  int64_t width = matmulPanelWidth(*n, call.target);
  std::vector<int64_t> expected = {(*n + width - 1) / width, a.back(), width};
  if (call.inputTypes[1].shape != expected)
    return call.error("the packed B is " + shapeText(call.inputTypes[1].shape) + ", this target's kernel reads " +
                          shapeText(expected),
                      "B was packed for another shape or vector width: rerun AlterLayout for this target");
  return *n;
}

OpDef densePrepacked() {
  OpDef def;
  def.name = "DensePrepacked";
  def.pattern = OpPattern::OutElemwiseFusable;
  def.minInputs = 2;
  def.maxInputs = 2;
  def.inferTypes = [](const OpCall& call) -> Expected<std::vector<TensorType>> {
    auto n = prepackedDenseColumns(call);
    if (!n) return n.error();
    std::vector<int64_t> shape = call.inputTypes[0].shape;
    shape.back() = *n;
    return std::vector<TensorType>{TensorType{call.inputTypes[0].dtype, shape, ""}};
  };
  def.build = [](const OpCall& call) -> Expected<OpKernel> {
    auto n = prepackedDenseColumns(call);
    if (!n) return n.error();
    OpKernel kernel;
    kernel.workload = matmulPrepacked(call.inputTypes[0].shape, *n, call.inputTypes[0].dtype, call.target);
    kernel.inputIndices = {0, 1};
    kernel.schedule = [](const Workload& w, const Target& target) { return defaultMatmulSchedule(w, target); };
    return kernel;
  };
  return def;
}
}  // namespace

void registerLayoutOps(OpRegistry& registry) {
  registry.add(convPrepacked());
  registry.add(densePrepacked());
  registry.add(layoutTransformOp());
}

}  // namespace tessel::graph
