// Softmax, LogSoftmax and Hardmax computes and their default schedules.
#include "compiler/ops/Softmax.h"

#include "compiler/ops/Reduction.h"
#include "core/ir/IROperators.h"

namespace tessel {

namespace {
std::string stagePrefix(const SoftmaxParams& p) { return p.logSoftmax ? "logsoftmax" : "softmax"; }

// The split of the input into rows (the axes before the softmax axis, and after it unless
// flattened) and the normalized line through each row, with index helpers between them.
struct LineGeometry {
  int64_t axis = 0, rank = 0;
  bool flattened = false;  ///< The line runs over every axis from `axis` on.
  std::vector<int64_t> shape;
  std::vector<Expr> fullShape, rowShape;
  std::vector<std::string> fullNames, rowNames;
  int64_t lineLength = 1;

  LineGeometry(const SoftmaxParams& p, int64_t resolvedAxis)
      : axis(resolvedAxis), rank(int64_t(p.shape.size())), flattened(p.flattenFromAxis), shape(p.shape) {
    for (int64_t d = 0; d < rank; ++d) {
      fullShape.push_back(Expr(shape[d]));
      fullNames.push_back(axisName(d));
      bool onLine = d == axis || (flattened && d > axis);
      if (onLine) {
        lineLength *= shape[d];
        continue;
      }
      rowShape.push_back(Expr(shape[d]));
      rowNames.push_back(axisName(d));
    }
  }
  /// Whether the line is contiguous in memory (it ends with the innermost axis).
  bool lineIsTrailing() const { return axis == rank - 1 || flattened; }
  /// The full-shape position of element k of a row's line.
  std::vector<Expr> along(const std::vector<Expr>& row, Expr k) const {
    std::vector<Expr> indices = row;
    if (!flattened) {
      indices.insert(indices.begin() + axis, k);
      return indices;
    }
    int64_t stride = lineLength;
    for (int64_t d = axis; d < rank; ++d) {
      stride /= shape[d];
      indices.push_back(d == axis ? floordiv(k, Expr(stride)) : floormod(floordiv(k, Expr(stride)), Expr(shape[d])));
    }
    return indices;
  }
  /// The row of a full-shape position.
  std::vector<Expr> rowOf(const std::vector<Var>& full) const {
    std::vector<Expr> indices(full.begin(), full.end());
    if (flattened) indices.resize(size_t(axis));
    else indices.erase(indices.begin() + axis);
    return indices;
  }
  /// The position along the line of a full-shape position.
  Expr lineIndexOf(const std::vector<Var>& full) const {
    if (!flattened) return full[size_t(axis)];
    Expr k = Expr(int64_t(0));
    for (int64_t d = axis; d < rank; ++d) k = k * shape[d] + full[size_t(d)];
    return k;
  }

