// Variable bindings, constant-bound analysis and proofs.
#include "compiler/arith/Analyzer.h"

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/arith/ConstantFold.h"
#include "compiler/arith/IntervalSet.h"
#include "compiler/arith/RewriteSimplifier.h"
#include "core/ir/IRMutator.h"
#include "core/ir/IROperators.h"
#include "core/support/Error.h"

namespace tessel {

struct Analyzer::Impl {
  struct Binding {
    Var var;      // keeps the key alive
    Expr value;   // defined for bind(var, value)
    Range range;  // otherwise
  };
  std::unordered_map<const VarNode*, std::vector<Binding>> bindings;
  // Caches, valid for the current bindings only.
  std::unordered_map<const Node*, std::pair<Expr, ConstIntBound>> boundCache;
  std::unordered_map<const VarNode*, ConstIntBound> varBoundCache;
  std::unordered_set<const VarNode*> inProgress;

  static constexpr size_t kMaxCachedBounds = 1 << 16;

  void invalidate() {
    boundCache.clear();
    varBoundCache.clear();
  }

  void push(Binding binding) {
    const VarNode* key = binding.var.get();
    bindings[key].push_back(std::move(binding));
    invalidate();
  }

  void pop(const VarNode* var) {
    auto it = bindings.find(var);
    if (it == bindings.end()) return;
    it->second.pop_back();
    if (it->second.empty()) bindings.erase(it);
    invalidate();
  }

  ConstIntBound bound(const Expr& e) {
    if (!e.defined()) return ConstIntBound::everything();
    if (auto* imm = e.as<IntImmNode>()) return constantBound(imm->value, e.dtype());
    if (auto it = boundCache.find(e.get()); it != boundCache.end()) return it->second.second;
    ConstIntBound result = compute(e);
    if (boundCache.size() >= kMaxCachedBounds) boundCache.clear();
    boundCache.emplace(e.get(), std::make_pair(e, result));
    return result;
  }

  static ConstIntBound constantBound(int64_t value, DataType dtype) {
    // A uint64 constant beyond int64's range is only known to be large.
    if (dtype.element().isUInt() && dtype.bits() == 64 && value < 0) return {0, ConstIntBound::kPosInf};
    if (!dtype.element().isIntegral() && !dtype.element().isBool()) return ConstIntBound::everything();
    return ConstIntBound::point(wrapToType(value, dtype.element()));
  }

  ConstIntBound varBound(const VarNode* var) {
    DataType dtype = var->dtype.element();
    auto it = bindings.find(var);
    if (it == bindings.end()) return typeBound(dtype);
    if (auto cached = varBoundCache.find(var); cached != varBoundCache.end()) return cached->second;
    // A binding that mentions itself (directly or through others) says nothing more.
    if (!inProgress.insert(var).second) return typeBound(dtype);
    const Binding& binding = it->second.back();
    ConstIntBound result;
    if (binding.value.defined()) {
      result = bound(binding.value);
    } else {
      ConstIntBound min = bound(binding.range.min);
      ConstIntBound extent = bound(binding.range.extent);
      if (extent.max < 1) {
        result = min;  // the loop never runs; any fact about its variable is vacuous
      } else {
        ConstIntBound lastOffset{0, extent.max == ConstIntBound::kPosInf ? ConstIntBound::kPosInf : extent.max - 1};
        result = {min.min, boundAdd(min, lastOffset).max};
      }
    }
    result = clampToType(result, dtype);
    inProgress.erase(var);
    varBoundCache[var] = result;
    return result;
  }

