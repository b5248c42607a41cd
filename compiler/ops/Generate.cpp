// Computes with no tensor inputs: constant tables, fills, ranges and identity matrices.
#include "compiler/ops/Generate.h"

#include "compiler/ops/TransformSupport.h"

namespace tessel {

namespace {
using namespace transform_support;

struct Run {
  int64_t begin;  ///< First index of a run of equal values.
  double value;
};

Expr lookupRuns(const std::vector<Run>& runs, size_t lo, size_t hi, const Expr& index, DataType dtype) {
  if (hi - lo == 1) return makeConst(dtype, runs[lo].value);
  size_t mid = lo + (hi - lo) / 2;
  return select(index < Expr(runs[mid].begin), lookupRuns(runs, lo, mid, index, dtype),
                lookupRuns(runs, mid, hi, index, dtype));
}
}  // namespace

Expr constantTableLookup(const std::vector<double>& values, const Expr& index, DataType dtype) {
  TESSEL_ICHECK(!values.empty()) << "lookup in an empty table";
  std::vector<Run> runs;
  for (size_t i = 0; i < values.size(); ++i)
    if (runs.empty() || runs.back().value != values[i]) runs.push_back({int64_t(i), values[i]});
  return lookupRuns(runs, 0, runs.size(), index, dtype);
}

Expected<te::Tensor> constantStage(const Shape& shape, const std::vector<double>& values, DataType dtype,
                                   const std::string& name) {
  const std::string op = "Constant";
  if (auto e = checkShape(op, shape, "output", true)) return *e;
  if (int64_t(values.size()) != elementCount(shape))
    return opError(op, std::to_string(values.size()) + " values for shape " + shapeName(shape));
  if (elementCount(shape) > kMaxConstantTable)
    return opError(op, "a computed constant of " + std::to_string(elementCount(shape)) + " elements",
                   "at most " + std::to_string(kMaxConstantTable) + " elements are computed at compile time");
  if (values.empty())  // an empty tensor: nothing is ever read from the table
    return te::compute(
        toExprs(shape), [&](const std::vector<Var>&) { return makeZero(dtype); }, name, axisNames(shape.size()),
        "injective");
  return te::compute(
      toExprs(shape),
      [&](const std::vector<Var>& i) { return constantTableLookup(values, flatOffset(asExprs(i), shape), dtype); },
      name, axisNames(shape.size()), "injective");
}

Expected<Workload> constantTensor(const Shape& shape, const std::vector<double>& values, DataType dtype) {
  auto out = constantStage(shape, values, dtype, "out");
  if (!out) return out.error();
  return singleOutput("constant_" + shapeName(shape) + "_" + dtype.toString() + "_" + parameterTag(values), {}, *out);
}

Expected<Workload> fill(const Shape& shape, double value, DataType dtype) {
  const std::string op = "ConstantOfShape";
  if (auto e = checkShape(op, shape, "output", true)) return *e;
  te::Tensor out = te::compute(
      toExprs(shape), [&](const std::vector<Var>&) { return makeConst(dtype, value); }, "out", axisNames(shape.size()),
      "injective");
  return singleOutput(symbolSafe("fill_" + shapeName(shape) + "_" + dtype.toString() + "_" + std::to_string(value)), {},
                      out);
}

Expected<Workload> range(double start, double delta, int64_t count, DataType dtype) {
  const std::string op = "Range";
  if (count < 0) return opError(op, "a range of " + std::to_string(count) + " elements");
  te::Tensor out = te::compute(
      toExprs({count}),
      [&](const std::vector<Var>& i) {
        // Integers stay exact in int64; floats are computed in double, then rounded once.
        DataType wide = dtype.isFloat() ? DataType::float64() : DataType::int64();
        Expr value = makeConst(wide, start) + cast(wide, i[0]) * makeConst(wide, delta);
        return cast(dtype, value);
      },
      "out", axisNames(1), "injective");
  return singleOutput(symbolSafe("range_" + dtype.toString() + "_" + std::to_string(start) + "_" +
                                 std::to_string(delta) + "_" + std::to_string(count)),
                      {}, out);
}

Expected<Workload> eyeLike(const Shape& shape, int64_t k, DataType dtype) {
  const std::string op = "EyeLike";
  if (auto e = checkShape(op, shape, "input")) return *e;
  if (shape.size() != 2) return opError(op, "input has rank " + std::to_string(shape.size()), "EyeLike needs a matrix");
  te::Tensor out = te::compute(
      toExprs(shape),
      [&](const std::vector<Var>& i) {
        return select(eq(Expr(i[1]) - Expr(i[0]), Expr(k)), makeConst(dtype, 1), makeZero(dtype));
      },
      "out", axisNames(2), "injective");
  return singleOutput(symbolSafe("eye_like_" + shapeName(shape) + "_" + dtype.toString() + "_k" + std::to_string(k)),
                      {}, out);
}

}  // namespace tessel
