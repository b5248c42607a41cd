// Softmax, LogSoftmax and Hardmax, with the axis semantics of the node's opset.
#include "compiler/opdefs/NeuralNetSupport.h"
#include "compiler/ops/Softmax.h"

namespace tessel::graph::nn {

namespace {

enum class SoftmaxKind { Softmax, LogSoftmax, Hardmax };

// Before opset 13 the input is coerced to 2-D at `axis` (default 1); from 13 on the
// operator normalizes along one axis (default -1). Opset 0 (unknown) takes the newest.
Expected<SoftmaxParams> softmaxParams(const OpCall& call, SoftmaxKind kind) {
  if (auto e = requireFloat(call, 0, "input")) return *e;
  if (auto e = requireRank(call, 0, 1, "input", true)) return *e;
  bool coerced = call.opset != 0 && call.opset < 13;
  auto axis = call.intAttr("axis", coerced ? 1 : -1);
  if (!axis) return axis.error();
  SoftmaxParams p;
  p.shape = call.inputTypes[0].shape;
  auto resolved = resolveAxis(call, *axis, int64_t(p.shape.size()));
  if (!resolved) return resolved.error();
  p.axis = *resolved;
  p.logSoftmax = kind == SoftmaxKind::LogSoftmax;
  p.flattenFromAxis = coerced;
  return p;
}

OpDef softmaxDef(const char* name, SoftmaxKind kind) {
  OpDef def;
  def.name = name;
  def.pattern = OpPattern::CommReduce;
  def.inferTypes = [kind](const OpCall& call) -> Expected<std::vector<TensorType>> {
    auto p = softmaxParams(call, kind);
    if (!p) return p.error();
    return std::vector<TensorType>{typeLike(call, 0, p->shape)};
  };
  def.build = [kind](const OpCall& call) -> Expected<OpKernel> {
    auto p = softmaxParams(call, kind);
    if (!p) return p.error();
    DataType dtype = call.inputTypes[0].dtype;
    SoftmaxParams params = *p;
    if (kind == SoftmaxKind::Hardmax) {
      auto w = hardmax(params, dtype);
      if (!w) return atNode(call, w.error());
      return makeKernel(std::move(*w), {0}, [params](const Workload& workload, const Target& target) {
        return defaultHardmaxSchedule(workload, params, target);
      });
    }
    auto w = softmax(params, dtype);
    if (!w) return atNode(call, w.error());
    return makeKernel(std::move(*w), {0}, [params](const Workload& workload, const Target& target) {
      return defaultSoftmaxSchedule(workload, params, target);
    });
  };
  return def;
}

}  // namespace

void registerSoftmaxOps(OpRegistry& registry) {
  registry.add(softmaxDef("Softmax", SoftmaxKind::Softmax));
  registry.add(softmaxDef("LogSoftmax", SoftmaxKind::LogSoftmax));
  registry.add(softmaxDef("Hardmax", SoftmaxKind::Hardmax));
}

}  // namespace tessel::graph::nn
