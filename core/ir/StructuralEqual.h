// Structural equality and hashing of IR, up to consistent renaming of variables.
#pragma once

#include <cstdint>

#include "core/ir/Stmt.h"

namespace tessel {

/// True when `a` and `b` have the same structure. Variables defined inside the IR (loop
/// variables, lets, allocated buffers, reduction axes, function parameters) match when
/// they correspond one-to-one, so `for i: A[i]` equals `for j: A[j]`; free variables match
/// only themselves, so `x + 1` does not equal `y + 1`.
bool structuralEqual(const Expr& a, const Expr& b);
bool structuralEqual(const Stmt& a, const Stmt& b);
bool structuralEqual(const PrimFunc& a, const PrimFunc& b);

/// A hash consistent with structuralEqual: equal IR hashes equally.
uint64_t structuralHash(const Expr& e);
uint64_t structuralHash(const Stmt& s);
uint64_t structuralHash(const PrimFunc& f);

}  // namespace tessel
