// Pooling operators: MaxPool (with its optional Indices), AveragePool, LpPool and their global
// forms, over NCHW inputs or the channel-blocked NCHW<b>c ones AlterLayout keeps between
// convolutions.
#include "compiler/opdefs/NeuralNetSupport.h"
#include "compiler/ops/LayoutTransform.h"
#include "compiler/ops/Pooling.h"

namespace tessel::graph::nn {

namespace {

// The channel block of input X (0: NCHW) and its logical NCHW shape. A blocked X must be a
// 2-D NCHW<b>c tensor as AlterLayout makes them ([N, C / b, H, W, b]).
struct PoolInput {
  int64_t channelBlock = 0;
  std::vector<int64_t> nchwShape;
};

Expected<PoolInput> poolInput(const OpCall& call) {
  const TensorType& x = call.inputTypes[0];
  std::optional<int64_t> block = channelBlockOf(x.layout);
  if (!block) return call.error("X has layout '" + x.layout + "'; pooling reads NCHW or NCHW<block>c");
  if (*block == 0) return PoolInput{0, x.shape};
  if (x.shape.size() != 5 || x.shape[4] != *block)
    return call.error("X is " + x.toString() + ", not a 2-D " + x.layout + " tensor",
                      "LayoutTransform nodes make blocked tensors; insert one before the pool");
  return PoolInput{*block, unblockedChannelShape(x.shape, *block)};
}

// The type of an output whose logical NCHW shape is `nchwShape`, in the layout of input X.
TensorType outputLike(const OpCall& call, const PoolInput& input, const std::vector<int64_t>& nchwShape) {
  if (!input.channelBlock) return typeLike(call, 0, nchwShape);
  TensorType type = typeLike(call, 0, blockedChannelShape(nchwShape, input.channelBlock));
  type.layout = blockedChannelLayout(input.channelBlock);
  return type;
}

// The window attributes of MaxPool / AveragePool / LpPool as PoolParams (auto_pad resolved).
Expected<PoolParams> poolParams(const OpCall& call, PoolKind kind) {
  if (kind == PoolKind::Max) {
    if (auto e = requireNumeric(call, 0, "X")) return *e;
  } else if (auto e = requireFloat(call, 0, "X")) {
    return *e;
  }
  if (auto e = requireRank(call, 0, 3, "X", true)) return *e;
  auto input = poolInput(call);
  if (!input) return input.error();
  PoolParams p;
  p.kind = kind;
  p.inputShape = input->nchwShape;
  p.channelBlock = input->channelBlock;
  size_t rank = p.inputShape.size() - 2;
  if (!call.hasAttr("kernel_shape")) return call.error("the kernel_shape attribute is required");
  auto kernel = call.intsAttr("kernel_shape", {});
  if (!kernel) return kernel.error();
  p.kernel = *kernel;
  auto strides = call.intsAttr("strides", {});
  if (!strides) return strides.error();
  p.strides = *strides;
  auto dilations = call.intsAttr("dilations", {});
  if (!dilations) return dilations.error();
  p.dilations = *dilations;
  auto pads = call.intsAttr("pads", {});
  if (!pads) return pads.error();
  if (!pads->empty()) {
    if (pads->size() != 2 * rank)
      return call.error("pads has " + std::to_string(pads->size()) + " entries, expected " + std::to_string(2 * rank) +
                        " (begin and end for each spatial axis)");
    p.padsBegin.assign(pads->begin(), pads->begin() + long(rank));
    p.padsEnd.assign(pads->begin() + long(rank), pads->end());
  }
  auto ceilMode = call.intAttr("ceil_mode", 0);
  if (!ceilMode) return ceilMode.error();
  p.ceilMode = *ceilMode != 0;
  auto countIncludePad = call.intAttr("count_include_pad", 0);
  if (!countIncludePad) return countIncludePad.error();
  p.countIncludePad = *countIncludePad != 0;
  auto exponent = call.intAttr("p", 2);
  if (!exponent) return exponent.error();
  p.lpExponent = *exponent;
  auto autoPad = call.stringAttr("auto_pad", "NOTSET");
  if (!autoPad) return autoPad.error();
  if (Status st = resolveAutoPad(p, *autoPad); !st) return atNode(call, st.error());
  auto shape = poolOutputShape(p);
  if (!shape) return atNode(call, shape.error());
  return p;
}

KernelSchedule poolSchedule() {
  return [](const Workload& workload, const Target& target) { return defaultPoolSchedule(workload, target); };
}

OpDef windowPoolDef(const char* name, PoolKind kind) {
  OpDef def;
  def.name = name;
  def.pattern = OpPattern::CommReduce;
  def.maxOutputs = kind == PoolKind::Max ? 2 : 1;
  def.inferTypes = [kind](const OpCall& call) -> Expected<std::vector<TensorType>> {
    auto p = poolParams(call, kind);
    if (!p) return p.error();
    auto shape = poolOutputShape(*p);
    if (call.outputCount > 1 && p->channelBlock)
      return call.error("the Indices output counts NCHW offsets, but X is " + call.inputTypes[0].toString(),
                        "transform X to NCHW first");
    std::vector<TensorType> types = {outputLike(call, PoolInput{p->channelBlock, {}}, *shape)};
    if (call.outputCount > 1) types.push_back(TensorType{DataType::int64(), *shape, ""});
    return types;
  };
  def.build = [kind](const OpCall& call) -> Expected<OpKernel> {
    auto p = poolParams(call, kind);
    if (!p) return p.error();
    DataType dtype = call.inputTypes[0].dtype;
    if (call.outputCount > 1) {
      auto storageOrder = call.intAttr("storage_order", 0);
      if (!storageOrder) return storageOrder.error();
      auto w = maxPoolWithIndices(*p, *storageOrder != 0, dtype);
      if (!w) return atNode(call, w.error());
      return makeKernel(std::move(*w), {0}, [](const Workload& workload, const Target& target) {
        return defaultMaxPoolWithIndicesSchedule(workload, target);
      });
    }
    auto w = pool(*p, dtype);
    if (!w) return atNode(call, w.error());
    return makeKernel(std::move(*w), {0}, poolSchedule());
  };
  return def;
}

OpDef globalPoolDef(const char* name, PoolKind kind) {
  OpDef def;
  def.name = name;
  def.pattern = OpPattern::CommReduce;
  def.inferTypes = [kind](const OpCall& call) -> Expected<std::vector<TensorType>> {
    if (kind == PoolKind::Max) {
      if (auto e = requireNumeric(call, 0, "X")) return *e;
    } else if (auto e = requireFloat(call, 0, "X")) {
      return *e;
    }
    if (auto e = requireRank(call, 0, 3, "X", true)) return *e;
    auto input = poolInput(call);
    if (!input) return input.error();
    std::vector<int64_t> shape = input->nchwShape;
    std::fill(shape.begin() + 2, shape.end(), 1);
    return std::vector<TensorType>{outputLike(call, *input, shape)};
  };
  def.build = [kind](const OpCall& call) -> Expected<OpKernel> {
    auto exponent = call.intAttr("p", 2);
    if (!exponent) return exponent.error();
    auto input = poolInput(call);
    if (!input) return input.error();
    auto w = globalPool(kind, input->nchwShape, call.inputTypes[0].dtype, *exponent, input->channelBlock);
    if (!w) return atNode(call, w.error());
    return makeKernel(std::move(*w), {0}, poolSchedule());
  };
  return def;
}

}  // namespace

void registerPoolingOps(OpRegistry& registry) {
  registry.add(windowPoolDef("MaxPool", PoolKind::Max));
  registry.add(windowPoolDef("AveragePool", PoolKind::Average));
  registry.add(globalPoolDef("GlobalMaxPool", PoolKind::Max));
  registry.add(globalPoolDef("GlobalAveragePool", PoolKind::Average));
  registry.add(windowPoolDef("LpPool", PoolKind::Lp));
  registry.add(globalPoolDef("GlobalLpPool", PoolKind::Lp));
}

}  // namespace tessel::graph::nn
