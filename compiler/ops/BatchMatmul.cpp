// Batched matmul compute and default schedule.
#include "compiler/ops/BatchMatmul.h"

#include <algorithm>

#include "compiler/ops/Matmul.h"
#include "core/ir/IROperators.h"

namespace tessel {

namespace {
Diagnostic matmulError(std::string message, std::string hint = "") {
  return Diagnostic{std::move(message), "matmul", 0, 0, std::move(hint)};
}

// The operands' matrix and batch parts, with 1-D operands promoted.
struct MatmulGeometry {
  int64_t m = 1, n = 1, k = 1;
  bool keepsM = true, keepsN = true;  ///< False for a 1-D A (B): the result drops that axis.
  std::vector<int64_t> batchA, batchB, batch;
};

Expected<MatmulGeometry> geometry(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  if (a.empty() || b.empty()) return matmulError("matmul operands must have rank >= 1, not be scalars");
  for (int64_t d : a)
    if (d < 1) return matmulError("A's dimensions must be positive, got " + shapeName(a));
  for (int64_t d : b)
    if (d < 1) return matmulError("B's dimensions must be positive, got " + shapeName(b));
  MatmulGeometry g;
  g.keepsM = a.size() >= 2;
  g.keepsN = b.size() >= 2;
  g.m = g.keepsM ? a[a.size() - 2] : 1;
  g.k = a.back();
  int64_t bk = g.keepsN ? b[b.size() - 2] : b[0];
  g.n = g.keepsN ? b.back() : 1;
  if (bk != g.k)
    return matmulError("A " + shapeName(a) + " and B " + shapeName(b) + " do not multiply: A has " +
                           std::to_string(g.k) + " columns, B " + std::to_string(bk) + " rows",
                       "the last axis of A must match the second-to-last of B");
  if (g.keepsM) g.batchA.assign(a.begin(), a.end() - 2);
  if (g.keepsN) g.batchB.assign(b.begin(), b.end() - 2);
  size_t rank = std::max(g.batchA.size(), g.batchB.size());
  g.batch.assign(rank, 1);
  for (size_t d = 0; d < rank; ++d) {
    int64_t da = d + g.batchA.size() >= rank ? g.batchA[d + g.batchA.size() - rank] : 1;
    int64_t db = d + g.batchB.size() >= rank ? g.batchB[d + g.batchB.size() - rank] : 1;
    if (da != db && da != 1 && db != 1)
      return matmulError("batch dimensions of A " + shapeName(a) + " and B " + shapeName(b) + " do not broadcast");
    g.batch[d] = std::max(da, db);
  }
  return g;
}

std::vector<int64_t> outputShape(const MatmulGeometry& g) {
  std::vector<int64_t> shape = g.batch;
  if (g.keepsM) shape.push_back(g.m);
  if (g.keepsN) shape.push_back(g.n);
  return shape;
}

// The output's axis names: b0, b1, ... for the batch, then i and j where the result keeps them.
std::vector<std::string> outputAxisNames(const MatmulGeometry& g) {
  std::vector<std::string> names;
  for (size_t d = 0; d < g.batch.size(); ++d) names.push_back("b" + std::to_string(d));
  if (g.keepsM) names.push_back("i");
  if (g.keepsN) names.push_back("j");
  return names;
}

// The batch indices into an operand with batch extents `own` at output position `at`: its
// own dimension, or 0 where it broadcasts (extent 1).
std::vector<Expr> operandBatchIndices(const MatmulGeometry& g, const std::vector<int64_t>& own,
                                      const std::vector<Var>& at) {
  std::vector<Expr> indices;
  for (size_t d = 0; d < own.size(); ++d) {
    size_t outer = d + g.batch.size() - own.size();
    indices.push_back(own[d] == 1 && g.batch[outer] != 1 ? Expr(0) : Expr(at[outer]));
  }
  return indices;
}

// Rows of the register tile: a divisor of M up to 8 (8 rows x 2 vectors = 16 accumulators).
int64_t tileRows(int64_t m) {
  int64_t best = 1;
  for (int64_t rows = 1; rows <= std::min<int64_t>(m, 8); ++rows)
    if (m % rows == 0) best = rows;
  return best < 4 && m > 8 ? 8 : best;
}
}  // namespace

Expected<std::vector<int64_t>> batchMatmulOutputShape(const std::vector<int64_t>& aShape,
                                                      const std::vector<int64_t>& bShape) {
  auto g = geometry(aShape, bShape);
  if (!g) return g.error();
  return outputShape(*g);
}

namespace {
// A 2-D B shared by every batch (a Linear layer applied to a sequence) is worth repacking
// into matmul's contiguous column panels once per call.
bool packsB(const MatmulGeometry& g, const std::vector<int64_t>& bShape) {
  return g.keepsM && bShape.size() == 2 && !g.batch.empty();
}
}  // namespace

Expected<Workload> batchMatmul(const BatchMatmulParams& p, DataType dtype, const Target& target) {
  auto geo = geometry(p.aShape, p.bShape);
  if (!geo) return geo.error();
  const MatmulGeometry& g = *geo;
  te::Tensor A = te::placeholder(toExprs(p.aShape), dtype, "A");
  te::Tensor B = te::placeholder(toExprs(p.bShape), dtype, "B");
  Workload w;
  w.name = "batch_matmul_" + shapeName(p.aShape) + "_" + shapeName(p.bShape);
  w.inputs = {A, B};
  w.flops = 2.0 * double(elementCount(outputShape(g))) * double(g.k);
  if (!packsB(g, p.bShape)) {
    w.outputs = {batchMatmulCompute(A, B, "C", dtype)};
    return w;
  }
  size_t batchRank = g.batch.size();
  IterVar k = te::reduceAxis(Expr(g.k), "k");
  int64_t bn = matmulPanelWidth(g.n, target);
  te::Tensor packed = packMatmulB(B, g.n, g.k, false, target);
  w.name += "_packed" + std::to_string(bn);
  w.outputs = {te::compute(
      toExprs(outputShape(g)),
      [&](const std::vector<Var>& at) {
        std::vector<Expr> ai = operandBatchIndices(g, g.batchA, at);
        ai.push_back(at[batchRank]);
        ai.push_back(k.var());
        Expr j = at.back();
        return te::sum(A(ai) * packed(j / bn, k.var(), j % bn), {k});
      },
      "C", outputAxisNames(g), "batch_matmul")};
  return w;
}

te::Tensor batchMatmulCompute(const te::Tensor& A, const te::Tensor& B, const std::string& name,
                              DataType accumulate) {
  std::vector<int64_t> aShape, bShape;
  for (auto& e : A.shape()) aShape.push_back(*asConstInt(e));
  for (auto& e : B.shape()) bShape.push_back(*asConstInt(e));
  auto geo = geometry(aShape, bShape);
  TESSEL_ICHECK(geo.ok()) << "batchMatmulCompute of shapes that do not multiply: " << geo.error().message;
  const MatmulGeometry& g = *geo;
  size_t batchRank = g.batch.size();
  std::vector<std::string> names = outputAxisNames(g);
  IterVar k = te::reduceAxis(Expr(g.k), "k");
  return te::compute(
      toExprs(outputShape(g)),
      [&](const std::vector<Var>& at) {
        std::vector<Expr> ai = operandBatchIndices(g, g.batchA, at), bi = operandBatchIndices(g, g.batchB, at);
        if (g.keepsM) ai.push_back(at[batchRank]);
        ai.push_back(k.var());
        bi.push_back(k.var());
        if (g.keepsN) bi.push_back(at.back());
        auto widened = [&](Expr value) { return value.dtype() == accumulate ? value : cast(accumulate, value); };
        return te::sum(widened(A(ai)) * widened(B(bi)), {k});
      },
      name, names, "batch_matmul");
}

Expected<Schedule> defaultBatchMatmulSchedule(const Workload& workload, const BatchMatmulParams& p,
                                              const Target& target) {
  auto geo = geometry(p.aShape, p.bShape);
  if (!geo) return geo.error();
  const MatmulGeometry& g = *geo;
  Schedule s(workload.outputs);
  if (!s.findStage("C")) return Diagnostic{"the workload has no stage named 'C'", workload.name, 0, 0, ""};
  std::vector<std::string> batchAxes;
  for (size_t d = 0; d < g.batch.size(); ++d) batchAxes.push_back("b" + std::to_string(d));
  int64_t batches = elementCount(g.batch);
  std::vector<Status> steps;
  int64_t lanes = target.vectorLanes();
  if (!g.keepsM || !g.keepsN || g.n < lanes) {
    // A vector product or narrow columns: the outer axes in parallel, columns as vectors when wide enough.
    std::vector<std::string> outer = batchAxes;
    int64_t rows = batches;
    if (g.keepsM) {
      outer.push_back("i");
      rows *= g.m;
    }
    parallelizeRows(s, "C", outer, rows, target, steps);
    if (g.keepsN && g.n >= lanes) {
      steps.push_back(s.reorder("C", {"k", "j"}));
      steps.push_back(s.split("C", "j", lanes, "jo", "ji"));
      steps.push_back(s.vectorize("C", "ji"));
    }
  } else {
    // Register tile: rows x (one or two vectors) of columns, accumulated over all of k.
    int64_t columns = g.n % (2 * lanes) == 0 || g.n > 4 * lanes ? 2 * lanes : lanes;
    bool packed = s.findStage("B.packed") != nullptr;
    if (packed) columns = matmulPanelWidth(g.n, target);
    int64_t rows = tileRows(g.m);
    steps.push_back(s.cacheWrite("C", "local", "C.local"));
    steps.push_back(s.tile("C", "i", "j", rows, columns, "io", "jo", "ii", "ji"));
    std::vector<std::string> taskAxes = batchAxes;
    taskAxes.push_back("io");
    int64_t tasks = batches * ((g.m + rows - 1) / rows);
    parallelizeRows(s, "C", taskAxes, tasks, target, steps);
    steps.push_back(s.vectorize("C", "ji"));
    steps.push_back(s.computeAt("C.local", "C", "jo"));
    // k unrolled by 4, as matmul does: one step's loads overlap the previous step's FMAs.
    steps.push_back(s.split("C.local", "k", 4, "ko", "ki"));
    steps.push_back(s.reorder("C.local", {"ko", "ki", "i", "j"}));
    steps.push_back(s.unroll("C.local", "ki"));
    steps.push_back(s.unroll("C.local", "i"));
    steps.push_back(s.vectorize("C.local", "j"));
    if (packed) {
      steps.push_back(s.parallel("B.packed", "jo"));
      steps.push_back(s.vectorize("B.packed", "ji"));
    }
  }
  for (const Status& status : steps)
    if (!status) return status.error();
  return s;
}

}  // namespace tessel
