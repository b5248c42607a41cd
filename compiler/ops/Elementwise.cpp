// Elementwise computes and their default schedule.
#include "compiler/ops/Elementwise.h"

#include "core/ir/IROperators.h"
#include "core/ir/IRMutator.h"
#include "core/ir/IRVisitor.h"

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

Workload unaryElementwise(UnaryOp op, const std::vector<int64_t>& shape, DataType dtype) {
  Workload w;
  w.name = std::string(unaryOpName(op)) + "_" + shapeName(shape);
  te::Tensor in = te::placeholder(toExprs(shape), dtype, "in");
  te::Tensor out = te::compute(
      toExprs(shape), [&](const std::vector<Var>& i) { return applyUnary(op, in(asExprs(i))); }, "out",
      axisNames(shape.size()), "elemwise");
  w.inputs = {in};
  w.outputs = {out};
  w.flops = double(elementCount(shape));
  return w;
}

Expected<std::vector<int64_t>> broadcastShapes(const std::vector<std::vector<int64_t>>& shapes) {
  size_t rank = 0;
  for (auto& shape : shapes) rank = std::max(rank, shape.size());
  std::vector<int64_t> out(rank, 1);
  for (size_t d = 0; d < rank; ++d) {
    for (auto& shape : shapes) {
      if (d + shape.size() < rank) continue;
      int64_t extent = shape[d + shape.size() - rank];
      if (extent == out[d] || extent == 1) continue;
      if (out[d] != 1) {
        std::string all;
        for (auto& s : shapes) all += (all.empty() ? "" : " and ") + shapeName(s);
        return Diagnostic{"shapes " + all + " do not broadcast (dimension " + std::to_string(d) + ": " +
                              std::to_string(out[d]) + " vs " + std::to_string(extent) + ")",
                          "", 0, 0, "each dimension must match or be 1"};
      }
      out[d] = extent;
    }
  }
  return out;
}

Expr broadcastRead(const te::Tensor& tensor, const std::vector<int64_t>& shape, const std::vector<Var>& axes) {
  std::vector<Expr> indices;
  for (size_t d = 0; d < shape.size(); ++d) {
    size_t outDim = d + axes.size() - shape.size();
    indices.push_back(shape[d] == 1 ? Expr(0) : Expr(axes[outDim]));
  }
  return tensor(indices);
}

Expected<Workload> broadcastElementwise(const std::string& name, const std::vector<ElementwiseOperand>& operands,
                                        const std::vector<ElementwiseResult>& results,
                                        const std::optional<std::vector<int64_t>>& givenShape) {
  std::vector<std::vector<int64_t>> shapes;
  if (givenShape) shapes.push_back(*givenShape);
  for (auto& operand : operands) shapes.push_back(operand.shape);
  auto outShape = broadcastShapes(shapes);
  if (outShape && givenShape && *outShape != *givenShape)
    outShape = Diagnostic{"operand shapes widen the output shape " + shapeName(*givenShape), "", 0, 0, ""};
  if (!outShape) {
    Diagnostic d = outShape.error();
    d.location = name;
    return d;
  }
  Workload w;
  w.name = name;
  for (auto& operand : operands)
    w.inputs.push_back(te::placeholder(toExprs(operand.shape), operand.dtype, operand.name));
  for (auto& result : results) {
    te::Tensor out = te::compute(
        toExprs(*outShape),
        [&](const std::vector<Var>& axes) {
          std::vector<Expr> elements;
          for (size_t k = 0; k < operands.size(); ++k)
            elements.push_back(broadcastRead(w.inputs[k], operands[k].shape, axes));
          Expr value = result.element(elements);
          TESSEL_ICHECK(value.dtype() == result.dtype)
              << name << ": element of " << result.name << " is " << value.dtype().toString() << ", declared "
              << result.dtype.toString();
          return value;
        },
        result.name, axisNames(outShape->size()), "elemwise");
    w.outputs.push_back(out);
  }
  w.flops = double(elementCount(*outShape)) * double(results.size());
  return w;
}

Expected<Workload> binaryElementwise(BinaryOp op, const std::vector<int64_t>& aShape,
                                     const std::vector<int64_t>& bShape, DataType dtype) {
  std::string name = std::string(binaryOpName(op)) + "_" + shapeName(aShape) + "_" + shapeName(bShape);
  auto w = broadcastElementwise(
      name, {{aShape, dtype, "a"}, {bShape, dtype, "b"}},
      {{"out", dtype, [op](const std::vector<Expr>& x) { return applyBinary(op, x[0], x[1]); }}});
  if (!w) {
    Diagnostic d = w.error();
    d.location = binaryOpName(op);
    return d;
  }
  return w;
}

