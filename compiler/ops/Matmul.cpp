// Matmul compute and default schedule.
#include "compiler/ops/Matmul.h"

#include <algorithm>

#include "compiler/ops/GpuSchedules.h"
#include "core/ir/IROperators.h"

namespace tessel {

namespace {
// The panel width: two vectors, so each k step issues two loads for `rows` FMAs each.
int64_t panelWidth(const Target& target) { return 2 * int64_t(target.vectorLanes()); }

// Rows of the register tile: as many as fit (accumulators = rows * 2 vectors), preferring
// a divisor of M so no tail iterations are needed.
int64_t tileRows(int64_t m, const Target& target) {
  int registers = target.vectorLanes() >= 16 ? 32 : 16;
  int64_t best = 1;
  for (int64_t rows = 1; rows * 2 + 3 <= registers && rows <= 12; ++rows)
    if (m % rows == 0) best = rows;
  if (best < 4) best = std::min<int64_t>(m, (registers - 3) / 2 > 8 ? 8 : 4);
  return best;
}
}  // namespace

int64_t matmulPanelWidth(int64_t n, const Target& target) { return std::min(panelWidth(target), n); }

te::Tensor packMatmulB(const te::Tensor& B, int64_t n, int64_t k, bool bTransposed, const Target& target) {
  int64_t bn = matmulPanelWidth(n, target);
  int64_t panels = (n + bn - 1) / bn;
  DataType dtype = B.dtype();
  // B.packed[jo, k, ji] = B[k, jo*bn + ji] (or B[jo*bn + ji, k] when transposed), zero past N.
  // Clamped even when N is a multiple of the panel width: a consumer tiled by a factor that does
  // not divide N reads panels past the last, bound inference computes those too, and they must
  // not read past the end of B (found by the tuner: a dense 1x1024x1024 tiled by 24 crashed).
  // Rows too: a reduction split by a factor that does not divide K has bound inference pack
  // rows past the last (19 rows split by 4 packed 20), which nothing reads but which must not
  // read past B either (found by scripts/sanitize.sh: AddressSanitizer saw the copy's overrun).
  return te::compute(
      {Expr(panels), Expr(k), Expr(bn)},
      [&](Var jo, Var kk, Var ji) {
        Expr column = jo * bn + ji;
        Expr clamped = min(column, Expr(n - 1));
        Expr row = min(Expr(kk), Expr(k - 1));
        Expr value = bTransposed ? B(clamped, row) : B(row, clamped);
        return select(column < n, value, makeZero(dtype));
      },
      "B.packed", {"jo", "k", "ji"}, "pack");
}

namespace {
template <class T>
void packPanels(const T* b, int64_t n, int64_t k, int64_t width, bool bTransposed, T* packed) {
  int64_t panels = (n + width - 1) / width;
  for (int64_t panel = 0; panel < panels; ++panel)
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t lane = 0; lane < width; ++lane) {
        int64_t column = panel * width + lane;
        T value = T(0);
        if (column < n) value = bTransposed ? b[column * k + kk] : b[kk * n + column];
        packed[(panel * k + kk) * width + lane] = value;
      }
}
}  // namespace

runtime::NDArray packMatmulBConstant(const runtime::NDArray& B, bool bTransposed, const Target& target) {
  TESSEL_ICHECK(B.defined() && B.ndim() == 2) << "packMatmulBConstant: B must be a matrix";
  int64_t n = bTransposed ? B.shape()[0] : B.shape()[1];
  int64_t k = bTransposed ? B.shape()[1] : B.shape()[0];
  int64_t width = matmulPanelWidth(n, target);
  runtime::NDArray packed = runtime::NDArray::empty({(n + width - 1) / width, k, width}, B.dtype());
  if (B.dtype() == runtime::DataType::float32())
    packPanels(B.dataAs<float>(), n, k, width, bTransposed, packed.dataAs<float>());
  else if (B.dtype() == runtime::DataType::float64())
    packPanels(B.dataAs<double>(), n, k, width, bTransposed, packed.dataAs<double>());
  else
    TESSEL_ICHECK(false) << "packMatmulBConstant: unsupported element type " << B.dtype().toString();
  return packed;
}

