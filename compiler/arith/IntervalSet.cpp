// Interval evaluation with symbolic endpoints.
#include "compiler/arith/IntervalSet.h"

#include <algorithm>
#include <unordered_set>

#include "compiler/arith/Analyzer.h"
#include "compiler/arith/ExprEqual.h"
#include "core/ir/IRMutator.h"
#include "core/ir/IRVisitor.h"
#include "core/ir/IROperators.h"
#include "core/support/Error.h"

namespace tessel {

namespace {

// Endpoint arithmetic where an undefined end (an infinity) absorbs everything.
Expr addEnds(const Expr& a, const Expr& b) { return a.defined() && b.defined() ? a + b : Expr(); }
Expr subEnds(const Expr& a, const Expr& b) { return a.defined() && b.defined() ? a - b : Expr(); }
Expr mulEnds(const Expr& a, const Expr& b) { return a.defined() && b.defined() ? a * b : Expr(); }

class IntervalEvaluator {
public:
  explicit IntervalEvaluator(IntervalMap domains) : domains_(std::move(domains)) {}

  Interval eval(const Expr& e) {
    // A vector's interval covers the values of its lanes, so only scalars are points.
    if (e.dtype().isScalar() && !dependsOnDomains(e)) return Interval::point(e);
    // Shared subexpressions are evaluated once (results depend on the domains, which only
    // a Let changes, and a Let evaluates its body with a memo of its own).
    if (auto it = results_.find(e.get()); it != results_.end()) return it->second.second;
    Interval result = evalUncached(e);
    results_.emplace(e.get(), std::make_pair(e, result));
    return result;
  }

private:
  Interval evalUncached(const Expr& e) {
    switch (e->kind()) {
      case NodeKind::Var: return variable(e.as<VarNode>());
      case NodeKind::Add: {
        auto* n = e.as<AddNode>();
        Interval a = eval(n->a), b = eval(n->b);
        return {addEnds(a.min, b.min), addEnds(a.max, b.max)};
      }
      case NodeKind::Sub: {
        auto* n = e.as<SubNode>();
        Interval a = eval(n->a), b = eval(n->b);
        return {subEnds(a.min, b.max), subEnds(a.max, b.min)};
      }
      case NodeKind::Mul: {
        auto* n = e.as<MulNode>();
        return multiply(eval(n->a), eval(n->b));
      }
      case NodeKind::FloorDiv: {
        auto* n = e.as<FloorDivNode>();
        return divide(eval(n->a), eval(n->b), /*floor=*/true);
      }
      case NodeKind::Div: {
        auto* n = e.as<DivNode>();
        if (!n->a.dtype().isIntegral()) return Interval::everything();
        return divide(eval(n->a), eval(n->b), /*floor=*/false);
      }
      case NodeKind::FloorMod: {
        auto* n = e.as<FloorModNode>();
        return floorModulo(eval(n->a), eval(n->b));
      }
      case NodeKind::Mod: {
        auto* n = e.as<ModNode>();
        if (!n->a.dtype().isIntegral()) return Interval::everything();
        Interval a = eval(n->a), b = eval(n->b);
        // C's remainder ignores the divisor's sign, and for a non-negative dividend it is
        // the floor remainder by the divisor's magnitude.
        const int64_t* c = b.isPoint() ? asConstInt(b.min) : nullptr;
        if (!c || *c == 0 || *c == INT64_MIN) return Interval::everything();
        int64_t magnitude = *c < 0 ? -*c : *c;
        if (a.min.defined() && provablyNonNegative(a.min))
          return floorModulo(a, Interval::point(makeConstLike(e, magnitude)));
        return {makeConstLike(e, -(magnitude - 1)), makeConstLike(e, magnitude - 1)};
      }
      case NodeKind::Min: {
        auto* n = e.as<MinNode>();
        Interval a = eval(n->a), b = eval(n->b);
        Expr lo = a.min.defined() && b.min.defined() ? min(a.min, b.min) : Expr();
        Expr hi = !a.max.defined() ? b.max : !b.max.defined() ? a.max : min(a.max, b.max);
        return {lo, hi};
      }
      case NodeKind::Max: {
        auto* n = e.as<MaxNode>();
        Interval a = eval(n->a), b = eval(n->b);
        Expr lo = !a.min.defined() ? b.min : !b.min.defined() ? a.min : max(a.min, b.min);
        Expr hi = a.max.defined() && b.max.defined() ? max(a.max, b.max) : Expr();
        return {lo, hi};
      }
      case NodeKind::Select: {
        auto* n = e.as<SelectNode>();
        return rawUnion(eval(n->trueValue), eval(n->falseValue));
      }
      case NodeKind::Cast: return castInterval(e.as<CastNode>());
      case NodeKind::Let: {
        auto* n = e.as<LetNode>();
        // The variable takes the value's interval, so the endpoints never mention it.
        Interval value = eval(n->value);
        auto saved = domains_.find(n->var.get()) != domains_.end() ? std::optional(domains_[n->var.get()]) : std::nullopt;
        domains_[n->var.get()] = value;
        Memo outerResults;
        outerResults.swap(results_);
        auto outerDepends = std::move(depends_);
        depends_.clear();
        Interval body = eval(n->body);
        results_.swap(outerResults);
        depends_ = std::move(outerDepends);
        if (saved) domains_[n->var.get()] = *saved;
        else domains_.erase(n->var.get());
        return body;
      }
      case NodeKind::Ramp: {
        auto* n = e.as<RampNode>();
        Interval lanes{makeConstLike(n->base, 0), makeConstLike(n->base, n->lanes - 1)};
        Interval base = eval(n->base), offset = multiply(eval(n->stride), lanes);
        return {addEnds(base.min, offset.min), addEnds(base.max, offset.max)};
      }
      case NodeKind::Broadcast: return eval(e.as<BroadcastNode>()->value);
      case NodeKind::Call: {
        auto* n = e.as<CallNode>();
        if (n->op == Intrinsic::Likely && n->args.size() == 1) return eval(n->args[0]);
        return Interval::everything();
      }
      default: return Interval::everything();  // loads, comparisons, logic, reductions
    }
  }

