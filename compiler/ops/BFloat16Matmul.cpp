// The bfloat16 matmul on the BF16 tensor intrinsic: compute and default schedule.
#include "compiler/ops/BFloat16Matmul.h"

#include "compiler/schedule/TensorIntrinsic.h"
#include "core/ir/IROperators.h"

namespace tessel {

Workload bfloat16Matmul(int64_t m, int64_t n, int64_t k) {
  DataType bf16 = DataType::bfloat16(), f32 = DataType::float32();
  te::Tensor A = te::placeholder({Expr(m), Expr(k)}, bf16, "A");
  te::Tensor W = te::placeholder({Expr(n / 16), Expr(k / 2), Expr(int64_t(16)), Expr(int64_t(2))}, bf16, "W");
  IterVar r = te::reduceAxis(Expr(k), "k");
  te::Tensor C = te::compute(
      {Expr(m), Expr(n)},
      [&](Var i, Var j) { return te::sum(cast(f32, A(i, r)) * cast(f32, W(j / 16, r / 2, j % 16, r % 2)), {r}); },
      "C", {"i", "j"}, "matmul");
  Workload w;
  w.name = "bf16_matmul_" + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  w.inputs = {A, W};
  w.outputs = {C};
  w.flops = 2.0 * double(m) * double(n) * double(k);
  return w;
}

Expected<Schedule> defaultBFloat16MatmulSchedule(const Workload& workload, const Target& target) {
  const int64_t* m = asConstInt(workload.outputs[0].shape()[0]);
  const int64_t* n = asConstInt(workload.outputs[0].shape()[1]);
  const int64_t* k = workload.inputs.empty() ? nullptr : asConstInt(workload.inputs[0].shape().back());
  const TensorIntrinsic* intrinsic = findTensorIntrinsic(target.vectorLanes() >= 16 ? "dot_16x2_bf16" : "dot_8x2_bf16");
  if (!m || !n || !k || *n % 16 != 0 || *k % 2 != 0)
    return Diagnostic{"bf16_matmul needs n a multiple of 16 and k a multiple of 2", workload.name, 0, 0,
                      "the packed weight holds blocks of 16 columns by 2 reduction elements"};
  int64_t rows = *m % 4 == 0 ? 4 : *m % 2 == 0 ? 2 : 1;
  Schedule s(workload.outputs);
  std::vector<Status> steps = {
      s.split("C", "j", intrinsic->lanes, "jo", "ji"), s.split("C", "k", 2, "ko", "ki"),
      s.split("C", "i", rows, "io", "ii"),             s.reorder("C", {"jo", "io", "ko", "ii", "ji", "ki"}),
      s.unroll("C", "ii"),                             s.parallel("C", "jo"),
      s.tensorize("C", "ji", intrinsic->name),
  };
  for (const Status& status : steps)
    if (!status) return status.error();
  return s;
}

}  // namespace tessel
