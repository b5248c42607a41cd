// Constant folding of scalar integer, float and bool operations.
#include "compiler/arith/ConstantFold.h"

#include <cmath>
#include <limits>

#include "core/ir/Stmt.h"

namespace tessel {

namespace {

uint64_t asUnsigned(int64_t value, DataType dtype) {
  uint64_t bits = static_cast<uint64_t>(value);
  int width = dtype.bits();
  return width >= 64 ? bits : bits & ((uint64_t(1) << width) - 1);
}

// Rounds to a binary format with `precision` significant bits, smallest normal exponent
// `minExponent` (the value 2^minExponent) and largest finite value `maxFinite`.
double roundToFormat(double value, int precision, int minExponent, double maxFinite) {
  if (!std::isfinite(value) || value == 0) return value;
  int exponent;
  std::frexp(value, &exponent);  // value = m * 2^exponent with 0.5 <= |m| < 1
  // Subnormals share the quantum of the smallest normal binade.
  int quantumExponent = std::max(exponent, minExponent + 1) - precision;
  double quantum = std::ldexp(1.0, quantumExponent);
  double rounded = std::nearbyint(value / quantum) * quantum;
  if (std::fabs(rounded) > maxFinite) return std::copysign(std::numeric_limits<double>::infinity(), value);
  return rounded;
}

double floatOf(const Expr& e) { return e.as<FloatImmNode>()->value; }

Expr makeFloat(DataType dtype, double value) { return FloatImmNode::make(dtype, roundToFloatType(value, dtype)); }
Expr makeBool(bool value) { return IntImmNode::make(DataType::boolean(), value ? 1 : 0); }

// The pair of scalar integer constants of one type, if `a` and `b` are such.
bool intOperands(const Expr& a, const Expr& b, int64_t* x, int64_t* y) {
  auto* ia = a.as<IntImmNode>();
  auto* ib = b.as<IntImmNode>();
  if (!ia || !ib || a.dtype() != b.dtype()) return false;
  *x = wrapToType(ia->value, a.dtype());
  *y = wrapToType(ib->value, b.dtype());
  return true;
}

bool floatOperands(const Expr& a, const Expr& b) {
  return a.as<FloatImmNode>() && b.as<FloatImmNode>() && a.dtype() == b.dtype();
}

// Integer arithmetic: computed on 64-bit patterns (wrapping), then reduced to the width.
Expr foldIntArithmetic(NodeKind kind, DataType dtype, int64_t x, int64_t y) {
  bool isSigned = dtype.isInt();
  uint64_t ux = static_cast<uint64_t>(x), uy = static_cast<uint64_t>(y);
  auto result = [&](uint64_t bits) { return makeIntConst(dtype, static_cast<int64_t>(bits)); };
  switch (kind) {
    case NodeKind::Add: return result(ux + uy);
    case NodeKind::Sub: return result(ux - uy);
    case NodeKind::Mul: return result(ux * uy);
    case NodeKind::Min:
      if (isSigned) return result(static_cast<uint64_t>(std::min(x, y)));
      return result(std::min(asUnsigned(x, dtype), asUnsigned(y, dtype)));
    case NodeKind::Max:
      if (isSigned) return result(static_cast<uint64_t>(std::max(x, y)));
      return result(std::max(asUnsigned(x, dtype), asUnsigned(y, dtype)));
    default: break;
  }
  // Division and remainder: never by zero.
  if (y == 0) return Expr();
  if (!isSigned) {
    uint64_t a = asUnsigned(x, dtype), b = asUnsigned(y, dtype);
    switch (kind) {
      case NodeKind::Div: case NodeKind::FloorDiv: return result(a / b);
      case NodeKind::Mod: case NodeKind::FloorMod: return result(a % b);
      default: return Expr();
    }
  }
  // x / -1 overflows for the type's minimum; it wraps to the minimum itself (0 - x).
  if (y == -1) {
    switch (kind) {
      case NodeKind::Div: case NodeKind::FloorDiv: return result(0 - ux);
      case NodeKind::Mod: case NodeKind::FloorMod: return result(0);
      default: return Expr();
    }
  }
  int64_t quotient = x / y, remainder = x % y;
  bool roundsDown = remainder != 0 && ((remainder < 0) != (y < 0));
  switch (kind) {
    case NodeKind::Div: return result(static_cast<uint64_t>(quotient));
    case NodeKind::Mod: return result(static_cast<uint64_t>(remainder));
    case NodeKind::FloorDiv: return result(static_cast<uint64_t>(roundsDown ? quotient - 1 : quotient));
    case NodeKind::FloorMod: return result(static_cast<uint64_t>(roundsDown ? remainder + y : remainder));
    default: return Expr();
  }
}

Expr foldFloatArithmetic(NodeKind kind, DataType dtype, double x, double y) {
  switch (kind) {
    case NodeKind::Add: return makeFloat(dtype, x + y);
    case NodeKind::Sub: return makeFloat(dtype, x - y);
    case NodeKind::Mul: return makeFloat(dtype, x * y);
    case NodeKind::Min:
    case NodeKind::Max:
      // Backends disagree on min/max of NaN; leave those to run time.
      if (std::isnan(x) || std::isnan(y)) return Expr();
      return makeFloat(dtype, kind == NodeKind::Min ? std::min(x, y) : std::max(x, y));
    default: break;
  }
  if (y == 0) return Expr();
  switch (kind) {
    case NodeKind::Div: return makeFloat(dtype, x / y);
    case NodeKind::Mod: return makeFloat(dtype, std::fmod(x, y));
    case NodeKind::FloorDiv: return makeFloat(dtype, std::floor(x / y));
    case NodeKind::FloorMod: return makeFloat(dtype, x - std::floor(x / y) * y);
    default: return Expr();
  }
}

template <class T>
Expr foldComparison(NodeKind kind, T x, T y) {
  switch (kind) {
    case NodeKind::EQ: return makeBool(x == y);
    case NodeKind::NE: return makeBool(x != y);
    case NodeKind::LT: return makeBool(x < y);
    case NodeKind::LE: return makeBool(x <= y);
    case NodeKind::GT: return makeBool(x > y);
    case NodeKind::GE: return makeBool(x >= y);
    default: return Expr();
  }
}

bool isComparison(NodeKind kind) {
  return kind == NodeKind::EQ || kind == NodeKind::NE || kind == NodeKind::LT || kind == NodeKind::LE ||
         kind == NodeKind::GT || kind == NodeKind::GE;
}

Expr foldBinary(NodeKind kind, DataType dtype, const Expr& a, const Expr& b) {
  int64_t x, y;
  if (kind == NodeKind::And || kind == NodeKind::Or) {
    if (!intOperands(a, b, &x, &y)) return Expr();
    return makeBool(kind == NodeKind::And ? (x && y) : (x || y));
  }
  if (isComparison(kind)) {
    if (intOperands(a, b, &x, &y)) {
      if (a.dtype().isUInt()) return foldComparison(kind, asUnsigned(x, a.dtype()), asUnsigned(y, a.dtype()));
      return foldComparison(kind, x, y);
    }
    if (floatOperands(a, b)) return foldComparison(kind, floatOf(a), floatOf(b));
    return Expr();
  }
  if (intOperands(a, b, &x, &y)) {
    if (dtype.isBool()) return Expr();  // arithmetic on bools is not meaningful
    return foldIntArithmetic(kind, dtype, x, y);
  }
  if (floatOperands(a, b)) return foldFloatArithmetic(kind, dtype, floatOf(a), floatOf(b));
  return Expr();
}

Expr foldCast(DataType to, const Expr& value) {
  if (!to.isScalar()) return Expr();
  DataType from = value.dtype();
  if (auto* imm = value.as<IntImmNode>()) {
    int64_t v = wrapToType(imm->value, from);
    if (to.isBool()) return makeBool(v != 0);
    if (to.isIntegral()) return makeIntConst(to, v);
    if (to.isFloat()) {
      double d = from.isUInt() ? static_cast<double>(asUnsigned(v, from)) : static_cast<double>(v);
      return makeFloat(to, d);
    }
    return Expr();
  }
  if (auto* imm = value.as<FloatImmNode>()) {
    double v = imm->value;
    if (to.isBool()) return makeBool(v != 0);
    if (to.isFloat()) return makeFloat(to, v);
    if (to.isIntegral()) {
      // Out-of-range float-to-int conversion is undefined; leave it alone.
      if (std::isnan(v)) return Expr();
      double t = std::trunc(v);
      double lo = to.isInt() ? -std::ldexp(1.0, to.bits() - 1) : 0.0;
      double hiExclusive = to.isInt() ? std::ldexp(1.0, to.bits() - 1) : std::ldexp(1.0, to.bits());
      if (t < lo || t >= hiExclusive) return Expr();
      if (to.isUInt() && t >= std::ldexp(1.0, 63)) return makeIntConst(to, static_cast<int64_t>(static_cast<uint64_t>(t)));
      return makeIntConst(to, static_cast<int64_t>(t));
    }
  }
  return Expr();
}

Expr foldCall(const CallNode* call) {
  if (call->args.size() != 1 || !call->dtype.isScalar()) return Expr();
  auto* imm = call->args[0].as<FloatImmNode>();
  if (!imm || call->args[0].dtype() != call->dtype) return Expr();
  double v = imm->value;
  // Only operations that every backend computes exactly.
  switch (call->op) {
    case Intrinsic::Floor: return makeFloat(call->dtype, std::floor(v));
    case Intrinsic::Ceil: return makeFloat(call->dtype, std::ceil(v));
    case Intrinsic::Trunc: return makeFloat(call->dtype, std::trunc(v));
    case Intrinsic::Fabs: return makeFloat(call->dtype, std::fabs(v));
    case Intrinsic::Sqrt:
      if (v < 0) return Expr();
      return makeFloat(call->dtype, std::sqrt(v));
    default: return Expr();
  }
}

}  // namespace

int64_t wrapToType(int64_t value, DataType dtype) {
  if (dtype.isBool()) return value != 0;
  int width = dtype.bits();
  if (width >= 64) return value;
  uint64_t mask = (uint64_t(1) << width) - 1;
  uint64_t bits = static_cast<uint64_t>(value) & mask;
  if (dtype.isInt() && (bits >> (width - 1)) & 1) bits |= ~mask;  // sign extend
  return static_cast<int64_t>(bits);
}

double roundToFloatType(double value, DataType dtype) {
  if (dtype.code() == DataType::Code::BFloat) return roundToFormat(value, 8, -126, 3.3895313892515355e38);
  switch (dtype.bits()) {
    case 16: return roundToFormat(value, 11, -14, 65504.0);
    case 32: return static_cast<double>(static_cast<float>(value));
    default: return value;
  }
}

Expr makeIntConst(DataType dtype, int64_t value) {
  Expr scalar = IntImmNode::make(dtype.element(), wrapToType(value, dtype.element()));
  return dtype.lanes() > 1 ? BroadcastNode::make(scalar, dtype.lanes()) : scalar;
}

Expr constantFold(const Expr& e) {
  if (!e.defined()) return Expr();
  switch (e->kind()) {
#define TESSEL_FOLD_BINARY(Name) \
  case NodeKind::Name: {         \
    auto* n = e.as<Name##Node>(); \
    return foldBinary(NodeKind::Name, n->dtype, n->a, n->b); \
  }
    TESSEL_BINARY_NODES(TESSEL_FOLD_BINARY)
#undef TESSEL_FOLD_BINARY
    case NodeKind::Not: {
      auto* imm = e.as<NotNode>()->a.as<IntImmNode>();
      return imm ? makeBool(imm->value == 0) : Expr();
    }
    case NodeKind::Select: {
      auto* n = e.as<SelectNode>();
      auto* imm = n->condition.as<IntImmNode>();
      if (!imm) return Expr();
      return imm->value ? n->trueValue : n->falseValue;
    }
    case NodeKind::Cast: {
      auto* n = e.as<CastNode>();
      if (n->dtype == n->value.dtype()) return n->value;
      return foldCast(n->dtype, n->value);
    }
    case NodeKind::Call: return foldCall(e.as<CallNode>());
    default: return Expr();
  }
}

}  // namespace tessel
