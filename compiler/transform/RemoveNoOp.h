// Removal of statements that do nothing, so later passes and the printed IR stay small.
#pragma once

#include "core/ir/Stmt.h"

namespace tessel {

/// True for a statement that has no effect by its very form: an Evaluate of a constant or
/// an empty sequence. (removeNoOp finds the compound ones.)
bool isNoOp(const Stmt& s);

/// `s` without its no-ops: Evaluate of constants, loops of constant extent <= 0, loops and
/// other scopes (let, attr, allocate, realize) whose body does nothing, and IfThenElse with
/// empty branches (an empty then-branch with a real else-branch becomes `if (!cond)`).
/// Expressions are pure, so dropping them never loses an effect. Returns an empty SeqStmt
/// when nothing remains, and `s` itself when nothing was removed.
Stmt removeNoOp(const Stmt& s);

/// removeNoOp on the body; `f` itself when nothing was removed.
PrimFunc removeNoOp(const PrimFunc& f);

}  // namespace tessel
