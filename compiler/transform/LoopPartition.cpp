// Loop partitioning (see LoopPartition.h).
#include "compiler/transform/LoopPartition.h"

#include <algorithm>
#include <optional>

#include "compiler/arith/Analyzer.h"
#include "compiler/transform/RemoveNoOp.h"
#include "core/ir/IRMutator.h"
#include "core/ir/IRVisitor.h"
#include "core/ir/StructuralEqual.h"

namespace tessel {

namespace {

Expr boolConst(bool value) { return IntImmNode::make(DataType::boolean(), value ? 1 : 0); }
bool isTrue(const Expr& e) { return e.dtype() == DataType::boolean() && isConstInt(e, 1); }
bool isFalse(const Expr& e) { return e.dtype() == DataType::boolean() && isConstInt(e, 0); }

const CallNode* asLikely(const Expr& e) {
  auto* call = e.as<CallNode>();
  return call && call->op == Intrinsic::Likely && call->args.size() == 1 ? call : nullptr;
}

// !cond with the negation pushed into comparisons, so bound-based proofs can use it.
Expr negate(const Expr& cond) {
  if (auto* n = cond.as<LTNode>()) return GENode::make(n->a, n->b);
  if (auto* n = cond.as<LENode>()) return GTNode::make(n->a, n->b);
  if (auto* n = cond.as<GTNode>()) return LENode::make(n->a, n->b);
  if (auto* n = cond.as<GENode>()) return LTNode::make(n->a, n->b);
  if (auto* n = cond.as<EQNode>()) return NENode::make(n->a, n->b);
  if (auto* n = cond.as<NENode>()) return EQNode::make(n->a, n->b);
  if (auto* n = cond.as<AndNode>()) return OrNode::make(negate(n->a), negate(n->b));
  if (auto* n = cond.as<OrNode>()) return AndNode::make(negate(n->a), negate(n->b));
  if (auto* n = cond.as<NotNode>()) return n->a;
  if (auto* likely = asLikely(cond)) return negate(likely->args[0]);
  return NotNode::make(cond);
}

void splitConjunction(const Expr& cond, std::vector<Expr>* out) {
  if (auto* n = cond.as<AndNode>()) {
    splitConjunction(n->a, out);
    splitConjunction(n->b, out);
  } else {
    out->push_back(cond);
  }
}

// A fact the analyzer must know while proving a condition found inside the loop body.
struct Binding {
  Var var;
  std::optional<Range> range;  // a loop between the partitioned loop and the test
  Expr value;                  // or a let
};

struct Candidate {
  Expr condition;  // the argument of likely()
  std::vector<Binding> bindings;
};

// Finds the likely() conditions inside a loop body that use the loop variable.
class CandidateCollector : public IRVisitor {
public:
  explicit CandidateCollector(const Var& loopVar) : loopVar_(loopVar) {}
  std::vector<Candidate> candidates;

  void visit(const ForNode* node) override {
    visitExpr(node->min);
    visitExpr(node->extent);
    path_.push_back({node->loopVar, Range{node->min, node->extent}, Expr()});
    visitStmt(node->body);
    path_.pop_back();
  }
  void visit(const LetStmtNode* node) override {
    visitExpr(node->value);
    path_.push_back({node->var, std::nullopt, node->value});
    visitStmt(node->body);
    path_.pop_back();
  }
  void visit(const IfThenElseNode* node) override {
    inspect(node->condition);
    IRVisitor::visit(node);
  }
  void visit(const SelectNode* node) override {
    inspect(node->condition);
    IRVisitor::visit(node);
  }

private:
  void inspect(const Expr& condition) {
    postOrderVisit(condition, [&](const Expr& e) {
      auto* likely = asLikely(e);
      if (!likely || !usesVar(likely->args[0], loopVar_)) return;
      for (auto& known : candidates)
        if (structuralEqual(known.condition, likely->args[0])) return;
      candidates.push_back({likely->args[0], path_});
    });
  }

  const Var& loopVar_;
  std::vector<Binding> path_;
};

class LoopPartitioner : public IRMutator {
public:
  using IRMutator::mutate;

protected:
  using IRMutator::visit;

