// Read-only traversal of the loop IR; recurses into every child by default.
#pragma once

#include <functional>

#include "core/ir/Stmt.h"

namespace tessel {

/// Visits expressions and statements. Override visit() for the node kinds a pass cares
/// about and call the base version to keep recursing into children.
class IRVisitor {
public:
  virtual ~IRVisitor() = default;
  virtual void visitExpr(const Expr& e);
  virtual void visitStmt(const Stmt& s);
  /// Buffers are not visited by default; a pass that tracks buffer uses overrides this.
  virtual void visitBuffer(const Buffer& buffer) {}

#define TESSEL_VISITOR_METHOD(Name) virtual void visit(const Name##Node* node);
  TESSEL_EXPR_NODES(TESSEL_VISITOR_METHOD)
  TESSEL_STMT_NODES(TESSEL_VISITOR_METHOD)
#undef TESSEL_VISITOR_METHOD
};

/// Calls `f` on every expression node in `e` / `s`, children before parents.
void postOrderVisit(const Expr& e, const std::function<void(const Expr&)>& f);
void postOrderVisit(const Stmt& s, const std::function<void(const Expr&)>& f);

}  // namespace tessel