  // A domain variable ranges over its interval; when the interval's ends mention other
  // domain variables (j in [0, k] with k in [0, 7]), those range too: the ends are
  // evaluated in turn, so that the result mentions no domain variable.
  Interval variable(const VarNode* var) {
    auto it = domains_.find(var);
    if (it == domains_.end()) return Interval::everything();  // a vector variable
    Interval interval = it->second;
    bool nested = (interval.min.defined() && dependsOnDomains(interval.min)) ||
                  (interval.max.defined() && dependsOnDomains(interval.max));
    if (!nested) return interval;
    if (!expanding_.insert(var).second) return Interval::everything();  // ranges defined in a cycle
    Expr lo = interval.min.defined() ? eval(interval.min).min : Expr();
    Expr hi = interval.max.defined() ? eval(interval.max).max : Expr();
    expanding_.erase(var);
    return {lo, hi};
  }

  // Whether `e` mentions a domain variable, computed once per node.
  bool dependsOnDomains(const Expr& e) {
    if (domains_.empty()) return false;
    if (auto* var = e.as<VarNode>()) return domains_.count(var) > 0;
    if (auto it = depends_.find(e.get()); it != depends_.end()) return it->second.second;
    class DirectChildren : public IRVisitor {
    public:
      std::vector<Expr> children;
      void visitExpr(const Expr& child) override {
        if (atRoot_) {
          atRoot_ = false;
          IRVisitor::visitExpr(child);
        } else {
          children.push_back(child);
        }
      }

    private:
      bool atRoot_ = true;
    } direct;
    direct.visitExpr(e);
    bool depends = false;
    for (auto& child : direct.children)
      if (child.defined() && dependsOnDomains(child)) depends = true;
    depends_.emplace(e.get(), std::make_pair(e, depends));  // the pair keeps the key alive
    return depends;
  }

  static Expr makeConstLike(const Expr& like, int64_t value) { return makeConst(like.dtype().element(), double(value)); }