  ConstIntBound compute(const Expr& e) {
    DataType dtype = e.dtype().element();
    if (!dtype.isIntegral() && !dtype.isBool()) return ConstIntBound::everything();
    switch (e->kind()) {
      case NodeKind::Var: return varBound(e.as<VarNode>());
      case NodeKind::Add: return binary<AddNode>(e, boundAdd);
      case NodeKind::Sub: return binary<SubNode>(e, boundSub);
      case NodeKind::Mul: return binary<MulNode>(e, boundMul);
      case NodeKind::Div: return binary<DivNode>(e, boundTruncDiv);
      case NodeKind::Mod: return binary<ModNode>(e, boundTruncMod);
      case NodeKind::FloorDiv: return binary<FloorDivNode>(e, boundFloorDiv);
      case NodeKind::FloorMod: return binary<FloorModNode>(e, boundFloorMod);
      case NodeKind::Min: return binary<MinNode>(e, boundMin);
      case NodeKind::Max: return binary<MaxNode>(e, boundMax);
      case NodeKind::Select: {
        auto* n = e.as<SelectNode>();
        if (auto* c = n->condition.as<IntImmNode>()) return bound(c->value ? n->trueValue : n->falseValue);
        return boundUnion(bound(n->trueValue), bound(n->falseValue));
      }
      case NodeKind::Cast: {
        auto* n = e.as<CastNode>();
        DataType from = n->value.dtype().element();
        if (dtype.isBool()) return {0, 1};
        if (!from.isIntegral() && !from.isBool()) return typeBound(dtype);
        return clampToType(bound(n->value), dtype);
      }
      case NodeKind::Call: {
        auto* n = e.as<CallNode>();
        if (n->op == Intrinsic::Likely && n->args.size() == 1) return bound(n->args[0]);
        return typeBound(dtype);
      }
      case NodeKind::Ramp: {
        auto* n = e.as<RampNode>();
        ConstIntBound lanes{0, n->lanes - 1};
        return clampToType(boundAdd(bound(n->base), boundMul(bound(n->stride), lanes)), dtype);
      }
      case NodeKind::Broadcast: return bound(e.as<BroadcastNode>()->value);
      case NodeKind::Let: {
        auto* n = e.as<LetNode>();
        push({n->var, n->value, Range()});
        ConstIntBound result = bound(n->body);
        pop(n->var.get());
        return result;
      }
      default: return typeBound(dtype);  // comparisons, logic, loads, reductions
    }
  }