std::string matmulPackedBLayout(int64_t n, const Target& target) {
  return "KN" + std::to_string(matmulPanelWidth(n, target)) + "n";
}

Workload matmulPrepacked(const std::vector<int64_t>& aShape, int64_t n, DataType dtype, const Target& target) {
  TESSEL_ICHECK(!aShape.empty()) << "matmulPrepacked: A needs at least one axis";
  int64_t k = aShape.back();
  int64_t bn = matmulPanelWidth(n, target);
  Workload w;
  w.name = "matmul_packed_" + shapeName(aShape) + "_n" + std::to_string(n);
  te::Tensor A = te::placeholder(toExprs(aShape), dtype, "A");
  te::Tensor B = te::placeholder({Expr((n + bn - 1) / bn), Expr(k), Expr(bn)}, dtype, "B");
  std::vector<int64_t> outShape(aShape.begin(), aShape.end() - 1);
  outShape.push_back(n);
  // Every leading axis is a row of the product (B is shared), so the rows that the schedule
  // tiles ("i") are the longest leading axis, the last of equals: PyTorch's sequence-first
  // attention gives [197, 1, 768], where tiling the unit axis made 197 matrix-vector products
  // that each streamed all of B (ViT's projections ran at 20% of the FMA peak).
  size_t rowAxis = outShape.size() >= 2 ? outShape.size() - 2 : 0;
  for (size_t d = 0; d + 2 < outShape.size(); ++d)
    if (outShape[d] > outShape[rowAxis]) rowAxis = d;
  std::vector<std::string> axes;
  for (size_t d = 0, batch = 0; d + 1 < outShape.size(); ++d)
    axes.push_back(d == rowAxis ? "i" : "b" + std::to_string(batch++));
  axes.push_back("j");
  IterVar kk = te::reduceAxis(Expr(k), "k");
  te::Tensor C = te::compute(
      toExprs(outShape),
      [&](const std::vector<Var>& v) {
        std::vector<Expr> row(v.begin(), v.end() - 1);
        row.push_back(kk);
        Var j = v.back();
        return te::sum(A(row) * B(j / bn, kk, j % bn), {kk});
      },
      "C", axes, "matmul");
  w.inputs = {A, B};
  w.outputs = {C};
  w.flops = 2.0 * double(elementCount(outShape)) * double(k);
  return w;
}

namespace {
// matmul and dense differ only in how B is stored: [k, n] or [n, k] (one row per output).
Workload matmulLike(const char* kind, int64_t m, int64_t n, int64_t k, bool bTransposed, DataType dtype,
                    const Target& target) {
  Workload w;
  w.name = std::string(kind) + "_" + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  te::Tensor A = te::placeholder({Expr(m), Expr(k)}, dtype, "A");
  te::Tensor B = bTransposed ? te::placeholder({Expr(n), Expr(k)}, dtype, "B")
                             : te::placeholder({Expr(k), Expr(n)}, dtype, "B");
  IterVar kk = te::reduceAxis(Expr(k), "k");
  w.inputs = {A, B};
  w.flops = 2.0 * double(m) * double(n) * double(k);
  // A GPU reads B as it is: its schedules stage tiles of both operands in shared memory,
  // which is the packing there, done per block by all of its threads.
  // Dense reads B through "B.t", B transposed to [K, N] (inlined by the schedule into the shared
  // copy), so the shared tiles have matmul's layout and the threads read them the same way.
  if (target.kind != TargetKind::Cpu) {
    te::Tensor right = B;
    if (bTransposed)
      right = te::compute({Expr(k), Expr(n)}, [&](Var kr, Var jr) { return B(jr, kr); }, "B.t", {"k", "j"});
    w.outputs = {te::compute(
        {Expr(m), Expr(n)}, [&](Var i, Var j) { return te::sum(A(i, kk) * right(kk, j), {kk}); }, "C", {"i", "j"},
        kind)};
    return w;
  }
  int64_t bn = matmulPanelWidth(n, target);
  te::Tensor packed = packMatmulB(B, n, k, bTransposed, target);
  te::Tensor C = te::compute(
      {Expr(m), Expr(n)},
      [&](Var i, Var j) { return te::sum(A(i, kk) * packed(j / bn, kk, j % bn), {kk}); }, "C", {"i", "j"},
      kind);
  w.outputs = {C};
  return w;
}
}  // namespace

