// Rule application, the per-kind index over the rule tables, hit statistics and traces.
#include "compiler/arith/RewriteRules.h"

#include <array>
#include <memory>

#include "compiler/arith/Analyzer.h"
#include "core/ir/IRPrinter.h"
#include "core/support/Error.h"

namespace tessel {

namespace {

thread_local RewriteTrace* activeTrace = nullptr;

// The type a rule's type class is checked against: the operands' type, which for a
// comparison is not the (bool) type of the result.
DataType operandType(const Expr& e) {
  switch (e->kind()) {
    case NodeKind::EQ: return e.as<EQNode>()->a.dtype();
    case NodeKind::NE: return e.as<NENode>()->a.dtype();
    case NodeKind::LT: return e.as<LTNode>()->a.dtype();
    case NodeKind::LE: return e.as<LENode>()->a.dtype();
    case NodeKind::GT: return e.as<GTNode>()->a.dtype();
    case NodeKind::GE: return e.as<GENode>()->a.dtype();
    default: return e.dtype();
  }
}

bool typesAllow(RuleTypes types, DataType dtype) {
  switch (types) {
    case RuleTypes::Any: return true;
    case RuleTypes::Integer: return dtype.isIntegral();
    case RuleTypes::Signed: return dtype.isInt();
    case RuleTypes::Bool: return dtype.isBool();
  }
  return false;
}

struct RuleIndex {
  std::vector<std::unique_ptr<RewriteRule>> rules;
  std::array<std::vector<const RewriteRule*>, static_cast<size_t>(NodeKind::Other) + 1> byKind;
};

RuleIndex& ruleIndex() {
  static RuleIndex* index = [] {
    auto* built = new RuleIndex;
    built->rules = detail::buildRewriteRules();
    for (auto& rule : built->rules) built->byKind[static_cast<size_t>(rule->root())].push_back(rule.get());
    return built;
  }();
  return *index;
}

}  // namespace

RewriteRule::RewriteRule(std::string ruleSet, RuleTypes types, pattern::Pattern lhs, pattern::Pattern rhs,
                         std::optional<pattern::Pattern> condition)
    : ruleSet_(std::move(ruleSet)), root_(lhs.rootKind()), types_(types), lhs_(lhs), rhs_(rhs),
      condition_(std::move(condition)) {
  TESSEL_ICHECK(root_ != NodeKind::Other) << "a rewrite rule's left side must be a node: " << lhs.toString();
  text_ = lhs.toString() + " -> " + rhs.toString();
  if (condition_) text_ += " if " + condition_->toString();
}

RewriteRule::RewriteRule(std::string ruleSet, RuleTypes types, NodeKind root, std::string text,
                         RuleProcedure procedure)
    : ruleSet_(std::move(ruleSet)), text_(std::move(text)), root_(root), types_(types),
      procedure_(std::move(procedure)) {}

Expr RewriteRule::apply(const Expr& e, RewriteContext& context) const {
  if (e->kind() != root_ || !typesAllow(types_, operandType(e).element())) return Expr();
  Expr result;
  if (procedure_) {
    result = procedure_(e, context);
  } else {
    pattern::Match match;
    if (!matchPattern(*lhs_, e, match)) return Expr();
    if (condition_ && !conditionHolds(*condition_, match, context.analyzer())) return Expr();
    result = buildPattern(*rhs_, match, e.dtype());
  }
  // A rule that would change the type is not applicable here (never the case for a
  // well-written rule; refusing keeps the IR valid regardless).
  if (!result.defined() || result.same(e) || result.dtype() != e.dtype()) return Expr();
  hits_.fetch_add(1, std::memory_order_relaxed);
  if (activeTrace) activeTrace->firings_.push_back({ruleSet_, text_, toString(e), toString(result)});
  return result;
}

const std::vector<const RewriteRule*>& rewriteRulesFor(NodeKind kind) {
  return ruleIndex().byKind[static_cast<size_t>(kind)];
}

std::vector<RewriteRuleStats> rewriteRuleStats() {
  std::vector<RewriteRuleStats> stats;
  for (auto& rule : ruleIndex().rules) stats.push_back({rule->ruleSet(), rule->text(), rule->hits()});
  return stats;
}

void resetRewriteRuleStats() {
  for (auto& rule : ruleIndex().rules) rule->resetHits();
}

RewriteTrace::RewriteTrace() : previous_(activeTrace) { activeTrace = this; }
RewriteTrace::~RewriteTrace() { activeTrace = previous_; }

}  // namespace tessel