  bool provablyNonNegative(const Expr& e) { return e.defined() && analyzer_.constIntBound(e).min >= 0; }
  bool provablyNonPositive(const Expr& e) { return e.defined() && analyzer_.constIntBound(e).max <= 0; }
  bool provablyPositive(const Expr& e) { return e.defined() && analyzer_.constIntBound(e).min > 0; }

  static Interval scale(const Interval& a, const Expr& factor, bool nonNegative) {
    if (nonNegative) return {mulEnds(a.min, factor), mulEnds(a.max, factor)};
    return {mulEnds(a.max, factor), mulEnds(a.min, factor)};
  }

  Interval multiply(const Interval& a, const Interval& b) {
    if (a.isPoint() && b.isPoint()) return Interval::point(a.min * b.min);
    // One side a single value of known sign scales the other.
    for (auto [point, range] : {std::pair{&a, &b}, std::pair{&b, &a}}) {
      if (!point->isPoint()) continue;
      if (provablyNonNegative(point->min)) return scale(*range, point->min, true);
      if (provablyNonPositive(point->min)) return scale(*range, point->min, false);
      return Interval::everything();
    }
    bool aNonNeg = provablyNonNegative(a.min), aNonPos = provablyNonPositive(a.max);
    bool bNonNeg = provablyNonNegative(b.min), bNonPos = provablyNonPositive(b.max);
    if (aNonNeg && bNonNeg) return {mulEnds(a.min, b.min), mulEnds(a.max, b.max)};
    if (aNonNeg && bNonPos) return {mulEnds(a.max, b.min), mulEnds(a.min, b.max)};
    if (aNonPos && bNonNeg) return {mulEnds(a.min, b.max), mulEnds(a.max, b.min)};
    if (aNonPos && bNonPos) return {mulEnds(a.max, b.max), mulEnds(a.min, b.min)};
    // Constant ends of unknown sign: the extremes are among the corners.
    const int64_t *a0 = a.min.defined() ? asConstInt(a.min) : nullptr, *a1 = a.max.defined() ? asConstInt(a.max) : nullptr;
    const int64_t *b0 = b.min.defined() ? asConstInt(b.min) : nullptr, *b1 = b.max.defined() ? asConstInt(b.max) : nullptr;
    if (a0 && a1 && b0 && b1) {
      __int128 corners[] = {__int128(*a0) * *b0, __int128(*a0) * *b1, __int128(*a1) * *b0, __int128(*a1) * *b1};
      __int128 lo = *std::min_element(std::begin(corners), std::end(corners));
      __int128 hi = *std::max_element(std::begin(corners), std::end(corners));
      if (lo >= INT64_MIN && hi <= INT64_MAX)
        return {makeConstLike(a.min, int64_t(lo)), makeConstLike(a.min, int64_t(hi))};
    }
    return Interval::everything();
  }

  Interval divide(const Interval& a, const Interval& b, bool floor) {
    if (!b.isPoint()) return Interval::everything();
    auto op = [floor](const Expr& x, const Expr& d) {
      if (!x.defined()) return Expr();
      return floor ? floordiv(x, d) : truncdiv(x, d);
    };
    // Division by a positive value is monotone; by a negative one it reverses the order.
    if (provablyPositive(b.min)) return {op(a.min, b.min), op(a.max, b.min)};
    if (const int64_t* c = asConstInt(b.min); c && *c < 0) return {op(a.max, b.min), op(a.min, b.min)};
    return Interval::everything();
  }

  Interval floorModulo(const Interval& a, const Interval& b) {
    if (!b.isPoint()) return Interval::everything();
    const Expr& divisor = b.min;
    const int64_t* c = asConstInt(divisor);
    if (c && *c < 0) return {makeConstLike(divisor, *c + 1), makeConstLike(divisor, 0)};
    if (!provablyPositive(divisor)) return Interval::everything();
    if (a.isBounded()) {
      // Already a remainder: nothing wraps.
      if (provablyNonNegative(a.min) && analyzer_.canProve(a.max < divisor)) return a;
      // Both ends in the same period: the remainder is the dividend shifted.
      Expr periodLo = analyzer_.simplify(floordiv(a.min, divisor));
      Expr periodHi = analyzer_.simplify(floordiv(a.max, divisor));
      if (exprEqual(periodLo, periodHi)) return {floormod(a.min, divisor), floormod(a.max, divisor)};
    }
    return {makeConstLike(divisor, 0), divisor - 1};
  }

