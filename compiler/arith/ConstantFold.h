// Constant folding for every scalar type: integers wrap around at their width, floats round
// to their precision, booleans follow logic, and nothing undefined (x / 0) is ever folded.
#pragma once

#include <cstdint>

#include "core/ir/Expr.h"

namespace tessel {

/// The constant `e` evaluates to when its operands are constants, or an undefined Expr
/// when it cannot be folded (operands not constant, division by zero, a float-to-int
/// conversion out of range, min/max of NaN, ...).
Expr constantFold(const Expr& e);

/// An integer (or bool) constant of `dtype`, normalized to the type's width; a Broadcast
/// when `dtype` is a vector.
Expr makeIntConst(DataType dtype, int64_t value);

/// `value` reduced to the width of integer type `dtype` the way the machine would: sign
/// extended for signed types, masked for unsigned ones, 0/1 for bool.
int64_t wrapToType(int64_t value, DataType dtype);

/// `value` rounded to the precision of float type `dtype` (float16, bfloat16, float32 or
/// float64), round-to-nearest-even, overflowing to infinity.
double roundToFloatType(double value, DataType dtype);

}  // namespace tessel
