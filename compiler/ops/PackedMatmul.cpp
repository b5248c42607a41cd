// Matmuls on the tensor intrinsics: compute and default schedules.
#include "compiler/ops/PackedMatmul.h"

#include "compiler/schedule/TensorIntrinsic.h"
#include "core/ir/IROperators.h"

namespace tessel {

namespace {
// Elements of A (and W) in one packed 32-bit word.
int64_t wordElements(PackedMatmulKind kind) { return kind == PackedMatmulKind::BFloat16 ? 2 : 4; }
}  // namespace

std::string packedMatmulProblem(int64_t m, int64_t n, int64_t k, PackedMatmulKind kind) {
  const int64_t g = wordElements(kind);
  if (m >= 1 && n >= 16 && n % 16 == 0 && k >= g && k % g == 0) return "";
  return std::string(kind == PackedMatmulKind::BFloat16 ? "bf16_matmul" : "int8_matmul") +
         ": n must be a multiple of 16 and k of " + std::to_string(g) + " (the weight is packed in [16][" +
         std::to_string(g) + "] blocks), m at least 1";
}

Workload packedMatmul(int64_t m, int64_t n, int64_t k, PackedMatmulKind kind) {
  const bool bf16 = kind == PackedMatmulKind::BFloat16;
  const int64_t g = wordElements(kind);
  DataType a = bf16 ? DataType::bfloat16() : DataType::uint8(), w = bf16 ? DataType::bfloat16() : DataType::int8();
  DataType sum = bf16 ? DataType::float32() : DataType::int32();
  te::Tensor A = te::placeholder({Expr(m), Expr(k)}, a, "A");
  te::Tensor W = te::placeholder({Expr(n / 16), Expr(k / g), Expr(int64_t(16)), Expr(g)}, w, "W");
  IterVar r = te::reduceAxis(Expr(k), "k");
  te::Tensor C = te::compute(
      {Expr(m), Expr(n)},
      [&](Var i, Var j) { return te::sum(cast(sum, A(i, r)) * cast(sum, W(j / 16, r / g, j % 16, r % g)), {r}); },
      "C", {"i", "j"}, "matmul");
  Workload workload;
  workload.name = std::string(bf16 ? "bf16" : "int8") + "_matmul_" + std::to_string(m) + "x" + std::to_string(n) +
                  "x" + std::to_string(k);
  workload.inputs = {A, W};
  workload.outputs = {C};
  workload.flops = 2.0 * double(m) * double(n) * double(k);
  return workload;
}

Expected<Schedule> defaultPackedMatmulSchedule(const Workload& workload, PackedMatmulKind kind, const Target& target) {
  const int64_t* m = asConstInt(workload.outputs[0].shape()[0]);
  const int64_t* n = asConstInt(workload.outputs[0].shape()[1]);
  const int64_t* k = workload.inputs.empty() ? nullptr : asConstInt(workload.inputs[0].shape().back());
  if (!m || !n || !k) return Diagnostic{"a packed matmul needs constant shapes", workload.name, 0, 0, ""};
  if (std::string problem = packedMatmulProblem(*m, *n, *k, kind); !problem.empty())
    return Diagnostic{problem, workload.name, 0, 0, "the packed weight holds blocks of 16 columns by one 32-bit word"};
  const int64_t g = wordElements(kind);
  Schedule s(workload.outputs);
  std::vector<Status> steps;
  const int64_t tileRows = widestDivisor(*m, 128);
  if (kind == PackedMatmulKind::Int8 && hasIntegerTiles(target) && *k % 64 == 0 && tileRows >= 8) {
    steps = {
        s.split("C", "j", 16, "jo", "ji"),          s.split("C", "i", tileRows, "io", "ii"),
        s.split("C", "k", g, "ko", "ki"),           s.split("C", "ko", 16, "kc", "kg"),
        s.reorder("C", {"io", "jo", "ii", "ji", "kc", "kg", "ki"}),
        s.fuse("C", {"io", "jo"}, "tiles"),         s.parallel("C", "tiles"),
        s.tensorize("C", "ii", "tile_u8i8"),
    };
  } else {
    const bool wide = target.vectorLanes() >= 16;
    const char* name = kind == PackedMatmulKind::BFloat16 ? (wide ? "dot_16x2_bf16" : "dot_8x2_bf16")
                                                          : (wide ? "dot_16x4_u8i8" : "dot_8x4_u8i8");
    const TensorIntrinsic* intrinsic = findTensorIntrinsic(name);
    int64_t rows = *m % 4 == 0 ? 4 : *m % 2 == 0 ? 2 : 1;
    steps = {
        s.split("C", "j", intrinsic->lanes, "jo", "ji"), s.split("C", "k", g, "ko", "ki"),
        s.split("C", "i", rows, "io", "ii"),             s.reorder("C", {"jo", "io", "ko", "ii", "ji", "ki"}),
        s.unroll("C", "ii"),                             s.parallel("C", "jo"),
        s.tensorize("C", "ji", intrinsic->name),
    };
  }
  for (const Status& status : steps)
    if (!status) return status.error();
  return s;
}

}  // namespace tessel