  template <class NodeT, class F>
  ConstIntBound binary(const Expr& e, F combine) {
    auto* n = e.as<NodeT>();
    return clampToType(combine(bound(n->a), bound(n->b)), e.dtype().element());
  }
};

Analyzer::Analyzer() : impl_(std::make_unique<Impl>()) {}
Analyzer::~Analyzer() = default;
Analyzer::Analyzer(const Analyzer& other) : impl_(std::make_unique<Impl>(*other.impl_)) {}
Analyzer& Analyzer::operator=(const Analyzer& other) {
  if (this != &other) impl_ = std::make_unique<Impl>(*other.impl_);
  return *this;
}
Analyzer::Analyzer(Analyzer&& other) noexcept = default;
Analyzer& Analyzer::operator=(Analyzer&& other) noexcept = default;

void Analyzer::bind(const Var& var, const Range& range) {
  TESSEL_ICHECK(var.defined() && range.min.defined() && range.extent.defined())
      << "bind of an undefined variable or range";
  impl_->push({var, Expr(), range});
}

void Analyzer::bind(const Var& var, const Expr& value) {
  TESSEL_ICHECK(var.defined() && value.defined()) << "bind of an undefined variable or value";
  TESSEL_ICHECK(var.dtype() == value.dtype())
      << "bind " << var.name() << ": value of type " << value.dtype().toString() << " for a variable of type "
      << var.dtype().toString();
  impl_->push({var, value, Range()});
}

void Analyzer::unbind(const Var& var) {
  if (var.defined()) impl_->pop(var.get());
}

ConstIntBound Analyzer::quickBound(const Expr& e) { return impl_->bound(e); }

ConstIntBound Analyzer::constIntBound(const Expr& e) {
  ConstIntBound quick = impl_->bound(e);
  if (!e.defined() || quick.isPoint() || e.as<VarNode>()) return quick;
  // Simplifying first lets shared terms cancel (i*4 + j - i*4 is j).
  return boundIntersection(quick, impl_->bound(simplify(e)));
}

namespace {

bool isOrdering(NodeKind kind) {
  return kind == NodeKind::LT || kind == NodeKind::LE || kind == NodeKind::GT || kind == NodeKind::GE ||
         kind == NodeKind::EQ || kind == NodeKind::NE;
}

std::pair<Expr, Expr> comparisonOperands(const Expr& e) {
  switch (e->kind()) {
    case NodeKind::LT: return {e.as<LTNode>()->a, e.as<LTNode>()->b};
    case NodeKind::LE: return {e.as<LENode>()->a, e.as<LENode>()->b};
    case NodeKind::GT: return {e.as<GTNode>()->a, e.as<GTNode>()->b};
    case NodeKind::GE: return {e.as<GENode>()->a, e.as<GENode>()->b};
    case NodeKind::EQ: return {e.as<EQNode>()->a, e.as<EQNode>()->b};
    case NodeKind::NE: return {e.as<NENode>()->a, e.as<NENode>()->b};
    default: return {};
  }
}

// Whether `kind` holds between a and b for every difference a - b in [lo, hi].
bool differenceProves(NodeKind kind, const ConstIntBound& lo, const ConstIntBound& hi) {
  // lo bounds the smallest difference from below, hi the largest from above.
  switch (kind) {
    case NodeKind::LT: return hi.max < 0;
    case NodeKind::LE: return hi.max <= 0;
    case NodeKind::GT: return lo.min > 0;
    case NodeKind::GE: return lo.min >= 0;
    case NodeKind::NE: return hi.max < 0 || lo.min > 0;
    default: return false;  // equality needs both ends pinned to 0; simplify() covers that
  }
}

}  // namespace

bool Analyzer::canProve(const Expr& condition) {
  if (!condition.defined() || !condition.dtype().element().isBool()) return false;
  // A proof may look through lets: t <= i*2 holds for t = i*2 only once t is replaced.
  // (simplify() keeps let variables whose values are not trivial, to avoid duplicating work.)
  VarMap lets;
  for (auto& [var, stack] : impl_->bindings)
    if (stack.back().value.defined()) lets[var] = stack.back().value;
  Expr expanded = condition;
  for (int level = 0; level < 4 && !lets.empty(); ++level) {
    Expr next = substitute(expanded, lets);
    if (next.same(expanded)) break;
    expanded = next;
  }
  Expr simplified = simplify(expanded);
  if (const int64_t* value = asConstInt(simplified)) return *value != 0;
  return proveBySymbolicRanges(simplified);
}

bool Analyzer::proveBySymbolicRanges(const Expr& condition) {
  switch (condition->kind()) {
    case NodeKind::And: {
      auto* n = condition.as<AndNode>();
      return proveBySymbolicRanges(n->a) && proveBySymbolicRanges(n->b);
    }
    case NodeKind::Or: {
      auto* n = condition.as<OrNode>();
      return proveBySymbolicRanges(n->a) || proveBySymbolicRanges(n->b);
    }
    case NodeKind::Call: {
      auto* n = condition.as<CallNode>();
      return n->op == Intrinsic::Likely && n->args.size() == 1 && proveBySymbolicRanges(n->args[0]);
    }
    default: break;
  }
  if (const int64_t* value = asConstInt(condition)) return *value != 0;
  if (!isOrdering(condition->kind())) return false;
  auto [a, b] = comparisonOperands(condition);
  if (!a.dtype().isInt() || !a.dtype().isScalar()) return false;
  // Variables with symbolic ranges (m in [0, n)) are replaced by their symbolic ends, so
  // that m - n is seen to be at most n - 1 - n = -1; constant ranges are already known to
  // the bounds of what remains.
  IntervalMap domains;
  for (auto& [var, stack] : impl_->bindings) {
    const Impl::Binding& binding = stack.back();
    if (binding.value.defined()) continue;
    if (asConstInt(binding.range.min) && asConstInt(binding.range.extent)) continue;
    domains[var] = Interval::fromRange(binding.range);
  }
  if (domains.empty()) return false;
  Expr difference = simplify(a - b);
  Interval interval = evalInterval(difference, domains);
  ConstIntBound lo = interval.min.defined() ? constIntBound(interval.min) : ConstIntBound::everything();
  ConstIntBound hi = interval.max.defined() ? constIntBound(interval.max) : ConstIntBound::everything();
  return differenceProves(condition->kind(), lo, hi);
}

Expr Analyzer::simplify(const Expr& e) { return rewriteSimplify(e, *this); }

const Expr* Analyzer::letValue(const VarNode* var) const {
  auto it = impl_->bindings.find(var);
  if (it == impl_->bindings.end() || !it->second.back().value.defined()) return nullptr;
  return &it->second.back().value;
}

}  // namespace tessel
