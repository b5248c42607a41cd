// The statement simplifier: an IRMutator that keeps an Analyzer in step with the loop nest.
#include "compiler/arith/Simplify.h"

#include "compiler/arith/Analyzer.h"
#include "core/ir/IRMutator.h"
#include "core/ir/IROperators.h"
#include "core/ir/IRVisitor.h"

#include <unordered_set>

namespace tessel {

namespace {

// An empty sequence: the statement that does nothing.
Stmt noOp() { return SeqStmtNode::make({}); }

bool isNoOp(const Stmt& s) {
  if (!s.defined()) return true;
  if (auto* seq = s.as<SeqStmtNode>()) return seq->seq.empty();
  if (auto* evaluate = s.as<EvaluateNode>()) return asConstInt(evaluate->value) || evaluate->value.as<FloatImmNode>();
  return false;
}

// Whether `s` mentions `var` anywhere, buffer shapes and strides included (substitute()
// and usesVar() do not look into buffers, but an allocation inside a loop may be sized by
// the loop's variable).
bool mentionsVar(const Stmt& s, const VarNode* var) {
  class Finder : public IRVisitor {
  public:
    explicit Finder(const VarNode* var) : var_(var) {}
    bool found = false;
    void visit(const VarNode* node) override { found = found || node == var_; }
    void visitBuffer(const Buffer& buffer) override {
      if (found || !seen_.insert(buffer.get()).second) return;
      for (auto& e : buffer.shape()) if (e.defined()) visitExpr(e);
      for (auto& e : buffer->strides) if (e.defined()) visitExpr(e);
    }
    using IRVisitor::visit;

  private:
    const VarNode* var_;
    std::unordered_set<const BufferNode*> seen_;
  } finder(var);
  finder.visitStmt(s);
  return finder.found;
}

std::optional<bool> constantCondition(const Expr& condition) {
  if (const int64_t* value = asConstInt(condition)) return *value != 0;
  return std::nullopt;
}

class StmtSimplifier : public IRMutator {
public:
  using IRMutator::mutate;
  Expr mutate(const Expr& e) override { return analyzer_.simplify(e); }

protected:
  using IRMutator::visit;

  Stmt visit(const ForNode* node, const Stmt& self) override {
    Expr min = mutate(node->min), extent = mutate(node->extent);
    const int64_t* constantExtent = asConstInt(extent);
    if (constantExtent && *constantExtent <= 0) return noOp();
    if (!constantExtent && extent.dtype().isInt() && analyzer_.canProve(extent <= 0)) return noOp();
    if (constantExtent && *constantExtent == 1 && node->forKind != ForKind::ThreadBinding) {
      Stmt body = substitute(node->body, {{node->loopVar.get(), min}});
      // A buffer sized by the variable still needs it defined: keep it as a let.
      if (mentionsVar(body, node->loopVar.get())) body = LetStmtNode::make(node->loopVar, min, body);
      return mutate(body);
    }
    Range range = Range::fromMinExtent(min, extent);
    analyzer_.bind(node->loopVar, range);
    auto outer = loops_.find(node->loopVar.get()) != loops_.end() ? std::optional(loops_[node->loopVar.get()]) : std::nullopt;
    loops_[node->loopVar.get()] = {node->loopVar, range};
    Stmt body = mutate(node->body);
    if (outer) loops_[node->loopVar.get()] = *outer;
    else loops_.erase(node->loopVar.get());
    analyzer_.unbind(node->loopVar);
    if (isNoOp(body)) return noOp();
    if (min.same(node->min) && extent.same(node->extent) && body.same(node->body)) return self;
    return ForNode::make(node->loopVar, min, extent, node->forKind, body, node->threadTag);
  }

  Stmt visit(const IfThenElseNode* node, const Stmt& self) override {
    Expr condition = mutate(node->condition);
    auto taken = constantCondition(condition);
    // Simplification decides most conditions; proofs through symbolic loop ranges (a tail
    // test i < n inside a loop over [0, n)) need the analyzer's stronger canProve.
    if (!taken && analyzer_.canProve(condition)) taken = true;
    if (!taken && analyzer_.canProve(!condition)) taken = false;
    if (taken) {
      if (*taken) return mutate(node->thenCase);
      return node->elseCase.defined() ? mutate(node->elseCase) : noOp();
    }
    Stmt thenCase = mutateWhere(condition, true, node->thenCase);
    Stmt elseCase = node->elseCase.defined() ? mutateWhere(condition, false, node->elseCase) : Stmt();
    if (elseCase.defined() && isNoOp(elseCase)) elseCase = Stmt();
    if (isNoOp(thenCase) && !elseCase.defined()) return noOp();
    if (condition.same(node->condition) && thenCase.same(node->thenCase) && elseCase.same(node->elseCase))
      return self;
    return IfThenElseNode::make(condition, thenCase, elseCase);
  }

  Stmt visit(const LetStmtNode* node, const Stmt& self) override {
    Expr value = mutate(node->value);
    analyzer_.bind(node->var, value);
    Stmt body = mutate(node->body);
    analyzer_.unbind(node->var);
    // Values are pure: a let nobody reads can go.
    if (!mentionsVar(body, node->var.get())) return body;
    if (value.same(node->value) && body.same(node->body)) return self;
    return LetStmtNode::make(node->var, value, body);
  }

  Stmt visit(const SeqStmtNode* node, const Stmt& self) override {
    bool changed = false;
    std::vector<Stmt> seq;
    for (auto& s : node->seq) {
      Stmt simplified = mutate(s);
      if (!simplified.same(s)) changed = true;
      if (isNoOp(simplified)) {
        changed = true;
        continue;
      }
      seq.push_back(simplified);
    }
    if (!changed) return self;
    return SeqStmtNode::make(std::move(seq));
  }

