// Loop vectorization (see VectorizeLoops.h).
#include "compiler/transform/VectorizeLoops.h"

#include <type_traits>

#include "compiler/transform/IndexArithmetic.h"
#include "core/ir/IRMutator.h"
#include "core/ir/IRVisitor.h"

namespace tessel {

namespace {

bool containsVector(const Stmt& s) {
  bool found = false;
  postOrderVisit(s, [&](const Expr& e) { found = found || e.dtype().isVector(); });
  return found;
}

// Rewrites the body of one vectorized loop so every lane-dependent value is an n-lane
// vector. Gives up (failed()) on anything that has no lane-wise meaning; the caller then
// keeps the loop serial, so the result of a failed run is never used.
class BodyWidener : public IRMutator {
public:
  BodyWidener(const Var& loopVar, Expr ramp, int lanes) : lanes_(lanes) { map_[loopVar.get()] = std::move(ramp); }
  bool failed() const { return failed_; }
  using IRMutator::mutate;

  Expr mutate(const Expr& e) override { return failed_ ? e : IRMutator::mutate(e); }
  Stmt mutate(const Stmt& s) override { return failed_ ? s : IRMutator::mutate(s); }

protected:
  using IRMutator::visit;

  Expr visit(const VarNode* node, const Expr& self) override {
    auto it = map_.find(node);
    return it == map_.end() ? self : it->second;
  }

#define TESSEL_WIDEN_BINARY(Name)                                     \
  Expr visit(const Name##Node* node, const Expr& self) override {    \
    Expr a = mutate(node->a), b = mutate(node->b);                    \
    if (a.same(node->a) && b.same(node->b)) return self;              \
    return widenBinary<Name##Node>(std::move(a), std::move(b));       \
  }
  TESSEL_BINARY_NODES(TESSEL_WIDEN_BINARY)
#undef TESSEL_WIDEN_BINARY

  Expr visit(const SelectNode* node, const Expr& self) override {
    Expr condition = mutate(node->condition);
    Expr trueValue = mutate(node->trueValue), falseValue = mutate(node->falseValue);
    if (condition.same(node->condition) && trueValue.same(node->trueValue) && falseValue.same(node->falseValue))
      return self;
    if (condition.dtype().isVector() || trueValue.dtype().isVector() || falseValue.dtype().isVector()) {
      trueValue = broadcastTo(trueValue, lanes_);
      falseValue = broadcastTo(falseValue, lanes_);
    }
    return SelectNode::make(condition, trueValue, falseValue);
  }

  Expr visit(const CastNode* node, const Expr& self) override {
    Expr value = mutate(node->value);
    if (value.same(node->value)) return self;
    return CastNode::make(node->dtype.withLanes(value.dtype().lanes()), value);
  }

  Expr visit(const CallNode* node, const Expr& self) override {
    bool changed = false;
    auto args = mutateAll(node->args, &changed);
    if (!changed) return self;
    bool vector = false;
    for (auto& arg : args) vector = vector || arg.dtype().isVector();
    if (!vector) return CallNode::make(node->dtype, node->op, std::move(args));
    for (auto& arg : args) arg = broadcastTo(arg, lanes_);
    return CallNode::make(node->dtype.withLanes(lanes_), node->op, std::move(args));
  }

  Expr visit(const LetNode* node, const Expr& self) override {
    Expr value = mutate(node->value);
    Var var = rebind(node->var, value);
    Expr body = mutate(node->body);
    if (value.same(node->value) && body.same(node->body)) return self;
    return LetNode::make(var, value, body);
  }

  Expr visit(const ReduceNode* node, const Expr& self) override { return fail(self); }

  Stmt visit(const ForNode* node, const Stmt& self) override { return fail(self); }
  Stmt visit(const AllocateNode* node, const Stmt& self) override { return fail(self); }
  Stmt visit(const BufferRealizeNode* node, const Stmt& self) override { return fail(self); }

  Stmt visit(const IfThenElseNode* node, const Stmt& self) override {
    Expr condition = mutate(node->condition);
    if (condition.dtype().isVector()) return fail(self);
    Stmt thenCase = mutate(node->thenCase), elseCase = mutate(node->elseCase);
    if (condition.same(node->condition) && thenCase.same(node->thenCase) && elseCase.same(node->elseCase))
      return self;
    return IfThenElseNode::make(condition, thenCase, elseCase);
  }

