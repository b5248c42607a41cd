// Operator overloads and helpers for building expressions by hand and in TE bodies.
#pragma once

#include "core/ir/Expr.h"
#include "core/ir/Stmt.h"

namespace tessel {

// Arithmetic builders match operand types first: an immediate takes the other side's
// type, the narrower integer widens, an integer meets a float by conversion, and a scalar
// meets a vector by broadcast. They build nodes as written; simplify() cleans them up.
Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
/// Floor division for integers (what index arithmetic wants), true division for floats.
Expr operator/(Expr a, Expr b);
/// Floor modulo for integers.
Expr operator%(Expr a, Expr b);
Expr operator-(Expr a);
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr operator&&(Expr a, Expr b);
Expr operator||(Expr a, Expr b);
Expr operator!(Expr a);
Expr eq(Expr a, Expr b);
Expr ne(Expr a, Expr b);
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
Expr floordiv(Expr a, Expr b);
Expr floormod(Expr a, Expr b);
Expr truncdiv(Expr a, Expr b);
Expr truncmod(Expr a, Expr b);
Expr select(Expr condition, Expr trueValue, Expr falseValue);
Expr cast(DataType dtype, Expr value);
Expr call(Intrinsic op, std::vector<Expr> args);
Expr exp(Expr x);
Expr log(Expr x);
Expr sqrt(Expr x);
Expr tanh(Expr x);
Expr erf(Expr x);
Expr pow(Expr x, Expr y);
Expr fabs(Expr x);
Expr sigmoid(Expr x);
Expr likely(Expr condition);

/// An immediate of `dtype` holding `value` (integers truncate; bool is value != 0).
Expr makeConst(DataType dtype, double value);
Expr makeZero(DataType dtype);
/// The largest / smallest finite value of a type (-inf / +inf are not used).
Expr maxValue(DataType dtype);
Expr minValue(DataType dtype);

/// Matches operand types as the builders do (exposed for passes that build nodes).
void matchTypes(Expr& a, Expr& b);

}  // namespace tessel
