// Removal of no-op statements (see RemoveNoOp.h).
#include "compiler/transform/RemoveNoOp.h"

#include "core/ir/IRMutator.h"
#include "core/ir/IROperators.h"

namespace tessel {

bool isNoOp(const Stmt& s) {
  if (!s.defined()) return true;
  if (auto* seq = s.as<SeqStmtNode>()) return seq->seq.empty();
  if (auto* evaluate = s.as<EvaluateNode>())
    return evaluate->value.as<IntImmNode>() || evaluate->value.as<FloatImmNode>();
  return false;
}

namespace {

Stmt emptySequence() { return SeqStmtNode::make({}); }

// Rebuilds bottom-up; a scope whose body became a no-op becomes one itself.
class NoOpRemover : public IRMutator {
public:
  using IRMutator::mutate;

protected:
  using IRMutator::visit;

  Stmt visit(const EvaluateNode* node, const Stmt& self) override {
    return isNoOp(self) ? emptySequence() : self;
  }

  Stmt visit(const SeqStmtNode* node, const Stmt& self) override {
    if (node->seq.empty()) return self;
    bool changed = false;
    std::vector<Stmt> kept;
    for (auto& item : node->seq) {
      Stmt rewritten = mutate(item);
      if (isNoOp(rewritten)) {
        changed = true;
        continue;
      }
      if (!rewritten.same(item)) changed = true;
      kept.push_back(rewritten);
    }
    if (!changed) return self;
    return SeqStmtNode::make(std::move(kept));
  }

  Stmt visit(const ForNode* node, const Stmt& self) override {
    if (const int64_t* extent = asConstInt(node->extent); extent && *extent <= 0) return emptySequence();
    Stmt body = mutate(node->body);
    if (isNoOp(body)) return emptySequence();
    if (body.same(node->body)) return self;
    return ForNode::make(node->loopVar, node->min, node->extent, node->forKind, body, node->threadTag);
  }

  Stmt visit(const IfThenElseNode* node, const Stmt& self) override {
    Stmt thenCase = mutate(node->thenCase);
    Stmt elseCase = node->elseCase.defined() ? mutate(node->elseCase) : Stmt();
    bool thenEmpty = isNoOp(thenCase), elseEmpty = isNoOp(elseCase);
    if (thenEmpty && elseEmpty) return emptySequence();
    if (thenEmpty) return IfThenElseNode::make(!node->condition, elseCase);
    if (elseEmpty) elseCase = Stmt();
    if (thenCase.same(node->thenCase) && elseCase.same(node->elseCase)) return self;
    return IfThenElseNode::make(node->condition, thenCase, elseCase);
  }

  Stmt visit(const LetStmtNode* node, const Stmt& self) override {
    Stmt body = mutate(node->body);
    if (isNoOp(body)) return emptySequence();
    return body.same(node->body) ? self : LetStmtNode::make(node->var, node->value, body);
  }

  Stmt visit(const AttrStmtNode* node, const Stmt& self) override {
    Stmt body = mutate(node->body);
    if (isNoOp(body)) return emptySequence();
    return body.same(node->body) ? self : AttrStmtNode::make(node->key, node->value, body);
  }

  Stmt visit(const AllocateNode* node, const Stmt& self) override {
    Stmt body = mutate(node->body);
    if (isNoOp(body)) return emptySequence();
    return body.same(node->body) ? self : AllocateNode::make(node->buffer, body);
  }

  Stmt visit(const BufferRealizeNode* node, const Stmt& self) override {
    Stmt body = mutate(node->body);
    if (isNoOp(body)) return emptySequence();
    return body.same(node->body) ? self : BufferRealizeNode::make(node->buffer, node->bounds, body);
  }

  // Expressions hold no statements: nothing to remove inside them.
  Expr mutate(const Expr& e) override { return e; }
};

}  // namespace

Stmt removeNoOp(const Stmt& s) {
  if (!s.defined()) return emptySequence();
  return NoOpRemover().mutate(s);
}

PrimFunc removeNoOp(const PrimFunc& f) {
  Stmt body = removeNoOp(f->body);
  if (body.same(f->body)) return f;
  return PrimFunc(f->name, f->params, body);
}

}  // namespace tessel