  Stmt visit(const AttrStmtNode* node, const Stmt& self) override {
    Expr value = mutate(node->value);
    if (value.dtype().isVector()) return fail(self);
    Stmt body = mutate(node->body);
    if (value.same(node->value) && body.same(node->body)) return self;
    return AttrStmtNode::make(node->key, value, body);
  }

  Stmt visit(const LetStmtNode* node, const Stmt& self) override {
    Expr value = mutate(node->value);
    Var var = rebind(node->var, value);
    Stmt body = mutate(node->body);
    if (value.same(node->value) && body.same(node->body)) return self;
    return LetStmtNode::make(var, value, body);
  }

  Stmt visit(const BufferStoreNode* node, const Stmt& self) override {
    bool changed = false;
    Expr value = mutate(node->value);
    auto indices = mutateAll(node->indices, &changed);
    if (!changed && value.same(node->value)) return self;
    bool vectorIndex = false;
    for (auto& index : indices) vectorIndex = vectorIndex || index.dtype().isVector();
    // Every lane would write one location: no lane-wise meaning.
    if (!vectorIndex && value.dtype().isVector()) return fail(self);
    if (vectorIndex) value = broadcastTo(value, lanes_);
    return BufferStoreNode::make(node->buffer, value, std::move(indices));
  }

private:
  template <class NodeT>
  Expr widenBinary(Expr a, Expr b) {
    constexpr bool indexArithmetic = std::is_same_v<NodeT, AddNode> || std::is_same_v<NodeT, SubNode> ||
                                     std::is_same_v<NodeT, MulNode>;
    if constexpr (indexArithmetic) {
      if (a.dtype().element().isIntegral()) {
        if constexpr (std::is_same_v<NodeT, AddNode>) return addIndex(a, b);
        if constexpr (std::is_same_v<NodeT, SubNode>) return subIndex(a, b);
        if constexpr (std::is_same_v<NodeT, MulNode>) return mulIndex(a, b);
      }
    }
    if (a.dtype().lanes() != b.dtype().lanes()) {
      a = broadcastTo(a, lanes_);
      b = broadcastTo(b, lanes_);
    }
    return NodeT::make(a, b);
  }

  // A let whose value became a vector needs a variable of the vector type.
  Var rebind(const Var& var, const Expr& value) {
    if (value.dtype() == var.dtype()) return var;
    Var widened(var.name(), value.dtype());
    map_[var.get()] = widened;
    return widened;
  }

  template <class T>
  T fail(const T& self) {
    failed_ = true;
    return self;
  }

  int lanes_;
  bool failed_ = false;
  VarMap map_;
};

class LoopVectorizer : public IRMutator {
public:
  using IRMutator::mutate;

protected:
  using IRMutator::visit;

  Stmt visit(const ForNode* node, const Stmt& self) override {
    // Inner loops first: a vectorized loop inside another leaves vectors the outer one
    // then refuses to widen again.
    Stmt loop = IRMutator::visit(node, self);
    if (node->forKind != ForKind::Vectorized) return loop;
    auto* rewritten = loop.as<ForNode>();
    const int64_t* extent = asConstInt(rewritten->extent);
    if (!extent || *extent < 1 || *extent > kMaxVectorLanes) return serial(rewritten);
    if (*extent == 1) return substituteAndFold(rewritten->body, VarMap{{rewritten->loopVar.get(), rewritten->min}});
    if (containsVector(rewritten->body)) return serial(rewritten);
    int lanes = static_cast<int>(*extent);
    Expr ramp = RampNode::make(rewritten->min, IntImmNode::make(rewritten->loopVar.dtype(), 1), lanes);
    BodyWidener widener(rewritten->loopVar, ramp, lanes);
    Stmt widened = widener.mutate(rewritten->body);
    if (widener.failed()) return serial(rewritten);
    return widened;
  }

private:
  static Stmt serial(const ForNode* loop) {
    return ForNode::make(loop->loopVar, loop->min, loop->extent, ForKind::Serial, loop->body, loop->threadTag);
  }
};

}  // namespace

PrimFunc vectorizeLoops(const PrimFunc& f) {
  Stmt body = LoopVectorizer().mutate(f->body);
  if (body.same(f->body)) return f;
  return PrimFunc(f->name, f->params, body);
}

}  // namespace tessel
