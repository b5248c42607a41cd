// ONNX Gemm compute and default schedule, built on the packed matmul kernel.
#include "compiler/ops/Gemm.h"

#include "compiler/ops/Matmul.h"
#include "core/ir/IROperators.h"

namespace tessel {

namespace {
// C only matters when it is scaled by a nonzero beta.
bool addsBias(const GemmParams& p) { return p.biasShape && p.beta != 0.0; }
bool plainProduct(const GemmParams& p) { return !p.transA && !addsBias(p) && p.alpha == 1.0; }

}  // namespace

std::string GemmParams::validate() const {
  if (m < 1 || n < 1 || k < 1) return "m, n and k must be positive";
  if (biasShape) {
    const auto& c = *biasShape;
    if (c.size() > 2) return "C has rank " + std::to_string(c.size()) + "; it must broadcast to [m, n]";
    for (size_t d = 0; d < c.size(); ++d) {
      int64_t want = (d + 2 - c.size()) == 0 ? m : n;
      if (c[d] != 1 && c[d] != want)
        return "C of shape " + shapeName(c) + " does not broadcast to " + std::to_string(m) + "x" + std::to_string(n);
    }
  }
  return "";
}

Expected<Workload> gemm(const GemmParams& p, DataType dtype, const Target& target) {
  if (std::string problem = p.validate(); !problem.empty())
    return Diagnostic{problem, "Gemm", 0, 0, "A' is [m, k], B' is [k, n], C broadcasts to [m, n]"};
  if (plainProduct(p)) return p.transB ? dense(p.m, p.n, p.k, dtype, target) : matmul(p.m, p.n, p.k, dtype, target);
  // The same packed compute as matmul/dense (B in panels of two vectors, zero past n), with
  // A possibly stored transposed; the output stage scales and adds the bias per element.
  int64_t m = p.m, n = p.n, k = p.k;
  te::Tensor A = p.transA ? te::placeholder({Expr(k), Expr(m)}, dtype, "A") : te::placeholder({Expr(m), Expr(k)}, dtype, "A");
  te::Tensor B = p.transB ? te::placeholder({Expr(n), Expr(k)}, dtype, "B") : te::placeholder({Expr(k), Expr(n)}, dtype, "B");
  int64_t bn = matmulPanelWidth(n, target);
  te::Tensor packed = packMatmulB(B, n, k, p.transB, target);
  IterVar kk = te::reduceAxis(Expr(k), "k");
  te::Tensor C = te::compute(
      {Expr(m), Expr(n)},
      [&](Var i, Var j) { return te::sum((p.transA ? A(kk, i) : A(i, kk)) * packed(j / bn, kk, j % bn), {kk}); }, "C",
      {"i", "j"}, "gemm");
  te::Tensor bias;
  if (addsBias(p)) {
    std::vector<Expr> shape;
    for (int64_t d : *p.biasShape) shape.push_back(Expr(d));
    bias = te::placeholder(shape, dtype, "bias");
  }
  te::Tensor out = te::compute(
      {Expr(m), Expr(n)},
      [&](Var i, Var j) {
        Expr value = p.alpha == 1.0 ? Expr(C(i, j)) : makeConst(dtype, p.alpha) * C(i, j);
        if (!addsBias(p)) return value;
        const auto& c = *p.biasShape;
        std::vector<Expr> at;
        for (size_t d = 0; d < c.size(); ++d) at.push_back(c[d] == 1 ? Expr(0) : (d + 2 - c.size() == 0 ? Expr(i) : Expr(j)));
        Expr term = p.beta == 1.0 ? bias(at) : makeConst(dtype, p.beta) * bias(at);
        return value + term;
      },
      "out", {"i", "j"}, "gemm.epilogue");
  Workload w;
  w.name = std::string("gemm_") + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
           (p.transA ? "_tA" : "") + (p.transB ? "_tB" : "") + (addsBias(p) ? "_c" + shapeName(*p.biasShape) : "");
  w.inputs = {A, B};
  if (addsBias(p)) w.inputs.push_back(bias);
  w.outputs = {out};
  w.flops = 2.0 * double(m) * double(n) * double(k) + 2.0 * double(m) * double(n);
  return w;
}

Expected<Schedule> defaultGemmSchedule(const Workload& workload, const Target& target) {
  const te::Tensor& out = workload.outputs[0];
  if (out.name() == "C") return defaultMatmulSchedule(workload, target);
  // The matmul schedule of a product of the same size, replayed on this pipeline: its
  // register tile (cache_write of C into C.local) stays; C, now a plain copy of the tile,
  // is inlined into "out", which takes every loop primitive matmul applied to its C. One
  // source of truth for the tiling, so a faster matmul schedule makes Gemm faster too.
  int64_t m = *asConstInt(out.shape()[0]), n = *asConstInt(out.shape()[1]);
  const auto* epilogue = te::asCompute(out.op());
  TESSEL_ICHECK(epilogue) << "gemm output is not a compute";
  int64_t k = 0;
  for (const te::Tensor& input : epilogue->inputs)
    if (input.name() == "C")
      if (const auto* c = te::asCompute(input.op())) k = *asConstInt(c->reduceAxes[0]->dom.extent);
  TESSEL_ICHECK(k > 0) << "gemm workload without its reduction stage C";
  Workload product = matmul(m, n, k, out.dtype(), target);
  auto reference = defaultMatmulSchedule(product, target);
  if (!reference) return reference.error();
  Schedule s(workload.outputs);
  for (Primitive step : reference->trace().primitives) {
    if (step.kind == PrimitiveKind::CacheWrite) {
      if (Status st = s.apply(step); !st) return st.error();
      if (Status st = s.computeInline("C"); !st) return st.error();
      continue;
    }
    if (step.stage == "C") step.stage = "out";
    if (step.kind == PrimitiveKind::ComputeAt && step.target == "C") step.target = "out";
    if (Status st = s.apply(step); !st) return st.error();
  }
  return s;
}

}  // namespace tessel
