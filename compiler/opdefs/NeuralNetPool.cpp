// Pooling operators: MaxPool (with its optional Indices), AveragePool, LpPool and their global forms.
#include "compiler/opdefs/NeuralNetSupport.h"
#include "compiler/ops/Pooling.h"

namespace tessel::graph::nn {

namespace {

// The window attributes of MaxPool / AveragePool / LpPool as PoolParams (auto_pad resolved).
Expected<PoolParams> poolParams(const OpCall& call, PoolKind kind) {
  if (kind == PoolKind::Max) {
    if (auto e = requireNumeric(call, 0, "X")) return *e;
  } else if (auto e = requireFloat(call, 0, "X")) {
    return *e;
  }
  if (auto e = requireRank(call, 0, 3, "X", true)) return *e;
  PoolParams p;
  p.kind = kind;
  p.inputShape = call.inputTypes[0].shape;
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
  return [](const Workload& workload, const ScheduleTarget& target) { return defaultPoolSchedule(workload, target); };
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
    std::vector<TensorType> types = {typeLike(call, 0, *shape)};
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
      return makeKernel(std::move(*w), {0}, [](const Workload& workload, const ScheduleTarget& target) {
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
    std::vector<int64_t> shape = call.inputTypes[0].shape;
    std::fill(shape.begin() + 2, shape.end(), 1);
    return std::vector<TensorType>{typeLike(call, 0, shape)};
  };
  def.build = [kind](const OpCall& call) -> Expected<OpKernel> {
    auto exponent = call.intAttr("p", 2);
    if (!exponent) return exponent.error();
    auto w = globalPool(kind, call.inputTypes[0].shape, call.inputTypes[0].dtype, *exponent);
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