Workload matmul(int64_t m, int64_t n, int64_t k, DataType dtype, const Target& target) {
  return matmulLike("matmul", m, n, k, false, dtype, target);
}

Workload dense(int64_t m, int64_t n, int64_t k, DataType dtype, const Target& target) {
  return matmulLike("dense", m, n, k, true, dtype, target);
}

namespace {
// A dense layer of one row whose weights are read as given (not packed at compile time):
// every output is a dot product along a contiguous row of B. Packing B per call would be a
// strided pass over the whole matrix for one use of each element, costing more than the
// product, so B is read directly and rfactor keeps two vectors of partial sums per output,
// four outputs at a time (eight accumulators in registers); each output then adds up its
// partial sums. Measured 15x the packed schedule on 1x1024x1024, level with OpenBLAS's sgemv.
std::optional<Expected<Schedule>> rowDotProductSchedule(const Workload& workload, const Target& target) {
  const te::Tensor& C = workload.outputs[0];
  auto* compute = te::asCompute(C.op());
  if (!compute || compute->tag != "dense" || C.shape().size() != 2 || workload.inputs.size() != 2) return std::nullopt;
  const int64_t m = *asConstInt(C.shape()[0]);
  const int64_t k = *asConstInt(workload.inputs[0].shape().back());
  const int64_t lanes = target.vectorLanes();
  if (m != 1 || k % lanes != 0 || k < 2 * lanes) return std::nullopt;
  const int64_t factor = k % (2 * lanes) == 0 ? 2 * lanes : lanes;
  Schedule s({C});
  if (!s.findStage("B.packed")) return std::nullopt;
  std::vector<Status> steps;
  steps.push_back(s.computeInline("B.packed"));
  steps.push_back(s.rfactor("C", "k", factor, "C.rf"));
  steps.push_back(s.split("C", "j", 4, "jo", "ji"));
  steps.push_back(s.parallel("C", "jo"));
  steps.push_back(s.computeAt("C.rf", "C", "jo"));
  steps.push_back(s.reorder("C.rf", {"i", "k.outer", "j", "k.inner"}));
  steps.push_back(s.unroll("C.rf", "j"));
  steps.push_back(s.vectorize("C.rf", "k.inner"));
  for (const Status& status : steps)
    if (!status) return Expected<Schedule>(status.error());
  return Expected<Schedule>(std::move(s));
}
}  // namespace

