// Exact equality of expressions, variables compared by identity: what rewrite rules need
// when a pattern names the same wildcard twice (x - x).
#pragma once

#include <cstddef>

#include "core/ir/Expr.h"

namespace tessel {

/// True when `a` and `b` are the same expression: same structure, same constants, and the
/// very same variables and buffers (unlike structuralEqual, which allows renaming).
bool exprEqual(const Expr& a, const Expr& b);

/// The number of nodes in `e`, counting no further than `limit`.
size_t exprSize(const Expr& e, size_t limit = 1000);

}  // namespace tessel