  Stmt visit(const ForNode* node, const Stmt& self) override {
    if (auto parts = partition(node)) return *parts;
    analyzer_.bind(node->loopVar, Range{node->min, node->extent});
    Stmt body = mutate(node->body);
    analyzer_.unbind(node->loopVar);
    if (body.same(node->body)) return self;
    return ForNode::make(node->loopVar, node->min, node->extent, node->forKind, body, node->threadTag);
  }

  Stmt visit(const LetStmtNode* node, const Stmt& self) override {
    analyzer_.bind(node->var, node->value);
    Stmt body = mutate(node->body);
    analyzer_.unbind(node->var);
    if (body.same(node->body)) return self;
    return LetStmtNode::make(node->var, node->value, body);
  }

  Stmt visit(const IfThenElseNode* node, const Stmt& self) override {
    Expr condition = resolveLikely(node->condition);
    if (isTrue(condition)) return mutate(node->thenCase);
    if (isFalse(condition)) return node->elseCase.defined() ? mutate(node->elseCase) : SeqStmtNode::make({});
    Stmt thenCase = mutate(node->thenCase), elseCase = mutate(node->elseCase);
    if (condition.same(node->condition) && thenCase.same(node->thenCase) && elseCase.same(node->elseCase))
      return self;
    return IfThenElseNode::make(condition, thenCase, elseCase);
  }

  Expr visit(const SelectNode* node, const Expr& self) override {
    Expr condition = resolveLikely(node->condition);
    if (isTrue(condition)) return mutate(node->trueValue);
    if (isFalse(condition)) return mutate(node->falseValue);
    Expr trueValue = mutate(node->trueValue), falseValue = mutate(node->falseValue);
    if (condition.same(node->condition) && trueValue.same(node->trueValue) && falseValue.same(node->falseValue))
      return self;
    return SelectNode::make(condition, trueValue, falseValue);
  }

private:
  // --- proofs ---------------------------------------------------------------------------

  bool provable(const Expr& cond) {
    if (auto* n = cond.as<AndNode>()) return provable(n->a) && provable(n->b);
    if (auto* n = cond.as<OrNode>()) return provable(n->a) || provable(n->b);
    if (auto* likely = asLikely(cond)) return provable(likely->args[0]);
    return analyzer_.canProve(cond);
  }

  // Whether `cond` holds for loopVar in [begin, end) and every value of the bindings.
  bool provableOn(const Var& loopVar, int64_t begin, int64_t end, const Candidate& candidate, const Expr& cond) {
    if (begin >= end) return true;
    analyzer_.bind(loopVar, Range{IntImmNode::make(loopVar.dtype(), begin), IntImmNode::make(loopVar.dtype(), end - begin)});
    for (auto& binding : candidate.bindings) {
      if (binding.range) analyzer_.bind(binding.var, *binding.range);
      else analyzer_.bind(binding.var, binding.value);
    }
    bool result = provable(cond);
    for (auto it = candidate.bindings.rbegin(); it != candidate.bindings.rend(); ++it) analyzer_.unbind(it->var);
    analyzer_.unbind(loopVar);
    return result;
  }

  // The largest k in [0, extent] for which `holds(k)`; holds is monotone (true up to k).
  template <class Predicate>
  static int64_t largestHolding(int64_t extent, Predicate holds) {
    int64_t low = 0, high = extent;  // holds(low) is known; the answer is in [low, high]
    while (low < high) {
      int64_t middle = low + (high - low + 1) / 2;
      if (holds(middle)) low = middle;
      else high = middle - 1;
    }
    return low;
  }

  // The largest sub-range [begin, end) of [min, min + extent) on which the candidate is
  // provable, built conjunct by conjunct from provable prefixes and suffixes.
  std::pair<int64_t, int64_t> provableRange(const Var& loopVar, int64_t min, int64_t extent,
                                            const Candidate& candidate) {
    std::vector<Expr> conjuncts;
    splitConjunction(candidate.condition, &conjuncts);
    int64_t begin = min, end = min + extent;
    for (auto& conjunct : conjuncts) {
      if (provableOn(loopVar, min, min + extent, candidate, conjunct)) continue;
      int64_t prefix = largestHolding(extent, [&](int64_t k) {
        return provableOn(loopVar, min, min + k, candidate, conjunct);
      });
      int64_t suffix = largestHolding(extent, [&](int64_t k) {
        return provableOn(loopVar, min + extent - k, min + extent, candidate, conjunct);
      });
      if (prefix == 0 && suffix == 0) return {min, min};
      if (prefix >= suffix) end = std::min(end, min + prefix);
      else begin = std::max(begin, min + extent - suffix);
    }
    return {begin, std::min(std::max(begin, end), min + extent)};
  }

