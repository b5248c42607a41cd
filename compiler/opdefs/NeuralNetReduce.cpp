// Reductions: ReduceSum/Mean/Max/Min/Prod/SumSquare/L1/L2/LogSum/LogSumExp and ArgMax/ArgMin.
#include "compiler/opdefs/NeuralNetSupport.h"
#include "compiler/ops/Reduction.h"

namespace tessel::graph::nn {

namespace {

// The axes come from an input (ReduceSum from opset 13, every reduction from opset 18) or
// from the `axes` attribute (before).
Expected<ReduceParams> reduceParams(const OpCall& call, ReduceKind kind) {
  bool floatOnly = kind == ReduceKind::Mean || kind == ReduceKind::L2 || kind == ReduceKind::LogSum ||
                   kind == ReduceKind::LogSumExp;
  if (floatOnly) {
    if (auto e = requireFloat(call, 0, "data")) return *e;
  } else if (auto e = requireNumeric(call, 0, "data")) {
    return *e;
  }
  ReduceParams p;
  p.kind = kind;
  p.shape = call.inputTypes[0].shape;
  if (call.hasInput(1)) {
    auto axes = call.constantInts(1, "axes");
    if (!axes) return axes.error();
    p.axes = *axes;
  } else {
    auto axes = call.intsAttr("axes", {});
    if (!axes) return axes.error();
    p.axes = *axes;
  }
  auto keepDims = call.intAttr("keepdims", 1);
  if (!keepDims) return keepDims.error();
  p.keepDims = *keepDims != 0;
  auto noop = call.intAttr("noop_with_empty_axes", 0);
  if (!noop) return noop.error();
  p.noopWithEmptyAxes = *noop != 0;
  auto resolved = p.resolvedAxes();
  if (!resolved) return atNode(call, resolved.error());
  return p;
}

std::vector<int64_t> reducedShape(const ReduceParams& p) {
  auto reduced = *p.resolvedAxes();
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < int64_t(p.shape.size()); ++d) {
    bool isReduced = std::find(reduced.begin(), reduced.end(), d) != reduced.end();
    if (!isReduced) shape.push_back(p.shape[size_t(d)]);
    else if (p.keepDims) shape.push_back(1);
  }
  return shape;
}

OpDef reduceDef(const char* name, ReduceKind kind) {
  OpDef def;
  def.name = name;
  def.pattern = OpPattern::CommReduce;
  def.maxInputs = 2;
  def.valueInputs = {1};
  def.inferTypes = [kind](const OpCall& call) -> Expected<std::vector<TensorType>> {
    auto p = reduceParams(call, kind);
    if (!p) return p.error();
    return std::vector<TensorType>{typeLike(call, 0, reducedShape(*p))};
  };
  def.build = [kind](const OpCall& call) -> Expected<OpKernel> {
    auto p = reduceParams(call, kind);
    if (!p) return p.error();
    auto w = reduce(*p, call.inputTypes[0].dtype);
    if (!w) return atNode(call, w.error());
    ReduceParams params = *p;
    return makeKernel(std::move(*w), {0}, [params](const Workload& workload, const Target& target) {
      return defaultReduceSchedule(workload, params, target);
    });
  };
  return def;
}

Expected<ArgReduceParams> argParams(const OpCall& call, bool isMax) {
  if (auto e = requireNumeric(call, 0, "data")) return *e;
  if (auto e = requireRank(call, 0, 1, "data", true)) return *e;
  ArgReduceParams p;
  p.isMax = isMax;
  p.shape = call.inputTypes[0].shape;
  auto axis = call.intAttr("axis", 0);
  if (!axis) return axis.error();
  auto resolved = resolveAxis(call, *axis, int64_t(p.shape.size()));
  if (!resolved) return resolved.error();
  p.axis = *resolved;
  auto keepDims = call.intAttr("keepdims", 1);
  if (!keepDims) return keepDims.error();
  p.keepDims = *keepDims != 0;
  auto last = call.intAttr("select_last_index", 0);
  if (!last) return last.error();
  p.selectLastIndex = *last != 0;
  return p;
}

OpDef argDef(const char* name, bool isMax) {
  OpDef def;
  def.name = name;
  def.pattern = OpPattern::CommReduce;
  def.inferTypes = [isMax](const OpCall& call) -> Expected<std::vector<TensorType>> {
    auto p = argParams(call, isMax);
    if (!p) return p.error();
    std::vector<int64_t> shape = p->shape;
    if (p->keepDims) shape[size_t(p->axis)] = 1;
    else shape.erase(shape.begin() + p->axis);
    return std::vector<TensorType>{TensorType{DataType::int64(), shape, ""}};
  };
  def.build = [isMax](const OpCall& call) -> Expected<OpKernel> {
    auto p = argParams(call, isMax);
    if (!p) return p.error();
    auto w = argReduce(*p, call.inputTypes[0].dtype);
    if (!w) return atNode(call, w.error());
    return makeKernel(std::move(*w), {0}, [](const Workload& workload, const Target& target) {
      return defaultArgReduceSchedule(workload, target);
    });
  };
  return def;
}

}  // namespace

void registerReductionOps(OpRegistry& registry) {
  registry.add(reduceDef("ReduceSum", ReduceKind::Sum));
  registry.add(reduceDef("ReduceMean", ReduceKind::Mean));
  registry.add(reduceDef("ReduceMax", ReduceKind::Max));
  registry.add(reduceDef("ReduceMin", ReduceKind::Min));
  registry.add(reduceDef("ReduceProd", ReduceKind::Prod));
  registry.add(reduceDef("ReduceSumSquare", ReduceKind::SumSquare));
  registry.add(reduceDef("ReduceL1", ReduceKind::L1));
  registry.add(reduceDef("ReduceL2", ReduceKind::L2));
  registry.add(reduceDef("ReduceLogSum", ReduceKind::LogSum));
  registry.add(reduceDef("ReduceLogSumExp", ReduceKind::LogSumExp));
  registry.add(argDef("ArgMax", true));
  registry.add(argDef("ArgMin", false));
}

}  // namespace tessel::graph::nn
