// Index arithmetic builders that fold constants and keep ramps as ramps, so the loop-IR
// passes print readable IR (and codegen sees contiguous vector accesses) before simplify runs.
#pragma once

#include "core/ir/IRMutator.h"

namespace tessel {

/// a + b for integer expressions, scalar or vector. Folds two constants, drops a zero
/// operand, merges a scalar (or broadcast) into a ramp's base, adds two ramps lane-wise
/// into one ramp and two broadcasts into one broadcast. A scalar meeting a vector is
/// broadcast. Non-integer operands are built with the ordinary operator.
Expr addIndex(Expr a, Expr b);

/// a - b with the same folding as addIndex (ramp - scalar stays a ramp).
Expr subIndex(Expr a, Expr b);

/// a * b: folds constants, ones and zeros; a ramp times a scalar scales base and stride.
Expr mulIndex(Expr a, Expr b);

/// substitute() that rebuilds the integer +, - and * it touches with the folding builders
/// above, so replacing i by 0 in i*4 + j gives j rather than 0*4 + j.
Expr substituteAndFold(const Expr& e, const VarMap& map);
Stmt substituteAndFold(const Stmt& s, const VarMap& map);

/// `value` with `lanes` lanes: itself when it has them, else a broadcast of the scalar.
Expr broadcastTo(const Expr& value, int lanes);

}  // namespace tessel