  // Replaces each likely(c) whose truth is known under the current bindings by a constant
  // and folds the logic around it.
  Expr resolveLikely(const Expr& cond) {
    if (auto* likely = asLikely(cond)) {
      if (provable(likely->args[0])) return boolConst(true);
      if (provable(negate(likely->args[0]))) return boolConst(false);
      return cond;
    }
    if (auto* n = cond.as<AndNode>()) {
      Expr a = resolveLikely(n->a), b = resolveLikely(n->b);
      if (isFalse(a) || isFalse(b)) return boolConst(false);
      if (isTrue(a)) return b;
      if (isTrue(b)) return a;
      return a.same(n->a) && b.same(n->b) ? cond : AndNode::make(a, b);
    }
    if (auto* n = cond.as<OrNode>()) {
      Expr a = resolveLikely(n->a), b = resolveLikely(n->b);
      if (isTrue(a) || isTrue(b)) return boolConst(true);
      if (isFalse(a)) return b;
      if (isFalse(b)) return a;
      return a.same(n->a) && b.same(n->b) ? cond : OrNode::make(a, b);
    }
    if (auto* n = cond.as<NotNode>()) {
      Expr a = resolveLikely(n->a);
      if (isTrue(a)) return boolConst(false);
      if (isFalse(a)) return boolConst(true);
      return a.same(n->a) ? cond : NotNode::make(a);
    }
    return cond;
  }

  // --- splitting ------------------------------------------------------------------------

  bool alreadyKept(const Expr& condition) const {
    for (auto& kept : keptConditions_)
      if (structuralEqual(kept, condition)) return true;
    return false;
  }

  std::optional<int64_t> constantValue(const Expr& e) {
    if (const int64_t* value = asConstInt(e)) return *value;
    ConstIntBound bound = analyzer_.constIntBound(e);
    if (bound.isPoint() && bound.min != ConstIntBound::kNegInf && bound.min != ConstIntBound::kPosInf)
      return bound.min;
    return std::nullopt;
  }

  std::optional<Stmt> partition(const ForNode* loop) {
    if (loop->forKind == ForKind::ThreadBinding || loop->loopVar.dtype().isVector()) return std::nullopt;
    auto min = constantValue(loop->min);
    auto extent = constantValue(loop->extent);
    if (!min || !extent || *extent < 2) return std::nullopt;
    CandidateCollector collector(loop->loopVar);
    collector.visitStmt(loop->body);
    for (auto& candidate : collector.candidates) {
      bool kept = alreadyKept(candidate.condition);
      auto [begin, end] = provableRange(loop->loopVar, *min, *extent, candidate);
      if (begin >= end || (begin == *min && end == *min + *extent)) continue;
      // A condition an enclosing split kept is not split on again (that would copy the body
      // once more per level), unless it is false on the rest of this loop: then the loop only
      // narrows to where it holds. That is the column tail of a tiled kernel,
      // `for (j, 0, 16) if (likely(jo*16 + j < 197))` with jo at its last value: 5 iterations
      // without the test instead of 16 with it (which LLVM's optimizer spent most of ViT's
      // attention kernels' compile time vectorizing).
      if (kept) {
        if (!guardsWholeBody(loop->body, candidate.condition) ||
            !provableOn(loop->loopVar, *min, begin, candidate, negate(candidate.condition)) ||
            !provableOn(loop->loopVar, end, *min + *extent, candidate, negate(candidate.condition)))
          continue;
        return narrow(loop, begin, end, candidate.condition);
      }
      if (loop->forKind == ForKind::Parallel) return unswitch(loop, *min, *extent, begin, end, candidate.condition);
      return split(loop, *min, *extent, begin, end, candidate.condition);
    }
    return std::nullopt;
  }

