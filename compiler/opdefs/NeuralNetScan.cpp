// Scans and selections along an axis: CumSum and TopK.
#include "compiler/opdefs/NeuralNetSupport.h"
#include "compiler/ops/Scan.h"

namespace tessel::graph::nn {

namespace {

// CumSum's axis is an input (a scalar or one-element tensor), needed by value.
Expected<CumSumParams> cumSumParams(const OpCall& call) {
  if (auto e = requireNumeric(call, 0, "x")) return *e;
  auto axis = call.constantInts(1, "axis");
  if (!axis) return axis.error();
  if (axis->size() != 1) return call.error("axis must hold one value, got " + std::to_string(axis->size()));
  CumSumParams p;
  p.shape = call.inputTypes[0].shape;
  auto resolved = resolveAxis(call, axis->front(), int64_t(p.shape.size()));
  if (!resolved) return resolved.error();
  p.axis = *resolved;
  auto exclusive = call.intAttr("exclusive", 0);
  if (!exclusive) return exclusive.error();
  auto reverse = call.intAttr("reverse", 0);
  if (!reverse) return reverse.error();
  p.exclusive = *exclusive != 0;
  p.reverse = *reverse != 0;
  return p;
}

OpDef cumSumDef() {
  OpDef def;
  def.name = "CumSum";
  def.pattern = OpPattern::Opaque;
  def.minInputs = 2;
  def.maxInputs = 2;
  def.valueInputs = {1};
  def.inferTypes = [](const OpCall& call) -> Expected<std::vector<TensorType>> {
    auto p = cumSumParams(call);
    if (!p) return p.error();
    return std::vector<TensorType>{typeLike(call, 0, p->shape)};
  };
  def.build = [](const OpCall& call) -> Expected<OpKernel> {
    auto p = cumSumParams(call);
    if (!p) return p.error();
    auto w = cumulativeSum(*p, call.inputTypes[0].dtype);
    if (!w) return atNode(call, w.error());
    CumSumParams params = *p;
    return makeKernel(std::move(*w), {0}, [params](const Workload& workload, const Target& target) {
      return defaultCumulativeSumSchedule(workload, params, target);
    });
  };
  return def;
}

// TopK: k is an input from opset 10 (needed by value), an attribute before.
Expected<TopKParams> topKParams(const OpCall& call) {
  if (auto e = requireNumeric(call, 0, "X")) return *e;
  TopKParams p;
  p.shape = call.inputTypes[0].shape;
  if (call.hasInput(1)) {
    auto k = call.constantInts(1, "K");
    if (!k) return k.error();
    if (k->size() != 1) return call.error("K must hold one value, got " + std::to_string(k->size()));
    p.k = k->front();
  } else {
    if (!call.hasAttr("k")) return call.error("K is missing (the input from opset 10, the attribute k before)");
    auto k = call.intAttr("k", 1);
    if (!k) return k.error();
    p.k = *k;
  }
  auto axis = call.intAttr("axis", -1);
  if (!axis) return axis.error();
  auto resolved = resolveAxis(call, *axis, int64_t(p.shape.size()));
  if (!resolved) return resolved.error();
  p.axis = *resolved;
  auto largest = call.intAttr("largest", 1);
  if (!largest) return largest.error();
  p.largest = *largest != 0;
  if (p.k < 1 || p.k > p.shape[size_t(p.axis)])
    return call.error("K = " + std::to_string(p.k) + " must be in [1, " + std::to_string(p.shape[size_t(p.axis)]) + "]");
  return p;
}

OpDef topKDef() {
  OpDef def;
  def.name = "TopK";
  def.pattern = OpPattern::Opaque;
  def.minInputs = 1;
  def.maxInputs = 2;
  def.minOutputs = 1;
  def.maxOutputs = 2;
  def.valueInputs = {1};
  def.inferTypes = [](const OpCall& call) -> Expected<std::vector<TensorType>> {
    auto p = topKParams(call);
    if (!p) return p.error();
    std::vector<int64_t> shape = p->shape;
    shape[size_t(p->axis)] = p->k;
    return std::vector<TensorType>{typeLike(call, 0, shape), TensorType{DataType::int64(), shape, ""}};
  };
  def.build = [](const OpCall& call) -> Expected<OpKernel> {
    auto p = topKParams(call);
    if (!p) return p.error();
    auto w = topK(*p, call.inputTypes[0].dtype);
    if (!w) return atNode(call, w.error());
    // A node that leaves out Indices still gets them computed; they are not returned.
    if (call.outputCount == 1) w->outputs.resize(1);
    return makeKernel(std::move(*w), {0}, [](const Workload& workload, const Target& target) {
      return defaultTopKSchedule(workload, target);
    });
  };
  return def;
}

}  // namespace

void registerScanOps(OpRegistry& registry) {
  registry.add(cumSumDef());
  registry.add(topKDef());
}

}  // namespace tessel::graph::nn
