// Default rebuilding for IRMutator, plus substitution built on it.
#include "core/ir/IRMutator.h"

#include "core/ir/IRVisitor.h"

namespace tessel {

Expr IRMutator::mutate(const Expr& e) {
  if (!e.defined()) return e;
  switch (e->kind()) {
#define TESSEL_DISPATCH(Name) \
  case NodeKind::Name: return visit(static_cast<const Name##Node*>(e.get()), e);
    TESSEL_EXPR_NODES(TESSEL_DISPATCH)
#undef TESSEL_DISPATCH
    default: return e;
  }
}

Stmt IRMutator::mutate(const Stmt& s) {
  if (!s.defined()) return s;
  switch (s->kind()) {
#define TESSEL_DISPATCH(Name) \
  case NodeKind::Name: return visit(static_cast<const Name##Node*>(s.get()), s);
    TESSEL_STMT_NODES(TESSEL_DISPATCH)
#undef TESSEL_DISPATCH
    default: return s;
  }
}

std::vector<Expr> IRMutator::mutateAll(const std::vector<Expr>& exprs, bool* changed) {
  std::vector<Expr> out;
  out.reserve(exprs.size());
  for (auto& e : exprs) {
    out.push_back(mutate(e));
    if (!out.back().same(e)) *changed = true;
  }
  return out;
}

Range IRMutator::mutateRange(const Range& range, bool* changed) {
  Range out{mutate(range.min), mutate(range.extent)};
  if (!out.min.same(range.min) || !out.extent.same(range.extent)) *changed = true;
  return out;
}

Expr IRMutator::visit(const IntImmNode*, const Expr& self) { return self; }
Expr IRMutator::visit(const FloatImmNode*, const Expr& self) { return self; }
Expr IRMutator::visit(const VarNode*, const Expr& self) { return self; }

// Binary nodes rebuild through their make(); operand types already match.
#define TESSEL_MUTATE_BINARY(Name)                                   \
  Expr IRMutator::visit(const Name##Node* node, const Expr& self) { \
    Expr a = mutate(node->a), b = mutate(node->b);                   \
    if (a.same(node->a) && b.same(node->b)) return self;             \
    return Name##Node::make(a, b);                                   \
  }
TESSEL_BINARY_NODES(TESSEL_MUTATE_BINARY)
#undef TESSEL_MUTATE_BINARY

Expr IRMutator::visit(const NotNode* node, const Expr& self) {
  Expr a = mutate(node->a);
  return a.same(node->a) ? self : NotNode::make(a);
}

Expr IRMutator::visit(const SelectNode* node, const Expr& self) {
  Expr c = mutate(node->condition), t = mutate(node->trueValue), f = mutate(node->falseValue);
  if (c.same(node->condition) && t.same(node->trueValue) && f.same(node->falseValue)) return self;
  return SelectNode::make(c, t, f);
}

Expr IRMutator::visit(const CastNode* node, const Expr& self) {
  Expr v = mutate(node->value);
  return v.same(node->value) ? self : CastNode::make(node->dtype, v);
}

Expr IRMutator::visit(const CallNode* node, const Expr& self) {
  bool changed = false;
  auto args = mutateAll(node->args, &changed);
  if (!changed) return self;
  DataType dtype = node->dtype;
  int oldLanes = node->args[0].dtype().lanes(), newLanes = args[0].dtype().lanes();
  if (node->op == Intrinsic::Reinterpret) {
    // Its lanes differ from its operand's by design (uint8x4 -> int32): widening the operand
    // widens the result in proportion.
    if (newLanes != oldLanes && dtype.lanes() * newLanes % oldLanes == 0)
      dtype = dtype.withLanes(dtype.lanes() * newLanes / oldLanes);
  } else if (newLanes != dtype.lanes()) {
    dtype = dtype.withLanes(newLanes);
  }
  return CallNode::make(dtype, node->op, std::move(args));
}

Expr IRMutator::visit(const BufferLoadNode* node, const Expr& self) {
  bool changed = false;
  auto indices = mutateAll(node->indices, &changed);
  return changed ? BufferLoadNode::make(node->buffer, std::move(indices)) : self;
}

Expr IRMutator::visit(const RampNode* node, const Expr& self) {
  Expr base = mutate(node->base), stride = mutate(node->stride);
  if (base.same(node->base) && stride.same(node->stride)) return self;
  return RampNode::make(base, stride, node->lanes);
}

Expr IRMutator::visit(const BroadcastNode* node, const Expr& self) {
  Expr value = mutate(node->value);
  return value.same(node->value) ? self : BroadcastNode::make(value, node->lanes);
}

Expr IRMutator::visit(const LetNode* node, const Expr& self) {
  Expr value = mutate(node->value), body = mutate(node->body);
  if (value.same(node->value) && body.same(node->body)) return self;
  return LetNode::make(node->var, value, body);
}

Expr IRMutator::visit(const ReduceNode* node, const Expr& self) {
  Expr source = mutate(node->source), condition = mutate(node->condition);
  if (source.same(node->source) && condition.same(node->condition)) return self;
  return ReduceNode::make(node->reducer, source, node->axes, condition);
}

Stmt IRMutator::visit(const ForNode* node, const Stmt& self) {
  Expr min = mutate(node->min), extent = mutate(node->extent);
  Stmt body = mutate(node->body);
  if (min.same(node->min) && extent.same(node->extent) && body.same(node->body)) return self;
  return ForNode::make(node->loopVar, min, extent, node->forKind, body, node->threadTag);
}

Stmt IRMutator::visit(const AllocateNode* node, const Stmt& self) {
  Stmt body = mutate(node->body);
  return body.same(node->body) ? self : AllocateNode::make(node->buffer, body);
}

Stmt IRMutator::visit(const IfThenElseNode* node, const Stmt& self) {
  Expr condition = mutate(node->condition);
  Stmt thenCase = mutate(node->thenCase), elseCase = mutate(node->elseCase);
  if (condition.same(node->condition) && thenCase.same(node->thenCase) && elseCase.same(node->elseCase))
    return self;
  return IfThenElseNode::make(condition, thenCase, elseCase);
}

Stmt IRMutator::visit(const SeqStmtNode* node, const Stmt& self) {
  bool changed = false;
  std::vector<Stmt> seq;
  seq.reserve(node->seq.size());
  for (auto& s : node->seq) {
    seq.push_back(mutate(s));
    if (!seq.back().same(s)) changed = true;
  }
  return changed ? SeqStmtNode::make(std::move(seq)) : self;
}

Stmt IRMutator::visit(const LetStmtNode* node, const Stmt& self) {
  Expr value = mutate(node->value);
  Stmt body = mutate(node->body);
  if (value.same(node->value) && body.same(node->body)) return self;
  return LetStmtNode::make(node->var, value, body);
}

Stmt IRMutator::visit(const EvaluateNode* node, const Stmt& self) {
  Expr value = mutate(node->value);
  return value.same(node->value) ? self : EvaluateNode::make(value);
}

Stmt IRMutator::visit(const AttrStmtNode* node, const Stmt& self) {
  Expr value = mutate(node->value);
  Stmt body = mutate(node->body);
  if (value.same(node->value) && body.same(node->body)) return self;
  return AttrStmtNode::make(node->key, value, body);
}

Stmt IRMutator::visit(const BufferStoreNode* node, const Stmt& self) {
  bool changed = false;
  Expr value = mutate(node->value);
  if (!value.same(node->value)) changed = true;
  auto indices = mutateAll(node->indices, &changed);
  return changed ? BufferStoreNode::make(node->buffer, value, std::move(indices)) : self;
}

Stmt IRMutator::visit(const BufferRealizeNode* node, const Stmt& self) {
  bool changed = false;
  std::vector<Range> bounds;
  for (auto& r : node->bounds) bounds.push_back(mutateRange(r, &changed));
  Stmt body = mutate(node->body);
  if (!body.same(node->body)) changed = true;
  return changed ? BufferRealizeNode::make(node->buffer, std::move(bounds), body) : self;
}

namespace {
class Substituter : public IRMutator {
public:
  explicit Substituter(const VarMap& map) : map_(map) {}
  using IRMutator::mutate;

protected:
  Expr visit(const VarNode* node, const Expr& self) override {
    auto it = map_.find(node);
    return it == map_.end() ? self : it->second;
  }
  using IRMutator::visit;

private:
  const VarMap& map_;
};
}  // namespace

Expr substitute(const Expr& e, const VarMap& map) {
  if (map.empty()) return e;
  return Substituter(map).mutate(e);
}
Stmt substitute(const Stmt& s, const VarMap& map) {
  if (map.empty()) return s;
  return Substituter(map).mutate(s);
}

namespace {
class BufferReplacer : public IRMutator {
public:
  BufferReplacer(const Buffer& from, const Buffer& to) : from_(from), to_(to) {}
  using IRMutator::mutate;

protected:
  using IRMutator::visit;
  Expr visit(const BufferLoadNode* node, const Expr& self) override {
    Expr e = IRMutator::visit(node, self);
    auto* load = e.as<BufferLoadNode>();
    return load->buffer.same(from_) ? BufferLoadNode::make(to_, load->indices) : e;
  }
  Stmt visit(const BufferStoreNode* node, const Stmt& self) override {
    Stmt s = IRMutator::visit(node, self);
    auto* store = s.as<BufferStoreNode>();
    return store->buffer.same(from_) ? BufferStoreNode::make(to_, store->value, store->indices) : s;
  }

private:
  const Buffer& from_;
  const Buffer& to_;
};
}  // namespace

Expr replaceBuffer(const Expr& e, const Buffer& from, const Buffer& to) { return BufferReplacer(from, to).mutate(e); }
Stmt replaceBuffer(const Stmt& s, const Buffer& from, const Buffer& to) { return BufferReplacer(from, to).mutate(s); }

namespace {
class VarUseFinder : public IRVisitor {
public:
  explicit VarUseFinder(const std::function<bool(const VarNode*)>& uses) : uses_(uses) {}
  bool found = false;
  void visit(const VarNode* node) override { found = found || uses_(node); }
  using IRVisitor::visit;

private:
  const std::function<bool(const VarNode*)>& uses_;
};
}  // namespace

bool usesVar(const Expr& e, const std::function<bool(const VarNode*)>& uses) {
  VarUseFinder finder(uses);
  if (e.defined()) finder.visitExpr(e);
  return finder.found;
}
bool usesVar(const Stmt& s, const std::function<bool(const VarNode*)>& uses) {
  VarUseFinder finder(uses);
  if (s.defined()) finder.visitStmt(s);
  return finder.found;
}

}  // namespace tessel
