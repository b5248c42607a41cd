// The pattern language of the rewrite rules: shapes of expressions with wildcards, matched
// against IR, instantiated into IR, and evaluated as side conditions on matched constants.
//
//   x, y, z, w   any expression (a name used twice must match equal expressions)
//   c0, c1, c2   a scalar integer or float constant
//   0, 1, 2 ...  a constant of that value in any numeric type (or a broadcast of one)
//   kTrue/kFalse boolean constants
//   n            the lane count of ramp(...) / broadcast(...)
//
// Conditions are patterns too, evaluated on the matched constants: `c1 > 0 &&
// eq(floormod(c0, c1), 0)`, plus lowerBound(x) / upperBound(x) (the ConstIntBound of what x
// matched, under the analyzer's bindings), typeMin(x), isSigned(x) and isInteger(x).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/ir/Expr.h"

namespace tessel {

class Analyzer;

namespace pattern {

enum class PatternKind : uint8_t {
  Any,         ///< Wildcard for any expression.
  Constant,    ///< Wildcard for a scalar integer or float constant.
  Literal,     ///< A specific integer value, in whatever numeric type the context has.
  Bool,        ///< true / false.
  Node,        ///< An IR node of `nodeKind` whose operands match `children`.
  LowerBound,  ///< Condition term: the lower constant bound of the child's match.
  UpperBound,  ///< Condition term: the upper constant bound of the child's match.
  TypeMin,     ///< Condition term: the smallest value of the child's type.
  IsSigned,    ///< Condition term: 1 when the child's type is a signed integer.
  IsInteger,   ///< Condition term: 1 when the child's type is an integer (not float, not bool).
};

class Pattern;

struct PatternNode {
  PatternKind kind = PatternKind::Literal;
  NodeKind nodeKind = NodeKind::Other;  ///< For Node.
  Intrinsic op = Intrinsic::Likely;      ///< For Node of kind Call.
  int slot = 0;                          ///< Wildcard number for Any / Constant.
  int64_t value = 0;                     ///< For Literal and Bool.
  std::string name;                      ///< Wildcard name for printing.
  std::vector<Pattern> children;
};

/// An immutable pattern tree; cheap to copy.
class Pattern {
public:
  Pattern(int value);
  Pattern(int64_t value);
  static Pattern any(int slot, std::string name);
  static Pattern constant(int slot, std::string name);
  static Pattern boolean(bool value);
  static Pattern node(NodeKind kind, std::vector<Pattern> children, Intrinsic op = Intrinsic::Likely);
  static Pattern term(PatternKind kind, Pattern child);

  const PatternNode& get() const { return *node_; }
  const PatternNode* operator->() const { return node_.get(); }
  /// The root node kind when the pattern is a Node, else NodeKind::Other.
  NodeKind rootKind() const;
  /// Readable text in the IR printer's notation ("floordiv(x*c0 + y, c1)" prints "(x*c0 + y)//c1").
  std::string toString() const;

private:
  explicit Pattern(std::shared_ptr<const PatternNode> node) : node_(std::move(node)) {}
  std::shared_ptr<const PatternNode> node_;
};

/// What a successful match bound: one expression per wildcard and the lane count.
struct Match {
  static constexpr int kAnySlots = 4, kConstantSlots = 3;
  std::array<Expr, kAnySlots> any;
  std::array<Expr, kConstantSlots> constants;
  int lanes = 0;
};

/// Matches `pattern` against `e`, extending `match`; false (with `match` partly filled)
/// when it does not match.
bool matchPattern(const Pattern& pattern, const Expr& e, Match& match);

/// Builds the expression `pattern` describes with the wildcards of `match`; `type` is the
/// type the result must have (literals take their type from their context).
Expr buildPattern(const Pattern& pattern, const Match& match, DataType type);

/// Evaluates a side condition on `match`; false when it does not hold or cannot be
/// evaluated (a float constant, a division by zero).
bool conditionHolds(const Pattern& condition, const Match& match, Analyzer& analyzer);

// ---------------------------------------------------------------------------------------
// Wildcards

inline const Pattern x = Pattern::any(0, "x");
inline const Pattern y = Pattern::any(1, "y");
inline const Pattern z = Pattern::any(2, "z");
inline const Pattern w = Pattern::any(3, "w");
inline const Pattern c0 = Pattern::constant(0, "c0");
inline const Pattern c1 = Pattern::constant(1, "c1");
inline const Pattern c2 = Pattern::constant(2, "c2");
inline const Pattern kTrue = Pattern::boolean(true);
inline const Pattern kFalse = Pattern::boolean(false);
/// The lane count of a ramp or broadcast; every use in one rule refers to the same count.
struct LanesWildcard {};
inline constexpr LanesWildcard n{};

// ---------------------------------------------------------------------------------------
// Builders, spelled like the IR builders of core/ir/IROperators.h

Pattern operator+(Pattern a, Pattern b);
Pattern operator-(Pattern a, Pattern b);
Pattern operator*(Pattern a, Pattern b);
Pattern operator<(Pattern a, Pattern b);
Pattern operator<=(Pattern a, Pattern b);
Pattern operator>(Pattern a, Pattern b);
Pattern operator>=(Pattern a, Pattern b);
Pattern operator&&(Pattern a, Pattern b);
Pattern operator||(Pattern a, Pattern b);
Pattern operator!(Pattern a);
Pattern eq(Pattern a, Pattern b);
Pattern ne(Pattern a, Pattern b);
Pattern floordiv(Pattern a, Pattern b);
Pattern floormod(Pattern a, Pattern b);
Pattern truncdiv(Pattern a, Pattern b);
Pattern truncmod(Pattern a, Pattern b);
Pattern min(Pattern a, Pattern b);
Pattern max(Pattern a, Pattern b);
Pattern select(Pattern condition, Pattern trueValue, Pattern falseValue);
Pattern ramp(Pattern base, Pattern stride, LanesWildcard lanes);
Pattern broadcast(Pattern value, LanesWildcard lanes);
Pattern likely(Pattern condition);
/// A binary node of `kind` (for tables written over several kinds at once).
Pattern binary(NodeKind kind, Pattern a, Pattern b);

// Condition terms.
Pattern lowerBound(Pattern wildcard);
Pattern upperBound(Pattern wildcard);
Pattern typeMin(Pattern wildcard);
Pattern isSigned(Pattern wildcard);
Pattern isInteger(Pattern wildcard);

}  // namespace pattern
}  // namespace tessel
