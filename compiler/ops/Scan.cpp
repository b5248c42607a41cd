// CumSum and TopK computes and their default schedules.
#include "compiler/ops/Scan.h"

#include "core/ir/IROperators.h"

namespace tessel {

namespace {
Expected<int64_t> lineAxis(const std::vector<int64_t>& shape, int64_t axis, const char* op) {
  int64_t rank = int64_t(shape.size());
  if (rank < 1) return Diagnostic{"the input must have at least one dimension", op, 0, 0, ""};
  for (int64_t d : shape)
    if (d < 1) return Diagnostic{"input dimensions must be positive, got " + shapeName(shape), op, 0, 0, ""};
  if (axis < -rank || axis >= rank)
    return Diagnostic{"axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank), op, 0, 0,
                      "use an axis in [" + std::to_string(-rank) + ", " + std::to_string(rank - 1) + "]"};
  return axis < 0 ? axis + rank : axis;
}

// `at` with its entry on `axis` replaced.
std::vector<Expr> along(const std::vector<Var>& at, int64_t axis, Expr position) {
  std::vector<Expr> indices = asExprs(at);
  indices[size_t(axis)] = std::move(position);
  return indices;
}

// The outer axes before `axis` run in parallel (fused); the innermost as vectors when it is
// not the scanned axis.
Status scheduleLines(Schedule& s, const std::string& stage, const std::vector<int64_t>& shape, int64_t axis,
                     const Target& target) {
  std::vector<Status> steps;
  std::vector<std::string> outer;
  int64_t rows = 1;
  for (int64_t d = 0; d < axis; ++d) {
    outer.push_back(axisName(d));
    rows *= shape[size_t(d)];
  }
  parallelizeRows(s, stage, outer, rows, target, steps);
  int64_t last = int64_t(shape.size()) - 1;
  if (axis != last && shape[size_t(last)] >= target.vectorLanes()) {
    std::string inner = axisName(last);
    steps.push_back(s.split(stage, inner, target.vectorLanes(), inner + "o", inner + "i"));
    steps.push_back(s.reorder(stage, {"k", inner + "i"}));
    steps.push_back(s.vectorize(stage, inner + "i"));
  }
  for (const Status& status : steps)
    if (!status) return status.error();
  return Status::success();
}
}  // namespace

Expected<Workload> cumulativeSum(const CumSumParams& p, DataType dtype) {
  auto axis = lineAxis(p.shape, p.axis, "cumsum");
  if (!axis) return axis.error();
  int64_t a = *axis, extent = p.shape[size_t(a)];
  te::Tensor x = te::placeholder(toExprs(p.shape), dtype, "x");
  IterVar k = te::reduceAxis(Expr(extent), "k");
  te::Tensor out = te::compute(
      toExprs(p.shape),
      [&](const std::vector<Var>& at) {
        Expr i = at[size_t(a)];
        Expr kv = k.var();
        Expr counted = p.reverse ? (p.exclusive ? kv > i : kv >= i) : (p.exclusive ? kv < i : kv <= i);
        return te::sum(select(counted, x(along(at, a, kv)), makeZero(dtype)), {k});
      },
      "cumsum", axisNames(p.shape.size()), "scan");
  Workload w;
  w.name = "cumsum_" + shapeName(p.shape) + "_axis" + std::to_string(a) + (p.exclusive ? "_excl" : "") +
           (p.reverse ? "_rev" : "");
  w.inputs = {x};
  w.outputs = {out};
  w.flops = double(elementCount(p.shape)) * double(extent);
  return w;
}

Expected<Schedule> defaultCumulativeSumSchedule(const Workload& workload, const CumSumParams& p,
                                                const Target& target) {
  auto axis = lineAxis(p.shape, p.axis, "cumsum");
  if (!axis) return axis.error();
  Schedule s(workload.outputs);
  if (!s.findStage("cumsum")) return Diagnostic{"the workload has no stage named 'cumsum'", workload.name, 0, 0, ""};
  if (Status st = scheduleLines(s, "cumsum", p.shape, *axis, target); !st) return st.error();
  return s;
}

Expected<Workload> topK(const TopKParams& p, DataType dtype) {
  auto axis = lineAxis(p.shape, p.axis, "topk");
  if (!axis) return axis.error();
  int64_t a = *axis, extent = p.shape[size_t(a)];
  if (p.k < 1 || p.k > extent)
    return Diagnostic{"k = " + std::to_string(p.k) + " must be in [1, " + std::to_string(extent) + "]", "topk", 0, 0,
                      "k may not exceed the extent of the axis"};
  DataType i64 = DataType::int64();
  te::Tensor x = te::placeholder(toExprs(p.shape), dtype, "x");
  std::vector<std::string> names = axisNames(p.shape.size());
  IterVar other = te::reduceAxis(Expr(extent), "k");
  // rank(i) = how many elements of the line come first in the output order.
  te::Tensor rank = te::compute(
      toExprs(p.shape),
      [&](const std::vector<Var>& at) {
        Expr mine = x(asExprs(at)), theirs = x(along(at, a, other.var()));
        Expr before = p.largest ? theirs > mine : theirs < mine;
        before = before || (eq(theirs, mine) && other.var() < at[size_t(a)]);
        return te::sum(select(before, makeConst(i64, 1), makeConst(i64, 0)), {other});
      },
      "topk.rank", names, "topk");
  std::vector<int64_t> outShape = p.shape;
  outShape[size_t(a)] = p.k;
  // Output r takes the one element of its line whose rank is r (ranks are distinct).
  auto pick = [&](const std::string& name, DataType type, bool index) {
    IterVar source = te::reduceAxis(Expr(extent), "k");
    return te::compute(
        toExprs(outShape),
        [&](const std::vector<Var>& at) {
          Expr hit = eq(rank(along(at, a, source.var())), cast(i64, at[size_t(a)]));
          Expr value = index ? cast(i64, source.var()) : x(along(at, a, source.var()));
          return te::sum(select(hit, value, makeZero(type)), {source});
        },
        name, names, "topk");
  };
  Workload w;
  w.name = "topk_" + shapeName(p.shape) + "_axis" + std::to_string(a) + "_k" + std::to_string(p.k) +
           (p.largest ? "" : "_smallest");
  w.inputs = {x};
  w.outputs = {pick("topk.values", dtype, false), pick("topk.indices", i64, true)};
  w.flops = 3.0 * double(elementCount(p.shape)) * double(extent);
  return w;
}

Expected<Schedule> defaultTopKSchedule(const Workload& workload, const Target& target) {
  Schedule s(workload.outputs);
  if (!s.findStage("topk.rank")) return Diagnostic{"the workload has no stage named 'topk.rank'", workload.name, 0, 0, ""};
  std::vector<Status> steps;
  // The rank has two readers, so each stage runs at root with its outermost axis in parallel.
  for (const char* stage : {"topk.rank", "topk.values", "topk.indices"}) {
    if (!s.findStage(stage)) continue;  // a TopK whose indices nobody reads
    const auto* compute = te::asCompute(s.findStage(stage)->op);
    if (target.cores > 1 && *asConstInt(compute->axes[0]->dom.extent) > 1)
      steps.push_back(s.parallel(stage, compute->axes[0].name()));
  }
  for (const Status& status : steps)
    if (!status) return status.error();
  return s;
}

}  // namespace tessel
