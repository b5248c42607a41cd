// Saturating interval arithmetic on ConstIntBound.
#include "compiler/arith/ConstIntBound.h"

#include <algorithm>
#include <initializer_list>

namespace tessel {

namespace {

// Bounds are computed in 128 bits, where the infinities become +-2^100: big enough that
// no finite int64 sum or product reaches them, small enough that sums never overflow.
using Wide = __int128;
constexpr Wide kWideInf = Wide(1) << 100;

Wide widen(int64_t v) {
  if (v == ConstIntBound::kNegInf) return -kWideInf;
  if (v == ConstIntBound::kPosInf) return kWideInf;
  return v;
}

int64_t narrow(Wide v) {
  if (v <= Wide(ConstIntBound::kNegInf)) return ConstIntBound::kNegInf;
  if (v >= Wide(ConstIntBound::kPosInf)) return ConstIntBound::kPosInf;
  return static_cast<int64_t>(v);
}

bool isInf(Wide v) { return v >= kWideInf || v <= -kWideInf; }
int sign(Wide v) { return v > 0 ? 1 : v < 0 ? -1 : 0; }

// a + b where an infinity wins; -inf + +inf resolves toward `tieToward` (the safe side).
Wide addWide(Wide a, Wide b, Wide tieToward) {
  bool aInf = isInf(a), bInf = isInf(b);
  if (aInf && bInf && sign(a) != sign(b)) return tieToward;
  if (aInf) return sign(a) * kWideInf;
  if (bInf) return sign(b) * kWideInf;
  return a + b;
}

Wide mulWide(Wide a, Wide b) {
  if (a == 0 || b == 0) return 0;
  if (isInf(a) || isInf(b)) return sign(a) * sign(b) * kWideInf;
  return a * b;  // both below 2^63 in magnitude: fits in 126 bits
}

Wide floorDivFinite(Wide a, Wide b) {
  Wide q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
  return q;
}

// a / b rounded toward -infinity (floor) or toward zero, with infinite operands; false when
// the quotient of two infinities is asked for.
bool divWide(Wide a, Wide b, bool floor, Wide* out) {
  if (isInf(a) && isInf(b)) return false;
  if (isInf(a)) { *out = sign(a) * sign(b) * kWideInf; return true; }
  if (isInf(b)) {
    // |a / b| is below 1: the quotient is 0, or -1 when flooring a negative fraction.
    *out = (floor && a != 0 && sign(a) != sign(b)) ? -1 : 0;
    return true;
  }
  *out = floor ? floorDivFinite(a, b) : a / b;
  return true;
}

ConstIntBound fromWide(Wide lo, Wide hi) { return {narrow(lo), narrow(hi)}; }

ConstIntBound cornerDivision(const ConstIntBound& a, const ConstIntBound& b, bool floor) {
  // Division by a divisor range that excludes zero is monotone in each operand on each
  // side of zero, so the extremes are at the corners.
  if (b.contains(0)) return ConstIntBound::everything();
  Wide lo = kWideInf, hi = -kWideInf;
  for (int64_t x : {a.min, a.max}) {
    for (int64_t y : {b.min, b.max}) {
      Wide q;
      if (!divWide(widen(x), widen(y), floor, &q)) return ConstIntBound::everything();
      lo = std::min(lo, q);
      hi = std::max(hi, q);
    }
  }
  return fromWide(lo, hi);
}

}  // namespace

std::string ConstIntBound::toString() const {
  auto end = [](int64_t v) -> std::string {
    if (v == kNegInf) return "-inf";
    if (v == kPosInf) return "+inf";
    return std::to_string(v);
  };
  std::string text = "[";
  text.append(end(min)).append(", ").append(end(max)).append("]");
  return text;
}

ConstIntBound typeBound(DataType dtype) {
  if (dtype.isBool()) return {0, 1};
  int bits = dtype.bits();
  if (dtype.isInt()) {
    if (bits >= 64) return ConstIntBound::everything();
    return {-(int64_t(1) << (bits - 1)), (int64_t(1) << (bits - 1)) - 1};
  }
  if (dtype.isUInt()) {
    if (bits >= 64) return {0, ConstIntBound::kPosInf};
    return {0, (int64_t(1) << bits) - 1};
  }
  return ConstIntBound::everything();
}

ConstIntBound boundAdd(const ConstIntBound& a, const ConstIntBound& b) {
  return fromWide(addWide(widen(a.min), widen(b.min), -kWideInf), addWide(widen(a.max), widen(b.max), kWideInf));
}

ConstIntBound boundSub(const ConstIntBound& a, const ConstIntBound& b) {
  return fromWide(addWide(widen(a.min), -widen(b.max), -kWideInf),
                  addWide(widen(a.max), -widen(b.min), kWideInf));
}

ConstIntBound boundMul(const ConstIntBound& a, const ConstIntBound& b) {
  Wide lo = kWideInf, hi = -kWideInf;
  for (int64_t x : {a.min, a.max}) {
    for (int64_t y : {b.min, b.max}) {
      Wide p = mulWide(widen(x), widen(y));
      lo = std::min(lo, p);
      hi = std::max(hi, p);
    }
  }
  return fromWide(lo, hi);
}

ConstIntBound boundFloorDiv(const ConstIntBound& a, const ConstIntBound& b) { return cornerDivision(a, b, true); }
ConstIntBound boundTruncDiv(const ConstIntBound& a, const ConstIntBound& b) { return cornerDivision(a, b, false); }

ConstIntBound boundFloorMod(const ConstIntBound& a, const ConstIntBound& b) {
  if (b.contains(0)) return ConstIntBound::everything();
  Wide amin = widen(a.min), amax = widen(a.max);
  if (b.isPoint() && !isInf(amin) && !isInf(amax)) {
    // Within one period the remainder is the dividend shifted by a constant.
    Wide c = b.min;
    Wide q = floorDivFinite(amin, c);
    if (q == floorDivFinite(amax, c)) {
      Wide lo = amin - q * c, hi = amax - q * c;
      return fromWide(std::min(lo, hi), std::max(lo, hi));
    }
  }
  if (b.min > 0) {
    Wide top = widen(b.max) - 1;
    if (amin >= 0 && amax < widen(b.min)) return a;  // already a remainder of every divisor
    if (amin >= 0) return fromWide(0, std::min(amax, top));
    return fromWide(0, top);
  }
  Wide bottom = widen(b.min) + 1;  // divisor negative: remainder in (b, 0]
  if (amax <= 0) return fromWide(std::max(amin, bottom), 0);
  return fromWide(bottom, 0);
}

ConstIntBound boundTruncMod(const ConstIntBound& a, const ConstIntBound& b) {
  if (b.contains(0)) return ConstIntBound::everything();
  Wide magnitude = std::max(widen(b.max) < 0 ? -widen(b.max) : widen(b.max),
                            widen(b.min) < 0 ? -widen(b.min) : widen(b.min));
  Wide top = magnitude - 1;
  Wide amin = widen(a.min), amax = widen(a.max);
  // The remainder takes the dividend's sign and is never larger in magnitude.
  Wide lo = amin >= 0 ? 0 : std::max(amin, -top);
  Wide hi = amax <= 0 ? 0 : std::min(amax, top);
  return fromWide(lo, hi);
}

ConstIntBound boundMin(const ConstIntBound& a, const ConstIntBound& b) {
  return {std::min(a.min, b.min), std::min(a.max, b.max)};
}

ConstIntBound boundMax(const ConstIntBound& a, const ConstIntBound& b) {
  return {std::max(a.min, b.min), std::max(a.max, b.max)};
}

ConstIntBound boundUnion(const ConstIntBound& a, const ConstIntBound& b) {
  return {std::min(a.min, b.min), std::max(a.max, b.max)};
}

ConstIntBound boundIntersection(const ConstIntBound& a, const ConstIntBound& b) {
  ConstIntBound result{std::max(a.min, b.min), std::min(a.max, b.max)};
  // Disjoint bounds come from contradictory facts; keep the first one rather than
  // producing an empty range that later arithmetic would misread.
  return result.min <= result.max ? result : a;
}

ConstIntBound clampToType(const ConstIntBound& bound, DataType dtype) {
  ConstIntBound range = typeBound(dtype);
  if (bound.min >= range.min && bound.max <= range.max) return bound;
  return range;
}

}  // namespace tessel