namespace {
// The number of leading axes of `output` that per-row operands index: 0 when every tensor
// read varies along the innermost axis (or not at all), else one past the innermost axis
// that a read constant along the innermost one uses (2 for a batch norm's scale[c, 0, 0] on
// [N, C, H, W]). Every stage of the pipeline with the output's shape is looked at, so the
// reads of the operations inlined into a fused kernel count too.
size_t perRowAxes(const te::Tensor& output) {
  std::vector<int64_t> shape;
  for (const Expr& e : output.shape()) shape.push_back(*asConstInt(e));
  size_t rank = shape.size(), rows = 0;
  for (const te::Operation& op : te::postOrder({output})) {
    const auto* compute = te::asCompute(op);
    if (!compute || compute->axes.size() != rank || !compute->reduceAxes.empty()) continue;
    bool sameShape = true;
    for (size_t d = 0; d < rank; ++d) sameShape = sameShape && *asConstInt(compute->axes[d]->dom.extent) == shape[d];
    if (!sameShape) continue;
    postOrderVisit(compute->body, [&](const Expr& e) {
      const auto* load = e.as<BufferLoadNode>();
      if (!load) return;
      int deepest = -1;
      for (const Expr& index : load->indices)
        for (size_t d = 0; d < rank; ++d)
          if (usesVar(index, compute->axes[d].var())) deepest = std::max(deepest, int(d));
      if (deepest >= 0 && size_t(deepest) + 1 < rank) rows = std::max(rows, size_t(deepest) + 1);
    });
  }
  return rows;
}

// Whether `index` divides or takes a remainder (a reshape's read, which is no relayout).
bool dividesOrWraps(const Expr& index) {
  bool found = false;
  postOrderVisit(index, [&](const Expr& e) {
    found = found || e.as<DivNode>() || e.as<ModNode>() || e.as<FloorDivNode>() || e.as<FloorModNode>();
  });
  return found;
}

// Whether a read of the pipeline computing `output` steps along an outer axis of its tensor
// as the output's innermost axis advances: a relayout between NCHW and NCHW<b>c fused into the
// kernel (the squeeze-and-excitation Mul of an NCHW activation by a blocked scale). Such
// reads are strided whatever the loop order; fused into one flat loop, each vector's indices
// also become divisions of the flat index.
bool readsAcrossInnermost(const te::Tensor& output) {
  size_t rank = output.shape().size();
  bool across = false;
  for (const te::Operation& op : te::postOrder({output})) {
    const auto* compute = te::asCompute(op);
    if (!compute || compute->axes.size() != rank || !compute->reduceAxes.empty() || rank == 0) continue;
    Var innermost = compute->axes[rank - 1].var();
    postOrderVisit(compute->body, [&](const Expr& e) {
      const auto* load = e.as<BufferLoadNode>();
      if (!load) return;
      for (size_t k = 0; k + 1 < load->indices.size(); ++k)
        across = across || (usesVar(load->indices[k], innermost) && !dividesOrWraps(load->indices[k]));
    });
  }
  return across;
}

// Whether `shape` is a channel-blocked activation: 5-D ([N, C / b, H, W, b]) with a block of
// one to four whole vectors. Fused flat, such a kernel divided each axis's index back out of
// the flat index for every vector (the simplifier cannot fold the nest once the flat loop is
// split into vectors and parallel tasks: some 50 integer instructions per vector of
// EfficientNet's x * sigmoid(x)); a per-channel operand ([C / b, 1, 1, b], a batch norm's
// scale after a blocked Concat) was read at such an index too, and a fused Concat's per-input
// tests stayed inside the chunks. By rows, all of them change once per row.
bool channelBlockedShape(const std::vector<int64_t>& shape, int64_t lanes) {
  return shape.size() == 5 && shape.back() % lanes == 0 && shape.back() <= 4 * lanes;
}

// Fuses `axes` pairwise from the innermost out into one loop, named `name` (a single axis
// keeps its own name, which `name` is set to): each original index is then a nested
// floordiv/floormod of the fused loop that the simplifier folds back into one contiguous
// index (one fuse of all axes leaves x//c1 % c2 terms it cannot recombine, and the vector
// loads become gathers).
Status fuseAxes(Schedule& s, const std::vector<std::string>& axes, std::string& name) {
  std::string flat = axes.back();
  for (size_t k = axes.size() - 1; k-- > 0;) {
    std::string fused = k == 0 ? name : name + std::to_string(k);
    if (Status st = s.fuse("out", {axes[k], flat}, fused); !st) return st;
    flat = fused;
  }
  name = flat;
  return Status::success();
}
}  // namespace