  Stmt visit(const EvaluateNode* node, const Stmt& self) override {
    Expr value = mutate(node->value);
    if (asConstInt(value) || value.as<FloatImmNode>()) return noOp();
    return value.same(node->value) ? self : EvaluateNode::make(value);
  }

  Stmt visit(const AllocateNode* node, const Stmt& self) override {
    Stmt body = mutate(node->body);
    if (isNoOp(body)) return noOp();
    return body.same(node->body) ? self : AllocateNode::make(node->buffer, body);
  }

  Stmt visit(const AttrStmtNode* node, const Stmt& self) override {
    Expr value = mutate(node->value);
    Stmt body = mutate(node->body);
    if (isNoOp(body)) return noOp();
    if (value.same(node->value) && body.same(node->body)) return self;
    return AttrStmtNode::make(node->key, value, body);
  }

private:
  using LoopRange = std::pair<Var, Range>;

  // Simplifies a branch knowing that `condition` is `holds` there: comparisons of loop
  // variables narrow their ranges (in the then-branch of if (i < e), i lies in
  // [min, min(min + extent, e))), so checks repeated inside the branch are decided.
  Stmt mutateWhere(const Expr& condition, bool holds, const Stmt& branch) {
    std::vector<LoopRange> saved;
    narrow(condition, holds, saved);
    Stmt result = mutate(branch);
    for (auto it = saved.rbegin(); it != saved.rend(); ++it) {
      analyzer_.unbind(it->first);
      loops_[it->first.get()] = *it;
    }
    return result;
  }

  // Binds the narrowed ranges implied by `condition` being `holds`, recording the ranges
  // they replace in `saved`.
  void narrow(const Expr& condition, bool holds, std::vector<LoopRange>& saved) {
    if (auto* call = condition.as<CallNode>(); call && call->op == Intrinsic::Likely && call->args.size() == 1)
      return narrow(call->args[0], holds, saved);
    if (auto* n = condition.as<NotNode>()) return narrow(n->a, !holds, saved);
    if (auto* n = condition.as<AndNode>(); n && holds) {
      narrow(n->a, true, saved);
      return narrow(n->b, true, saved);
    }
    if (auto* n = condition.as<OrNode>(); n && !holds) {
      narrow(n->a, false, saved);
      return narrow(n->b, false, saved);
    }
    NodeKind kind;
    Expr a, b;
    switch (condition->kind()) {
#define TESSEL_COMPARISON(Name)                     \
  case NodeKind::Name:                              \
    kind = NodeKind::Name;                          \
    a = condition.as<Name##Node>()->a;              \
    b = condition.as<Name##Node>()->b;              \
    break;
      TESSEL_COMPARISON(LT) TESSEL_COMPARISON(LE) TESSEL_COMPARISON(GT) TESSEL_COMPARISON(GE)
      TESSEL_COMPARISON(EQ) TESSEL_COMPARISON(NE)
#undef TESSEL_COMPARISON
      default: return;
    }
    if (!a.dtype().isInt() || !a.dtype().isScalar()) return;
    // Put the loop variable on the left: e > i is i < e.
    if (!a.as<VarNode>() || !loops_.count(a.as<VarNode>())) {
      std::swap(a, b);
      kind = kind == NodeKind::LT ? NodeKind::GT : kind == NodeKind::GT ? NodeKind::LT
           : kind == NodeKind::LE ? NodeKind::GE : kind == NodeKind::GE ? NodeKind::LE : kind;
    }
    auto* var = a.as<VarNode>();
    if (!var || !loops_.count(var)) return;
    if (usesVar(b, [var](const VarNode* used) { return used == var; })) return;
    if (!holds) {
      kind = kind == NodeKind::LT ? NodeKind::GE : kind == NodeKind::GE ? NodeKind::LT
           : kind == NodeKind::LE ? NodeKind::GT : kind == NodeKind::GT ? NodeKind::LE
           : kind == NodeKind::EQ ? NodeKind::NE : NodeKind::EQ;
    }
    auto [loopVar, range] = loops_[var];
    Expr end = range.min + range.extent;
    Range narrowed;
    switch (kind) {
      case NodeKind::LT: narrowed = {range.min, min(range.extent, b - range.min)}; break;
      case NodeKind::LE: narrowed = {range.min, min(range.extent, b + 1 - range.min)}; break;
      case NodeKind::GE: narrowed = {max(range.min, b), end - max(range.min, b)}; break;
      case NodeKind::GT: narrowed = {max(range.min, b + 1), end - max(range.min, b + 1)}; break;
      case NodeKind::EQ: narrowed = {b, makeConst(b.dtype(), 1)}; break;
      default: return;  // i != e says nothing about a range
    }
    narrowed = {analyzer_.simplify(narrowed.min), analyzer_.simplify(narrowed.extent)};
    saved.push_back(loops_[var]);
    loops_[var] = {loopVar, narrowed};
    analyzer_.bind(loopVar, narrowed);
  }

  Analyzer analyzer_;
  // The loops being walked, with their ranges as narrowed by enclosing branches.
  std::unordered_map<const VarNode*, LoopRange> loops_;
};

}  // namespace

Expr simplify(const Expr& e) {
  Analyzer analyzer;
  return analyzer.simplify(e);
}

Stmt simplify(const Stmt& s) {
  if (!s.defined()) return s;
  return StmtSimplifier().mutate(s);
}

PrimFunc simplify(const PrimFunc& f) {
  if (!f.defined()) return f;
  Stmt body = simplify(f->body);
  if (body.same(f->body)) return f;
  return PrimFunc(f->name, f->params, body);
}

}  // namespace tessel
