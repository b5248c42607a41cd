// Matmul compute and default schedule.
#include "compiler/ops/Matmul.h"

#include <algorithm>

#include "core/ir/IROperators.h"

namespace tessel {

namespace {
// The panel width: two vectors, so each k step issues two loads for `rows` FMAs each.
int64_t panelWidth(const ScheduleTarget& target) { return 2 * int64_t(target.vectorLanes); }

// Rows of the register tile: as many as fit (accumulators = rows * 2 vectors), preferring
// a divisor of M so no tail iterations are needed.
int64_t tileRows(int64_t m, const ScheduleTarget& target) {
  int registers = target.vectorLanes >= 16 ? 32 : 16;
  int64_t best = 1;
  for (int64_t rows = 1; rows * 2 + 3 <= registers && rows <= 12; ++rows)
    if (m % rows == 0) best = rows;
  if (best < 4) best = std::min<int64_t>(m, (registers - 3) / 2 > 8 ? 8 : 4);
  return best;
}
}  // namespace

int64_t matmulPanelWidth(int64_t n, const ScheduleTarget& target) { return std::min(panelWidth(target), n); }

te::Tensor packMatmulB(const te::Tensor& B, int64_t n, int64_t k, bool bTransposed, const ScheduleTarget& target) {
  int64_t bn = matmulPanelWidth(n, target);
  int64_t panels = (n + bn - 1) / bn;
  DataType dtype = B.dtype();
  // B.packed[jo, k, ji] = B[k, jo*bn + ji] (or B[jo*bn + ji, k] when transposed), zero past N.
  return te::compute(
      {Expr(panels), Expr(k), Expr(bn)},
      [&](Var jo, Var kk, Var ji) {
        Expr column = jo * bn + ji;
        Expr clamped = n % bn == 0 ? column : min(column, Expr(n - 1));
        Expr value = bTransposed ? B(clamped, kk) : B(kk, clamped);
        return n % bn == 0 ? value : select(column < n, value, makeZero(dtype));
      },
      "B.packed", {"jo", "k", "ji"}, "pack");
}

namespace {
// matmul and dense differ only in how B is stored: [k, n] or [n, k] (one row per output).
Workload matmulLike(const char* kind, int64_t m, int64_t n, int64_t k, bool bTransposed, DataType dtype,
                    const ScheduleTarget& target) {
  Workload w;
  w.name = std::string(kind) + "_" + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  te::Tensor A = te::placeholder({Expr(m), Expr(k)}, dtype, "A");
  te::Tensor B = bTransposed ? te::placeholder({Expr(n), Expr(k)}, dtype, "B")
                             : te::placeholder({Expr(k), Expr(n)}, dtype, "B");
  int64_t bn = matmulPanelWidth(n, target);
  te::Tensor packed = packMatmulB(B, n, k, bTransposed, target);
  IterVar kk = te::reduceAxis(Expr(k), "k");
  te::Tensor C = te::compute(
      {Expr(m), Expr(n)},
      [&](Var i, Var j) { return te::sum(A(i, kk) * packed(j / bn, kk, j % bn), {kk}); }, "C", {"i", "j"},
      kind);
  w.inputs = {A, B};
  w.outputs = {C};
  w.flops = 2.0 * double(m) * double(n) * double(k);
  return w;
}
}  // namespace

Workload matmul(int64_t m, int64_t n, int64_t k, DataType dtype, const ScheduleTarget& target) {
  return matmulLike("matmul", m, n, k, false, dtype, target);
}

Workload dense(int64_t m, int64_t n, int64_t k, DataType dtype, const ScheduleTarget& target) {
  return matmulLike("dense", m, n, k, true, dtype, target);
}

Expected<Schedule> defaultMatmulSchedule(const Workload& workload, const ScheduleTarget& target) {
  const te::Tensor& C = workload.outputs[0];
  int64_t m = *asConstInt(C.shape()[0]);
  int64_t n = *asConstInt(C.shape()[1]);
  int64_t bn = std::min(panelWidth(target), n);
  int64_t rows = tileRows(m, target);
  // Column panels are taken in groups that fit in half of a 2 MiB L2 cache: a group of B
  // stays there while every row block of A passes once, and each row block stays in L1
  // while it meets every panel of the group.
  int64_t k = *asConstInt(workload.inputs[0].shape()[1]);
  int64_t panelBytes = k * bn * C.dtype().bytes();
  int64_t panels = (n + bn - 1) / bn;
  int64_t group = std::clamp<int64_t>((1 << 20) / std::max<int64_t>(panelBytes, 1), 1, panels);
  Schedule s({C});
  auto steps = {
      // The accumulator tile lives in registers; C receives each finished tile.
      s.cacheWrite("C", "local", "C.local"),
      s.tile("C", "i", "j", rows, bn, "io", "jo", "ii", "ji"),
      s.split("C", "jo", group, "jg", "jj"),
      s.reorder("C", {"jg", "io", "jj"}),
      s.fuse("C", {"jg", "io"}, "task"),
      s.parallel("C", "task"),
      s.vectorize("C", "ji"),
      s.computeAt("C.local", "C", "jj"),
      // Inside a tile: k outermost and unrolled by 4 (measured ~10% faster than rolled, as
      // the loads of one step overlap the FMAs of the previous), rows unrolled, columns
      // as vectors.
      s.split("C.local", "k", 4, "ko", "ki"),
      s.reorder("C.local", {"ko", "ki", "i", "j"}),
      s.unroll("C.local", "ki"),
      s.unroll("C.local", "i"),
      s.vectorize("C.local", "j"),
      // Packing: panels in parallel, contiguous vector copies.
      s.parallel("B.packed", "jo"),
      s.vectorize("B.packed", "ji"),
  };
  for (const Status& status : steps)
    if (!status) return status.error();
  return s;
}

std::string matmulScheduleHelp() {
  return "stages: C (output; axes i, j, reduction k), B.packed (axes jo, k, ji), A and B (inputs)";
}

}  // namespace tessel
