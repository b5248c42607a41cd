// Matrix products: ONNX MatMul (numpy.matmul semantics), Gemm and Einsum.
#include "compiler/opdefs/NeuralNetSupport.h"
#include "compiler/ops/BatchMatmul.h"
#include "compiler/ops/Einsum.h"
#include "compiler/ops/Gemm.h"
#include "compiler/ops/Matmul.h"

namespace tessel::graph::nn {

namespace {

OpDef matmulDef() {
  OpDef def;
  def.name = "MatMul";
  def.pattern = OpPattern::OutElemwiseFusable;
  def.minInputs = 2;
  def.maxInputs = 2;
  def.inferTypes = [](const OpCall& call) -> Expected<std::vector<TensorType>> {
    if (auto e = requireNumeric(call, 0, "A")) return *e;
    if (call.inputTypes[1].dtype != call.inputTypes[0].dtype)
      return call.error("A is " + call.inputTypes[0].dtype.toString() + " but B is " +
                        call.inputTypes[1].dtype.toString());
    auto shape = batchMatmulOutputShape(call.inputTypes[0].shape, call.inputTypes[1].shape);
    if (!shape) return atNode(call, shape.error());
    return std::vector<TensorType>{typeLike(call, 0, *shape)};
  };
  def.build = [](const OpCall& call) -> Expected<OpKernel> {
    const auto& a = call.inputTypes[0].shape;
    const auto& b = call.inputTypes[1].shape;
    DataType dtype = call.inputTypes[0].dtype;
    // Plain 2-D float products take the packed, register-tiled matmul kernel.
    if (a.size() == 2 && b.size() == 2 && dtype == DataType::float32() && a[1] == b[0]) {
      Workload w = matmul(a[0], b[1], a[1], dtype, call.target);
      return makeKernel(std::move(w), {0, 1}, [](const Workload& workload, const Target& target) {
        return defaultMatmulSchedule(workload, target);
      });
    }
    BatchMatmulParams p{a, b};
    auto w = batchMatmul(p, dtype, call.target);
    if (!w) return atNode(call, w.error());
    return makeKernel(std::move(*w), {0, 1}, [p](const Workload& workload, const Target& target) {
      return defaultBatchMatmulSchedule(workload, p, target);
    });
  };
  return def;
}

// Gemm's attributes and shapes as GemmParams.
Expected<GemmParams> gemmParams(const OpCall& call) {
  if (auto e = requireFloat(call, 0, "A")) return *e;
  if (auto e = requireRank(call, 0, 2, "A")) return *e;
  if (auto e = requireRank(call, 1, 2, "B")) return *e;
  auto transA = call.intAttr("transA", 0);
  if (!transA) return transA.error();
  auto transB = call.intAttr("transB", 0);
  if (!transB) return transB.error();
  auto alpha = call.floatAttr("alpha", 1.0);
  if (!alpha) return alpha.error();
  auto beta = call.floatAttr("beta", 1.0);
  if (!beta) return beta.error();
  const auto& a = call.inputTypes[0].shape;
  const auto& b = call.inputTypes[1].shape;
  GemmParams p;
  p.transA = *transA != 0;
  p.transB = *transB != 0;
  p.alpha = *alpha;
  p.beta = *beta;
  p.m = p.transA ? a[1] : a[0];
  p.k = p.transA ? a[0] : a[1];
  p.n = p.transB ? b[0] : b[1];
  int64_t bk = p.transB ? b[1] : b[0];
  if (bk != p.k)
    return call.error("A' is " + std::to_string(p.m) + "x" + std::to_string(p.k) + " but B' is " +
                          std::to_string(bk) + "x" + std::to_string(p.n),
                      "check transA and transB");
  if (call.hasInput(2)) p.biasShape = call.inputTypes[2].shape;
  if (std::string problem = p.validate(); !problem.empty()) return call.error(problem);
  return p;
}

OpDef gemmDef() {
  OpDef def;
  def.name = "Gemm";
  def.pattern = OpPattern::OutElemwiseFusable;
  def.minInputs = 2;
  def.maxInputs = 3;
  def.inferTypes = [](const OpCall& call) -> Expected<std::vector<TensorType>> {
    auto p = gemmParams(call);
    if (!p) return p.error();
    return std::vector<TensorType>{typeLike(call, 0, {p->m, p->n})};
  };
  def.build = [](const OpCall& call) -> Expected<OpKernel> {
    auto p = gemmParams(call);
    if (!p) return p.error();
    auto w = gemm(*p, call.inputTypes[0].dtype, call.target);
    if (!w) return atNode(call, w.error());
    // gemm() takes C only when it contributes (a C scaled by 0 is no input).
    std::vector<int> inputs = {0, 1};
    if (w->inputs.size() == 3) inputs.push_back(2);
    return makeKernel(std::move(*w), inputs, [](const Workload& workload, const Target& target) {
      return defaultGemmSchedule(workload, target);
    });
  };
  return def;
}

Expected<EinsumParams> einsumParams(const OpCall& call) {
  if (!call.hasAttr("equation")) return call.error("the equation attribute is required");
  auto equation = call.stringAttr("equation", "");
  if (!equation) return equation.error();
  EinsumParams p;
  p.equation = *equation;
  for (size_t i = 0; i < call.inputTypes.size(); ++i) {
    if (auto e = requireNumeric(call, i, "an operand")) return *e;
    if (call.inputTypes[i].dtype != call.inputTypes[0].dtype)
      return call.error("operands have different element types");
    p.shapes.push_back(call.inputTypes[i].shape);
  }
  return p;
}

OpDef einsumDef() {
  OpDef def;
  def.name = "Einsum";
  def.pattern = OpPattern::Opaque;
  def.minInputs = 1;
  def.maxInputs = -1;
  def.inferTypes = [](const OpCall& call) -> Expected<std::vector<TensorType>> {
    auto p = einsumParams(call);
    if (!p) return p.error();
    auto shape = einsumOutputShape(*p);
    if (!shape) return atNode(call, shape.error());
    return std::vector<TensorType>{typeLike(call, 0, *shape)};
  };
  def.build = [](const OpCall& call) -> Expected<OpKernel> {
    auto p = einsumParams(call);
    if (!p) return p.error();
    auto w = einsum(*p, call.inputTypes[0].dtype);
    if (!w) return atNode(call, w.error());
    std::vector<int> inputs;
    for (int i = 0; i < int(p->shapes.size()); ++i) inputs.push_back(i);
    return makeKernel(std::move(*w), inputs, [](const Workload& workload, const Target& target) {
      return defaultEinsumSchedule(workload, target);
    });
  };
  return def;
}

}  // namespace

void registerMatmulOps(OpRegistry& registry) {
  registry.add(matmulDef());
  registry.add(gemmDef());
  registry.add(einsumDef());
}

}  // namespace tessel::graph::nn