  // Whether `body` runs nothing unless `condition` holds: it is one if without else whose
  // condition has likely(condition) as a conjunct.
  static bool guardsWholeBody(const Stmt& body, const Expr& condition) {
    auto* test = body.as<IfThenElseNode>();
    if (!test || test->elseCase.defined()) return false;
    std::vector<Expr> conjuncts;
    splitConjunction(test->condition, &conjuncts);
    for (const Expr& conjunct : conjuncts)
      if (auto* likely = asLikely(conjunct); likely && structuralEqual(likely->args[0], condition)) return true;
    return false;
  }

  // The loop over [begin, end) only, where `condition` holds: the rest of its range ran no
  // iteration of the body.
  Stmt narrow(const ForNode* loop, int64_t begin, int64_t end, const Expr& condition) {
    keptConditions_.push_back(condition);
    DataType type = loop->loopVar.dtype();
    Stmt part = mutate(ForNode::make(loop->loopVar, IntImmNode::make(type, begin), IntImmNode::make(type, end - begin),
                                     loop->forKind, loop->body, loop->threadTag));
    keptConditions_.pop_back();
    return part;
  }

  // [min, begin) and [end, min + extent) keep the condition; [begin, end) has it proven.
  Stmt split(const ForNode* loop, int64_t min, int64_t extent, int64_t begin, int64_t end, const Expr& condition) {
    keptConditions_.push_back(condition);
    std::vector<Stmt> parts;
    for (auto [partBegin, partEnd] : {std::pair{min, begin}, std::pair{begin, end}, std::pair{end, min + extent}}) {
      if (partBegin >= partEnd) continue;
      DataType type = loop->loopVar.dtype();
      Stmt part = ForNode::make(loop->loopVar, IntImmNode::make(type, partBegin), IntImmNode::make(type, partEnd - partBegin),
                                loop->forKind, loop->body, loop->threadTag);
      // Partitions the part on the remaining candidates and resolves what its range proves.
      parts.push_back(mutate(part));
    }
    keptConditions_.pop_back();
    return SeqStmtNode::make(std::move(parts));
  }

  // A parallel loop keeps its whole range: split into consecutive loops, each part would be a
  // launch of its own (and a part of one iteration would run on one thread), so the parts
  // become branches of one body instead, `if (v < end0) part0 else if (v < end1) part1 ...`,
  // each part's body resolved for its range as split() resolves it. A test per iteration,
  // against a launch per part (a 25-input Concat fused with its batch norm: 25 launches).
  Stmt unswitch(const ForNode* loop, int64_t min, int64_t extent, int64_t begin, int64_t end, const Expr& condition) {
    keptConditions_.push_back(condition);
    DataType type = loop->loopVar.dtype();
    std::vector<std::pair<int64_t, Stmt>> parts;  // (end of the part's range, its body)
    for (auto [partBegin, partEnd] : {std::pair{min, begin}, std::pair{begin, end}, std::pair{end, min + extent}}) {
      if (partBegin >= partEnd) continue;
      Stmt part = mutate(ForNode::make(loop->loopVar, IntImmNode::make(type, partBegin),
                                       IntImmNode::make(type, partEnd - partBegin), loop->forKind, loop->body,
                                       loop->threadTag));
      // The part partitioned on the remaining candidates is one parallel loop over its range
      // again (this function made it), whose body holds for that range.
      const auto* partLoop = part.as<ForNode>();
      if (!partLoop || !partLoop->loopVar.same(loop->loopVar)) {
        keptConditions_.pop_back();
        return split(loop, min, extent, begin, end, condition);
      }
      parts.push_back({partEnd, partLoop->body});
    }
    keptConditions_.pop_back();
    Stmt body = parts.back().second;
    for (size_t k = parts.size() - 1; k-- > 0;)
      body = IfThenElseNode::make(LTNode::make(loop->loopVar, IntImmNode::make(type, parts[k].first)),
                                  parts[k].second, body);
    return ForNode::make(loop->loopVar, loop->min, loop->extent, loop->forKind, body, loop->threadTag);
  }

  Analyzer analyzer_;
  std::vector<Expr> keptConditions_;
};

}  // namespace

PrimFunc loopPartition(const PrimFunc& f) {
  Stmt body = LoopPartitioner().mutate(f->body);
  if (body.same(f->body)) return f;
  return PrimFunc(f->name, f->params, removeNoOp(body));
}

}  // namespace tessel