Expected<Schedule> defaultElementwiseSchedule(const Workload& workload, const Target& target) {
  Schedule s(workload.outputs);
  const Stage* out = s.findStage("out");
  if (!out) return Diagnostic{"the workload has no stage named 'out'", workload.name, 0, 0, ""};
  std::vector<std::string> axes;
  for (auto& iv : out->leafIterVars) axes.push_back(iv.name());
  if (axes.empty()) return s;  // a scalar: nothing to schedule
  std::vector<int64_t> shape;
  for (auto& extent : workload.outputs[0].shape()) shape.push_back(*asConstInt(extent));
  int64_t elements = elementCount(shape);
  int64_t lanes = target.vectorLanes();
  int64_t chunksPerTask = std::max<int64_t>(1, 16384 / lanes);
  bool parallel = target.cores > 1 && elements >= 2 * chunksPerTask * lanes;
  // Per-row operands (a per-channel scale on NCHW): rows of the leading axes, each a
  // contiguous plane of the trailing ones in vectors. With everything fused instead, a
  // plane that is not a multiple of the vector width (14x14, 7x7) puts a row boundary inside
  // vectors, and the per-row operand's index becomes a gather in every one of them.
  // A relayout (NCHW to NCHW<b>c or back) fused in: rows of the axes before the last two in
  // parallel, the innermost axis in vectors when they fill it (as the LayoutTransform
  // kernel's own schedule does), so each vector's reads are one strided access at a simple
  // index. So too for any channel-blocked output (see channelBlockedShape).
  int64_t rowCount = 1;
  for (size_t d = 0; d + 2 < shape.size(); ++d) rowCount *= shape[d];
  if (shape.size() >= 3 && (!parallel || rowCount >= 2 * int64_t(target.cores)) &&
      (readsAcrossInnermost(workload.outputs[0]) || channelBlockedShape(shape, lanes))) {
    int64_t innermost = shape.back();
    if (innermost >= lanes && innermost % lanes == 0) {
      if (innermost <= kMaxVectorizedExtent) {
        if (Status st = s.vectorize("out", axes.back()); !st) return st.error();
      } else {
        if (Status st = s.split("out", axes.back(), lanes, "outer", "lane"); !st) return st.error();
        if (Status st = s.vectorize("out", "lane"); !st) return st.error();
      }
    }
    // The loop inside each row stays a loop: unrolled by LLVM in every branch of a fused
    // Concat (one per input, 25 in DenseNet-121), it doubled the model's compile time.
    if (Status st = s.pragma("out", axes[axes.size() - 2], "auto_unroll_max_step", 0); !st) return st.error();
    if (parallel) {
      std::string rowLoop = "rows";
      if (Status st = fuseAxes(s, std::vector<std::string>(axes.begin(), axes.end() - 2), rowLoop); !st)
        return st.error();
      if (Status st = s.parallel("out", rowLoop); !st) return st.error();
    }
    return s;
  }
  size_t rowAxes = perRowAxes(workload.outputs[0]);
  int64_t rows = 1;
  for (size_t d = 0; d < rowAxes; ++d) rows *= shape[d];
  int64_t plane = elements / std::max<int64_t>(1, rows);
  if (rowAxes > 0 && plane >= 2 * lanes && (!parallel || rows >= 4 * int64_t(target.cores))) {
    std::vector<std::string> rowNames(axes.begin(), axes.begin() + long(rowAxes));
    std::vector<std::string> planeNames(axes.begin() + long(rowAxes), axes.end());
    std::string planeLoop = "plane";
    if (Status st = fuseAxes(s, planeNames, planeLoop); !st) return st.error();
    if (Status st = s.split("out", planeLoop, lanes, "outer", "lane"); !st) return st.error();
    if (Status st = s.vectorize("out", "lane"); !st) return st.error();
    // Each row's vector loop stays a loop: LLVM fully unrolled it (a 14x14 plane is 24
    // vectors), which, times the branches of a fused Concat's rows (one per input, 25 in
    // DenseNet-121), cost 1 s of its optimizer per kernel and ran no faster.
    if (Status st = s.pragma("out", "outer", "auto_unroll_max_step", 0); !st) return st.error();
    if (parallel) {
      std::string rowLoop = "rows";
      if (Status st = fuseAxes(s, rowNames, rowLoop); !st) return st.error();
      if (Status st = s.parallel("out", rowLoop); !st) return st.error();
    }
    return s;
  }
  std::string flat = "fused";
  if (Status st = fuseAxes(s, axes, flat); !st) return st.error();
  if (elements < lanes) return s;
  // Vector chunks, then blocks of at least ~16K elements per parallel task so a launch
  // (a few microseconds) stays small against the work.
  if (Status st = s.split("out", flat, lanes, "outer", "lane"); !st) return st.error();
  if (Status st = s.vectorize("out", "lane"); !st) return st.error();
  int64_t chunks = (elements + lanes - 1) / lanes;
  if (parallel && chunks >= 2 * chunksPerTask) {
    if (Status st = s.split("out", "outer", chunksPerTask, "task", "chunk"); !st) return st.error();
    if (Status st = s.parallel("out", "task"); !st) return st.error();
  }
  return s;
}

}  // namespace tessel