  using Source = std::function<Expr(const std::vector<Expr>& row, Expr k)>;
  /// A reduction along each row's line. Along the contiguous innermost axis it runs across
  /// vector lanes (laneSplitReduce); otherwise the schedule vectorizes the contiguous axes inside it.
  te::Tensor reduceLine(Reducer reducer, const std::string& name, const Source& source, DataType dtype,
                        const std::string& tag) const {
    if (lineIsTrailing()) return laneSplitReduce(reducer, rowShape, rowNames, lineLength, source, dtype, name, tag);
    IterVar k = te::reduceAxis(Expr(lineLength), "k");
    return te::compute(
        rowShape,
        [&](const std::vector<Var>& row) { return ReduceNode::make(reducer, source(asExprs(row), k.var()), {k}); },
        name, rowNames, tag);
  }
};

// Schedules every stage of a softmax-like pipeline: the axes before the line fused into
// parallel rows, the innermost axis as vectors where it is not reduced along.
Status scheduleLineStages(Schedule& s, const LineGeometry& g, const std::vector<std::string>& stages,
                          const std::vector<std::string>& reductions, const Target& target) {
  std::vector<std::string> outer;
  int64_t rows = 1;
  for (int64_t d = 0; d < g.axis; ++d) {
    outer.push_back(axisName(d));
    rows *= g.shape[d];
  }
  int64_t innermost = g.rank - 1;
  std::string inner = axisName(innermost);
  bool vectorizeInner = g.shape[innermost] >= target.vectorLanes();
  std::vector<Status> steps;
  for (const std::string& stage : stages) {
    bool reduces = std::find(reductions.begin(), reductions.end(), stage) != reductions.end();
    if (outer.size() > 1) steps.push_back(s.fuse(stage, outer, "rows"));
    if (!outer.empty() && target.cores > 1 && rows > 1)
      steps.push_back(s.parallel(stage, outer.size() > 1 ? "rows" : outer.front()));
    // Vectors along the innermost axis. When the reduction runs along it, the reductions
    // stay scalar per lane split; otherwise their reduction loop moves outside it.
    if (!vectorizeInner || (reduces && g.lineIsTrailing())) continue;
    if (reduces) steps.push_back(s.reorder(stage, {"k", inner}));
    steps.push_back(s.split(stage, inner, target.vectorLanes(), inner + "o", inner + "i"));
    steps.push_back(s.vectorize(stage, inner + "i"));
  }
  for (const std::string& reduction : reductions) scheduleLaneSplitReduce(s, reduction, steps);
  for (const Status& status : steps)
    if (!status) return status.error();
  return Status::success();
}
}  // namespace

Expected<int64_t> SoftmaxParams::resolvedAxis() const {
  const char* op = logSoftmax ? "logsoftmax" : "softmax";
  if (shape.empty()) return Diagnostic{"the input must have at least one dimension", op, 0, 0, ""};
  for (int64_t d : shape)
    if (d < 1) return Diagnostic{"input dimensions must be positive, got " + shapeName(shape), op, 0, 0, ""};
  int64_t rank = int64_t(shape.size());
  if (axis < -rank || axis >= rank)
    return Diagnostic{"axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank), op, 0, 0,
                      "use an axis in [" + std::to_string(-rank) + ", " + std::to_string(rank - 1) + "]"};
  return axis < 0 ? axis + rank : axis;
}

Expected<Workload> softmax(const SoftmaxParams& p, DataType dtype) {
  auto resolved = p.resolvedAxis();
  if (!resolved) return resolved.error();
  LineGeometry g(p, *resolved);
  std::string prefix = stagePrefix(p);
  Workload w;
  w.name = prefix + "_" + shapeName(p.shape) + "_axis" + std::to_string(g.axis) + (g.flattened ? "_flat" : "");
  te::Tensor x = te::placeholder(g.fullShape, dtype, "x");
  te::Tensor rowMax = g.reduceLine(
      Reducer::Max, prefix + ".max", [&](const std::vector<Expr>& row, Expr k) { return x(g.along(row, k)); }, dtype,
      "softmax");
  w.inputs = {x};
  // Per element: the max comparison, the subtraction, exp, the sum and the final op.
  w.flops = 5.0 * double(elementCount(p.shape));
  if (p.logSoftmax) {
    te::Tensor sum = g.reduceLine(
        Reducer::Sum, prefix + ".sum",
        [&](const std::vector<Expr>& row, Expr k) { return exp(x(g.along(row, k)) - rowMax(row)); }, dtype,
        "softmax");
    w.outputs = {te::compute(
        g.fullShape,
        [&](const std::vector<Var>& i) {
          auto row = g.rowOf(i);
          return x(asExprs(i)) - rowMax(row) - log(sum(row));
        },
        prefix, g.fullNames, "softmax")};
    return w;
  }
  te::Tensor shifted = te::compute(
      g.fullShape, [&](const std::vector<Var>& i) { return exp(x(asExprs(i)) - rowMax(g.rowOf(i))); },
      prefix + ".exp", g.fullNames, "softmax");
  te::Tensor sum = g.reduceLine(
      Reducer::Sum, prefix + ".sum", [&](const std::vector<Expr>& row, Expr k) { return shifted(g.along(row, k)); },
      dtype, "softmax");
  w.outputs = {te::compute(
      g.fullShape, [&](const std::vector<Var>& i) { return shifted(asExprs(i)) / sum(g.rowOf(i)); }, prefix,
      g.fullNames, "softmax")};
  return w;
}

Expected<Schedule> defaultSoftmaxSchedule(const Workload& workload, const SoftmaxParams& p,
                                          const Target& target) {
  auto resolved = p.resolvedAxis();
  if (!resolved) return resolved.error();
  LineGeometry g(p, *resolved);
  std::string prefix = stagePrefix(p);
  Schedule s(workload.outputs);
  if (!s.findStage(prefix))
    return Diagnostic{"the workload has no stage named '" + prefix + "'", workload.name, 0, 0, ""};
  std::vector<std::string> stages = {prefix + ".max", prefix + ".sum", prefix};
  if (s.findStage(prefix + ".exp")) stages.insert(stages.begin() + 1, prefix + ".exp");
  // Every stage stays at root: the max and the exponentials each have two readers, and
  // compute_at needs a single reader whose loop encloses every use. Each stage runs its
  // rows (the axes before the softmax axis) in parallel instead.
  if (Status st = scheduleLineStages(s, g, stages, {prefix + ".max", prefix + ".sum"}, target); !st) return st.error();
  return s;
}

Expected<Workload> hardmax(const SoftmaxParams& p, DataType dtype) {
  auto resolved = p.resolvedAxis();
  if (!resolved) return Diagnostic{resolved.error().message, "hardmax", 0, 0, resolved.error().hint};
  LineGeometry g(p, *resolved);
  te::Tensor x = te::placeholder(g.fullShape, dtype, "x");
  te::Tensor rowMax = g.reduceLine(
      Reducer::Max, "hardmax.max", [&](const std::vector<Expr>& row, Expr k) { return x(g.along(row, k)); }, dtype,
      "hardmax");
  // The first position of the maximum: the smallest k holding it (the line's length where none).
  DataType i64 = DataType::int64();
  te::Tensor first = g.reduceLine(
      Reducer::Min, "hardmax.index",
      [&](const std::vector<Expr>& row, Expr k) {
        return select(eq(x(g.along(row, k)), rowMax(row)), cast(i64, k), makeConst(i64, double(g.lineLength)));
      },
      i64, "hardmax");
  te::Tensor out = te::compute(
      g.fullShape,
      [&](const std::vector<Var>& i) {
        return select(eq(cast(i64, g.lineIndexOf(i)), first(g.rowOf(i))), makeConst(dtype, 1.0), makeZero(dtype));
      },
      "hardmax", g.fullNames, "hardmax");
  Workload w;
  w.name = "hardmax_" + shapeName(p.shape) + "_axis" + std::to_string(g.axis) + (g.flattened ? "_flat" : "");
  w.inputs = {x};
  w.outputs = {out};
  w.flops = 3.0 * double(elementCount(p.shape));
  return w;
}

Expected<Schedule> defaultHardmaxSchedule(const Workload& workload, const SoftmaxParams& p,
                                          const Target& target) {
  auto resolved = p.resolvedAxis();
  if (!resolved) return resolved.error();
  LineGeometry g(p, *resolved);
  Schedule s(workload.outputs);
  if (!s.findStage("hardmax")) return Diagnostic{"the workload has no stage named 'hardmax'", workload.name, 0, 0, ""};
  std::vector<std::string> reductions = {"hardmax.max", "hardmax.index"};
  if (Status st = scheduleLineStages(s, g, {"hardmax.max", "hardmax.index", "hardmax"}, reductions, target); !st)
    return st.error();
  return s;
}

}  // namespace tessel
