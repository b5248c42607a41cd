// Sums of integer terms with constant coefficients: how the simplifier collects like terms
// (x*4 + y - x*4 -> y) when the rewrite patterns alone do not see across a sum.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/ir/Expr.h"

namespace tessel {

/// coefficient * atom, where the atom is not itself a sum or a product with a constant.
struct LinearTerm {
  Expr atom;
  int64_t coefficient = 0;
};

/// sum(terms) + constant, in the (integer) type `dtype`. Coefficients wrap around at the
/// type's width, so the form is exact for every integer type.
struct LinearForm {
  DataType dtype;
  std::vector<LinearTerm> terms;  ///< Distinct atoms, in order of first appearance.
  int64_t constant = 0;
  size_t leaves = 0;  ///< Atoms and constants seen while flattening, before merging.
};

/// Flattens the + / - / *constant structure of an integer expression and merges equal
/// atoms, including x with floordiv(x, c) or floormod(x, c) through
/// x == c*floordiv(x, c) + floormod(x, c); nullopt for non-integer types or more than
/// `maxTerms` atoms.
std::optional<LinearForm> toLinearForm(const Expr& e, size_t maxTerms = 64);

/// Rebuilds an expression: positive terms first, then subtracted ones, the constant last.
Expr fromLinearForm(const LinearForm& form);

/// The additions, subtractions and multiplications by constants that make up the linear
/// structure of `e` (what toLinearForm looks through); atoms are not looked into.
size_t linearOperationCount(const Expr& e);

}  // namespace tessel
