// Integer and quantized matmul and convolution computes and their default schedule.
#include "compiler/ops/Quantized.h"

#include "compiler/ops/BatchMatmul.h"
#include "core/ir/IROperators.h"

namespace tessel {

bool zeroPointFits(DataType type, int64_t zeroPoint) {
  return type == DataType::uint8() ? zeroPoint >= 0 && zeroPoint <= 255 : zeroPoint >= -128 && zeroPoint <= 127;
}

Expr roundToQuantized(Expr value, Expr zeroPoint, DataType out) {
  DataType f = value.dtype(), i32 = DataType::int32();
  // Clamped first to the range the zero point then shifts onto the output type's: the bounds
  // are integers and rounding is monotonic, so this saturates exactly as clamping the
  // rounded value would. The IR's round sends halves to the even neighbour (numpy's round,
  // ONNX's rule), and int32(round(x)) is one vcvtps2dq on x86 (see ModuleEmitter), where
  // rounding, adding the zero point in float and converting took four instructions.
  Expr zero = cast(f, zeroPoint);
  Expr bounded = min(max(value, cast(f, minValue(out)) - zero), cast(f, maxValue(out)) - zero);
  return cast(out, cast(i32, call(Intrinsic::Round, {bounded})) + cast(i32, zeroPoint));
}

Expr requantize(Expr accumulator, Expr scale, Expr zeroPoint, DataType out) {
  return roundToQuantized(cast(DataType::float32(), accumulator) * scale, std::move(zeroPoint), out);
}

namespace {
// A zero point read for one element: the scalar, or the entry of its row / column / filter.
Expr zeroPointAt(const te::Tensor& zeroPoint, Expr position) {
  if (zeroPoint.ndim() == 0) return zeroPoint(std::vector<Expr>{});
  bool scalar = *asConstInt(zeroPoint.shape()[0]) == 1;
  return zeroPoint(std::vector<Expr>{scalar ? Expr(int64_t(0)) : position});
}

te::Tensor scalarInput(const std::vector<int64_t>& shape, DataType dtype, const std::string& name) {
  return te::placeholder(toExprs(shape), dtype, name);
}

// The value of a scalar input of shape [] or [1].
Expr scalarValue(const te::Tensor& scalar) { return zeroPointAt(scalar, Expr(int64_t(0))); }
}  // namespace

Expected<Workload> quantizedMatmul(const QuantizedMatmulParams& p) {
  auto shape = batchMatmulOutputShape(p.aShape, p.bShape);
  if (!shape) return shape.error();
  DataType i32 = DataType::int32();
  te::Tensor A = te::placeholder(toExprs(p.aShape), p.aType, "A");
  te::Tensor B = te::placeholder(toExprs(p.bShape), p.bType, "B");
  te::Tensor az = p.aZeroPoint ? te::placeholder(toExprs(*p.aZeroPoint), p.aType, "a_zero_point") : te::Tensor();
  te::Tensor bz = p.bZeroPoint ? te::placeholder(toExprs(*p.bZeroPoint), p.bType, "b_zero_point") : te::Tensor();
  // The operands shifted by their zero points (per row of A: its second-to-last axis; per
  // column of B: its last), in int32; the schedule inlines them into the product.
  auto shift = [&](const te::Tensor& x, const te::Tensor& zero, bool perRow, const std::string& name) {
    return te::compute(
        x.shape(),
        [&](const std::vector<Var>& at) {
          Expr value = cast(i32, x(asExprs(at)));
          if (!zero.defined()) return value;
          Expr position = perRow && at.size() >= 2 ? Expr(at[at.size() - 2]) : Expr(at.back());
          return value - cast(i32, zeroPointAt(zero, position));
        },
        name, axisNames(size_t(x.ndim())), "quantized");
  };
  te::Tensor shiftedA = shift(A, az, true, "A.shifted"), shiftedB = shift(B, bz, false, "B.shifted");
  Workload w;
  w.name = std::string(p.requantized ? "qlinear_matmul_" : "matmul_integer_") + shapeName(p.aShape) + "_" +
           shapeName(p.bShape) + "_" + p.aType.toString() + "_" + p.bType.toString();
  w.inputs = {A, B};
  if (az.defined()) w.inputs.push_back(az);
  if (bz.defined()) w.inputs.push_back(bz);
  w.flops = 2.0 * double(elementCount(*shape)) * double(p.aShape.back());
  if (!p.requantized) {
    w.outputs = {batchMatmulCompute(shiftedA, shiftedB, "qmatmul", i32)};
    return w;
  }
  te::Tensor acc = batchMatmulCompute(shiftedA, shiftedB, "qmatmul.acc", i32);
  te::Tensor aScale = scalarInput(p.scalarShapes[0], DataType::float32(), "a_scale");
  te::Tensor bScale = scalarInput(p.scalarShapes[1], DataType::float32(), "b_scale");
  te::Tensor yScale = scalarInput(p.scalarShapes[2], DataType::float32(), "y_scale");
  te::Tensor yZero = scalarInput(p.scalarShapes[3], p.outType, "y_zero_point");
  w.outputs = {te::compute(
      acc.shape(),
      [&](const std::vector<Var>& at) {
        // a_scale per row of A, b_scale per column of B (or one each), as ONNX allows.
        Expr row = at.size() >= 2 ? Expr(at[at.size() - 2]) : Expr(int64_t(0));
        Expr scale = zeroPointAt(aScale, row) * zeroPointAt(bScale, at.back()) / scalarValue(yScale);
        return requantize(acc(asExprs(at)), scale, scalarValue(yZero), p.outType);
      },
      "qmatmul", axisNames(shape->size()), "quantized")};
  w.inputs.insert(w.inputs.end(), {aScale, bScale, yScale, yZero});
  return w;
}

Expected<Workload> quantizedConv(const QuantizedConvParams& p) {
  auto base = directConv(p.conv, p.xType, p.wType, DataType::int32());
  if (!base) return base.error();
  te::Tensor acc = base->outputs[0];
  te::Tensor xScale = scalarInput(p.scalarShapes[0], DataType::float32(), "x_scale");
  te::Tensor wScale = scalarInput(p.weightScaleShape, DataType::float32(), "w_scale");
  te::Tensor yScale = scalarInput(p.scalarShapes[1], DataType::float32(), "y_scale");
  te::Tensor yZero = scalarInput(p.scalarShapes[2], p.outType, "y_zero_point");
  Workload w = *base;
  w.name = "qlinear_" + base->name;
  std::vector<std::string> names = {"n", "m"};
  for (int d = 2; d < acc.ndim(); ++d) names.push_back("q" + std::to_string(d - 2));
  w.outputs = {te::compute(
      acc.shape(),
      [&](const std::vector<Var>& at) {
        Expr scale = scalarValue(xScale) * zeroPointAt(wScale, at[1]) / scalarValue(yScale);
        Expr q = requantize(acc(asExprs(at)), scale, scalarValue(yZero), p.outType);
        return p.relu ? max(q, scalarValue(yZero)) : q;
      },
      "qconv", names, "quantized")};
  w.inputs.insert(w.inputs.end(), {xScale, wScale, yScale, yZero});
  return w;
}

Expected<Schedule> defaultQuantizedSchedule(const Workload& workload, const Target& target) {
  Schedule s(workload.outputs);
  std::vector<Status> steps;
  for (const char* shifted : {"A.shifted", "B.shifted"})
    if (s.findStage(shifted)) steps.push_back(s.computeInline(shifted));
  // The shifted operands are inlined by now, so only the real stages are parallelized.
  parallelizeRootStages(s, target, steps);
  for (const Status& status : steps)
    if (!status) return status.error();
  return s;
}

}  // namespace tessel