  Interval castInterval(const CastNode* node) {
    DataType to = node->dtype.element(), from = node->value.dtype().element();
    if (!to.isIntegral() || !from.isIntegral()) return Interval::everything();
    Interval value = eval(node->value);
    auto castEnd = [&](const Expr& end) { return end.defined() ? cast(node->dtype, end) : Expr(); };
    bool widening = to.bits() > from.bits() ? (to.isInt() || from.isUInt())
                                            : (to.bits() == from.bits() && to.code() == from.code());
    if (widening) return {castEnd(value.min), castEnd(value.max)};
    // A narrowing cast keeps the order only when no value wraps around.
    if (!value.isBounded()) return Interval::everything();
    ConstIntBound range = typeBound(to);
    ConstIntBound lo = analyzer_.constIntBound(value.min), hi = analyzer_.constIntBound(value.max);
    if (lo.min >= range.min && hi.max <= range.max) return {castEnd(value.min), castEnd(value.max)};
    return Interval::everything();
  }

  static Interval rawUnion(const Interval& a, const Interval& b) {
    Expr lo = a.min.defined() && b.min.defined() ? min(a.min, b.min) : Expr();
    Expr hi = a.max.defined() && b.max.defined() ? max(a.max, b.max) : Expr();
    return {lo, hi};
  }

  using Memo = std::unordered_map<const Node*, std::pair<Expr, Interval>>;
  IntervalMap domains_;
  Memo results_;
  std::unordered_map<const Node*, std::pair<Expr, bool>> depends_;
  std::unordered_set<const VarNode*> expanding_;
  Analyzer analyzer_;  // no bindings: signs are proven from the endpoints' own structure
};

Expr simplifyEnd(const Expr& e) {
  if (!e.defined()) return e;
  Analyzer analyzer;
  return analyzer.simplify(e);
}

}  // namespace

Interval Interval::point(Expr e) { return {e, e}; }
Interval Interval::everything() { return {Expr(), Expr()}; }

Interval Interval::fromRange(const Range& r) {
  TESSEL_ICHECK(r.min.defined() && r.extent.defined()) << "interval of an undefined range";
  return {r.min, simplifyEnd(r.min + r.extent - 1)};
}

bool Interval::isPoint() const { return min.defined() && max.defined() && (min.same(max) || exprEqual(min, max)); }
bool Interval::isBounded() const { return min.defined() && max.defined(); }

Range Interval::toRange() const {
  TESSEL_ICHECK(isBounded()) << "toRange of an unbounded interval";
  return Range::fromMinExtent(min, simplifyEnd(max - min + 1));
}

Interval evalInterval(const Expr& e, const IntervalMap& domains) {
  if (!e.defined()) return Interval::everything();
  Interval result = IntervalEvaluator(domains).eval(e);
  Analyzer analyzer;
  return {result.min.defined() ? analyzer.simplify(result.min) : Expr(),
          result.max.defined() ? analyzer.simplify(result.max) : Expr()};
}

Interval unionOf(const Interval& a, const Interval& b) {
  Analyzer analyzer;
  Expr lo = a.min.defined() && b.min.defined() ? analyzer.simplify(min(a.min, b.min)) : Expr();
  Expr hi = a.max.defined() && b.max.defined() ? analyzer.simplify(max(a.max, b.max)) : Expr();
  return {lo, hi};
}

Interval intersectionOf(const Interval& a, const Interval& b) {
  Analyzer analyzer;
  Expr lo = !a.min.defined() ? b.min : !b.min.defined() ? a.min : analyzer.simplify(max(a.min, b.min));
  Expr hi = !a.max.defined() ? b.max : !b.max.defined() ? a.max : analyzer.simplify(min(a.max, b.max));
  return {lo, hi};
}

}  // namespace tessel