Expected<Schedule> defaultMatmulSchedule(const Workload& workload, const Target& target) {
  if (target.kind != TargetKind::Cpu) return defaultGpuMatmulSchedule(workload, target);
  if (auto rowDotProduct = rowDotProductSchedule(workload, target)) return std::move(*rowDotProduct);
  const te::Tensor& C = workload.outputs[0];
  size_t rank = C.shape().size();
  int64_t n = *asConstInt(C.shape()[rank - 1]);
  int64_t bn = std::min(panelWidth(target), n);
  // Rows are tiled within a slice (the last axis but one of C), and the leading axes of a
  // batched A join the parallel tasks. Fusing the leading axes into the row axis instead lets
  // a row tile straddle two slices (or, with one slice, run past its end when the tile does
  // not divide the rows), and the accumulator's region is then the bounding box: whole
  // slices, computed again per tile (ConvNeXt's [1, 14, 14, 1536] Linear ran at 0.3 GFLOP/s)
  // and unrolled row by row (ViT's [1, 197, 768] MLP output took 10 s to compile per kernel).
  int64_t rows = 1;
  if (rank >= 2) {
    auto* compute = te::asCompute(C.op());
    for (size_t d = 0; d + 1 < rank; ++d)
      if (compute && compute->axes[d]->var.name() == "i") rows = tileRows(*asConstInt(C.shape()[d]), target);
  }
  // Column panels are taken in groups that fit in half of the target's L2 cache (2 MiB when
  // unknown): a group of B stays there while every row block of A passes once, and each row
  // block stays in L1 while it meets every panel of the group.
  int64_t k = *asConstInt(workload.inputs[0].shape().back());
  int64_t panelBytes = k * bn * C.dtype().bytes();
  int64_t panels = (n + bn - 1) / bn;
  int64_t l2Bytes = target.l2CacheBytes > 0 ? target.l2CacheBytes : int64_t(2) << 20;
  int64_t group = std::clamp<int64_t>(l2Bytes / 2 / std::max<int64_t>(panelBytes, 1), 1, panels);
  Schedule s({C});
  std::vector<Status> steps;
  // The accumulator tile lives in registers; C receives each finished tile.
  steps.push_back(s.cacheWrite("C", "local", "C.local"));
  std::vector<std::string> batchAxes;
  for (size_t d = 0; d + 2 < rank; ++d) batchAxes.push_back("b" + std::to_string(d));
  if (rank == 1) {  // a vector times a matrix: only columns to split
    steps.push_back(s.split("C", "j", bn, "jo", "ji"));
    steps.push_back(s.split("C", "jo", group, "jg", "jj"));
    steps.push_back(s.parallel("C", "jg"));
  } else {
    steps.push_back(s.tile("C", "i", "j", rows, bn, "io", "jo", "ii", "ji"));
    steps.push_back(s.split("C", "jo", group, "jg", "jj"));
    std::vector<std::string> outer = {"jg"};
    outer.insert(outer.end(), batchAxes.begin(), batchAxes.end());
    outer.push_back("io");
    std::vector<std::string> order = outer;
    order.push_back("jj");
    steps.push_back(s.reorder("C", order));
    steps.push_back(s.fuse("C", outer, "task"));
    steps.push_back(s.parallel("C", "task"));
  }
  steps.push_back(s.vectorize("C", "ji"));
  steps.push_back(s.computeAt("C.local", "C", "jj"));
  // Inside a tile: k outermost and unrolled by 4 (measured ~10% faster than rolled, as
  // the loads of one step overlap the FMAs of the previous), rows unrolled, columns
  // as vectors.
  std::vector<std::string> localOrder = {"ko", "ki"};
  for (size_t d = 0; d + 2 < rank; ++d) localOrder.push_back("b" + std::to_string(d));
  if (rank >= 2) localOrder.push_back("i");
  localOrder.push_back("j");
  steps.push_back(s.split("C.local", "k", 4, "ko", "ki"));
  steps.push_back(s.reorder("C.local", localOrder));
  steps.push_back(s.unroll("C.local", "ki"));
  if (rank >= 2) steps.push_back(s.unroll("C.local", "i"));
  steps.push_back(s.vectorize("C.local", "j"));
  // Packing per call (absent when B was packed at compile time): panels in parallel,
  // contiguous vector copies.
  if (s.findStage("B.packed")) {
    steps.push_back(s.parallel("B.packed", "jo"));
    steps.push_back(s.vectorize("B.packed", "ji"));
  }
  for (const Status& status : steps)
    if (!status) return status.error();
  return s;
}

std::string matmulScheduleHelp() {
  return "stages: C (output; axes i, j, reduction k), B.packed (axes jo, k, ji), A and B (inputs)";
}

}  // namespace tessel
