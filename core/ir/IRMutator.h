// Rewriting traversal of the loop IR; returns the same handle when nothing changed.
#pragma once

#include <functional>
#include <unordered_map>

#include "core/ir/Stmt.h"

namespace tessel {

/// Rebuilds expressions and statements bottom-up. Override visit() for the node kinds a
/// pass rewrites; the defaults mutate children and rebuild a node only if one changed.
class IRMutator {
public:
  virtual ~IRMutator() = default;
  virtual Expr mutate(const Expr& e);
  virtual Stmt mutate(const Stmt& s);

protected:
  std::vector<Expr> mutateAll(const std::vector<Expr>& exprs, bool* changed);
  Range mutateRange(const Range& range, bool* changed);

#define TESSEL_MUTATOR_EXPR_METHOD(Name) virtual Expr visit(const Name##Node* node, const Expr& self);
  TESSEL_EXPR_NODES(TESSEL_MUTATOR_EXPR_METHOD)
#undef TESSEL_MUTATOR_EXPR_METHOD
#define TESSEL_MUTATOR_STMT_METHOD(Name) virtual Stmt visit(const Name##Node* node, const Stmt& self);
  TESSEL_STMT_NODES(TESSEL_MUTATOR_STMT_METHOD)
#undef TESSEL_MUTATOR_STMT_METHOD
};

/// Replaces variables by expressions (by identity of the variable node).
using VarMap = std::unordered_map<const VarNode*, Expr>;
Expr substitute(const Expr& e, const VarMap& map);
Stmt substitute(const Stmt& s, const VarMap& map);

/// Points every load and store of buffer `from` at buffer `to`, same indices (for cache
/// stages that take over a tensor's reads, and buffers re-made with other strides).
Expr replaceBuffer(const Expr& e, const Buffer& from, const Buffer& to);
Stmt replaceBuffer(const Stmt& s, const Buffer& from, const Buffer& to);

/// True when `e` / `s` mentions any variable for which `uses` returns true.
bool usesVar(const Expr& e, const std::function<bool(const VarNode*)>& uses);
bool usesVar(const Stmt& s, const std::function<bool(const VarNode*)>& uses);
inline bool usesVar(const Expr& e, const Var& v) {
  return usesVar(e, [&](const VarNode* n) { return n == v.get(); });
}

}  // namespace tessel
