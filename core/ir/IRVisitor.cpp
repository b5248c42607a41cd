// Default traversal for IRVisitor, derived from each node's fields().
#include "core/ir/IRVisitor.h"

#include <functional>

namespace tessel {

namespace {
// Walks one field of a node: sub-expressions and statements are visited, the rest skipped.
struct FieldWalker {
  IRVisitor* visitor;
  // A Var field is a binding site (loop variable, let variable), not a use.
  void operator()(const Var&) const {}
  void operator()(const Expr& e) const { if (e.defined()) visitor->visitExpr(e); }
  void operator()(const Stmt& s) const { if (s.defined()) visitor->visitStmt(s); }
  void operator()(const Buffer& b) const { if (b.defined()) visitor->visitBuffer(b); }
  void operator()(const Range& r) const { (*this)(r.min); (*this)(r.extent); }
  void operator()(const IterVar& iv) const { (*this)(iv.dom()); }
  template <class T>
  void operator()(const std::vector<T>& items) const { for (auto& item : items) (*this)(item); }
  template <class T>
    requires(!std::is_base_of_v<NodeHandle, T>)
  void operator()(const T&) const {}
};

template <class NodeT>
void walkFields(IRVisitor* visitor, const NodeT* node) {
  std::apply([&](const auto&... field) { (FieldWalker{visitor}(field), ...); }, node->fields());
}
}  // namespace

void IRVisitor::visitExpr(const Expr& e) {
  switch (e->kind()) {
#define TESSEL_DISPATCH(Name) \
  case NodeKind::Name: return visit(static_cast<const Name##Node*>(e.get()));
    TESSEL_EXPR_NODES(TESSEL_DISPATCH)
#undef TESSEL_DISPATCH
    default: break;
  }
}

void IRVisitor::visitStmt(const Stmt& s) {
  switch (s->kind()) {
#define TESSEL_DISPATCH(Name) \
  case NodeKind::Name: return visit(static_cast<const Name##Node*>(s.get()));
    TESSEL_STMT_NODES(TESSEL_DISPATCH)
#undef TESSEL_DISPATCH
    default: break;
  }
}

#define TESSEL_VISITOR_DEFAULT(Name) \
  void IRVisitor::visit(const Name##Node* node) { walkFields(this, node); }
TESSEL_EXPR_NODES(TESSEL_VISITOR_DEFAULT)
TESSEL_STMT_NODES(TESSEL_VISITOR_DEFAULT)
#undef TESSEL_VISITOR_DEFAULT

namespace {
class FunctionVisitor : public IRVisitor {
public:
  explicit FunctionVisitor(const std::function<void(const Expr&)>& f) : f_(f) {}
  void visitExpr(const Expr& e) override {
    IRVisitor::visitExpr(e);
    f_(e);
  }

private:
  const std::function<void(const Expr&)>& f_;
};
}  // namespace

void postOrderVisit(const Expr& e, const std::function<void(const Expr&)>& f) {
  FunctionVisitor visitor(f);
  visitor.visitExpr(e);
}
void postOrderVisit(const Stmt& s, const std::function<void(const Expr&)>& f) {
  FunctionVisitor visitor(f);
  visitor.visitStmt(s);
}

}  // namespace tessel
