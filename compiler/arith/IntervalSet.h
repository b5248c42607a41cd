// Symbolic intervals: the set of values an expression takes while some variables range
// over intervals, for bound inference ("which elements of B does this loop nest read?").
#pragma once

#include <unordered_map>

#include "core/ir/Expr.h"

namespace tessel {

/// The inclusive interval [min, max] with symbolic endpoints. An undefined min (max)
/// means unbounded below (above).
struct Interval {
  Expr min, max;

  static Interval point(Expr e);
  static Interval everything();
  /// [r.min, r.min + r.extent - 1].
  static Interval fromRange(const Range& r);

  /// Both ends defined and the same expression.
  bool isPoint() const;
  /// Both ends defined.
  bool isBounded() const;
  /// [min, max] as a Range with extent = max - min + 1, simplified. Needs isBounded().
  Range toRange() const;
};

using IntervalMap = std::unordered_map<const VarNode*, Interval>;

/// The interval of values `e` takes when each variable in `domains` ranges over its
/// interval; other variables stay symbolic (the endpoints may mention them). Endpoints are
/// simplified. Example: for j in [0, 3], evalInterval(i*4 + j) = [i*4, i*4 + 3].
/// For a vector expression the interval covers every lane (ramp(i*8, 1, 8) gives
/// [i*8, i*8 + 7]). The result always contains every value; it may be larger than
/// necessary (everything() when nothing better is known, as for loads that depend on the
/// domains).
Interval evalInterval(const Expr& e, const IntervalMap& domains);

/// The smallest interval containing both (endpoints simplified).
Interval unionOf(const Interval& a, const Interval& b);
/// The values in both (endpoints simplified).
Interval intersectionOf(const Interval& a, const Interval& b);

}  // namespace tessel
