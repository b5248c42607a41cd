// Linear quantization: QuantizeLinear, DequantizeLinear (per tensor or per axis) and
// DynamicQuantizeLinear, with ONNX's rounding (half to even) and saturation.
#include <cmath>

#include "compiler/opdefs/OpRegistry.h"
#include "compiler/ops/Elementwise.h"
#include "compiler/ops/Quantized.h"

#include "core/ir/IROperators.h"

namespace tessel::graph {

namespace {

struct QuantParams {
  std::vector<int64_t> shape;
  bool perAxis = false;
  int64_t axis = 1;
  bool hasZeroPoint = false;
  DataType quantType = DataType::uint8();
  /// The scale is a float32 constant whose every element lies in [2^-126, 2^126], so its
  /// reciprocal is a normal float32 too (what divideByScale needs).
  bool scaleHasNormalReciprocals = false;
};

/// The scale or zero point that applies to element `axes`: the one element of a per-tensor
/// parameter, or the element along `axis` of a per-axis one.
Expr quantParamAt(const te::Tensor& parameter, const std::vector<Var>& axes, const QuantParams& p) {
  if (p.perAxis) return parameter({Expr(axes[size_t(p.axis)])});
  return parameter(std::vector<Expr>(size_t(parameter.ndim()), Expr(0)));
}

Expected<QuantParams> quantParams(const OpCall& call) {
  QuantParams p;
  p.shape = call.inputTypes[0].shape;
  const TensorType& scale = call.inputTypes[1];
  // A 1-element scale is per tensor whatever its rank; a longer 1-D one runs along `axis`.
  p.perAxis = elementCount(scale.shape) != 1;
  auto axis = call.intAttr("axis", 1);
  if (!axis) return axis.error();
  int64_t rank = int64_t(p.shape.size());
  p.axis = *axis < 0 ? *axis + rank : *axis;
  if (p.perAxis) {
    if (!call.inputTypes[0].layout.empty())
      return call.error("per-axis quantization of a channel-blocked (" + call.inputTypes[0].layout + ") tensor",
                        "AlterLayout leaves per-axis quantization on NCHW");
    if (scale.shape.size() != 1) return call.error("the scale must be a scalar or 1-D, got " + scale.toString());
    if (p.axis < 0 || p.axis >= rank) return call.error("axis " + std::to_string(*axis) + " is out of range");
    if (scale.shape[0] != p.shape[size_t(p.axis)])
      return call.error("the scale has " + std::to_string(scale.shape[0]) + " elements, axis " +
                        std::to_string(p.axis) + " has " + std::to_string(p.shape[size_t(p.axis)]));
  }
  // A constant scale must be positive: a zero one divides by zero, a negative one flips values.
  if (call.isConstant(1) && call.constantInputs[1].dtype() == runtime::DataType::float32()) {
    auto values = call.constantInputs[1].values<float>();
    p.scaleHasNormalReciprocals = true;
    for (size_t i = 0; i < values.size(); ++i) {
      if (!(values[i] > 0) || !std::isfinite(values[i]))
        return call.error("the scale" + (values.size() > 1 ? " at index " + std::to_string(i) : std::string()) +
                              " is " + std::to_string(values[i]) + "; quantization scales must be positive and finite",
                          "fix the scale in the model (its quantizer wrote a range of zero width?)");
      p.scaleHasNormalReciprocals = p.scaleHasNormalReciprocals && values[i] >= 0x1p-126f && values[i] <= 0x1p126f;
    }
  }
  p.hasZeroPoint = call.hasInput(2);
  if (p.hasZeroPoint) {
    p.quantType = call.inputTypes[2].dtype;
    if (call.inputTypes[2].shape != scale.shape && elementCount(call.inputTypes[2].shape) != elementCount(scale.shape))
      return call.error("the zero point's shape " + call.inputTypes[2].toString() + " differs from the scale's " +
                        scale.toString());
  }
  return p;
}

Expr roundHalfToEven(Expr x) { return call(Intrinsic::Round, {std::move(x)}); }

/// x / scale for float32, rounded exactly as the division, from the reciprocal and one FMA
/// correction instead of a division per element: a vector division takes about 16 cycles on
/// x86 and made quantizing kernels (a ResNet's residual Add -> Relu -> QuantizeLinear) four
/// times slower than their memory traffic. With r = RN(1 / scale), computed once per kernel
/// (LLVM hoists it out of the loops), and q = RN(x * r) within an ulp of x / scale, the
/// corrected q + RN(x - q * scale) * r is RN(x / scale) (Markstein's theorem; the residual is
/// exact in an FMA). That needs r normal (QuantParams::scaleHasNormalReciprocals) and no overflow: q is clamped
/// to +-2^31 first, beyond which every integer type saturates anyway.
Expr divideByScale(Expr x, Expr scale) {
  DataType f = x.dtype();
  Expr reciprocal = FloatImmNode::make(f, 1.0) / scale;
  Expr limit = FloatImmNode::make(f, 0x1p31);
  Expr q = max(min(x * reciprocal, limit), FloatImmNode::make(f, -0x1p31));
  Expr residual = call(Intrinsic::Fma, {-q, scale, x});
  return call(Intrinsic::Fma, {residual, reciprocal, q});
}

/// `value` (floating point) clamped into the range of the integer type `to`.
Expr saturate(Expr value, DataType to) {
  double lo = to.isInt() ? -double(int64_t(1) << (to.bits() - 1)) : 0.0;
  double hi = to.isInt() ? double((int64_t(1) << (to.bits() - 1)) - 1) : double((int64_t(1) << to.bits()) - 1);
  DataType f = value.dtype();
  return max(min(value, FloatImmNode::make(f, hi)), FloatImmNode::make(f, lo));
}

// QuantizeLinear's and DequantizeLinear's kernel: x, the scale and the zero point (where the
// node has one) as inputs in their own types, and one output whose every element is
// `element(x, scale, zero point)` read at that element (the zero point undefined when absent).
OpKernel quantKernel(const OpCall& call, const QuantParams& p, const std::string& namePrefix,
                     const std::function<Expr(Expr x, Expr scale, Expr zeroPoint)>& element) {
  OpKernel kernel;
  Workload& w = kernel.workload;
  w.name = namePrefix + shapeName(p.shape);
  te::Tensor x = te::placeholder(toExprs(p.shape), call.inputTypes[0].dtype, "x");
  te::Tensor scale = te::placeholder(toExprs(call.inputTypes[1].shape), call.inputTypes[1].dtype, "scale");
  w.inputs = {x, scale};
  kernel.inputIndices = {0, 1};
  te::Tensor zero;
  if (p.hasZeroPoint) {
    zero = te::placeholder(toExprs(call.inputTypes[1].shape), call.inputTypes[2].dtype, "zero_point");
    w.inputs.push_back(zero);
    kernel.inputIndices.push_back(2);
  }
  w.outputs = {te::compute(
      toExprs(p.shape),
      [&](const std::vector<Var>& axes) {
        Expr zeroPoint = p.hasZeroPoint ? quantParamAt(zero, axes, p) : Expr();
        return element(x(asExprs(axes)), quantParamAt(scale, axes, p), zeroPoint);
      },
      "out", axisNames(p.shape.size()), "elemwise")};
  // Alone (not fused into a neighbour) it is a pass over memory like any elementwise op:
  // parallel and in vectors, not one scalar loop nest.
  kernel.schedule = [](const Workload& workload, const Target& target) {
    return defaultElementwiseSchedule(workload, target);
  };
  return kernel;
}

OpDef quantizeLinear() {
  OpDef def;
  def.name = "QuantizeLinear";
  def.pattern = OpPattern::Broadcast;
  def.minInputs = 2;
  def.maxInputs = 3;
  def.inferTypes = [](const OpCall& call) -> Expected<std::vector<TensorType>> {
    auto p = quantParams(call);
    if (!p) return p.error();
    if (!call.inputTypes[0].dtype.isFloat()) return call.error("input 0 must be floating point");
    if (p->quantType != DataType::uint8() && p->quantType != DataType::int8())
      return call.error("the zero point must be uint8 or int8, got " + p->quantType.toString());
    // Per tensor, every element alike: a channel-blocked input stays blocked.
    return std::vector<TensorType>{TensorType{p->quantType, p->shape, call.inputTypes[0].layout}};
  };
  def.build = [](const OpCall& call) -> Expected<OpKernel> {
    auto p = quantParams(call);
    if (!p) return p.error();
    DataType f = call.inputTypes[0].dtype;
    DataType quantType = p->quantType;
    bool reciprocal = f == DataType::float32() && p->scaleHasNormalReciprocals;
    return quantKernel(call, *p, "quantize_", [f, quantType, reciprocal](Expr x, Expr scale, Expr zeroPoint) {
      Expr quotient = reciprocal ? divideByScale(x, scale) : x / cast(f, scale);
      return roundToQuantized(quotient, zeroPoint.defined() ? zeroPoint : makeConst(quantType, 0), quantType);
    });
  };
  return def;
}

OpDef dequantizeLinear() {
  OpDef def;
  def.name = "DequantizeLinear";
  def.pattern = OpPattern::Broadcast;
  def.minInputs = 2;
  def.maxInputs = 3;
  def.inferTypes = [](const OpCall& call) -> Expected<std::vector<TensorType>> {
    auto p = quantParams(call);
    if (!p) return p.error();
    if (!call.inputTypes[0].dtype.isIntegral()) return call.error("input 0 must be an integer tensor");
    return std::vector<TensorType>{TensorType{call.inputTypes[1].dtype, p->shape, call.inputTypes[0].layout}};
  };
  def.build = [](const OpCall& call) -> Expected<OpKernel> {
    auto p = quantParams(call);
    if (!p) return p.error();
    DataType f = call.inputTypes[1].dtype;
    return quantKernel(call, *p, "dequantize_", [f](Expr x, Expr scale, Expr zeroPoint) {
      Expr value = cast(f, x);
      if (zeroPoint.defined()) value = value - cast(f, zeroPoint);
      return value * scale;
    });
  };
  return def;
}

/// y_scale = (max(0, max x) - min(0, min x)) / 255, y_zero_point = saturate(round(-min / scale)),
/// y = saturate(round(x / scale) + zero point), all uint8.
OpDef dynamicQuantizeLinear() {
  OpDef def;
  def.name = "DynamicQuantizeLinear";
  def.pattern = OpPattern::Opaque;
  def.minOutputs = 3;
  def.maxOutputs = 3;
  def.inferTypes = [](const OpCall& call) -> Expected<std::vector<TensorType>> {
    if (call.inputTypes[0].dtype != DataType::float32()) return call.error("input 0 must be float32");
    return std::vector<TensorType>{TensorType{DataType::uint8(), call.inputTypes[0].shape, ""},
                                   TensorType{DataType::float32(), {}, ""}, TensorType{DataType::uint8(), {}, ""}};
  };
  def.build = [](const OpCall& call) -> Expected<OpKernel> {
    std::vector<int64_t> shape = call.inputTypes[0].shape;
    DataType f = DataType::float32();
    OpKernel kernel;
    Workload& w = kernel.workload;
    w.name = "dynamic_quantize_" + shapeName(shape);
    te::Tensor x = te::placeholder(toExprs(shape), f, "x");
    w.inputs = {x};
    kernel.inputIndices = {0};
    // Each extreme in two steps: per position of the last axis over all the others (a pass
    // over x in vectors), then over those positions. One step over every element was a
    // scalar chain: 1.4 ms for BERT's [1, 128, 3072], against 0.05 ms for reading it.
    const bool partial = shape.size() >= 2;
    auto reduceAll = [&](const std::string& name, bool isMax) {
      if (shape.empty()) return x;  // a scalar is its own extreme
      auto extreme = [&](Expr value, const std::vector<IterVar>& axes) {
        return isMax ? te::maximum(value, axes) : te::minimum(value, axes);
      };
      if (!partial) {
        IterVar r = te::reduceAxis(IntImmNode::make(DataType::index(), shape[0]), "r0");
        return te::compute({}, [&](const std::vector<Var>&) { return extreme(x(std::vector<Expr>{r->var}), {r}); }, name,
                           {}, "reduce");
      }
      std::vector<IterVar> axes;
      for (size_t d = 0; d + 1 < shape.size(); ++d)
        axes.push_back(te::reduceAxis(IntImmNode::make(DataType::index(), shape[d]), "r" + std::to_string(d)));
      te::Tensor lanes = te::compute(
          {IntImmNode::make(DataType::index(), shape.back())},
          [&](const std::vector<Var>& v) {
            std::vector<Expr> position;
            for (auto& axis : axes) position.push_back(axis->var);
            position.push_back(v[0]);
            return extreme(x(position), axes);
          },
          name + ".partial", {"c"}, "reduce");
      IterVar c = te::reduceAxis(IntImmNode::make(DataType::index(), shape.back()), "rc");
      return te::compute({}, [&](const std::vector<Var>&) { return extreme(lanes(std::vector<Expr>{c->var}), {c}); },
                         name, {}, "reduce");
    };
    te::Tensor high = reduceAll("x.max", true), low = reduceAll("x.min", false);
    // The range always includes 0, so that 0 quantizes exactly.
    Expr zero = FloatImmNode::make(f, 0.0);
    auto highest = [&] { return max(high(std::vector<Expr>{}), zero); };
    auto lowest = [&] { return min(low(std::vector<Expr>{}), zero); };
    te::Tensor scale = te::compute(
        {}, [&](const std::vector<Var>&) { return (highest() - lowest()) / FloatImmNode::make(f, 255.0); }, "y_scale",
        {}, "elemwise");
    te::Tensor zeroPoint = te::compute(
        {},
        [&](const std::vector<Var>&) {
          Expr z = roundHalfToEven(-lowest() / scale(std::vector<Expr>{}));
          return cast(DataType::uint8(), saturate(z, DataType::uint8()));
        },
        "y_zero_point", {}, "elemwise");
    te::Tensor y = te::compute(
        toExprs(shape),
        [&](const std::vector<Var>& axes) {
          Expr v = roundHalfToEven(x(asExprs(axes)) / scale(std::vector<Expr>{})) +
                   cast(f, zeroPoint(std::vector<Expr>{}));
          return cast(DataType::uint8(), saturate(v, DataType::uint8()));
        },
        "out", axisNames(shape.size()), "elemwise");
    w.outputs = {y, scale, zeroPoint};
    kernel.schedule = [partial](const Workload& workload, const Target& target) -> Expected<Schedule> {
      auto s = defaultElementwiseSchedule(workload, target);
      if (!s || !partial) return s;
      // The partial extremes: the last axis in vectors, the other axes' loops outside it.
      const Stage* stage = s->findStage("x.max.partial");
      std::vector<std::string> order;
      for (auto& iv : stage->leafIterVars) order.push_back(iv.name());
      std::string position = order.front();  // "c", then the reduction axes
      order.erase(order.begin());
      int64_t extent = *asConstInt(workload.outputs[0].shape().back());
      int64_t lanes = target.vectorLanes();
      for (const char* name : {"x.max.partial", "x.min.partial"}) {
        std::vector<Status> steps;
        if (extent >= lanes && extent % lanes == 0) {
          steps = {s->split(name, position, lanes, "co", "ci")};
          std::vector<std::string> loops = order;
          loops.insert(loops.begin(), "co");
          loops.push_back("ci");
          steps.push_back(s->reorder(name, loops));
          steps.push_back(s->vectorize(name, "ci"));
        } else {
          std::vector<std::string> loops = order;
          loops.push_back(position);
          steps.push_back(s->reorder(name, loops));
        }
        for (const Status& step : steps)
          if (!step) return step.error();
      }
      return s;
    };
    return kernel;
  };
  return def;
}

}  // namespace

void registerQuantizationOps(OpRegistry& registry) {
  registry.add(quantizeLinear());
  registry.add(dequantizeLinear());
  registry.add(dynamicQuantizeLinear());
}

}  // namespace tessel::graph
