// The arithmetic analyzer: facts about variables (ranges, let values) and what follows from
// them: constant bounds, proofs, and simplification.
#pragma once

#include <memory>

#include "compiler/arith/ConstIntBound.h"
#include "core/ir/Expr.h"

namespace tessel {

/// Holds what is known about variables and answers questions about expressions over them.
/// Typical use while walking a loop nest:
///
///   Analyzer analyzer;
///   analyzer.bind(loop->loopVar, Range::fromMinExtent(loop->min, loop->extent));
///   if (analyzer.canProve(index < extent)) ...   // drop a bounds check
///   analyzer.unbind(loop->loopVar);
///
/// Bindings nest: binding a variable again shadows the earlier fact until unbind() restores
/// it. Answers never depend on variables that are not bound (they may take any value of
/// their type). Signed integer arithmetic is assumed not to overflow, as in TVM and Halide;
/// unsigned arithmetic wraps around and is treated as such.
class Analyzer {
public:
  Analyzer();
  ~Analyzer();
  Analyzer(const Analyzer& other);
  Analyzer& operator=(const Analyzer& other);
  Analyzer(Analyzer&& other) noexcept;
  Analyzer& operator=(Analyzer&& other) noexcept;

  /// var lies in [min, min + extent); extent and min may be symbolic in terms of other
  /// bound variables.
  void bind(const Var& var, const Range& range);
  /// var == value (a let).
  void bind(const Var& var, const Expr& value);
  /// Forgets the latest binding of var (an earlier, shadowed one comes back).
  void unbind(const Var& var);

  /// Constant bounds of an integer (or bool) expression under the bindings. Expressions
  /// of other types are unbounded.
  ConstIntBound constIntBound(const Expr& e);
  /// True only if `condition` holds for every value the bound variables can take. False
  /// means "not proven", not "false". Uses simplification and constant bounds, then, for
  /// comparisons, the symbolic ends of variables bound to symbolic ranges (so m < n is
  /// proven for m in [0, n)).
  bool canProve(const Expr& condition);
  /// `e` simplified under the bindings; same value for every value of the variables.
  Expr simplify(const Expr& e);

  /// Constant bounds from the expression's structure alone, without simplifying it first:
  /// cheaper and looser than constIntBound (i*4 - i*4 is not known to be 0). What rewrite
  /// rules use while the simplifier runs.
  ConstIntBound quickBound(const Expr& e);
  /// The value `var` is bound to by bind(var, value), or null.
  const Expr* letValue(const VarNode* var) const;

private:
  // canProve's second tactic: substitutes the symbolic ends of variables bound to symbolic
  // ranges into a comparison's difference.
  bool proveBySymbolicRanges(const Expr& condition);

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessel
