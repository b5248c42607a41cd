// Reduction computes and their default schedules.
#include "compiler/ops/Reduction.h"

#include <algorithm>
#include <optional>

#include "core/ir/IROperators.h"

namespace tessel {

namespace {
Expected<int64_t> resolveAxis(int64_t axis, int64_t rank, const std::string& op) {
  if (axis < -rank || axis >= rank)
    return Diagnostic{"axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank), op, 0, 0,
                      "use axes in [" + std::to_string(-rank) + ", " + std::to_string(rank - 1) + "]"};
  return axis < 0 ? axis + rank : axis;
}

std::optional<Diagnostic> checkShape(const std::vector<int64_t>& shape, const std::string& op) {
  for (int64_t d : shape)
    if (d < 1) return Diagnostic{"input dimensions must be positive, got " + shapeName(shape), op, 0, 0, ""};
  return std::nullopt;
}

// The output of reducing `reduced` (sorted) dimensions: its shape and axis names.
struct ReducedShape {
  std::vector<Expr> shape;
  std::vector<std::string> names;
  std::vector<int64_t> inputDim;  ///< Input dimension of each output axis.
};
ReducedShape reducedShape(const std::vector<int64_t>& shape, const std::vector<int64_t>& reduced, bool keepDims) {
  ReducedShape out;
  for (int64_t d = 0; d < int64_t(shape.size()); ++d) {
    bool isReduced = std::find(reduced.begin(), reduced.end(), d) != reduced.end();
    if (isReduced && !keepDims) continue;
    out.shape.push_back(Expr(isReduced ? int64_t(1) : shape[d]));
    out.names.push_back(axisName(d));
    out.inputDim.push_back(d);
  }
  return out;
}

// Whether `reduced` (sorted) is the block of trailing axes [d, rank), which are contiguous in memory.
bool reducesTrailingBlock(const std::vector<int64_t>& reduced, int64_t rank) {
  if (reduced.empty() || reduced.back() != rank - 1) return false;
  for (size_t r = 1; r < reduced.size(); ++r)
    if (reduced[r] != reduced[r - 1] + 1) return false;
  return true;
}

}  // namespace

const char* reduceKindName(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::Sum: return "reduce_sum";
    case ReduceKind::Mean: return "reduce_mean";
    case ReduceKind::Max: return "reduce_max";
    case ReduceKind::Min: return "reduce_min";
    case ReduceKind::Prod: return "reduce_prod";
    case ReduceKind::SumSquare: return "reduce_sum_square";
    case ReduceKind::L1: return "reduce_l1";
    case ReduceKind::L2: return "reduce_l2";
    case ReduceKind::LogSum: return "reduce_log_sum";
    case ReduceKind::LogSumExp: return "reduce_log_sum_exp";
  }
  return "?";
}

Expected<std::vector<int64_t>> ReduceParams::resolvedAxes() const {
  std::string op = reduceKindName(kind);
  if (auto e = checkShape(shape, op)) return *e;
  int64_t rank = int64_t(shape.size());
  std::vector<int64_t> resolved;
  if (axes.empty()) {
    if (!noopWithEmptyAxes)
      for (int64_t d = 0; d < rank; ++d) resolved.push_back(d);
    return resolved;
  }
  for (int64_t axis : axes) {
    auto d = resolveAxis(axis, rank, op);
    if (!d) return d.error();
    if (std::find(resolved.begin(), resolved.end(), *d) != resolved.end())
      return Diagnostic{"axis " + std::to_string(axis) + " is listed twice (as dimension " + std::to_string(*d) + ")",
                        op, 0, 0, "list each axis once"};
    resolved.push_back(*d);
  }
  std::sort(resolved.begin(), resolved.end());
  return resolved;
}

namespace {
// Whether a kind applies a map to the accumulated value (so it needs a "reduce.acc" stage).
bool hasFinalMap(ReduceKind kind) {
  return kind == ReduceKind::L2 || kind == ReduceKind::LogSum || kind == ReduceKind::LogSumExp;
}

// The stages that reduce, in the order they run.
std::vector<std::string> reducingStages(ReduceKind kind) {
  if (kind == ReduceKind::LogSumExp) return {"reduce.max", "reduce.acc"};
  if (hasFinalMap(kind)) return {"reduce.acc"};
  return {"reduce"};
}
}  // namespace

Expected<Workload> reduce(const ReduceParams& p, DataType dtype) {
  auto reduced = p.resolvedAxes();
  if (!reduced) return reduced.error();
  ReducedShape out = reducedShape(p.shape, *reduced, p.keepDims);
  std::vector<Expr> inputShape;
  for (int64_t d : p.shape) inputShape.push_back(Expr(d));
  Workload w;
  w.name = std::string(reduceKindName(p.kind)) + "_" + shapeName(p.shape) + "_axes" + shapeName(*reduced) +
           (p.keepDims ? "_keep" : "");
  te::Tensor x = te::placeholder(inputShape, dtype, "x");
  int64_t count = 1;
  for (int64_t d : *reduced) count *= p.shape[d];
  // One reduction of map(x at input position, output position) over the reduced axes, as a
  // stage called `name`.
  using ElementMap = std::function<Expr(Expr value, const std::vector<Expr>& at)>;
  auto reduction = [&](Reducer reducer, const std::string& name, const ElementMap& map) {
    if (reducesTrailingBlock(*reduced, int64_t(p.shape.size()))) {
      // Reducing the contiguous trailing axes: one flattened index k, reduced across vector lanes.
      return laneSplitReduce(
          reducer, out.shape, out.names, count,
          [&](const std::vector<Expr>& at, Expr k) {
            std::vector<Expr> indices(p.shape.size());
            for (size_t a = 0; a < at.size(); ++a)
              if (size_t(out.inputDim[a]) < size_t(reduced->front())) indices[size_t(out.inputDim[a])] = at[a];
            int64_t stride = count;
            for (int64_t d : *reduced) {
              stride /= p.shape[size_t(d)];
              indices[size_t(d)] = floormod(floordiv(k, Expr(stride)), Expr(p.shape[size_t(d)]));
            }
            return map(x(indices), at);
          },
          dtype, name, "reduce");
    }
    std::vector<IterVar> window;
    for (int64_t d : *reduced) window.push_back(te::reduceAxis(Expr(p.shape[d]), "r" + std::to_string(d)));
    return te::compute(
        out.shape,
        [&](const std::vector<Var>& at) {
          std::vector<Expr> indices(p.shape.size());
          for (size_t a = 0; a < at.size(); ++a) indices[size_t(out.inputDim[a])] = at[a];
          for (size_t r = 0; r < reduced->size(); ++r) indices[size_t((*reduced)[r])] = window[r].var();
          Expr value = map(x(indices), asExprs(at));
          if (window.empty()) return value;  // noop_with_empty_axes: a copy (of the mapped value)
          return ReduceNode::make(reducer, value, window);
        },
        name, out.names, "reduce");
  };
  Reducer reducer = p.kind == ReduceKind::Max   ? Reducer::Max
                    : p.kind == ReduceKind::Min ? Reducer::Min
                    : p.kind == ReduceKind::Prod ? Reducer::Product
                                                 : Reducer::Sum;
  Expr inverseCount = makeConst(dtype, 1.0 / double(count));
  auto square = [](Expr v, const std::vector<Expr>&) { return v * v; };
  te::Tensor result;
  switch (p.kind) {
    case ReduceKind::Mean:
      result = reduction(reducer, "reduce", [&](Expr v, const std::vector<Expr>&) { return v * inverseCount; });
      break;
    case ReduceKind::SumSquare: result = reduction(reducer, "reduce", square); break;
    case ReduceKind::L1:
      result = reduction(reducer, "reduce",
                         [&](Expr v, const std::vector<Expr>&) { return select(v < makeZero(dtype), -v, v); });
      break;
    case ReduceKind::L2:
    case ReduceKind::LogSum: {
      te::Tensor acc = reduction(reducer, "reduce.acc",
                                 p.kind == ReduceKind::L2 ? ElementMap(square)
                                                          : ElementMap([](Expr v, const std::vector<Expr>&) { return v; }));
      bool root = p.kind == ReduceKind::L2;
      result = te::compute(
          out.shape,
          [&](const std::vector<Var>& at) { return root ? sqrt(acc(asExprs(at))) : log(acc(asExprs(at))); },
          "reduce", out.names, "reduce");
      break;
    }
    case ReduceKind::LogSumExp: {
      te::Tensor largest =
          reduction(Reducer::Max, "reduce.max", [](Expr v, const std::vector<Expr>&) { return v; });
      te::Tensor acc = reduction(Reducer::Sum, "reduce.acc",
                                 [&](Expr v, const std::vector<Expr>& at) { return exp(v - largest(at)); });
      result = te::compute(
          out.shape,
          [&](const std::vector<Var>& at) { return log(acc(asExprs(at))) + largest(asExprs(at)); }, "reduce",
          out.names, "reduce");
      break;
    }
    default: result = reduction(reducer, "reduce", [](Expr v, const std::vector<Expr>&) { return v; }); break;
  }
  w.inputs = {x};
  w.outputs = {result};
  int64_t elements = 1;
  for (int64_t d : p.shape) elements *= d;
  w.flops = double(elements) * double(reducingStages(p.kind).size());
  return w;
}

