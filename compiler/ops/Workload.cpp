// Helpers the operators share for shapes, names and common schedule steps.
#include "compiler/ops/Workload.h"


namespace tessel {

std::vector<Expr> toExprs(const std::vector<int64_t>& shape) {
  std::vector<Expr> out;
  for (int64_t d : shape) out.push_back(Expr(d));
  return out;
}

std::vector<Expr> asExprs(const std::vector<Var>& vars) { return std::vector<Expr>(vars.begin(), vars.end()); }

std::string shapeName(const std::vector<int64_t>& shape) {
  std::string out;
  for (int64_t d : shape) out += (out.empty() ? "" : "x") + std::to_string(d);
  return out.empty() ? "scalar" : out;
}

std::string axisName(int64_t dimension) { return "ax" + std::to_string(dimension); }

std::vector<std::string> axisNames(size_t rank) {
  std::vector<std::string> names;
  for (size_t d = 0; d < rank; ++d) names.push_back(axisName(int64_t(d)));
  return names;
}

int64_t elementCount(const std::vector<int64_t>& shape) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  return count;
}

std::string convOperandProblem(const std::vector<int64_t>& inputShape, const std::vector<int64_t>& weightShape) {
  if (inputShape.size() < 3) return "the input must be N x C x D1 .. Dn with at least one spatial axis";
  if (weightShape.size() != inputShape.size()) return "the weight must have the input's rank";
  for (int64_t d : inputShape)
    if (d < 1) return "input dimensions must be positive";
  for (int64_t d : weightShape)
    if (d < 1) return "weight dimensions must be positive";
  return "";
}

int64_t widestDivisor(int64_t n, int64_t limit) {
  for (int64_t d = std::min(n, limit); d > 1; --d)
    if (n % d == 0) return d;
  return 1;
}

void parallelizeRows(Schedule& schedule, const std::string& stage, const std::vector<std::string>& axes,
                     int64_t rows, const Target& target, std::vector<Status>& steps) {
  if (axes.empty() || rows < 2 || target.cores < 2) return;
  std::string loop = axes.front();
  if (axes.size() > 1) {
    loop = "rows";
    steps.push_back(schedule.fuse(stage, axes, loop));
  }
  steps.push_back(schedule.parallel(stage, loop));
}

void parallelizeRootStages(Schedule& schedule, const Target& target, std::vector<Status>& steps) {
  if (target.cores < 2) return;
  for (const Stage& stage : schedule.stages()) {
    const auto* compute = te::asCompute(stage.op);
    if (!compute || stage.attach != AttachKind::Root) continue;
    for (const IterVar& axis : compute->axes)
      if (*asConstInt(axis->dom.extent) > 1) {
        steps.push_back(schedule.parallel(stage.name, axis.name()));
        break;
      }
  }
}

}  // namespace tessel
