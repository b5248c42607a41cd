// Exact expression equality and size, generated from each node's fields() tuple.
#include "compiler/arith/ExprEqual.h"

#include <tuple>
#include <type_traits>
#include <utility>

#include "core/ir/IRVisitor.h"

namespace tessel {

namespace {

class ExactEqual {
public:
  bool equal(const Expr& a, const Expr& b) {
    if (a.same(b)) return true;
    if (!a.defined() || !b.defined() || a->kind() != b->kind() || a.dtype() != b.dtype()) return false;
    if (a->kind() == NodeKind::Var) return false;  // distinct variable nodes are distinct variables
    switch (a->kind()) {
#define TESSEL_EQUAL_CASE(Name)                                                   \
  case NodeKind::Name:                                                            \
    return fieldsEqual(static_cast<const Name##Node*>(a.get())->fields(),        \
                       static_cast<const Name##Node*>(b.get())->fields());
      TESSEL_EXPR_NODES(TESSEL_EQUAL_CASE)
#undef TESSEL_EQUAL_CASE
      default: return false;
    }
  }

private:
  template <class Tuple>
  bool fieldsEqual(const Tuple& x, const Tuple& y) {
    return [&]<size_t... I>(std::index_sequence<I...>) {
      return (field(std::get<I>(x), std::get<I>(y)) && ...);
    }(std::make_index_sequence<std::tuple_size_v<Tuple>>());
  }

  bool field(const Expr& x, const Expr& y) { return equal(x, y); }
  // Buffers, iteration variables and binding variables are compared by identity.
  bool field(const NodeHandle& x, const NodeHandle& y) { return x.same(y); }
  template <class T>
  bool field(const std::vector<T>& x, const std::vector<T>& y) {
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (!field(x[i], y[i])) return false;
    return true;
  }
  template <class T>
    requires(!std::is_base_of_v<NodeHandle, T>)
  bool field(const T& x, const T& y) { return x == y; }
};

}  // namespace

bool exprEqual(const Expr& a, const Expr& b) { return ExactEqual().equal(a, b); }

size_t exprSize(const Expr& e, size_t limit) {
  if (!e.defined()) return 0;
  // A visitor that stops descending once the limit is reached.
  class Counter : public IRVisitor {
  public:
    explicit Counter(size_t limit) : limit_(limit) {}
    size_t count = 0;
    void visitExpr(const Expr& e) override {
      if (count >= limit_) return;
      ++count;
      IRVisitor::visitExpr(e);
    }

  private:
    size_t limit_;
  } counter(limit);
  counter.visitExpr(e);
  return counter.count;
}

}  // namespace tessel
