// The rewrite driver behind Analyzer::simplify.
#include "compiler/arith/RewriteSimplifier.h"

#include <unordered_map>

#include "compiler/arith/Analyzer.h"
#include "compiler/arith/ConstantFold.h"
#include "compiler/arith/ExprEqual.h"
#include "compiler/arith/RewriteRules.h"
#include "core/ir/IRMutator.h"

namespace tessel {

namespace {

// Limits that keep simplification cheap on pathological input. Every rewrite preserves
// the value, so stopping early is always safe; it only leaves the result less simple.
constexpr int kMaxRewritesPerNode = 64;
constexpr int kMaxDepth = 1000;
constexpr long kRewriteBudgetPerNode = 256;

class RewriteSimplifier : public IRMutator, public RewriteContext {
public:
  RewriteSimplifier(Analyzer& analyzer, const Expr& root) : analyzer_(analyzer) {
    budget_ = 10000 + kRewriteBudgetPerNode * static_cast<long>(sizeHint(root));
  }

  Analyzer& analyzer() override { return analyzer_; }
  Expr simplify(const Expr& e) override { return mutate(e); }

  using IRMutator::mutate;
  Expr mutate(const Expr& e) override {
    if (!e.defined()) return e;
    NodeKind kind = e->kind();
    if (kind == NodeKind::FloatImm) return e;
    if (auto* imm = e.as<IntImmNode>()) {
      // Builders may make constants outside their type's range (int8(300)); show the value
      // the machine holds.
      int64_t wrapped = wrapToType(imm->value, e.dtype());
      return wrapped == imm->value ? e : IntImmNode::make(e.dtype(), wrapped);
    }
    if (auto it = memo_.find(e.get()); it != memo_.end()) return it->second.second;
    if (depth_ >= kMaxDepth) return e;
    ++depth_;
    Expr result = rewriteToFixpoint(IRMutator::mutate(e));
    --depth_;
    remember(e, result);
    remember(result, result);
    return result;
  }

protected:
  using IRMutator::visit;

  // A variable bound to a constant or another variable is replaced by it; bigger let
  // values stay behind their variable (duplicating them would cost more than it saves).
  Expr visit(const VarNode* node, const Expr& self) override {
    const Expr* value = analyzer_.letValue(node);
    if (!value || value->same(self) || value->dtype() != self.dtype()) return self;
    if (value->as<IntImmNode>() || value->as<FloatImmNode>()) return *value;
    if (value->as<VarNode>()) return mutate(*value);
    return self;
  }

  Expr visit(const LetNode* node, const Expr& self) override {
    Expr value = mutate(node->value);
    if (value.as<IntImmNode>() || value.as<FloatImmNode>() || value.as<VarNode>())
      return mutate(substitute(node->body, {{node->var.get(), value}}));
    // The body is simplified knowing var == value, in a memo of its own: results inside
    // depend on that binding.
    analyzer_.bind(node->var, value);
    std::unordered_map<const Node*, std::pair<Expr, Expr>> outer;
    outer.swap(memo_);
    Expr body = mutate(node->body);
    memo_.swap(outer);
    analyzer_.unbind(node->var);
    if (!usesVar(body, node->var)) return body;
    if (value.same(node->value) && body.same(node->body)) return self;
    return LetNode::make(node->var, value, body);
  }

private:
  // The budget grows with the input, counted only so far (shared subtrees count once per
  // use, so a deeply shared DAG must not be walked in full).
  static size_t sizeHint(const Expr& e) { return exprSize(e, 100000); }

  Expr rewriteToFixpoint(Expr current) {
    for (int step = 0; step < kMaxRewritesPerNode && budget_ > 0; ++step) {
      Expr next = applyFirstRule(current);
      if (!next.defined()) break;
      --budget_;
      // The replacement's new parts are simplified (the parts it took from the match are
      // memo hits), then the root is tried again.
      current = IRMutator::mutate(next);
    }
    return current;
  }

  Expr applyFirstRule(const Expr& e) {
    for (const RewriteRule* rule : rewriteRulesFor(e->kind())) {
      Expr rewritten = rule->apply(e, *this);
      if (rewritten.defined()) return rewritten;
    }
    return Expr();
  }

  void remember(const Expr& key, const Expr& value) {
    memo_.emplace(key.get(), std::make_pair(key, value));
  }

  Analyzer& analyzer_;
  // Keyed by node; the pair keeps the key alive so that its address is never reused.
  std::unordered_map<const Node*, std::pair<Expr, Expr>> memo_;
  int depth_ = 0;
  long budget_ = 0;
};

}  // namespace

Expr rewriteSimplify(const Expr& e, Analyzer& analyzer) {
  if (!e.defined()) return e;
  return RewriteSimplifier(analyzer, e).mutate(e);
}

}  // namespace tessel
