// Simplification of expressions, statements and functions of the loop IR.
#pragma once

#include "core/ir/Expr.h"
#include "core/ir/Stmt.h"

namespace tessel {

/// `e` simplified with nothing known about its variables: constants folded, terms
/// canonicalized (constants to the right, like terms collected), identities applied.
Expr simplify(const Expr& e);

/// `s` simplified while walking it: every expression is simplified knowing the ranges of
/// the enclosing loops and the values of enclosing lets, and inside a branch the loop
/// ranges its condition narrows (in the then-branch of if (i < 50), i < 50). Branches whose
/// condition is provably true or false are replaced by the branch taken (likely(...) hints
/// included), loops of extent 0 (or provably at most 0) disappear, loops of extent 1 become
/// their body with the loop variable replaced by the loop's min (kept as a let when a
/// buffer inside is sized by it; thread bindings keep their launch dimension), lets nobody
/// reads and statements left with nothing to do are dropped. Conditions that cannot be
/// decided are kept. The result computes exactly what `s` computes.
Stmt simplify(const Stmt& s);

/// The function with its body simplified; the same handle when nothing changed.
PrimFunc simplify(const PrimFunc& f);

}  // namespace tessel
