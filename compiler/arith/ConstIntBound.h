// Constant integer bounds of expressions: the cheap, always-available half of arithmetic analysis.
#pragma once

#include <cstdint>
#include <string>

#include "core/ir/DataType.h"

namespace tessel {

/// An inclusive range [min, max] of the values an integer expression can take.
/// kNegInf / kPosInf mean unbounded below / above (they coincide with int64's own limits,
/// which is harmless: an int64 expression at its limit is as good as unbounded).
struct ConstIntBound {
  int64_t min, max;
  static constexpr int64_t kNegInf = INT64_MIN, kPosInf = INT64_MAX;

  static ConstIntBound everything() { return {kNegInf, kPosInf}; }
  static ConstIntBound point(int64_t value) { return {value, value}; }
  bool isPoint() const { return min == max; }
  bool isEverything() const { return min == kNegInf && max == kPosInf; }
  bool contains(int64_t value) const { return min <= value && value <= max; }
  bool operator==(const ConstIntBound& other) const = default;
  /// "[0, 31]", with "-inf" / "+inf" for unbounded ends.
  std::string toString() const;
};

/// The values a type can hold: [-128, 127] for int8, [0, 1] for bool, everything for
/// int64 and for non-integer types (bounds describe integers only).
ConstIntBound typeBound(DataType dtype);

/// Interval arithmetic on bounds, saturating at the infinities. The results are
/// mathematical (no wraparound); clampToType() accounts for the type's width.
ConstIntBound boundAdd(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound boundSub(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound boundMul(const ConstIntBound& a, const ConstIntBound& b);
/// Floor / truncating division; everything when `b` may be zero.
ConstIntBound boundFloorDiv(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound boundTruncDiv(const ConstIntBound& a, const ConstIntBound& b);
/// Floor / truncating remainder; everything when `b` may be zero.
ConstIntBound boundFloorMod(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound boundTruncMod(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound boundMin(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound boundMax(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound boundUnion(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound boundIntersection(const ConstIntBound& a, const ConstIntBound& b);
/// `bound` when it fits in `dtype`; otherwise the whole type (the value may wrap around).
ConstIntBound clampToType(const ConstIntBound& bound, DataType dtype);

}  // namespace tessel
