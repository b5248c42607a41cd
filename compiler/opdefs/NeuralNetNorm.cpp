// Normalization operators: BatchNormalization (inference), InstanceNormalization,
// LayerNormalization, LpNormalization, MeanVarianceNormalization and LRN.
#include "compiler/opdefs/NeuralNetSupport.h"
#include "compiler/ops/Normalization.h"

namespace tessel::graph::nn {

namespace {

// An error unless input `i` is a vector of `extent` elements (per-channel parameters).
std::optional<Diagnostic> requireVector(const OpCall& call, size_t i, int64_t extent, const char* role) {
  if (call.inputTypes[i].shape == std::vector<int64_t>{extent}) return std::nullopt;
  return call.error(std::string(role) + " has shape " + shapeName(call.inputTypes[i].shape) + ", expected [" +
                    std::to_string(extent) + "] (one per channel)");
}

// BatchNormalization's inference parameters, and whether it runs in training mode.
struct BatchNormSetup {
  NormParams norm;
  bool training = false;
  double momentum = 0.9;
};

Expected<BatchNormSetup> batchNormParams(const OpCall& call) {
  if (auto e = requireFloat(call, 0, "X")) return *e;
  if (auto e = requireRank(call, 0, 2, "X", true)) return *e;
  auto training = call.intAttr("training_mode", 0);
  if (!training) return training.error();
  // Before opset 14 extra outputs meant training; from 14 the attribute says so.
  bool trains = *training != 0 || (call.opset != 0 && call.opset < 14 && call.outputCount > 1);
  if (trains && (call.opset != 0 && call.opset < 14))
    return call.error("training mode before opset 14 (saved mean and variance outputs) is not supported",
                      "export the model for inference (one output)");
  if (!trains && call.outputCount > 1)
    return call.error("has " + std::to_string(call.outputCount) + " outputs without training_mode",
                      "inference BatchNormalization has one output");
  auto spatial = call.intAttr("spatial", 1);
  if (!spatial) return spatial.error();
  if (*spatial == 0)
    return call.error("spatial=0 (statistics per activation, opset 7-8) is not supported");
  auto epsilon = call.floatAttr("epsilon", 1e-5);
  if (!epsilon) return epsilon.error();
  int64_t channels = call.inputTypes[0].shape[1];
  const char* roles[] = {"X", "scale", "B", "input_mean", "input_var"};
  for (size_t i = 1; i < 5; ++i)
    if (auto e = requireVector(call, i, channels, roles[i])) return *e;
  auto momentum = call.floatAttr("momentum", 0.9);
  if (!momentum) return momentum.error();
  BatchNormSetup setup;
  setup.norm.kind = NormKind::Batch;
  setup.norm.shape = call.inputTypes[0].shape;
  setup.norm.epsilon = *epsilon;
  setup.training = trains;
  setup.momentum = *momentum;
  return setup;
}

Expected<NormParams> instanceNormParams(const OpCall& call) {
  if (auto e = requireFloat(call, 0, "input")) return *e;
  if (auto e = requireRank(call, 0, 3, "input", true)) return *e;
  auto epsilon = call.floatAttr("epsilon", 1e-5);
  if (!epsilon) return epsilon.error();
  int64_t channels = call.inputTypes[0].shape[1];
  if (auto e = requireVector(call, 1, channels, "scale")) return *e;
  if (auto e = requireVector(call, 2, channels, "B")) return *e;
  NormParams p;
  p.kind = NormKind::Instance;
  p.shape = call.inputTypes[0].shape;
  p.epsilon = *epsilon;
  return p;
}

Expected<NormParams> layerNormParams(const OpCall& call) {
  if (auto e = requireFloat(call, 0, "X")) return *e;
  if (auto e = requireRank(call, 0, 1, "X", true)) return *e;
  auto axisAttr = call.intAttr("axis", -1);
  if (!axisAttr) return axisAttr.error();
  const auto& shape = call.inputTypes[0].shape;
  auto axis = resolveAxis(call, *axisAttr, int64_t(shape.size()));
  if (!axis) return axis.error();
  auto epsilon = call.floatAttr("epsilon", 1e-5);
  if (!epsilon) return epsilon.error();
  std::vector<int64_t> normalized(shape.begin() + *axis, shape.end());
  // Scale and B broadcast to the normalized shape in ONNX; Tessel takes them at that shape.
  for (size_t i = 1; i < 3; ++i) {
    if (!call.hasInput(i)) continue;
    if (call.inputTypes[i].shape != normalized)
      return call.error(std::string(i == 1 ? "Scale" : "B") + " has shape " + shapeName(call.inputTypes[i].shape) +
                            ", expected " + shapeName(normalized) + " (the normalized axes)",
                        "broadcast scale and bias to the normalized shape before exporting");
  }
  NormParams p;
  p.kind = NormKind::Layer;
  p.shape = shape;
  p.axis = *axis;
  p.epsilon = *epsilon;
  p.hasBias = call.hasInput(2);
  p.statisticsOutputs = call.outputCount > 1;
  return p;
}

// BatchNormalization: the inference form folds the running statistics into a per-channel
// scale and shift; training mode (opset 14+) normalizes with the batch's own statistics and
// also returns the updated running statistics.
OpDef batchNormDef() {
  OpDef def;
  def.name = "BatchNormalization";
  def.pattern = OpPattern::CommReduce;
  def.minInputs = 5;
  def.maxInputs = 5;
  def.maxOutputs = 5;
  def.inferTypes = [](const OpCall& call) -> Expected<std::vector<TensorType>> {
    auto p = batchNormParams(call);
    if (!p) return p.error();
    std::vector<TensorType> types = {typeLike(call, 0, p->norm.shape)};
    if (p->training)
      for (int k = 1; k < call.outputCount; ++k) types.push_back(typeLike(call, 0, {p->norm.shape[1]}));
    return types;
  };
  def.build = [](const OpCall& call) -> Expected<OpKernel> {
    auto p = batchNormParams(call);
    if (!p) return p.error();
    if (p->training) {
      auto w = batchNormalizationTraining(p->norm.shape, p->norm.epsilon, p->momentum, call.inputTypes[0].dtype);
      if (!w) return atNode(call, w.error());
      w->outputs.resize(size_t(call.outputCount));
      return makeKernel(std::move(*w), {0, 1, 2, 3, 4}, [](const Workload& workload, const Target& target) {
        return defaultSimpleNormalizationSchedule(workload, target);
      });
    }
    auto w = normalization(p->norm, call.inputTypes[0].dtype);
    if (!w) return atNode(call, w.error());
    NormParams params = p->norm;
    return makeKernel(std::move(*w), {0, 1, 2, 3, 4}, [params](const Workload& workload, const Target& target) {
      return defaultNormalizationSchedule(workload, params, target);
    });
  };
  return def;
}

using ParamsOf = Expected<NormParams> (*)(const OpCall&);

OpDef normDef(const char* name, int minInputs, int maxInputs, int maxOutputs, ParamsOf paramsOf) {
  OpDef def;
  def.name = name;
  def.pattern = OpPattern::CommReduce;
  def.minInputs = minInputs;
  def.maxInputs = maxInputs;
  def.maxOutputs = maxOutputs;
  def.inferTypes = [paramsOf](const OpCall& call) -> Expected<std::vector<TensorType>> {
    auto p = paramsOf(call);
    if (!p) return p.error();
    std::vector<TensorType> types = {typeLike(call, 0, p->shape)};
    if (p->statisticsOutputs) {
      std::vector<int64_t> kept = p->shape;
      std::fill(kept.begin() + p->axis, kept.end(), 1);
      types.push_back(typeLike(call, 0, kept));
      types.push_back(typeLike(call, 0, kept));
    }
    return types;
  };
  def.build = [paramsOf](const OpCall& call) -> Expected<OpKernel> {
    auto p = paramsOf(call);
    if (!p) return p.error();
    auto w = normalization(*p, call.inputTypes[0].dtype);
    if (!w) return atNode(call, w.error());
    // LayerNormalization may ask for Mean without InvStdDev.
    if (int(w->outputs.size()) > call.outputCount) w->outputs.resize(size_t(call.outputCount));
    std::vector<int> inputs;
    for (int i = 0; i < int(w->inputs.size()); ++i) inputs.push_back(i);
    NormParams params = *p;
    return makeKernel(std::move(*w), inputs, [params](const Workload& workload, const Target& target) {
      return defaultNormalizationSchedule(workload, params, target);
    });
  };
  return def;
}

// An operator whose output has its input's type and whose kernel comes from `make`.
using MakeWorkload = std::function<Expected<Workload>(const OpCall&)>;
OpDef sameShapeNormDef(const char* name, MakeWorkload make) {
  OpDef def;
  def.name = name;
  def.pattern = OpPattern::CommReduce;
  def.inferTypes = [make](const OpCall& call) -> Expected<std::vector<TensorType>> {
    // Building the workload checks every attribute; the kernel is not compiled here.
    auto w = make(call);
    if (!w) return w.error();
    return std::vector<TensorType>{typeLike(call, 0, call.inputTypes[0].shape)};
  };
  def.build = [make](const OpCall& call) -> Expected<OpKernel> {
    auto w = make(call);
    if (!w) return w.error();
    return makeKernel(std::move(*w), {0}, [](const Workload& workload, const Target& target) {
      return defaultSimpleNormalizationSchedule(workload, target);
    });
  };
  return def;
}

Expected<Workload> lpNormalizationWorkload(const OpCall& call) {
  if (auto e = requireFloat(call, 0, "input")) return *e;
  auto axis = call.intAttr("axis", -1);
  if (!axis) return axis.error();
  auto p = call.intAttr("p", 2);
  if (!p) return p.error();
  auto w = lpNormalization(call.inputTypes[0].shape, *axis, *p, call.inputTypes[0].dtype);
  if (!w) return atNode(call, w.error());
  return w;
}

Expected<Workload> mvnWorkload(const OpCall& call) {
  if (auto e = requireFloat(call, 0, "X")) return *e;
  auto axes = call.intsAttr("axes", {0, 2, 3});
  if (!axes) return axes.error();
  auto w = meanVarianceNormalization(call.inputTypes[0].shape, *axes, call.inputTypes[0].dtype);
  if (!w) return atNode(call, w.error());
  return w;
}

Expected<Workload> lrnWorkload(const OpCall& call) {
  if (auto e = requireFloat(call, 0, "X")) return *e;
  LrnParams p;
  p.shape = call.inputTypes[0].shape;
  if (!call.hasAttr("size")) return call.error("the size attribute is required");
  auto size = call.intAttr("size", 1);
  if (!size) return size.error();
  auto alpha = call.floatAttr("alpha", 1e-4);
  if (!alpha) return alpha.error();
  auto beta = call.floatAttr("beta", 0.75);
  if (!beta) return beta.error();
  auto bias = call.floatAttr("bias", 1.0);
  if (!bias) return bias.error();
  p.size = *size;
  p.alpha = *alpha;
  p.beta = *beta;
  p.bias = *bias;
  auto w = localResponseNormalization(p, call.inputTypes[0].dtype);
  if (!w) return atNode(call, w.error());
  return w;
}

}  // namespace

void registerNormalizationOps(OpRegistry& registry) {
  registry.add(sameShapeNormDef("LpNormalization", lpNormalizationWorkload));
  registry.add(sameShapeNormDef("MeanVarianceNormalization", mvnWorkload));
  registry.add(sameShapeNormDef("LRN", lrnWorkload));
  registry.add(batchNormDef());
  registry.add(normDef("InstanceNormalization", 3, 3, 1, instanceNormParams));
  registry.add(normDef("LayerNormalization", 2, 3, 3, layerNormParams));
}

}  // namespace tessel::graph::nn