Expected<Schedule> defaultReduceSchedule(const Workload& workload, const ReduceParams& p,
                                         const Target& target) {
  auto reduced = p.resolvedAxes();
  if (!reduced) return reduced.error();
  Schedule s(workload.outputs);
  for (const std::string& stage : reducingStages(p.kind))
    if (!s.findStage(stage))
      return Diagnostic{"the workload has no stage named '" + stage + "'", workload.name, 0, 0, ""};
  ReducedShape out = reducedShape(p.shape, *reduced, p.keepDims);
  int64_t last = int64_t(p.shape.size()) - 1;
  bool innerKept = last >= 0 && std::find(reduced->begin(), reduced->end(), last) == reduced->end();
  bool vectorize = innerKept && p.shape[size_t(last)] >= target.vectorLanes();
  std::vector<std::string> rowAxes = out.names;
  int64_t rows = 1;
  for (auto& extent : out.shape) rows *= *asConstInt(extent);
  std::vector<Status> steps;
  if (hasFinalMap(p.kind)) parallelizeRows(s, "reduce", out.names, rows, target, steps);
  if (vectorize) {
    rowAxes.pop_back();
    rows /= p.shape[size_t(last)];
  }
  for (const std::string& stage : reducingStages(p.kind)) {
    parallelizeRows(s, stage, rowAxes, rows, target, steps);
    scheduleLaneSplitReduce(s, stage, steps);
    if (vectorize) {
      std::string inner = axisName(last);
      steps.push_back(s.split(stage, inner, target.vectorLanes(), inner + "o", inner + "i"));
      std::vector<std::string> order = {inner + "o"};
      for (int64_t d : *reduced) order.push_back("r" + std::to_string(d));
      order.push_back(inner + "i");
      steps.push_back(s.reorder(stage, order));
      steps.push_back(s.vectorize(stage, inner + "i"));
    }
  }
  for (const Status& status : steps)
    if (!status) return status.error();
  return s;
}

Expected<Workload> argReduce(const ArgReduceParams& p, DataType dtype) {
  std::string op = p.isMax ? "argmax" : "argmin";
  if (p.shape.empty()) return Diagnostic{"the input must have at least one dimension", op, 0, 0, ""};
  if (auto e = checkShape(p.shape, op)) return *e;
  auto axis = resolveAxis(p.axis, int64_t(p.shape.size()), op);
  if (!axis) return axis.error();
  ReducedShape out = reducedShape(p.shape, {*axis}, p.keepDims);
  std::vector<Expr> inputShape;
  for (int64_t d : p.shape) inputShape.push_back(Expr(d));
  Workload w;
  w.name = op + "_" + shapeName(p.shape) + "_axis" + std::to_string(*axis) + (p.keepDims ? "_keep" : "") +
           (p.selectLastIndex ? "_last" : "");
  te::Tensor x = te::placeholder(inputShape, dtype, "x");
  auto inputAt = [&](const std::vector<Var>& at, Expr k) {
    std::vector<Expr> indices(p.shape.size());
    for (size_t a = 0; a < at.size(); ++a) indices[size_t(out.inputDim[a])] = at[a];
    indices[size_t(*axis)] = k;
    return indices;
  };
  int64_t extent = p.shape[size_t(*axis)];
  IterVar k = te::reduceAxis(Expr(extent), "k");
  te::Tensor value = te::compute(
      out.shape,
      [&](const std::vector<Var>& at) {
        return p.isMax ? te::maximum(x(inputAt(at, k)), {k}) : te::minimum(x(inputAt(at, k)), {k});
      },
      "arg.value", out.names, "reduce");
  IterVar k2 = te::reduceAxis(Expr(extent), "k");
  // The index: the smallest (or largest) k where the input equals the extreme value.
  te::Tensor index = te::compute(
      out.shape,
      [&](const std::vector<Var>& at) {
        Expr hit = eq(x(inputAt(at, k2)), value(std::vector<Expr>(at.begin(), at.end())));
        Expr k64 = cast(DataType::int64(), k2.var());
        if (p.selectLastIndex) return te::maximum(select(hit, k64, makeConst(DataType::int64(), -1)), {k2});
        return te::minimum(select(hit, k64, makeConst(DataType::int64(), double(extent))), {k2});
      },
      "arg", out.names, "reduce");
  w.inputs = {x};
  w.outputs = {index};
  int64_t elements = 1;
  for (int64_t d : p.shape) elements *= d;
  w.flops = 2.0 * double(elements);
  return w;
}

