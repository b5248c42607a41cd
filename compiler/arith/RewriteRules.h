// The simplifier's rewrite rules as data: named rule sets, each rule either a pattern
// (lhs -> rhs if condition) or a named procedure, indexed by the root node kind, each with a
// hit counter so that a viewer can show which rules fired.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/arith/Pattern.h"
#include "core/ir/Expr.h"

namespace tessel {

class Analyzer;

/// What a rule may ask of the simplifier running it.
class RewriteContext {
public:
  virtual ~RewriteContext() = default;
  /// The analyzer holding the bindings (for bounds).
  virtual Analyzer& analyzer() = 0;
  /// Simplifies an expression a procedural rule built (e.g. a - b to compare a and b).
  virtual Expr simplify(const Expr& e) = 0;
};

/// Which operand types a rule is valid for. Integer rules hold in wraparound arithmetic
/// (every integer type); Signed rules also assume no overflow, which holds for index
/// arithmetic; Any rules are exact for floats as well.
enum class RuleTypes : uint8_t { Any, Integer, Signed, Bool };

using RuleProcedure = std::function<Expr(const Expr& e, RewriteContext& context)>;

class RewriteRule {
public:
  /// A pattern rule: rewrite `lhs` to `rhs` when `condition` (if any) holds.
  RewriteRule(std::string ruleSet, RuleTypes types, pattern::Pattern lhs, pattern::Pattern rhs,
              std::optional<pattern::Pattern> condition);
  /// A procedural rule on nodes of kind `root`, described by `text`.
  RewriteRule(std::string ruleSet, RuleTypes types, NodeKind root, std::string text, RuleProcedure procedure);

  const std::string& ruleSet() const { return ruleSet_; }
  /// "x + 0 -> x", "floordiv(x, c0) -> 0 if ..." or the procedure's description.
  const std::string& text() const { return text_; }
  NodeKind root() const { return root_; }
  uint64_t hits() const { return hits_.load(std::memory_order_relaxed); }
  void resetHits() { hits_.store(0, std::memory_order_relaxed); }

  /// The rewritten expression, or undefined when the rule does not apply to `e`. Counts
  /// the hit and reports it to an active RewriteTrace.
  Expr apply(const Expr& e, RewriteContext& context) const;

private:
  std::string ruleSet_, text_;
  NodeKind root_;
  RuleTypes types_;
  std::optional<pattern::Pattern> lhs_, rhs_, condition_;
  RuleProcedure procedure_;
  mutable std::atomic<uint64_t> hits_{0};
};

/// The rules whose root is `kind`, in the order the simplifier tries them: constant
/// folding first, then the pattern tables, then bound-driven and canonicalizing procedures.
const std::vector<const RewriteRule*>& rewriteRulesFor(NodeKind kind);

struct RewriteRuleStats {
  std::string ruleSet;
  std::string rule;
  uint64_t hits = 0;
};
/// Every rule with its hit count since the last reset (all threads together).
std::vector<RewriteRuleStats> rewriteRuleStats();
void resetRewriteRuleStats();

/// While alive, records every rule that fires on this thread (the innermost trace records
/// when traces nest), with the expression before and after.
class RewriteTrace {
public:
  struct Firing {
    std::string ruleSet, rule, before, after;
  };
  RewriteTrace();
  ~RewriteTrace();
  RewriteTrace(const RewriteTrace&) = delete;
  RewriteTrace& operator=(const RewriteTrace&) = delete;
  const std::vector<Firing>& firings() const { return firings_; }

private:
  friend class RewriteRule;
  std::vector<Firing> firings_;
  RewriteTrace* previous_;
};

namespace detail {
/// The rule sets in application order (defined with the tables in RuleTables.cpp).
std::vector<std::unique_ptr<RewriteRule>> buildRewriteRules();
}  // namespace detail

}  // namespace tessel
