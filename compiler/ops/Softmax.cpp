// Softmax and LogSoftmax computes and their default schedule.
#include "compiler/ops/Softmax.h"

#include "compiler/ops/Reduction.h"
#include "core/ir/IROperators.h"

namespace tessel {

namespace {
std::string stagePrefix(const SoftmaxParams& p) { return p.logSoftmax ? "logsoftmax" : "softmax"; }
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
  int64_t axis = *resolved, rank = int64_t(p.shape.size());
  std::string prefix = stagePrefix(p);
  std::vector<Expr> fullShape, rowShape;
  std::vector<std::string> fullNames, rowNames;
  for (int64_t d = 0; d < rank; ++d) {
    fullShape.push_back(Expr(p.shape[d]));
    fullNames.push_back(axisName(d));
    if (d == axis) continue;
    rowShape.push_back(Expr(p.shape[d]));
    rowNames.push_back(axisName(d));
  }
  Workload w;
  w.name = prefix + "_" + shapeName(p.shape) + "_axis" + std::to_string(axis);
  te::Tensor x = te::placeholder(fullShape, dtype, "x");
  // Index helpers: a full-shape position with the axis inserted, and a position with it removed.
  auto along = [&](const std::vector<Expr>& row, Expr k) {
    std::vector<Expr> indices = row;
    indices.insert(indices.begin() + axis, k);
    return indices;
  };
  auto without = [&](const std::vector<Var>& full) {
    std::vector<Expr> indices(full.begin(), full.end());
    indices.erase(indices.begin() + axis);
    return indices;
  };
  // A reduction along the axis. Along the contiguous last axis it runs across vector lanes
  // (laneSplitReduce); otherwise the schedule vectorizes the contiguous axes inside it.
  using Source = std::function<Expr(const std::vector<Expr>& row, Expr k)>;
  auto alongAxis = [&](Reducer reducer, const std::string& name, const Source& source) {
    if (axis == rank - 1)
      return laneSplitReduce(reducer, rowShape, rowNames, p.shape[axis], source, dtype, name, "softmax");
    IterVar k = te::reduceAxis(Expr(p.shape[axis]), "k");
    return te::compute(
        rowShape,
        [&](const std::vector<Var>& row) { return ReduceNode::make(reducer, source(asExprs(row), k.var()), {k}); },
        name, rowNames, "softmax");
  };
  te::Tensor rowMax = alongAxis(Reducer::Max, prefix + ".max",
                                [&](const std::vector<Expr>& row, Expr k) { return x(along(row, k)); });
  w.inputs = {x};
  int64_t elements = 1;
  for (int64_t d : p.shape) elements *= d;
  // Per element: the max comparison, the subtraction, exp, the sum and the final op.
  w.flops = 5.0 * double(elements);
  if (p.logSoftmax) {
    te::Tensor sum = alongAxis(Reducer::Sum, prefix + ".sum", [&](const std::vector<Expr>& row, Expr k) {
      return exp(x(along(row, k)) - rowMax(row));
    });
    w.outputs = {te::compute(
        fullShape,
        [&](const std::vector<Var>& i) {
          auto row = without(i);
          return x(asExprs(i)) - rowMax(row) - log(sum(row));
        },
        prefix, fullNames, "softmax")};
    return w;
  }
  te::Tensor shifted = te::compute(
      fullShape, [&](const std::vector<Var>& i) { return exp(x(asExprs(i)) - rowMax(without(i))); }, prefix + ".exp",
      fullNames, "softmax");
  te::Tensor sum = alongAxis(Reducer::Sum, prefix + ".sum",
                             [&](const std::vector<Expr>& row, Expr k) { return shifted(along(row, k)); });
  w.outputs = {te::compute(
      fullShape, [&](const std::vector<Var>& i) { return shifted(asExprs(i)) / sum(without(i)); }, prefix, fullNames,
      "softmax")};
  return w;
}

Expected<Schedule> defaultSoftmaxSchedule(const Workload& workload, const SoftmaxParams& p,
                                          const ScheduleTarget& target) {
  auto resolved = p.resolvedAxis();
  if (!resolved) return resolved.error();
  int64_t axis = *resolved, rank = int64_t(p.shape.size());
  std::string prefix = stagePrefix(p);
  Schedule s(workload.outputs);
  if (!s.findStage(prefix))
    return Diagnostic{"the workload has no stage named '" + prefix + "'", workload.name, 0, 0, ""};
  std::vector<std::string> stages = {prefix + ".max", prefix + ".sum", prefix};
  if (s.findStage(prefix + ".exp")) stages.insert(stages.begin() + 1, prefix + ".exp");

  // Every stage stays at root: the max and the exponentials each have two readers, and
  // compute_at needs a single reader whose loop encloses every use. Each stage runs its
  // rows (the axes before the softmax axis) in parallel instead.
  std::vector<std::string> outer;
  int64_t rows = 1;
  for (int64_t d = 0; d < axis; ++d) {
    outer.push_back(axisName(d));
    rows *= p.shape[d];
  }
  int64_t innermost = rank - 1;
  std::string inner = axisName(innermost);
  bool vectorizeInner = p.shape[innermost] >= target.vectorLanes;
  std::vector<Status> steps;
  for (const std::string& stage : stages) {
    bool reduces = stage == prefix + ".max" || stage == prefix + ".sum";
    if (outer.size() > 1) steps.push_back(s.fuse(stage, outer, "rows"));
    if (!outer.empty() && target.threads > 1 && rows > 1)
      steps.push_back(s.parallel(stage, outer.size() > 1 ? "rows" : outer.front()));
    // Vectors along the innermost axis. When that is the softmax axis, the max and sum
    // reduce along it and stay scalar; otherwise their reduction loop moves outside it.
    if (!vectorizeInner || (reduces && innermost == axis)) continue;
    if (reduces) steps.push_back(s.reorder(stage, {"k", inner}));
    steps.push_back(s.split(stage, inner, target.vectorLanes, inner + "o", inner + "i"));
    steps.push_back(s.vectorize(stage, inner + "i"));
  }
  scheduleLaneSplitReduce(s, prefix + ".max", steps);
  scheduleLaneSplitReduce(s, prefix + ".sum", steps);
  for (const Status& status : steps)
    if (!status) return status.error();
  return s;
}

}  // namespace tessel