Expected<Schedule> defaultArgReduceSchedule(const Workload& workload, const Target& target) {
  Schedule s(workload.outputs);
  const Stage* arg = s.findStage("arg");
  if (!arg || !s.findStage("arg.value"))
    return Diagnostic{"the workload has no stages named 'arg' and 'arg.value'", workload.name, 0, 0, ""};
  std::vector<std::string> axes;
  for (auto& iv : te::asCompute(arg->op)->axes) axes.push_back(iv.name());
  if (axes.empty()) return s;  // one value: nothing to schedule
  int64_t rows = 1;
  for (auto& extent : workload.outputs[0].shape()) rows *= *asConstInt(extent);
  std::vector<Status> steps;
  parallelizeRows(s, "arg", axes, rows, target, steps);
  // Each extreme value is found right before the search for its index, while the input
  // line is still in cache.
  std::string innermost = rows >= 2 && target.cores >= 2 && axes.size() > 1 ? "rows" : axes.back();
  steps.push_back(s.computeAt("arg.value", "arg", innermost));
  for (const Status& status : steps)
    if (!status) return status.error();
  return s;
}

te::Tensor laneSplitReduce(Reducer reducer, const std::vector<Expr>& rowShape, const std::vector<std::string>& rowNames,
                           int64_t extent, const std::function<Expr(const std::vector<Expr>& row, Expr k)>& source,
                           DataType dtype, const std::string& name, const std::string& tag) {
  auto asExprs = [](const std::vector<Var>& vars) { return std::vector<Expr>(vars.begin(), vars.end()); };
  if (extent < 2 * kReductionLanes) {
    IterVar k = te::reduceAxis(Expr(extent), "k");
    return te::compute(
        rowShape,
        [&](const std::vector<Var>& row) { return ReduceNode::make(reducer, source(asExprs(row), k.var()), {k}); },
        name, rowNames, tag);
  }
  int64_t steps = (extent + kReductionLanes - 1) / kReductionLanes;
  std::vector<Expr> laneShape = rowShape;
  laneShape.push_back(Expr(kReductionLanes));
  std::vector<std::string> laneNames = rowNames;
  laneNames.push_back("lane");
  IterVar j = te::reduceAxis(Expr(steps), "j");
  te::Tensor lanes = te::compute(
      laneShape,
      [&](const std::vector<Var>& at) {
        std::vector<Expr> row(at.begin(), at.end() - 1);
        Expr k = j.var() * kReductionLanes + at.back();
        if (extent % kReductionLanes == 0) return ReduceNode::make(reducer, source(row, k), {j});
        // The last step runs past the row: those lanes add the identity (and read in bounds).
        // likely(): loop partitioning peels that step, and the others read plain vectors
        // (the clamp made every step's read a gather: a 7x7 plane in 4 steps of 16).
        Expr value = source(row, min(k, Expr(extent - 1)));
        return ReduceNode::make(reducer, select(likely(k < extent), value, reducerIdentity(reducer, dtype)), {j});
      },
      name + ".lanes", laneNames, tag);
  IterVar lane = te::reduceAxis(Expr(kReductionLanes), "lane");
  return te::compute(
      rowShape,
      [&](const std::vector<Var>& row) {
        std::vector<Expr> at = asExprs(row);
        at.push_back(lane.var());
        return ReduceNode::make(reducer, lanes(at), {lane});
      },
      name, rowNames, tag);
}

void scheduleLaneSplitReduce(Schedule& s, const std::string& name, std::vector<Status>& steps) {
  const Stage* combined = s.findStage(name);
  if (!combined || !s.findStage(name + ".lanes")) return;  // a short row: one plain reduction
  // Per row of the combined stage (its last loop before the lane reduction), when it has rows.
  std::string rowLoop;
  for (const IterVar& loop : combined->leafIterVars) {
    if (loop.type() == IterVarType::Reduce) break;
    rowLoop = loop.name();
  }
  if (!rowLoop.empty()) steps.push_back(s.computeAt(name + ".lanes", name, rowLoop));
  steps.push_back(s.reorder(name + ".lanes", {"j", "lane"}));
  steps.push_back(s.vectorize(name + ".lanes", "lane"));
}

}  // namespace tessel
