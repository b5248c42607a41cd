// Elementwise computes and their default schedule.
#include "compiler/ops/Elementwise.h"

#include "core/ir/IROperators.h"

namespace tessel {

const char* unaryOpName(UnaryOp op) {
  switch (op) {
    case UnaryOp::Relu: return "relu";
    case UnaryOp::Neg: return "neg";
    case UnaryOp::Abs: return "abs";
    case UnaryOp::Exp: return "exp";
    case UnaryOp::Log: return "log";
    case UnaryOp::Sqrt: return "sqrt";
    case UnaryOp::Tanh: return "tanh";
    case UnaryOp::Sigmoid: return "sigmoid";
    case UnaryOp::Erf: return "erf";
  }
  return "?";
}

const char* binaryOpName(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return "add";
    case BinaryOp::Sub: return "sub";
    case BinaryOp::Mul: return "mul";
    case BinaryOp::Div: return "div";
    case BinaryOp::Max: return "max";
    case BinaryOp::Min: return "min";
  }
  return "?";
}

Expr applyUnary(UnaryOp op, Expr x) {
  switch (op) {
    case UnaryOp::Relu: return max(x, makeZero(x.dtype()));
    case UnaryOp::Neg: return -x;
    case UnaryOp::Abs: return fabs(x);
    case UnaryOp::Exp: return exp(x);
    case UnaryOp::Log: return log(x);
    case UnaryOp::Sqrt: return sqrt(x);
    case UnaryOp::Tanh: return tanh(x);
    case UnaryOp::Sigmoid: return sigmoid(x);
    case UnaryOp::Erf: return erf(x);
  }
  return x;
}

Expr applyBinary(BinaryOp op, Expr a, Expr b) {
  switch (op) {
    case BinaryOp::Add: return a + b;
    case BinaryOp::Sub: return a - b;
    case BinaryOp::Mul: return a * b;
    case BinaryOp::Div: return a.dtype().isFloat() ? a / b : truncdiv(a, b);
    case BinaryOp::Max: return max(a, b);
    case BinaryOp::Min: return min(a, b);
  }
  return a;
}

namespace {
}  // namespace

Workload unaryElementwise(UnaryOp op, const std::vector<int64_t>& shape, DataType dtype) {
  Workload w;
  w.name = std::string(unaryOpName(op)) + "_" + shapeName(shape);
  te::Tensor in = te::placeholder(toExprs(shape), dtype, "in");
  te::Tensor out = te::compute(
      toExprs(shape), [&](const std::vector<Var>& i) { return applyUnary(op, in(std::vector<Expr>(i.begin(), i.end()))); },
      "out", axisNames(shape.size()), "elemwise");
  w.inputs = {in};
  w.outputs = {out};
  int64_t elements = 1;
  for (int64_t d : shape) elements *= d;
  w.flops = double(elements);
  return w;
}

Expected<Workload> binaryElementwise(BinaryOp op, const std::vector<int64_t>& aShape,
                                     const std::vector<int64_t>& bShape, DataType dtype) {
  size_t rank = std::max(aShape.size(), bShape.size());
  std::vector<int64_t> outShape(rank);
  for (size_t d = 0; d < rank; ++d) {
    int64_t a = d + aShape.size() >= rank ? aShape[d + aShape.size() - rank] : 1;
    int64_t b = d + bShape.size() >= rank ? bShape[d + bShape.size() - rank] : 1;
    if (a != b && a != 1 && b != 1)
      return Diagnostic{"shapes " + shapeName(aShape) + " and " + shapeName(bShape) + " do not broadcast (dimension " +
                            std::to_string(d) + ": " + std::to_string(a) + " vs " + std::to_string(b) + ")",
                        binaryOpName(op), 0, 0, "each dimension must match or be 1"};
    outShape[d] = std::max(a, b);
  }
  Workload w;
  w.name = std::string(binaryOpName(op)) + "_" + shapeName(aShape) + "_" + shapeName(bShape);
  te::Tensor a = te::placeholder(toExprs(aShape), dtype, "a");
  te::Tensor b = te::placeholder(toExprs(bShape), dtype, "b");
  // Index an operand at the output position: stretched dimensions read element 0.
  auto at = [rank](const te::Tensor& t, const std::vector<int64_t>& shape, const std::vector<Var>& i) {
    std::vector<Expr> indices;
    for (size_t d = 0; d < shape.size(); ++d) {
      size_t outDim = d + rank - shape.size();
      indices.push_back(shape[d] == 1 ? Expr(0) : Expr(i[outDim]));
    }
    return t(indices);
  };
  te::Tensor out = te::compute(
      toExprs(outShape),
      [&](const std::vector<Var>& i) { return applyBinary(op, at(a, aShape, i), at(b, bShape, i)); }, "out",
      axisNames(rank), "elemwise");
  w.inputs = {a, b};
  w.outputs = {out};
  int64_t elements = 1;
  for (int64_t d : outShape) elements *= d;
  w.flops = double(elements);
  return w;
}

Expected<Schedule> defaultElementwiseSchedule(const Workload& workload, const ScheduleTarget& target) {
  Schedule s(workload.outputs);
  const Stage* out = s.findStage("out");
  if (!out) return Diagnostic{"the workload has no stage named 'out'", workload.name, 0, 0, ""};
  std::vector<std::string> axes;
  for (auto& iv : out->leafIterVars) axes.push_back(iv.name());
  if (axes.empty()) return s;  // a scalar: nothing to schedule
  int64_t elements = 1;
  for (auto& extent : workload.outputs[0].shape()) elements *= *asConstInt(extent);
  std::string flat = axes[0];
  if (axes.size() > 1) {
    flat = "fused";
    if (Status st = s.fuse("out", axes, flat); !st) return st.error();
  }
  int64_t lanes = target.vectorLanes;
  if (elements < lanes) return s;
  // Vector chunks, then blocks of at least ~16K elements per parallel task so a launch
  // (a few microseconds) stays small against the work.
  if (Status st = s.split("out", flat, lanes, "outer", "lane"); !st) return st.error();
  if (Status st = s.vectorize("out", "lane"); !st) return st.error();
  int64_t chunks = (elements + lanes - 1) / lanes;
  int64_t chunksPerTask = std::max<int64_t>(1, 16384 / lanes);
  if (target.threads > 1 && chunks >= 2 * chunksPerTask) {
    if (Status st = s.split("out", "outer", chunksPerTask, "task", "chunk"); !st) return st.error();
    if (Status st = s.parallel("out", "task"); !st) return st.error();
  }
  return s;
}

}  // namespace tessel
