// Registration of the layout operators AlterLayout introduces: convolutions and matrix
// products whose constant weights were packed at compile time into the layout their kernels
// read, so no kernel repacks a weight on every call.
#include "compiler/opdefs/OpRegistry.h"
#include "compiler/ops/Conv2d.h"
#include "compiler/ops/Matmul.h"
#include "compiler/ops/PackedConvParams.h"

namespace tessel::graph {

namespace {
std::string shapeText(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

// The convolution a ConvPrepacked node stands for: its Conv attributes, with the original
// OIHW weight shape kept in "weight_shape" (the packed input no longer shows it).
Expected<Conv2dParams> prepackedConvParams(const OpCall& call) {
  auto weightShape = call.intsAttr("weight_shape", {});
  if (!weightShape) return weightShape.error();
  if (weightShape->size() != 4)
    return call.error("attribute 'weight_shape' must hold the 4 dimensions of the original OIHW weight",
                      "ConvPrepacked nodes are made by AlterLayout; rerun it on the Conv");
  auto params = conv2dParamsFromOnnx(call.attributes, call.inputTypes[0].shape, *weightShape, call.hasInput(2));
  if (!params) return call.error(params.error().message, params.error().hint);
  std::vector<int64_t> expected = conv2dPackedWeightShape(*params, call.target);
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
    TensorType out{call.inputTypes[0].dtype, {p->batch, p->filters, p->outHeight(), p->outWidth()}, ""};
    return std::vector<TensorType>{out};
  };
  def.build = [](const OpCall& call) -> Expected<OpKernel> {
    auto p = prepackedConvParams(call);
    if (!p) return p.error();
    OpKernel kernel;
    kernel.workload = conv2d(*p, Conv2dWeightLayout::Packed, call.inputTypes[0].dtype, call.target);
    kernel.inputIndices = {0, 1};
    if (p->bias) kernel.inputIndices.push_back(2);
    Conv2dParams params = *p;
    kernel.schedule = [params](const Workload& w, const ScheduleTarget& target) {
      return defaultConv2dSchedule(w, params, target);
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
    kernel.schedule = [](const Workload& w, const ScheduleTarget& target) { return defaultMatmulSchedule(w, target); };
    return kernel;
  };
  return def;
}
}  // namespace

void registerLayoutOps(OpRegistry& registry) {
  registry.add(convPrepacked());
  registry.add(densePrepacked());
}

}  // namespace tessel::graph
