// bfloat16 <-> float32 on the host: the one place the compiler, the CLI and the runtime convert
// the 16-bit values (a bfloat16 is the upper half of the float32 with the same value).
#pragma once

#include <bit>
#include <cstdint>

namespace tessel::runtime {

/// The float32 a bfloat16 stands for (exact).
inline float bfloat16ToFloat(uint16_t bits) { return std::bit_cast<float>(uint32_t(bits) << 16); }

/// The bfloat16 nearest to `value`, ties to even (as numpy and the kernels round); a NaN
/// stays a (quiet) NaN.
inline uint16_t floatToBFloat16(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  if (value != value) return uint16_t((bits >> 16) | 0x40);
  bits += 0x7FFF + ((bits >> 16) & 1);
  return uint16_t(bits >> 16);
}

/// `value` rounded to the nearest bfloat16, as a float.
inline float roundToBFloat16(float value) { return bfloat16ToFloat(floatToBFloat16(value)); }

}  // namespace tessel::runtime
