// Loop unrolling (see UnrollLoops.h).
#include "compiler/transform/UnrollLoops.h"

#include "compiler/transform/IndexArithmetic.h"
#include "core/ir/IRMutator.h"

namespace tessel {

namespace {

class LoopUnroller : public IRMutator {
public:
  using IRMutator::mutate;

protected:
  using IRMutator::visit;

  Stmt visit(const ForNode* node, const Stmt& self) override {
    Stmt loop = IRMutator::visit(node, self);
    if (node->forKind != ForKind::Unrolled) return loop;
    auto* rewritten = loop.as<ForNode>();
    const int64_t* extent = asConstInt(rewritten->extent);
    if (!extent || rewritten->extent.dtype().isVector()) {
      return ForNode::make(rewritten->loopVar, rewritten->min, rewritten->extent, ForKind::Serial,
                           rewritten->body);
    }
    if (*extent <= 0) return EvaluateNode::make(Expr(0));
    std::vector<Stmt> copies;
    copies.reserve(*extent);
    for (int64_t k = 0; k < *extent; ++k) {
      Expr value = addIndex(rewritten->min, IntImmNode::make(rewritten->loopVar.dtype(), k));
      copies.push_back(substituteAndFold(rewritten->body, VarMap{{rewritten->loopVar.get(), value}}));
    }
    return SeqStmtNode::make(std::move(copies));
  }
};

}  // namespace

PrimFunc unrollLoops(const PrimFunc& f) {
  Stmt body = LoopUnroller().mutate(f->body);
  if (body.same(f->body)) return f;
  return PrimFunc(f->name, f->params, body);
}

}  // namespace tessel
