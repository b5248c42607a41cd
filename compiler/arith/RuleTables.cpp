// The simplifier's rule tables. Each rule set is named (the name a viewer shows next to a
// firing) and restricted to the operand types it is valid for; within a root node kind the
// simplifier tries rules in the order written here and applies the first that matches.
//
// Order of sets: constant folding, then the algebraic tables (canonicalization: constants to
// the right, constants gathered outward, like terms merged, bound-driven division rules),
// then vector rules, then procedures that need more than a pattern (decisions by bounds,
// linear term collection).
#include <algorithm>
#include <memory>

#include "compiler/arith/Analyzer.h"
#include "compiler/arith/ConstantFold.h"
#include "compiler/arith/ExprEqual.h"
#include "compiler/arith/LinearForm.h"
#include "compiler/arith/RewriteRules.h"
#include "core/ir/IROperators.h"

namespace tessel::detail {

namespace {

using namespace tessel::pattern;

class RuleTableBuilder {
public:
  std::vector<std::unique_ptr<RewriteRule>> rules;

  /// Starts rule set `name`; the rules that follow apply to operands of `types`.
  void ruleSet(std::string name, RuleTypes types) {
    set_ = std::move(name);
    types_ = types;
  }
  void rewrite(Pattern lhs, Pattern rhs) {
    rules.push_back(std::make_unique<RewriteRule>(set_, types_, std::move(lhs), std::move(rhs), std::nullopt));
  }
  void rewrite(Pattern lhs, Pattern rhs, Pattern condition) {
    rules.push_back(std::make_unique<RewriteRule>(set_, types_, std::move(lhs), std::move(rhs), std::move(condition)));
  }
  void procedure(NodeKind root, std::string text, RuleProcedure procedure) {
    rules.push_back(std::make_unique<RewriteRule>(set_, types_, root, std::move(text), std::move(procedure)));
  }

private:
  std::string set_;
  RuleTypes types_ = RuleTypes::Any;
};

constexpr NodeKind kComparisons[] = {NodeKind::LT, NodeKind::LE, NodeKind::GT,
                                     NodeKind::GE, NodeKind::EQ, NodeKind::NE};
constexpr NodeKind kOrderings[] = {NodeKind::LT, NodeKind::LE, NodeKind::GT, NodeKind::GE};

// The comparison with its operands swapped: a < b is b > a.
NodeKind flipped(NodeKind kind) {
  switch (kind) {
    case NodeKind::LT: return NodeKind::GT;
    case NodeKind::LE: return NodeKind::GE;
    case NodeKind::GT: return NodeKind::LT;
    case NodeKind::GE: return NodeKind::LE;
    default: return kind;
  }
}

// --- helpers for procedures --------------------------------------------------------------

struct Operands {
  Expr a, b;
};

Operands operandsOf(const Expr& e) {
  switch (e->kind()) {
#define TESSEL_OPERANDS(Name) \
  case NodeKind::Name: return {e.as<Name##Node>()->a, e.as<Name##Node>()->b};
    TESSEL_BINARY_NODES(TESSEL_OPERANDS)
#undef TESSEL_OPERANDS
    default: return {};
  }
}

Expr makeComparison(NodeKind kind, Expr a, Expr b) {
  switch (kind) {
    case NodeKind::LT: return LTNode::make(std::move(a), std::move(b));
    case NodeKind::LE: return LENode::make(std::move(a), std::move(b));
    case NodeKind::GT: return GTNode::make(std::move(a), std::move(b));
    case NodeKind::GE: return GENode::make(std::move(a), std::move(b));
    case NodeKind::EQ: return EQNode::make(std::move(a), std::move(b));
    default: return NENode::make(std::move(a), std::move(b));
  }
}

// The truth of `a kind b` from the bounds of a - b, if they decide it.
std::optional<bool> decideByDifference(NodeKind kind, const ConstIntBound& d) {
  switch (kind) {
    case NodeKind::LT: if (d.max < 0) return true; if (d.min >= 0) return false; break;
    case NodeKind::LE: if (d.max <= 0) return true; if (d.min > 0) return false; break;
    case NodeKind::GT: if (d.min > 0) return true; if (d.max <= 0) return false; break;
    case NodeKind::GE: if (d.min >= 0) return true; if (d.max < 0) return false; break;
    case NodeKind::EQ: if (d.min == 0 && d.max == 0) return true; if (!d.contains(0)) return false; break;
    case NodeKind::NE: if (d.min == 0 && d.max == 0) return false; if (!d.contains(0)) return true; break;
    default: break;
  }
  return std::nullopt;
}

// The truth of `a kind b` from the bounds of a and b separately (for unsigned types, where
// a - b wraps around and says nothing).
std::optional<bool> decideBySeparateBounds(NodeKind kind, const ConstIntBound& a, const ConstIntBound& b) {
  switch (kind) {
    case NodeKind::LT: if (a.max < b.min) return true; if (a.min >= b.max) return false; break;
    case NodeKind::LE: if (a.max <= b.min) return true; if (a.min > b.max) return false; break;
    case NodeKind::GT: if (a.min > b.max) return true; if (a.max <= b.min) return false; break;
    case NodeKind::GE: if (a.min >= b.max) return true; if (a.max < b.min) return false; break;
    case NodeKind::EQ:
      if (a.isPoint() && b.isPoint() && a.min == b.min) return true;
      if (a.max < b.min || b.max < a.min) return false;
      break;
    case NodeKind::NE:
      if (a.isPoint() && b.isPoint() && a.min == b.min) return false;
      if (a.max < b.min || b.max < a.min) return true;
      break;
    default: break;
  }
  return std::nullopt;
}

// The bounds of a - b, simplified first so that shared terms cancel.
ConstIntBound differenceBound(const Expr& a, const Expr& b, RewriteContext& context) {
  Expr difference = isConstInt(b, 0) ? a : context.simplify(SubNode::make(a, b));
  return context.analyzer().quickBound(difference);
}

Expr decideComparison(const Expr& e, RewriteContext& context) {
  auto [a, b] = operandsOf(e);
  std::optional<bool> truth;
  if (a.dtype().element().isInt()) truth = decideByDifference(e->kind(), differenceBound(a, b, context));
  if (!truth) {
    Analyzer& analyzer = context.analyzer();
    truth = decideBySeparateBounds(e->kind(), analyzer.quickBound(a), analyzer.quickBound(b));
  }
  if (!truth) return Expr();
  return makeIntConst(e.dtype(), *truth ? 1 : 0);
}

// a < b becomes (a - b) < 0 when the difference is smaller than the two sides: shared
// terms cancel (i*4 + j < i*4 + 4 becomes j < 4 after the constant rules).
Expr cancelCommonTerms(const Expr& e, RewriteContext& context) {
  auto [a, b] = operandsOf(e);
  if (asConstInt(a) || asConstInt(b)) return Expr();
  Expr difference = context.simplify(SubNode::make(a, b));
  size_t sides = exprSize(a) + exprSize(b);
  if (exprSize(difference, sides) + 1 >= sides) return Expr();
  return makeComparison(e->kind(), difference, makeIntConst(difference.dtype(), 0));
}

// min(a, b) is a (or b) when the bounds order them.
Expr decideMinMax(const Expr& e, RewriteContext& context) {
  bool isMin = e->kind() == NodeKind::Min;
  auto [a, b] = operandsOf(e);
  std::optional<bool> aIsSmaller;  // a <= b (true) or a >= b (false)
  if (a.dtype().element().isInt()) {
    ConstIntBound d = differenceBound(a, b, context);
    if (d.max <= 0) aIsSmaller = true;
    else if (d.min >= 0) aIsSmaller = false;
  }
  if (!aIsSmaller) {
    ConstIntBound ba = context.analyzer().quickBound(a), bb = context.analyzer().quickBound(b);
    if (ba.max <= bb.min) aIsSmaller = true;
    else if (ba.min >= bb.max) aIsSmaller = false;
  }
  if (!aIsSmaller) return Expr();
  return *aIsSmaller == isMin ? a : b;
}

int64_t floorDivide(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// floordiv(x, c) / floormod(x, c) when every value x can take lies in one period of c.
Expr divisionInOnePeriod(const Expr& e, RewriteContext& context) {
  auto [x, divisor] = operandsOf(e);
  auto* c = divisor.as<IntImmNode>();
  if (!c || c->value <= 0) return Expr();
  ConstIntBound bound = context.analyzer().quickBound(x);
  if (bound.min == ConstIntBound::kNegInf || bound.max == ConstIntBound::kPosInf) return Expr();
  int64_t period = floorDivide(bound.min, c->value);
  if (period != floorDivide(bound.max, c->value)) return Expr();
  if (e->kind() == NodeKind::FloorDiv) return makeIntConst(e.dtype(), period);
  if (period == 0) return x;
  return SubNode::make(x, makeIntConst(e.dtype(), period * c->value));
}

// floordiv / floormod of a ramp by a broadcast constant whose lanes never cross a multiple
// of the divisor (what vectorizing an inner split loop produces):
//   floordiv(ramp(io*8, 1, 8), 8) -> broadcast(io, 8),  floormod(...) -> ramp(0, 1, 8).
Expr rampDivision(const Expr& e, RewriteContext& context) {
  auto [a, b] = operandsOf(e);
  auto* ramp = a.as<RampNode>();
  auto* divisor = b.as<BroadcastNode>();
  if (!ramp || !divisor) return Expr();
  auto* c = divisor->value.as<IntImmNode>();
  auto* stride = ramp->stride.as<IntImmNode>();
  if (!c || !stride || c->value <= 0 || stride->value < 0) return Expr();
  DataType scalar = ramp->base.dtype();
  Expr offset = context.simplify(FloorModNode::make(ramp->base, makeIntConst(scalar, c->value)));
  ConstIntBound start = context.analyzer().quickBound(offset);
  __int128 last = __int128(start.max) + __int128(stride->value) * (ramp->lanes - 1);
  if (start.max == ConstIntBound::kPosInf || last >= c->value) return Expr();
  if (e->kind() == NodeKind::FloorDiv)
    return BroadcastNode::make(FloorDivNode::make(ramp->base, makeIntConst(scalar, c->value)), ramp->lanes);
  return RampNode::make(offset, ramp->stride, ramp->lanes);
}

// Collects like terms of a sum and writes it as a flat sum of scaled terms, unless that
// takes more operations: (x*32 + y) - x*32 -> y, (i + 3)*4 - i*4 -> 12,
// ((a*16 + b)*8 + c)*4 + d -> a*512 + b*32 + c*4 + d, but (x + y)*4 stays.
Expr collectLinearTerms(const Expr& e, RewriteContext&) {
  auto form = toLinearForm(e);
  if (!form) return Expr();
  Expr flat = fromLinearForm(*form);
  if (linearOperationCount(flat) > linearOperationCount(e) || exprEqual(flat, e)) return Expr();
  return flat;
}

// floordiv / floormod by a constant c > 1 of a sum, looking at all its terms at once:
//  - terms whose coefficient c divides leave the division: floordiv(a*64 + r, 32) is
//    a*2 + floordiv(r, 32), floormod(a*64 + r, 32) is floormod(r, 32);
//  - when the other terms' coefficients share a factor g dividing c and the rest stays in
//    [0, g): floordiv(b*32 + c*4 + d, 64) is floordiv(b, 2) for c*4 + d in [0, 32), and
//    floormod(...) is floormod(b, 2)*32 + c*4 + d.
Expr divideLinearForm(const Expr& e, RewriteContext& context) {
  auto [x, divisor] = operandsOf(e);
  auto* constant = divisor.as<IntImmNode>();
  if (!constant || constant->value <= 1 || !x.dtype().isScalar()) return Expr();
  int64_t c = constant->value;
  bool quotient = e->kind() == NodeKind::FloorDiv;
  auto form = toLinearForm(x);
  if (!form || form->terms.empty()) return Expr();
  DataType dtype = x.dtype();
  auto divide = [&](Expr a, int64_t by) -> Expr {
    Expr d = makeIntConst(dtype, by);
    return quotient ? FloorDivNode::make(std::move(a), d) : FloorModNode::make(std::move(a), d);
  };

  LinearForm multiples{dtype, {}, floorDivide(form->constant, c), 0};
  LinearForm rest{dtype, {}, form->constant - multiples.constant * c, 0};
  for (auto& term : form->terms) {
    if (term.coefficient % c == 0) multiples.terms.push_back({term.atom, term.coefficient / c});
    else rest.terms.push_back(term);
  }
  if (!multiples.terms.empty() || multiples.constant != 0) {
    Expr remainder = fromLinearForm(rest);
    if (!quotient) return divide(remainder, c);
    return AddNode::make(fromLinearForm(multiples), divide(remainder, c));
  }

  std::vector<int64_t> factors;
  for (auto& term : form->terms) {
    int64_t g = term.coefficient < 0 ? -term.coefficient : term.coefficient;
    if (g > 1 && c % g == 0 && std::find(factors.begin(), factors.end(), g) == factors.end()) factors.push_back(g);
  }
  std::sort(factors.rbegin(), factors.rend());
  for (int64_t g : factors) {
    LinearForm high{dtype, {}, 0, 0}, low{dtype, {}, form->constant, 0};
    for (auto& term : form->terms) {
      if (term.coefficient % g == 0) high.terms.push_back({term.atom, term.coefficient / g});
      else low.terms.push_back(term);
    }
    Expr lowPart = fromLinearForm(low);
    ConstIntBound bound = context.analyzer().quickBound(lowPart);
    if (bound.min < 0 || bound.max >= g) continue;
    Expr highPart = fromLinearForm(high);
    if (quotient) return divide(highPart, c / g);
    Expr scaled = MulNode::make(divide(highPart, c / g), makeIntConst(dtype, g));
    return isConstInt(lowPart, 0) ? scaled : AddNode::make(scaled, lowPart);
  }
  return Expr();
}

// cast(T, broadcast(x)) -> broadcast(cast(T, x)): casts of constants then fold.
Expr castOfBroadcast(const Expr& e, RewriteContext&) {
  auto* cast = e.as<CastNode>();
  auto* b = cast->value.as<BroadcastNode>();
  if (!b) return Expr();
  return BroadcastNode::make(CastNode::make(cast->dtype.element(), b->value), b->lanes);
}

// T(S(x)) -> x when x already has type T and its values fit in S (a narrowing that loses
// nothing, as int64(int32(i)) for a small loop index).
Expr castRoundTrip(const Expr& e, RewriteContext& context) {
  auto* outer = e.as<CastNode>();
  auto* inner = outer->value.as<CastNode>();
  if (!inner) return Expr();
  const Expr& x = inner->value;
  DataType through = inner->dtype;
  if (x.dtype() != outer->dtype || !x.dtype().element().isIntegral() || !through.element().isIntegral())
    return Expr();
  ConstIntBound bound = context.analyzer().quickBound(x);
  ConstIntBound range = typeBound(through.element());
  if (bound.min < range.min || bound.max > range.max) return Expr();
  return x;
}

// --- the tables -----------------------------------------------------------------------------

void constantFolding(RuleTableBuilder& t) {
  t.ruleSet("fold", RuleTypes::Any);
  auto fold = [](const Expr& e, RewriteContext&) { return constantFold(e); };
#define TESSEL_FOLD_RULE(Name) \
  t.procedure(NodeKind::Name, std::string("fold ") + nodeKindName(NodeKind::Name) + " of constants", fold);
  TESSEL_BINARY_NODES(TESSEL_FOLD_RULE)
#undef TESSEL_FOLD_RULE
  t.procedure(NodeKind::Not, "fold Not of a constant", fold);
  t.procedure(NodeKind::Select, "fold Select of a constant condition", fold);
  t.procedure(NodeKind::Cast, "fold Cast of a constant", fold);
  t.procedure(NodeKind::Call, "fold exact intrinsics (floor, ceil, trunc, fabs, sqrt) of constants", fold);
}

void addRules(RuleTableBuilder& t) {
  t.ruleSet("add", RuleTypes::Any);
  t.rewrite(c0 + x, x + c0);

  t.ruleSet("add", RuleTypes::Integer);
  t.rewrite(x + 0, x);
  t.rewrite((x + c0) + c1, x + (c0 + c1));
  t.rewrite((x - c0) + c1, x + (c1 - c0));
  t.rewrite((c0 - x) + c1, (c0 + c1) - x);
  t.rewrite((x + c0) + y, (x + y) + c0);
  t.rewrite(x + (y + c0), (x + y) + c0);
  t.rewrite((x - c0) + y, (x + y) - c0);
  t.rewrite(x + (y - c0), (x + y) - c0);
  t.rewrite(x + (0 - y), x - y);
  t.rewrite((0 - x) + y, y - x);
  t.rewrite(x + x, x * 2);
  t.rewrite(x * c0 + x, x * (c0 + 1));
  t.rewrite(x + x * c0, x * (c0 + 1));
  t.rewrite(x * c0 + x * c1, x * (c0 + c1));
  t.rewrite((x - y) + y, x);
  t.rewrite(y + (x - y), x);
  // Fused loops rebuilt: floordiv(f, 64)*64 + floormod(f, 64) is f.
  t.rewrite(floordiv(x, c0) * c0 + floormod(x, c0), x, ne(c0, 0));
  t.rewrite(floormod(x, c0) + floordiv(x, c0) * c0, x, ne(c0, 0));
  t.rewrite((y + floordiv(x, c0) * c0) + floormod(x, c0), y + x, ne(c0, 0));
  t.rewrite((floordiv(x, c0) * c0 + y) + floormod(x, c0), x + y, ne(c0, 0));
  t.rewrite(floordiv(x, c0) * c1 + floormod(x, c0) * c2, x * c2, ne(c0, 0) && eq(c1, c0 * c2));
  // ... and its inner digits: floormod(f, 196)//14*14 + floormod(f, 14) is floormod(f, 196) (an
  // NCHW index fused over [C, 14, 14]; left apart, the vector loads along f become gathers).
  t.rewrite(floordiv(floormod(x, c1), c0) * c0 + floormod(x, c0), floormod(x, c1),
            c0 > 0 && c1 > 0 && eq(floormod(c1, c0), 0));
  t.rewrite((y + floordiv(floormod(x, c1), c0) * c0) + floormod(x, c0), y + floormod(x, c1),
            c0 > 0 && c1 > 0 && eq(floormod(c1, c0), 0));
  t.rewrite(truncdiv(x, c0) * c0 + truncmod(x, c0), x, ne(c0, 0));
  t.rewrite(truncmod(x, c0) + truncdiv(x, c0) * c0, x, ne(c0, 0));

  t.ruleSet("add", RuleTypes::Signed);
  // x + -3 reads better as x - 3 (the type's minimum has no positive counterpart).
  t.rewrite(x + c0, x - (0 - c0), c0 < 0 && c0 > typeMin(c0));
}

void subRules(RuleTableBuilder& t) {
  t.ruleSet("sub", RuleTypes::Any);
  t.rewrite(x - 0, x);

  t.ruleSet("sub", RuleTypes::Integer);
  t.rewrite(x - x, 0);
  t.rewrite((x + y) - x, y);
  t.rewrite((x + y) - y, x);
  t.rewrite(x - (x + y), 0 - y);
  t.rewrite(y - (x + y), 0 - x);
  t.rewrite((x - y) - x, 0 - y);
  t.rewrite(x - (x - y), y);
  t.rewrite((x + c0) - c1, x + (c0 - c1));
  t.rewrite((x - c0) - c1, x - (c0 + c1));
  t.rewrite((c0 - x) - c1, (c0 - c1) - x);
  t.rewrite(c0 - (x + c1), (c0 - c1) - x);
  t.rewrite(c0 - (c1 - x), x + (c0 - c1));
  t.rewrite((x + c0) - (y + c1), (x - y) + (c0 - c1));
  t.rewrite((x + c0) - y, (x - y) + c0);
  t.rewrite(x - (y + c0), (x - y) - c0);
  t.rewrite((x - c0) - y, (x - y) - c0);
  t.rewrite(x - (y - c0), (x - y) + c0);
  t.rewrite(x - (0 - y), x + y);
  t.rewrite(x * c0 - x, x * (c0 - 1));
  t.rewrite(x - x * c0, x * (1 - c0));
  t.rewrite(x * c0 - x * c1, x * (c0 - c1));
  t.rewrite((x + y) - (x + z), y - z);
  t.rewrite((x + y) - (z + x), y - z);
  t.rewrite((y + x) - (x + z), y - z);
  t.rewrite((y + x) - (z + x), y - z);
  t.rewrite(x - floordiv(x, c0) * c0, floormod(x, c0), ne(c0, 0));
  t.rewrite(x - truncdiv(x, c0) * c0, truncmod(x, c0), ne(c0, 0));

  t.ruleSet("sub", RuleTypes::Signed);
  t.rewrite(x - c0, x + (0 - c0), c0 < 0 && c0 > typeMin(c0));
}

void mulRules(RuleTableBuilder& t) {
  t.ruleSet("mul", RuleTypes::Any);
  t.rewrite(c0 * x, x * c0);
  t.rewrite(x * 1, x);

  t.ruleSet("mul", RuleTypes::Integer);
  t.rewrite(x * 0, 0);
  t.rewrite((x * c0) * c1, x * (c0 * c1));
  t.rewrite((x * c0) * y, (x * y) * c0);
  t.rewrite(x * (y * c0), (x * y) * c0);
  t.rewrite((x + c0) * c1, x * c1 + c0 * c1);
  t.rewrite((x - c0) * c1, x * c1 - c0 * c1);
  t.rewrite((0 - x) * c0, x * (0 - c0));
}

void divisionRules(RuleTableBuilder& t) {
  t.ruleSet("div", RuleTypes::Any);
  t.rewrite(truncdiv(x, 1), x);

  t.ruleSet("div", RuleTypes::Integer);
  t.rewrite(truncmod(x, 1), 0);
  t.rewrite(floordiv(x, 1), x);
  t.rewrite(floormod(x, 1), 0);

  // C division of a non-negative value is floor division, which the rules below know.
  t.ruleSet("div", RuleTypes::Signed);
  t.rewrite(truncdiv(x, c0), floordiv(x, c0), c0 > 0 && lowerBound(x) >= 0);
  t.rewrite(truncmod(x, c0), floormod(x, c0), c0 > 0 && lowerBound(x) >= 0);

  t.ruleSet("floordiv", RuleTypes::Signed);
  t.rewrite(floordiv(x, c0), 0, c0 > 0 && lowerBound(x) >= 0 && upperBound(x) < c0);
  t.rewrite(floordiv(x * c0, c1), x * floordiv(c0, c1), c1 > 0 && eq(floormod(c0, c1), 0));
  t.rewrite(floordiv(x * c0, c1), floordiv(x, floordiv(c1, c0)), c0 > 0 && c1 > 0 && eq(floormod(c1, c0), 0));
  // Split loops rejoined: floordiv(i.outer*32 + i.inner, 32) -> i.outer + floordiv(i.inner, 32).
  t.rewrite(floordiv(x * c0 + y, c1), x * floordiv(c0, c1) + floordiv(y, c1), c1 > 0 && eq(floormod(c0, c1), 0));
  t.rewrite(floordiv(y + x * c0, c1), floordiv(y, c1) + x * floordiv(c0, c1), c1 > 0 && eq(floormod(c0, c1), 0));
  t.rewrite(floordiv(x + c0, c1), floordiv(x, c1) + floordiv(c0, c1), c1 > 0 && eq(floormod(c0, c1), 0));
  t.rewrite(floordiv(x - c0, c1), floordiv(x, c1) - floordiv(c0, c1), c1 > 0 && eq(floormod(c0, c1), 0));
  // An inner index smaller than the stride never carries: floordiv(o*8 + i, 64) -> floordiv(o, 8).
  t.rewrite(floordiv(x * c0 + y, c1), floordiv(x, floordiv(c1, c0)),
            c0 > 0 && c1 > 0 && eq(floormod(c1, c0), 0) && lowerBound(y) >= 0 && upperBound(y) < c0);
  t.rewrite(floordiv(y + x * c0, c1), floordiv(x, floordiv(c1, c0)),
            c0 > 0 && c1 > 0 && eq(floormod(c1, c0), 0) && lowerBound(y) >= 0 && upperBound(y) < c0);
  t.rewrite(floordiv(floordiv(x, c0), c1), floordiv(x, c0 * c1), c0 > 0 && c1 > 0);

  t.ruleSet("floormod", RuleTypes::Signed);
  t.rewrite(floormod(x, c0), x, c0 > 0 && lowerBound(x) >= 0 && upperBound(x) < c0);
  t.rewrite(floormod(x * c0, c1), 0, c1 > 0 && eq(floormod(c0, c1), 0));
  t.rewrite(floormod(x * c0 + y, c1), floormod(y, c1), c1 > 0 && eq(floormod(c0, c1), 0));
  t.rewrite(floormod(y + x * c0, c1), floormod(y, c1), c1 > 0 && eq(floormod(c0, c1), 0));
  t.rewrite(floormod(x + c0, c1), floormod(x, c1), c1 > 0 && eq(floormod(c0, c1), 0));
  t.rewrite(floormod(x - c0, c1), floormod(x, c1), c1 > 0 && eq(floormod(c0, c1), 0));
  t.rewrite(floormod(x + c0, c1), floormod(x + floormod(c0, c1), c1), c1 > 0 && (c0 < 0 || c0 >= c1));
  t.rewrite(floormod(floormod(x, c0), c1), floormod(x, c1), c0 > 0 && c1 > 0 && eq(floormod(c0, c1), 0));
  t.rewrite(floormod(x * c0, c1), floormod(x, floordiv(c1, c0)) * c0, c0 > 0 && c1 > 0 && eq(floormod(c1, c0), 0));
  t.rewrite(floormod(x * c0 + y, c1), floormod(x, floordiv(c1, c0)) * c0 + y,
            c0 > 0 && c1 > 0 && eq(floormod(c1, c0), 0) && lowerBound(y) >= 0 && upperBound(y) < c0);
  t.rewrite(floormod(y + x * c0, c1), y + floormod(x, floordiv(c1, c0)) * c0,
            c0 > 0 && c1 > 0 && eq(floormod(c1, c0), 0) && lowerBound(y) >= 0 && upperBound(y) < c0);
}

void minMaxRules(RuleTableBuilder& t) {
  for (NodeKind kind : {NodeKind::Min, NodeKind::Max}) {
    bool isMin = kind == NodeKind::Min;
    auto op = [kind](Pattern a, Pattern b) { return binary(kind, std::move(a), std::move(b)); };
    auto other = [kind](Pattern a, Pattern b) {
      return binary(kind == NodeKind::Min ? NodeKind::Max : NodeKind::Min, std::move(a), std::move(b));
    };
    std::string name = isMin ? "min" : "max";

    t.ruleSet(name, RuleTypes::Integer);
    t.rewrite(op(x, x), x);
    t.rewrite(op(c0, x), op(x, c0));
    t.rewrite(op(op(x, c0), c1), op(x, op(c0, c1)));
    t.rewrite(op(op(x, y), x), op(x, y));
    t.rewrite(op(op(x, y), y), op(x, y));
    t.rewrite(op(x, op(x, y)), op(x, y));
    t.rewrite(op(y, op(x, y)), op(x, y));
    // Absorption: min(max(x, y), x) is x.
    t.rewrite(op(other(x, y), x), x);
    t.rewrite(op(other(x, y), y), y);
    t.rewrite(op(x, other(x, y)), x);
    t.rewrite(op(y, other(x, y)), y);

    t.ruleSet(name, RuleTypes::Signed);
    t.rewrite(op(x + c0, x + c1), x + op(c0, c1));
    t.rewrite(op(x - c0, x - c1), x - other(c0, c1));
    t.rewrite(op(x, x + c0), isMin ? x : x + c0, c0 >= 0);
    t.rewrite(op(x, x + c0), isMin ? x + c0 : x, c0 < 0);
    t.rewrite(op(x + c0, x), isMin ? x : x + c0, c0 >= 0);
    t.rewrite(op(x + c0, x), isMin ? x + c0 : x, c0 < 0);
    t.rewrite(op(x, x - c0), isMin ? x - c0 : x, c0 >= 0);
    t.rewrite(op(x - c0, x), isMin ? x - c0 : x, c0 >= 0);
  }
}

void comparisonRules(RuleTableBuilder& t) {
  t.ruleSet("compare", RuleTypes::Any);
  for (NodeKind kind : kComparisons) t.rewrite(binary(kind, c0, x), binary(flipped(kind), x, c0));

  t.ruleSet("compare", RuleTypes::Integer);
  for (NodeKind kind : kComparisons) {
    bool reflexive = kind == NodeKind::LE || kind == NodeKind::GE || kind == NodeKind::EQ;
    t.rewrite(binary(kind, x, x), reflexive ? kTrue : kFalse);
  }
  // Equality survives wraparound, so these hold for unsigned types too.
  // Constants move to the right-hand side: i + 1 < n is i < n - 1.
  auto moveConstantsRight = [&t](NodeKind kind) {
    t.rewrite(binary(kind, x + c0, c1), binary(kind, x, c1 - c0));
    t.rewrite(binary(kind, x - c0, c1), binary(kind, x, c1 + c0));
    t.rewrite(binary(kind, x + c0, y + c1), binary(kind, x, y + (c1 - c0)));
    t.rewrite(binary(kind, x - c0, y), binary(kind, x, y + c0));
    t.rewrite(binary(kind, x + c0, y), binary(kind, x, y - c0));
    t.rewrite(binary(kind, x - y, 0), binary(kind, x, y));
  };
  for (NodeKind kind : {NodeKind::EQ, NodeKind::NE}) moveConstantsRight(kind);

  t.ruleSet("compare", RuleTypes::Signed);
  for (NodeKind kind : kOrderings) moveConstantsRight(kind);
  // Scaled indices: i*4 < 10 is i < 3.
  t.rewrite(x * c0 < c1, x < floordiv(c1 + c0 - 1, c0), c0 > 0);
  t.rewrite(x * c0 <= c1, x <= floordiv(c1, c0), c0 > 0);
  t.rewrite(x * c0 > c1, x > floordiv(c1, c0), c0 > 0);
  t.rewrite(x * c0 >= c1, x >= floordiv(c1 + c0 - 1, c0), c0 > 0);
  t.rewrite(eq(x * c0, c1), eq(x, floordiv(c1, c0)), ne(c0, 0) && eq(floormod(c1, c0), 0));
  t.rewrite(eq(x * c0, c1), kFalse, ne(c0, 0) && ne(floormod(c1, c0), 0));
  t.rewrite(ne(x * c0, c1), ne(x, floordiv(c1, c0)), ne(c0, 0) && eq(floormod(c1, c0), 0));
  t.rewrite(ne(x * c0, c1), kTrue, ne(c0, 0) && ne(floormod(c1, c0), 0));
  t.rewrite(floordiv(x, c0) < c1, x < c1 * c0, c0 > 0);
  t.rewrite(floordiv(x, c0) >= c1, x >= c1 * c0, c0 > 0);
  t.rewrite(floordiv(x, c0) <= c1, x < (c1 + 1) * c0, c0 > 0);
  t.rewrite(floordiv(x, c0) > c1, x >= (c1 + 1) * c0, c0 > 0);
}

void logicRules(RuleTableBuilder& t) {
  t.ruleSet("logic", RuleTypes::Bool);
  t.rewrite(x && kTrue, x);
  t.rewrite(kTrue && x, x);
  t.rewrite(x && kFalse, kFalse);
  t.rewrite(kFalse && x, kFalse);
  t.rewrite(x && x, x);
  t.rewrite(x && !x, kFalse);
  t.rewrite(!x && x, kFalse);
  t.rewrite(x || kFalse, x);
  t.rewrite(kFalse || x, x);
  t.rewrite(x || kTrue, kTrue);
  t.rewrite(kTrue || x, kTrue);
  t.rewrite(x || x, x);
  t.rewrite(x || !x, kTrue);
  t.rewrite(!x || x, kTrue);
  t.rewrite(!!x, x);
  t.rewrite(!eq(x, y), ne(x, y));
  t.rewrite(!ne(x, y), eq(x, y));
  // Only for integers: with a NaN operand both x < y and x >= y are false.
  t.rewrite(!(x < y), x >= y, isInteger(x));
  t.rewrite(!(x <= y), x > y, isInteger(x));
  t.rewrite(!(x > y), x <= y, isInteger(x));
  t.rewrite(!(x >= y), x < y, isInteger(x));
}

void selectAndCallRules(RuleTableBuilder& t) {
  t.ruleSet("select", RuleTypes::Any);
  t.rewrite(select(kTrue, y, z), y);
  t.rewrite(select(kFalse, y, z), z);
  t.rewrite(select(x, y, y), y);
  t.rewrite(select(!x, y, z), select(x, z, y));

  t.ruleSet("likely", RuleTypes::Bool);
  t.rewrite(likely(kTrue), kTrue);
  t.rewrite(likely(kFalse), kFalse);

  t.ruleSet("cast", RuleTypes::Any);
  t.procedure(NodeKind::Cast, "cast(T, broadcast(x, n)) -> broadcast(cast(T, x), n)", castOfBroadcast);
  t.procedure(NodeKind::Cast, "T(S(x)) -> x if x has type T and its bounds fit in S", castRoundTrip);
}

void vectorRules(RuleTableBuilder& t) {
  t.ruleSet("vector", RuleTypes::Integer);
  t.rewrite(ramp(x, 0, n), broadcast(x, n));  // (for floats, x + 0.0 is not x when x is -0.0)

  t.ruleSet("vector", RuleTypes::Any);
  // Lane-wise identical operands: do the operation once.
#define TESSEL_BROADCAST_RULE(Name) \
  t.rewrite(binary(NodeKind::Name, broadcast(x, n), broadcast(y, n)), broadcast(binary(NodeKind::Name, x, y), n));
  TESSEL_BINARY_NODES(TESSEL_BROADCAST_RULE)
#undef TESSEL_BROADCAST_RULE
  t.rewrite(!broadcast(x, n), broadcast(!x, n));

  t.ruleSet("vector", RuleTypes::Integer);
  t.rewrite(ramp(x, y, n) + ramp(z, w, n), ramp(x + z, y + w, n));
  t.rewrite(ramp(x, y, n) - ramp(z, w, n), ramp(x - z, y - w, n));
  t.rewrite(ramp(x, y, n) + broadcast(z, n), ramp(x + z, y, n));
  t.rewrite(broadcast(z, n) + ramp(x, y, n), ramp(z + x, y, n));
  t.rewrite(ramp(x, y, n) - broadcast(z, n), ramp(x - z, y, n));
  t.rewrite(broadcast(z, n) - ramp(x, y, n), ramp(z - x, 0 - y, n));
  t.rewrite(ramp(x, y, n) * broadcast(z, n), ramp(x * z, y * z, n));
  t.rewrite(broadcast(z, n) * ramp(x, y, n), ramp(x * z, y * z, n));

  t.ruleSet("vector", RuleTypes::Signed);
  t.procedure(NodeKind::FloorDiv, "floordiv(ramp(x, c0, n), broadcast(c1, n)) -> broadcast(floordiv(x, c1), n) if no lane crosses a multiple of c1", rampDivision);
  t.procedure(NodeKind::FloorMod, "floormod(ramp(x, c0, n), broadcast(c1, n)) -> ramp(floormod(x, c1), c0, n) if no lane crosses a multiple of c1", rampDivision);
}

void boundRules(RuleTableBuilder& t) {
  t.ruleSet("bounds", RuleTypes::Integer);
  for (NodeKind kind : kComparisons)
    t.procedure(kind, "decide a comparison when the bounds of a - b (or of a and b) settle it", decideComparison);
  t.procedure(NodeKind::Min, "min(a, b) -> a or b when their bounds order them", decideMinMax);
  t.procedure(NodeKind::Max, "max(a, b) -> a or b when their bounds order them", decideMinMax);
  for (NodeKind kind : {NodeKind::EQ, NodeKind::NE})
    t.procedure(kind, "a == b -> a - b == 0 when the difference cancels terms", cancelCommonTerms);

  t.ruleSet("bounds", RuleTypes::Signed);
  for (NodeKind kind : kOrderings)
    t.procedure(kind, "a < b -> a - b < 0 when the difference cancels terms", cancelCommonTerms);
  t.procedure(NodeKind::FloorDiv, "floordiv(x, c) -> constant when x stays in one period of c", divisionInOnePeriod);
  t.procedure(NodeKind::FloorMod, "floormod(x, c) -> x - k*c when x stays in one period of c", divisionInOnePeriod);
  t.procedure(NodeKind::FloorDiv, "floordiv(sum, c): terms with multiples of c leave; a common factor g | c "
              "with the rest in [0, g) divides out", divideLinearForm);
  t.procedure(NodeKind::FloorMod, "floormod(sum, c): terms with multiples of c vanish; a common factor g | c "
              "with the rest in [0, g) divides out", divideLinearForm);
}

void linearRules(RuleTableBuilder& t) {
  t.ruleSet("linear", RuleTypes::Integer);
  for (NodeKind kind : {NodeKind::Add, NodeKind::Sub, NodeKind::Mul})
    t.procedure(kind, "collect like terms into a flat sum of scaled terms unless that takes more operations",
                collectLinearTerms);
}

}  // namespace

std::vector<std::unique_ptr<RewriteRule>> buildRewriteRules() {
  RuleTableBuilder t;
  constantFolding(t);
  addRules(t);
  subRules(t);
  mulRules(t);
  divisionRules(t);
  minMaxRules(t);
  comparisonRules(t);
  logicRules(t);
  selectAndCallRules(t);
  vectorRules(t);
  boundRules(t);
  linearRules(t);
  return std::move(t.rules);
}

}  // namespace tessel::detail
