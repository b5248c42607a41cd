// Index-driven reads and writes (gathers, scatters, one-hot, sequence reversal) as tensor
// expressions with ONNX semantics.
#include "compiler/ops/Indexing.h"

#include "compiler/ops/Generate.h"
#include "compiler/ops/TransformSupport.h"

namespace tessel {

namespace {
using namespace transform_support;

std::optional<Diagnostic> checkIndexType(const std::string& op, DataType indexType) {
  if (indexType != DataType::int32() && indexType != DataType::int64())
    return opError(op, "indices of type " + indexType.toString(), "indices are int32 or int64");
  return std::nullopt;
}

// GatherElements and ScatterElements index data of the indices' own rank along one axis;
// returns that axis, normalized.
Expected<size_t> checkElementsOperands(const std::string& op, const Shape& dataShape, const Shape& indicesShape,
                                       int64_t axisIn, DataType indexType) {
  if (auto e = checkShape(op, dataShape, "data")) return *e;
  if (auto e = checkShape(op, indicesShape, "indices")) return *e;
  if (auto e = checkIndexType(op, indexType)) return *e;
  if (dataShape.empty() || indicesShape.size() != dataShape.size())
    return opError(
        op, "indices have rank " + std::to_string(indicesShape.size()) + ", data " + std::to_string(dataShape.size()),
        "data and indices have the same rank, at least 1");
  auto axis = normalizeAxis(axisIn, dataShape.size());
  if (!axis)
    return opError(op, "axis " + std::to_string(axisIn) + " is outside the rank " + std::to_string(dataShape.size()));
  return size_t(*axis);
}

const char* reductionName(ScatterReduction reduction) {
  switch (reduction) {
    case ScatterReduction::None: return "none";
    case ScatterReduction::Add: return "add";
    case ScatterReduction::Mul: return "mul";
    case ScatterReduction::Max: return "max";
    case ScatterReduction::Min: return "min";
  }
  return "?";
}

// Reduction axes u0, u1, ... over every update position, and those positions as indices;
// a fresh set for each compute that searches the updates.
std::pair<std::vector<IterVar>, std::vector<Expr>> updatePositions(const Shape& updateAxesShape) {
  std::vector<IterVar> axes;
  std::vector<Expr> positions;
  for (size_t d = 0; d < updateAxesShape.size(); ++d) {
    axes.push_back(te::reduceAxis(Expr(updateAxesShape[d]), "u" + std::to_string(d)));
    positions.push_back(axes.back().var());
  }
  return {axes, positions};
}

// The output of a scatter at each data position, from `match(p, u)` (true where update u
// targets position p) over the update positions `updateAxes`:
//   None:     the last matching update (by flat update position), else the data element;
//   reduced:  the data element combined with every matching update.
// `updateAt(p, u)` reads the update at u for position p.
te::Tensor scatterOutput(const te::Tensor& data, const Shape& dataShape, const Shape& updateAxesShape,
                         ScatterReduction reduction, DataType dtype,
                         const std::function<Expr(const std::vector<Var>&, const std::vector<Expr>&)>& match,
                         const std::function<Expr(const std::vector<Var>&, const std::vector<Expr>&)>& updateAt) {
  std::vector<std::string> axisNamesOut = axisNames(dataShape.size());
  if (reduction == ScatterReduction::None) {
    // Which update lands at each position: the highest matching flat update position, or -1.
    te::Tensor source = te::compute(
        toExprs(dataShape),
        [&](const std::vector<Var>& p) {
          auto [axes, u] = updatePositions(updateAxesShape);
          Expr flat = flatOffset(u, updateAxesShape);
          return te::maximum(select(match(p, u), flat, Expr(int64_t(-1))), axes);
        },
        "source", axisNamesOut, "scatter");
    return te::compute(
        toExprs(dataShape),
        [&](const std::vector<Var>& p) {
          Expr found = source(asExprs(p));
          std::vector<Expr> u;
          Expr remaining = max(found, Expr(int64_t(0)));  // the discarded read stays in bounds
          for (size_t d = updateAxesShape.size(); d-- > 0;) {
            u.insert(u.begin(),
                     updateAxesShape.size() == 1 ? remaining : floormod(remaining, Expr(updateAxesShape[d])));
            remaining = floordiv(remaining, Expr(updateAxesShape[d]));
          }
          return select(found >= Expr(int64_t(0)), updateAt(p, u), data(asExprs(p)));
        },
        "out", axisNamesOut, "injective");
  }
  Reducer reducer = reduction == ScatterReduction::Add   ? Reducer::Sum
                    : reduction == ScatterReduction::Mul ? Reducer::Product
                    : reduction == ScatterReduction::Max ? Reducer::Max
                                                         : Reducer::Min;
  te::Tensor combined = te::compute(
      toExprs(dataShape),
      [&](const std::vector<Var>& p) {
        auto [axes, u] = updatePositions(updateAxesShape);
        // Starting from the data element folds it in exactly once, as ONNX's loop does.
        Expr value = updateAt(p, u);
        Expr matched = match(p, u);
        return ReduceNode::make(reducer, select(matched, value, reducerIdentity(reducer, dtype)), axes);
      },
      "combined", axisNamesOut, "scatter");
  return te::compute(
      toExprs(dataShape),
      [&](const std::vector<Var>& p) {
        Expr current = data(asExprs(p));
        return reducerCombine(reducer, current, combined(asExprs(p)));
      },
      "out", axisNamesOut, "injective");
}
}  // namespace

Expected<Workload> gatherElements(const Shape& dataShape, const Shape& indicesShape, int64_t axisIn, DataType dtype,
                                  DataType indexType) {
  const std::string op = "GatherElements";
  auto axis = checkElementsOperands(op, dataShape, indicesShape, axisIn, indexType);
  if (!axis) return axis.error();
  size_t a = *axis;
  te::Tensor data = te::placeholder(toExprs(dataShape), dtype, "data");
  te::Tensor indices = te::placeholder(toExprs(indicesShape), indexType, "indices");
  te::Tensor out = te::compute(
      toExprs(indicesShape),
      [&](const std::vector<Var>& i) {
        std::vector<Expr> read;
        for (size_t d = 0; d < dataShape.size(); ++d)
          read.push_back(d == a ? wrapAndClampIndex(indices(asExprs(i)), dataShape[a])
                                : clampIndex(i[d], dataShape[d]));
        return data(read);
      },
      "out", axisNames(indicesShape.size()), "injective");
  return singleOutput("gather_elements_" + shapeName(dataShape) + "_" + shapeName(indicesShape) + "_a" +
                          std::to_string(a) + "_" + indexType.toString(),
                      {data, indices}, out);
}

Expected<Workload> gatherND(const Shape& dataShape, const Shape& indicesShape, int64_t batchDims, DataType dtype,
                            DataType indexType) {
  const std::string op = "GatherND";
  if (auto e = checkShape(op, dataShape, "data")) return *e;
  if (auto e = checkShape(op, indicesShape, "indices")) return *e;
  if (auto e = checkIndexType(op, indexType)) return *e;
  size_t b = size_t(batchDims);
  if (batchDims < 0 || indicesShape.empty() || b >= indicesShape.size() || b >= dataShape.size())
    return opError(op,
                   "batch_dims " + std::to_string(batchDims) + " for data of rank " + std::to_string(dataShape.size()) +
                       " and indices of rank " + std::to_string(indicesShape.size()),
                   "batch_dims is smaller than both ranks");
  for (size_t d = 0; d < b; ++d)
    if (dataShape[d] != indicesShape[d])
      return opError(op, "batch dimension " + std::to_string(d) + " differs between data and indices");
  size_t k = size_t(indicesShape.back());
  if (k < 1 || b + k > dataShape.size())
    return opError(op, "the last indices dimension is " + std::to_string(k) + " for data of rank " +
                           std::to_string(dataShape.size()) + " with " + std::to_string(b) + " batch axes");
  Shape outShape(indicesShape.begin(), indicesShape.end() - 1);
  size_t leading = outShape.size();
  outShape.insert(outShape.end(), dataShape.begin() + long(b + k), dataShape.end());
  te::Tensor data = te::placeholder(toExprs(dataShape), dtype, "data");
  te::Tensor indices = te::placeholder(toExprs(indicesShape), indexType, "indices");
  te::Tensor out = te::compute(
      toExprs(outShape),
      [&](const std::vector<Var>& i) {
        std::vector<Expr> read;
        for (size_t d = 0; d < b; ++d) read.push_back(i[d]);
        std::vector<Expr> at(i.begin(), i.begin() + long(leading));
        at.push_back(Expr(int64_t(0)));
        for (size_t c = 0; c < k; ++c) {
          at.back() = Expr(int64_t(c));
          read.push_back(wrapAndClampIndex(indices(at), dataShape[b + c]));
        }
        for (size_t d = leading; d < i.size(); ++d) read.push_back(i[d]);
        return data(read);
      },
      "out", axisNames(outShape.size()), "injective");
  return singleOutput("gather_nd_" + shapeName(dataShape) + "_" + shapeName(indicesShape) + "_b" + std::to_string(b) +
                          "_" + indexType.toString(),
                      {data, indices}, out);
}

Expected<Workload> scatterElements(const Shape& dataShape, const Shape& indicesShape, int64_t axisIn,
                                   ScatterReduction reduction, DataType dtype, DataType indexType) {
  const std::string op = "ScatterElements";
  auto axis = checkElementsOperands(op, dataShape, indicesShape, axisIn, indexType);
  if (!axis) return axis.error();
  size_t a = *axis;
  for (size_t d = 0; d < dataShape.size(); ++d)
    if (d != a && indicesShape[d] > dataShape[d])
      return opError(op, "indices dimension " + std::to_string(d) + " is larger than the data's",
                     "indices and updates must fit in data");
  te::Tensor data = te::placeholder(toExprs(dataShape), dtype, "data");
  te::Tensor indices = te::placeholder(toExprs(indicesShape), indexType, "indices");
  te::Tensor updates = te::placeholder(toExprs(indicesShape), dtype, "updates");
  // Position p receives the updates at (p with axis = t) whose index is p[axis]: only the
  // axis itself is searched, the other coordinates must lie inside the indices' shape.
  auto updatePosition = [&](const std::vector<Var>& p, const std::vector<Expr>& t) {
    std::vector<Expr> at;
    for (size_t d = 0; d < dataShape.size(); ++d) at.push_back(d == a ? t[0] : clampIndex(p[d], indicesShape[d]));
    return at;
  };
  auto match = [&](const std::vector<Var>& p, const std::vector<Expr>& t) {
    Expr matched = eq(wrapAndClampIndex(indices(updatePosition(p, t)), dataShape[a]), Expr(p[a]));
    for (size_t d = 0; d < dataShape.size(); ++d)
      if (d != a && indicesShape[d] < dataShape[d]) matched = matched && Expr(p[d]) < Expr(indicesShape[d]);
    return matched;
  };
  auto updateAt = [&](const std::vector<Var>& p, const std::vector<Expr>& t) { return updates(updatePosition(p, t)); };
  te::Tensor out = scatterOutput(data, dataShape, {indicesShape[a]}, reduction, dtype, match, updateAt);
  Workload w = singleOutput("scatter_elements_" + std::string(reductionName(reduction)) + "_" + shapeName(dataShape) +
                                "_" + shapeName(indicesShape) + "_a" + std::to_string(a) + "_" + indexType.toString(),
                            {data, indices, updates}, out);
  return w;
}

Expected<Workload> scatterND(const Shape& dataShape, const Shape& indicesShape, ScatterReduction reduction,
                             DataType dtype, DataType indexType) {
  const std::string op = "ScatterND";
  if (auto e = checkShape(op, dataShape, "data")) return *e;
  if (auto e = checkShape(op, indicesShape, "indices")) return *e;
  if (auto e = checkIndexType(op, indexType)) return *e;
  if (indicesShape.empty() || dataShape.empty()) return opError(op, "data and indices need rank 1 or more");
  size_t k = size_t(indicesShape.back());
  if (k < 1 || k > dataShape.size())
    return opError(op, "the last indices dimension is " + std::to_string(k) + " for data of rank " +
                           std::to_string(dataShape.size()));
  Shape updateAxesShape(indicesShape.begin(), indicesShape.end() - 1);
  if (updateAxesShape.empty()) updateAxesShape = {1};  // a single index tuple
  bool singleTuple = indicesShape.size() == 1;
  Shape updatesShape(indicesShape.begin(), indicesShape.end() - 1);
  updatesShape.insert(updatesShape.end(), dataShape.begin() + long(k), dataShape.end());
  te::Tensor data = te::placeholder(toExprs(dataShape), dtype, "data");
  te::Tensor indices = te::placeholder(toExprs(indicesShape), indexType, "indices");
  te::Tensor updates = te::placeholder(toExprs(updatesShape), dtype, "updates");
  auto tupleAt = [&](const std::vector<Expr>& u, size_t c) {
    std::vector<Expr> at = singleTuple ? std::vector<Expr>{} : u;
    at.push_back(Expr(int64_t(c)));
    return indices(at);
  };
  auto match = [&](const std::vector<Var>& p, const std::vector<Expr>& u) {
    Expr matched;
    for (size_t c = 0; c < k; ++c) {
      Expr here = eq(wrapAndClampIndex(tupleAt(u, c), dataShape[c]), Expr(p[c]));
      matched = matched.defined() ? matched && here : here;
    }
    return matched;
  };
  auto updateAt = [&](const std::vector<Var>& p, const std::vector<Expr>& u) {
    std::vector<Expr> at = singleTuple ? std::vector<Expr>{} : u;
    for (size_t d = k; d < dataShape.size(); ++d) at.push_back(p[d]);
    return updates(at);
  };
  te::Tensor out = scatterOutput(data, dataShape, updateAxesShape, reduction, dtype, match, updateAt);
  return singleOutput("scatter_nd_" + std::string(reductionName(reduction)) + "_" + shapeName(dataShape) + "_" +
                          shapeName(indicesShape) + "_" + indexType.toString(),
                      {data, indices, updates}, out);
}

Expected<Workload> oneHot(const Shape& indicesShape, int64_t depth, int64_t axisIn, DataType indexType,
                          DataType dtype) {
  const std::string op = "OneHot";
  if (auto e = checkShape(op, indicesShape, "indices")) return *e;
  if (depth < 1) return opError(op, "depth " + std::to_string(depth), "depth must be positive");
  auto axis = normalizeAxis(axisIn, indicesShape.size() + 1);
  if (!axis)
    return opError(op, "axis " + std::to_string(axisIn) + " is outside the output rank " +
                           std::to_string(indicesShape.size() + 1));
  size_t a = size_t(*axis);
  Shape outShape = indicesShape;
  outShape.insert(outShape.begin() + long(a), depth);
  te::Tensor indices = te::placeholder(toExprs(indicesShape), indexType, "indices");
  te::Tensor values = te::placeholder(toExprs({2}), dtype, "values");
  te::Tensor out = te::compute(
      toExprs(outShape),
      [&](const std::vector<Var>& i) {
        std::vector<Expr> at;
        for (size_t d = 0; d < i.size(); ++d)
          if (d != a) at.push_back(i[d]);
        Expr index = cast(DataType::index(), indices(at));
        index = select(index < Expr(int64_t(0)), index + Expr(depth), index);
        return select(eq(index, Expr(i[a])), values(Expr(int64_t(1))), values(Expr(int64_t(0))));
      },
      "out", axisNames(outShape.size()), "injective");
  return singleOutput("one_hot_" + shapeName(indicesShape) + "_d" + std::to_string(depth) + "_a" + std::to_string(a) +
                          "_" + indexType.toString(),
                      {indices, values}, out);
}

Expected<Workload> reverseSequence(const Shape& shape, int64_t batchAxisIn, int64_t timeAxisIn, DataType dtype) {
  const std::string op = "ReverseSequence";
  if (auto e = checkShape(op, shape, "input")) return *e;
  if (shape.size() < 2) return opError(op, "input has rank " + std::to_string(shape.size()), "rank 2 or more");
  auto batchAxis = normalizeAxis(batchAxisIn, shape.size());
  auto timeAxis = normalizeAxis(timeAxisIn, shape.size());
  if (!batchAxis || !timeAxis || *batchAxis == *timeAxis || *batchAxis > 1 || *timeAxis > 1)
    return opError(op, "batch_axis " + std::to_string(batchAxisIn) + " and time_axis " + std::to_string(timeAxisIn),
                   "one of them is 0 and the other 1");
  size_t b = size_t(*batchAxis), t = size_t(*timeAxis);
  te::Tensor in = te::placeholder(toExprs(shape), dtype, "in");
  te::Tensor lengths = te::placeholder(toExprs({shape[b]}), DataType::int64(), "lengths");
  te::Tensor out = te::compute(
      toExprs(shape),
      [&](const std::vector<Var>& i) {
        Expr length = min(max(lengths(Expr(i[b])), Expr(int64_t(0))), Expr(shape[t]));
        std::vector<Expr> read = asExprs(i);
        read[t] = select(Expr(i[t]) < length, clampIndex(length - Expr(int64_t(1)) - i[t], shape[t]), Expr(i[t]));
        return in(read);
      },
      "out", axisNames(shape.size()), "injective");
  return singleOutput("reverse_sequence_" + shapeName(shape) + "_b" + std::to_string(b), {in, lengths}, out);
}

Expected<Workload> compress(const Shape& shape, std::optional<int64_t> axisIn, const std::vector<bool>& condition,
                            DataType dtype) {
  const std::string op = "Compress";
  if (auto e = checkShape(op, shape, "input")) return *e;
  // Without an axis, positions are flat row-major offsets into the whole input.
  Shape searched = axisIn ? shape : Shape{elementCount(shape)};
  auto axis = normalizeAxis(axisIn.value_or(0), searched.size());
  if (!axis)
    return opError(op, "axis " + std::to_string(*axisIn) + " is outside the rank " + std::to_string(shape.size()));
  size_t a = size_t(*axis);
  std::vector<double> positions;
  for (size_t i = 0; i < condition.size() && int64_t(i) < searched[a]; ++i)
    if (condition[i]) positions.push_back(double(i));
  if (positions.empty())
    return opError(op, "no elements are selected", "empty results are not supported: drop the node");
  if (int64_t(positions.size()) > kMaxConstantTable)
    return opError(op, std::to_string(positions.size()) + " selected positions",
                   "at most " + std::to_string(kMaxConstantTable) + " positions are supported");
  Shape outShape = searched;
  outShape[a] = int64_t(positions.size());
  te::Tensor in = te::placeholder(toExprs(shape), dtype, "in");
  te::Tensor out = te::compute(
      toExprs(outShape),
      [&](const std::vector<Var>& i) {
        Expr position = constantTableLookup(positions, i[a], DataType::index());
        if (axisIn) {
          std::vector<Expr> read = asExprs(i);
          read[a] = position;
          return in(read);
        }
        std::vector<Expr> read(shape.size());
        for (size_t d = shape.size(); d-- > 0;) {
          read[d] = d == 0 ? position : floormod(position, Expr(shape[d]));
          position = floordiv(position, Expr(shape[d]));
        }
        return in(read);
      },
      "out", axisNames(outShape.size()), "injective");
  return singleOutput("compress_" + shapeName(shape) + (axisIn ? "_a" + std::to_string(a) : std::string("_flat")) +
                          "_" + std::to_string(positions.size()) + "_" + parameterTag(positions),
                      {in}, out);
}

}  // namespace tessel
