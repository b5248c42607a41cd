// Registration of the ONNX elementwise operators (opsets 7-18): their accepted element types,
// output types and the formula of one output element, following the ONNX operator specs.
#include <cmath>
#include <limits>

#include "compiler/opdefs/ElementwiseDefinition.h"
#include "core/ir/IROperators.h"

namespace tessel::graph {

namespace {

using TypeRule = std::function<Expected<std::vector<DataType>>(const OpCall&)>;
using FormulaFactory = std::function<Expected<std::vector<ElementFormula>>(const OpCall&)>;

// --- type rules -------------------------------------------------------------------------

/// Every present input has one element type of `typeClass`; the outputs have that type, or
/// `result` when given (comparisons give bool).
TypeRule uniformType(TypeClass typeClass, std::optional<DataType> result = std::nullopt) {
  return [=](const OpCall& call) -> Expected<std::vector<DataType>> {
    for (size_t i = 0; i < call.inputTypes.size(); ++i)
      if (Status st = requireTypeClass(call, i, typeClass); !st) return st.error();
    if (Status st = requireSameType(call); !st) return st.error();
    return std::vector<DataType>{result.value_or(call.inputTypes[0].dtype)};
  };
}

// --- formulas ---------------------------------------------------------------------------

/// A formula that reads no attributes.
FormulaFactory fixed(ElementFormula formula) {
  return [formula](const OpCall&) -> Expected<std::vector<ElementFormula>> { return std::vector{formula}; };
}

/// A one-input formula.
FormulaFactory fixedUnary(std::function<Expr(Expr)> formula) {
  return fixed([formula](const Elements& x) { return formula(x[0]); });
}

/// A formula of one input and float attributes (read with their ONNX defaults).
FormulaFactory withFloatAttributes(std::vector<std::pair<std::string, double>> attributes,
                                   std::function<Expr(Expr, const std::vector<double>&)> formula) {
  return [=](const OpCall& call) -> Expected<std::vector<ElementFormula>> {
    std::vector<double> values;
    for (auto& [key, fallback] : attributes) {
      auto value = call.floatAttr(key, fallback);
      if (!value) return value.error();
      values.push_back(*value);
    }
    return std::vector<ElementFormula>{[=](const Elements& x) { return formula(x[0], values); }};
  };
}

/// Integers computed in float64 (Shrink, Erf on integers), floats as they are.
Expr asFloat(const Expr& x) { return x.dtype().isFloat() ? x : cast(DataType::float64(x.dtype().lanes()), x); }

/// A divisor that cannot trap: 1 where `b` is 0 (and -1 for signed types, whose
/// minimum / -1 overflows). The callers select the right result for those lanes.
Expr safeDivisor(const Expr& b) {
  Expr unsafe = eq(b, constantLike(b, 0));
  if (b.dtype().isInt()) unsafe = unsafe || eq(b, constantLike(b, -1));
  return select(unsafe, constantLike(b, 1), b);
}

/// ONNX Div: true division for floats, division truncating toward zero for integers
/// (x / 0 gives 0 there, as NumPy does, instead of a trap).
Expr divide(const Expr& a, const Expr& b) {
  if (a.dtype().isFloat()) return a / b;
  Expr quotient = truncdiv(a, safeDivisor(b));
  if (a.dtype().isInt()) quotient = select(eq(b, constantLike(b, -1)), constantLike(a, 0) - a, quotient);
  return select(eq(b, constantLike(b, 0)), constantLike(a, 0), quotient);
}

/// ONNX Mod: the remainder takes the dividend's sign when `fmod` (C's fmod), the divisor's
/// otherwise (Python's %). x mod 0 gives 0 for integers, as NumPy does, instead of a trap.
Expr modulo(const Expr& a, const Expr& b, bool fmod) {
  if (a.dtype().isFloat()) return truncmod(a, b);  // C's fmod (ONNX requires fmod=1 for floats)
  Expr divisor = safeDivisor(b);
  Expr remainder = fmod ? truncmod(a, divisor) : floormod(a, divisor);
  Expr zeroResult = eq(b, constantLike(b, 0));
  if (b.dtype().isInt()) zeroResult = zeroResult || eq(b, constantLike(b, -1));
  return select(zeroResult, constantLike(a, 0), remainder);
}

/// The exponent's value when it is a folded constant.
std::optional<double> immediateValue(const Expr& e) {
  if (auto* i = e.as<IntImmNode>()) return double(i->value);
  if (auto* f = e.as<FloatImmNode>()) return f->value;
  return std::nullopt;
}

/// ONNX Pow: the base's type out. Constant exponents 1, 2, 3 and 0.5 (LayerNorm's
/// decomposition squares) become multiplications or a square root.
Expr power(const Expr& base, const Expr& exponent) {
  if (base.dtype().isFloat()) {
    if (auto k = immediateValue(exponent)) {
      if (*k == 1) return base;
      if (*k == 2) return base * base;
      if (*k == 3) return base * base * base;
      if (*k == 0.5) return sqrt(base);
    }
    return pow(base, cast(base.dtype(), exponent));
  }
  // Integer bases: float64 holds every exact result ONNX's tests use.
  DataType wide = DataType::float64(base.dtype().lanes());
  return pow(cast(wide, base), cast(wide, exponent));
}

/// x << n or x >> n on unsigned integers, as a multiplication or division by 2^n (the IR has
/// no shift); shifts by the width or more give 0.
/// log(1 + exp(x)) without overflow: max(x, 0) + log(1 + exp(-|x|)).
Expr softplus(const Expr& x) { return max(x, constantLike(x, 0)) + log(constantLike(x, 1) + exp(-fabs(x))); }

Expr bitShift(const Expr& x, const Expr& amount, bool left) {
  // The intrinsics define shifts by the width or more as 0, as ONNX's reference does.
  return call(left ? Intrinsic::ShiftLeft : Intrinsic::ShiftRight, {x, amount});
}

/// Max and Min of floats: a NaN in either operand gives NaN, as NumPy's maximum does.
Expr maxPropagatingNaN(const Expr& a, const Expr& b) {
  if (!a.dtype().isFloat()) return max(a, b);
  return select(call(Intrinsic::IsNan, {a}) || a > b, a, b);
}
Expr minPropagatingNaN(const Expr& a, const Expr& b) {
  if (!a.dtype().isFloat()) return min(a, b);
  return select(call(Intrinsic::IsNan, {a}) || a < b, a, b);
}

/// max(0, min(1, alpha * x + beta)): HardSigmoid, and HardSwish's gate.
Expr hardSigmoid(const Expr& x, double alpha, double beta) {
  return max(constantLike(x, 0), min(constantLike(x, 1), x * constantLike(x, alpha) + constantLike(x, beta)));
}

// --- definitions ------------------------------------------------------------------------

ElementwiseDefinition unary(std::string name, TypeClass types, FormulaFactory formulas) {
  ElementwiseDefinition def;
  def.name = std::move(name);
  def.outputTypes = uniformType(types);
  def.formulas = std::move(formulas);
  return def;
}

/// A one-input test with a bool result (IsNaN, IsInf).
ElementwiseDefinition predicate(std::string name, TypeClass types, FormulaFactory formulas) {
  ElementwiseDefinition def = unary(std::move(name), types, std::move(formulas));
  def.outputTypes = uniformType(types, DataType::boolean());
  return def;
}

/// A broadcasting operator of `minInputs` to `maxInputs` inputs of one type.
ElementwiseDefinition broadcasting(std::string name, int minInputs, int maxInputs, TypeRule types,
                                   FormulaFactory formulas) {
  ElementwiseDefinition def;
  def.name = std::move(name);
  def.pattern = OpPattern::Broadcast;
  def.minInputs = minInputs;
  def.maxInputs = maxInputs;
  def.outputTypes = std::move(types);
  def.formulas = std::move(formulas);
  return def;
}

ElementwiseDefinition binary(std::string name, TypeRule types, std::function<Expr(Expr, Expr)> formula) {
  return broadcasting(std::move(name), 2, 2, std::move(types),
                      fixed([formula](const Elements& x) { return formula(x[0], x[1]); }));
}

/// Max, Min, Sum, Mean: a fold over any number of inputs.
ElementwiseDefinition variadic(std::string name, TypeClass types, std::function<Expr(Expr, Expr)> combine,
                               bool mean = false) {
  return broadcasting(std::move(name), 1, -1, uniformType(types), fixed([combine, mean](const Elements& x) {
                        Expr result = x[0];
                        for (size_t i = 1; i < x.size(); ++i) result = combine(result, x[i]);
                        return mean ? result / constantLike(result, double(x.size())) : result;
                      }));
}

ElementwiseDefinition castOp() {
  ElementwiseDefinition def;
  def.name = "Cast";
  def.outputTypes = [](const OpCall& call) -> Expected<std::vector<DataType>> {
    if (Status st = requireTypeClass(call, 0, TypeClass::Any); !st) return st.error();
    if (!call.hasAttr("to")) return call.error("attribute 'to' is missing", "say which element type to cast to");
    auto to = call.intAttr("to", 0);
    if (!to) return to.error();
    auto dtype = dataTypeFromOnnx(*to);
    if (!dtype)
      return call.error("cannot cast to ONNX element type " + std::to_string(*to),
                        "Tessel's tensors hold numbers and bools (no strings, complex or 8-bit floats)");
    return std::vector<DataType>{*dtype};
  };
  def.formulas = fixedUnary([](Expr x) { return x; });  // the builder casts to the output type
  return def;
}

ElementwiseDefinition castLikeOp() {
  ElementwiseDefinition def;
  def.name = "CastLike";
  def.minInputs = def.maxInputs = 2;
  def.unreadInputs = {1};
  def.outputTypes = [](const OpCall& call) -> Expected<std::vector<DataType>> {
    return std::vector<DataType>{call.inputTypes[1].dtype};
  };
  def.formulas = fixedUnary([](Expr x) { return x; });
  return def;
}

/// Clip: bounds from attributes (opset 6) or from optional scalar inputs (opset 11 on),
/// each a constant folded into the kernel or a runtime scalar.
ElementwiseDefinition clipOp() {
  ElementwiseDefinition def;
  def.name = "Clip";
  def.maxInputs = 3;
  def.scalarInputs = {1, 2};
  def.outputTypes = uniformType(TypeClass::Numeric);
  def.formulas = [](const OpCall& call) -> Expected<std::vector<ElementFormula>> {
    bool attributeBounds = call.hasAttr("min") || call.hasAttr("max") || (call.opset > 0 && call.opset < 11);
    for (size_t i = 1; i < call.inputTypes.size(); ++i)
      if (call.hasInput(i) && call.inputTypes[i].elementCount() != 1)
        return call.error("bound (input " + std::to_string(i) + ") has shape " + call.inputTypes[i].toString() +
                          ", expected a scalar");
    if (!attributeBounds)
      return std::vector<ElementFormula>{[](const Elements& x) {
        Expr result = x[0];
        if (x.size() > 1 && x[1].defined()) result = max(result, x[1]);
        if (x.size() > 2 && x[2].defined()) result = min(result, x[2]);
        return result;
      }};
    auto low = call.floatAttr("min", -double(std::numeric_limits<float>::max()));
    if (!low) return low.error();
    auto high = call.floatAttr("max", double(std::numeric_limits<float>::max()));
    if (!high) return high.error();
    return std::vector<ElementFormula>{[low = *low, high = *high](const Elements& x) {
      return min(max(x[0], constantLike(x[0], low)), constantLike(x[0], high));
    }};
  };
  return def;
}

/// PRelu: the slope broadcasts to the input's shape (never the other way round).
ElementwiseDefinition preluOp() {
  ElementwiseDefinition def = binary("PRelu", {}, [](Expr x, Expr slope) {
    return select(x < constantLike(x, 0), x * slope, x);
  });
  def.outputTypes = [](const OpCall& call) -> Expected<std::vector<DataType>> {
    for (size_t i : {0, 1})
      if (Status st = requireTypeClass(call, i, TypeClass::Numeric); !st) return st.error();
    if (Status st = requireSameType(call); !st) return st.error();
    const auto& x = call.inputTypes[0].shape;
    const auto& slope = call.inputTypes[1].shape;
    bool fits = slope.size() <= x.size();
    for (size_t d = 0; fits && d < slope.size(); ++d) {
      int64_t extent = slope[slope.size() - 1 - d];
      fits = extent == 1 || extent == x[x.size() - 1 - d];
    }
    if (!fits)
      return call.error("slope " + call.inputTypes[1].toString() + " does not broadcast to the input " +
                        call.inputTypes[0].toString());
    return std::vector<DataType>{call.inputTypes[0].dtype};
  };
  return def;
}

ElementwiseDefinition whereOp() {
  ElementwiseDefinition def = broadcasting("Where", 3, 3, {}, fixed([](const Elements& x) {
                                             return select(x[0], x[1], x[2]);
                                           }));
  def.outputTypes = [](const OpCall& call) -> Expected<std::vector<DataType>> {
    if (Status st = requireTypeClass(call, 0, TypeClass::Bool); !st) return st.error();
    for (size_t i : {1, 2})
      if (Status st = requireTypeClass(call, i, TypeClass::Any); !st) return st.error();
    if (Status st = requireSameType(call, {1, 2}); !st) return st.error();
    return std::vector<DataType>{call.inputTypes[1].dtype};
  };
  return def;
}

ElementwiseDefinition powOp() {
  ElementwiseDefinition def = binary("Pow", {}, power);
  def.outputTypes = [](const OpCall& call) -> Expected<std::vector<DataType>> {
    for (size_t i : {0, 1})
      if (Status st = requireTypeClass(call, i, TypeClass::Numeric); !st) return st.error();
    // Opset 7 wants one type; 12 on lets the exponent differ. Both take the base's type.
    if (call.opset > 0 && call.opset < 12)
      if (Status st = requireSameType(call); !st) return st.error();
    return std::vector<DataType>{call.inputTypes[0].dtype};
  };
  return def;
}

ElementwiseDefinition modOp() {
  ElementwiseDefinition def = broadcasting("Mod", 2, 2, uniformType(TypeClass::Numeric), nullptr);
  def.formulas = [](const OpCall& call) -> Expected<std::vector<ElementFormula>> {
    auto fmod = call.intAttr("fmod", 0);
    if (!fmod) return fmod.error();
    if (*fmod == 0 && call.inputTypes[0].dtype.isFloat())
      return call.error("fmod=0 on a float type", "ONNX requires fmod=1 for floating-point Mod");
    return std::vector<ElementFormula>{
        [fmod = *fmod != 0](const Elements& x) { return modulo(x[0], x[1], fmod); }};
  };
  return def;
}

ElementwiseDefinition bitShiftOp() {
  ElementwiseDefinition def = broadcasting("BitShift", 2, 2, uniformType(TypeClass::Unsigned), nullptr);
  def.formulas = [](const OpCall& call) -> Expected<std::vector<ElementFormula>> {
    auto direction = call.stringAttr("direction", "");
    if (!direction) return direction.error();
    if (*direction != "LEFT" && *direction != "RIGHT")
      return call.error("direction is '" + *direction + "'", "set the 'direction' attribute to LEFT or RIGHT");
    return std::vector<ElementFormula>{
        [left = *direction == "LEFT"](const Elements& x) { return bitShift(x[0], x[1], left); }};
  };
  return def;
}

ElementwiseDefinition isInfOp() {
  ElementwiseDefinition def = predicate("IsInf", TypeClass::Float, nullptr);
  def.formulas = [](const OpCall& call) -> Expected<std::vector<ElementFormula>> {
    auto negative = call.intAttr("detect_negative", 1);
    if (!negative) return negative.error();
    auto positive = call.intAttr("detect_positive", 1);
    if (!positive) return positive.error();
    return std::vector<ElementFormula>{[negative = *negative != 0, positive = *positive != 0](const Elements& x) {
      double infinity = std::numeric_limits<double>::infinity();
      Expr isPositive = eq(x[0], constantLike(x[0], infinity));
      Expr isNegative = eq(x[0], constantLike(x[0], -infinity));
      if (positive && negative) return isPositive || isNegative;
      if (positive) return isPositive;
      if (negative) return isNegative;
      return makeConst(DataType::boolean(), 0);
    }};
  };
  return def;
}

/// Dropout at inference: the input unchanged and, when asked for, a mask of ones. Training
/// mode (random) is only accepted with a zero ratio.
ElementwiseDefinition dropoutOp() {
  ElementwiseDefinition def;
  def.name = "Dropout";
  def.maxInputs = 3;
  def.maxOutputs = 2;
  def.unreadInputs = {1, 2};
  def.outputTypes = [](const OpCall& call) -> Expected<std::vector<DataType>> {
    if (Status st = requireTypeClass(call, 0, TypeClass::Numeric); !st) return st.error();
    DataType x = call.inputTypes[0].dtype;
    // Opsets 7 and 9 give the mask the input's type; 10 on, bool.
    DataType mask = call.opset > 0 && call.opset < 10 ? x : DataType::boolean();
    return std::vector<DataType>{x, mask};
  };
  def.formulas = [](const OpCall& call) -> Expected<std::vector<ElementFormula>> {
    if (call.hasInput(2)) {
      std::optional<Expr> training = scalarConstant(call, 2);
      if (!training)
        return call.error("training_mode (input 2) must be a constant",
                          "export the model for inference (training_mode false)");
      double ratio = 0.5;
      if (call.hasInput(1)) {
        auto given = call.constantDoubles(1, "ratio");
        if (!given) return given.error();
        ratio = given->empty() ? ratio : given->front();
      }
      if (!isConstInt(*training, 0) && ratio != 0)
        return call.error("training-mode dropout drops random elements",
                          "export the model for inference (training_mode false)");
    }
    ElementFormula identity = [](const Elements& x) { return x[0]; };
    ElementFormula ones = [](const Elements& x) { return makeConst(DataType::boolean(), 1); };
    return std::vector<ElementFormula>{identity, ones};
  };
  return def;
}

}  // namespace

void registerElementwiseOps(OpRegistry& registry) {
  using T = TypeClass;
  const DataType boolean = DataType::boolean();
  std::vector<ElementwiseDefinition> defs;
  auto add = [&](ElementwiseDefinition def) { defs.push_back(std::move(def)); };

  // Arithmetic with NumPy broadcasting.
  add(binary("Add", uniformType(T::Numeric), [](Expr a, Expr b) { return a + b; }));
  add(binary("Sub", uniformType(T::Numeric), [](Expr a, Expr b) { return a - b; }));
  add(binary("Mul", uniformType(T::Numeric), [](Expr a, Expr b) { return a * b; }));
  add(binary("Div", uniformType(T::Numeric), divide));
  add(powOp());
  add(modOp());
  add(variadic("Max", T::Numeric, maxPropagatingNaN));
  add(variadic("Min", T::Numeric, minPropagatingNaN));
  add(variadic("Sum", T::Float, [](Expr a, Expr b) { return a + b; }));
  add(variadic("Mean", T::Float, [](Expr a, Expr b) { return a + b; }, true));

  // Unary arithmetic and rounding.
  add(unary("Abs", T::Numeric, fixedUnary([](Expr x) { return fabs(x); })));
  add(unary("Neg", T::Signed, fixedUnary([](Expr x) { return -x; })));
  add(unary("Sign", T::Numeric, fixedUnary([](Expr x) {
        // x * 0 keeps NaN a NaN and 0 a 0.
        return select(x > constantLike(x, 0), constantLike(x, 1),
                      select(x < constantLike(x, 0), constantLike(x, -1), x * constantLike(x, 0)));
      })));
  add(unary("Reciprocal", T::Float, fixedUnary([](Expr x) { return constantLike(x, 1) / x; })));
  add(unary("Floor", T::Float, fixedUnary([](Expr x) { return call(Intrinsic::Floor, {x}); })));
  add(unary("Ceil", T::Float, fixedUnary([](Expr x) { return call(Intrinsic::Ceil, {x}); })));
  add(unary("Round", T::Float, fixedUnary([](Expr x) { return call(Intrinsic::Round, {x}); })));

  // Exponentials, logarithms and roots.
  add(unary("Exp", T::Float, fixedUnary([](Expr x) { return exp(x); })));
  add(unary("Log", T::Float, fixedUnary([](Expr x) { return log(x); })));
  add(unary("Sqrt", T::Float, fixedUnary([](Expr x) { return sqrt(x); })));
  add(unary("Erf", T::Numeric, fixedUnary([](Expr x) { return erf(asFloat(x)); })));

  // Activations.
  add(unary("Relu", T::Signed, fixedUnary([](Expr x) { return max(x, constantLike(x, 0)); })));
  add(unary("LeakyRelu", T::Float, withFloatAttributes({{"alpha", 0.01}}, [](Expr x, const std::vector<double>& a) {
        return select(x < constantLike(x, 0), x * constantLike(x, a[0]), x);
      })));
  add(unary("Elu", T::Float, withFloatAttributes({{"alpha", 1.0}}, [](Expr x, const std::vector<double>& a) {
        return select(x < constantLike(x, 0), constantLike(x, a[0]) * (exp(x) - constantLike(x, 1)), x);
      })));
  add(unary("Selu", T::Float,
            withFloatAttributes({{"alpha", 1.67326319217681884765625}, {"gamma", 1.05070102214813232421875}},
                                [](Expr x, const std::vector<double>& a) {
                                  Expr alpha = constantLike(x, a[0]), gamma = constantLike(x, a[1]);
                                  return select(x <= constantLike(x, 0), gamma * (alpha * exp(x) - alpha), gamma * x);
                                })));
  add(unary("Celu", T::Float, withFloatAttributes({{"alpha", 1.0}}, [](Expr x, const std::vector<double>& a) {
        Expr alpha = constantLike(x, a[0]), zero = constantLike(x, 0);
        return max(zero, x) + min(zero, alpha * (exp(x / alpha) - constantLike(x, 1)));
      })));
  add(unary("ThresholdedRelu", T::Float,
            withFloatAttributes({{"alpha", 1.0}}, [](Expr x, const std::vector<double>& a) {
              return select(x > constantLike(x, a[0]), x, constantLike(x, 0));
            })));
  add(unary("Sigmoid", T::Float, fixedUnary([](Expr x) { return sigmoid(x); })));
  add(unary("HardSigmoid", T::Float,
            withFloatAttributes({{"alpha", 0.2}, {"beta", 0.5}},
                                [](Expr x, const std::vector<double>& a) { return hardSigmoid(x, a[0], a[1]); })));
  add(unary("HardSwish", T::Float, fixedUnary([](Expr x) { return x * hardSigmoid(x, 1.0 / 6.0, 0.5); })));
  add(unary("Tanh", T::Float, fixedUnary([](Expr x) { return tanh(x); })));
  add(unary("Softplus", T::Float, fixedUnary([](Expr x) { return softplus(x); })));
  add(unary("Mish", T::Float, fixedUnary([](Expr x) { return x * tanh(softplus(x)); })));  // opset 18
  add(unary("Softsign", T::Float, fixedUnary([](Expr x) { return x / (constantLike(x, 1) + fabs(x)); })));
  add(unary("Shrink", T::Numeric,
            withFloatAttributes({{"bias", 0.0}, {"lambd", 0.5}}, [](Expr input, const std::vector<double>& a) {
              Expr x = asFloat(input);
              Expr bias = constantLike(x, a[0]), lambd = constantLike(x, a[1]);
              return select(x < -lambd, x + bias, select(x > lambd, x - bias, constantLike(x, 0)));
            })));
  add(clipOp());
  add(preluOp());

  // Trigonometric and hyperbolic functions.
  const std::pair<const char*, Intrinsic> trigonometric[] = {
      {"Sin", Intrinsic::Sin},     {"Cos", Intrinsic::Cos},     {"Tan", Intrinsic::Tan},
      {"Asin", Intrinsic::Asin},   {"Acos", Intrinsic::Acos},   {"Atan", Intrinsic::Atan},
      {"Sinh", Intrinsic::Sinh},   {"Cosh", Intrinsic::Cosh},   {"Asinh", Intrinsic::Asinh},
      {"Acosh", Intrinsic::Acosh}, {"Atanh", Intrinsic::Atanh}};
  for (auto [name, op] : trigonometric)
    add(unary(name, T::Float, fixedUnary([op = op](Expr x) { return call(op, {x}); })));

  // Tests of values.
  add(predicate("IsNaN", T::Float, fixedUnary([](Expr x) { return call(Intrinsic::IsNan, {x}); })));
  add(isInfOp());

  // Logic and comparisons (bool out).
  add(unary("Not", T::Bool, fixedUnary([](Expr x) { return !x; })));
  add(binary("And", uniformType(T::Bool), [](Expr a, Expr b) { return a && b; }));
  add(binary("Or", uniformType(T::Bool), [](Expr a, Expr b) { return a || b; }));
  add(binary("Xor", uniformType(T::Bool), [](Expr a, Expr b) { return ne(a, b); }));
  add(binary("Equal", uniformType(T::Any, boolean), [](Expr a, Expr b) { return eq(a, b); }));
  add(binary("Less", uniformType(T::Numeric, boolean), [](Expr a, Expr b) { return a < b; }));
  add(binary("Greater", uniformType(T::Numeric, boolean), [](Expr a, Expr b) { return a > b; }));
  add(binary("LessOrEqual", uniformType(T::Numeric, boolean), [](Expr a, Expr b) { return a <= b; }));
  add(binary("GreaterOrEqual", uniformType(T::Numeric, boolean), [](Expr a, Expr b) { return a >= b; }));
  add(bitShiftOp());
  // Opset 18's bitwise operators, on integers.
  add(binary("BitwiseAnd", uniformType(T::Integer), [](Expr a, Expr b) { return call(Intrinsic::BitwiseAnd, {a, b}); }));
  add(binary("BitwiseOr", uniformType(T::Integer), [](Expr a, Expr b) { return call(Intrinsic::BitwiseOr, {a, b}); }));
  add(binary("BitwiseXor", uniformType(T::Integer), [](Expr a, Expr b) { return call(Intrinsic::BitwiseXor, {a, b}); }));
  add(unary("BitwiseNot", T::Integer, fixedUnary([](Expr x) { return call(Intrinsic::BitwiseNot, {x}); })));

  // Type conversions and copies.
  add(castOp());
  add(castLikeOp());
  add(whereOp());
  add(unary("Identity", T::Any, fixedUnary([](Expr x) { return x; })));
  add(dropoutOp());

  for (auto& def : defs) registry.add(makeElementwiseOpDef(std::move(def)));
}

}  // namespace tessel::graph
