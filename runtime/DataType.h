// Element types of runtime arrays, independent of the compiler's core::DataType.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace tessel::runtime {

/// An element type: a code, a bit width and a number of vector lanes (1 for scalars).
/// Code, bits and lanes mean what they mean in the compiler's DataType, and the text form
/// matches its ("float32", "int8", "uint8", "bfloat16", "bool", "float32x4"), so types
/// travel through exported graph JSON unchanged.
struct DataType {
  enum class Code : uint8_t { Int, UInt, Float, BFloat, Bool };

  Code code = Code::Float;
  uint8_t bits = 32;
  uint16_t lanes = 1;

  static constexpr DataType int8() { return {Code::Int, 8, 1}; }
  static constexpr DataType int16() { return {Code::Int, 16, 1}; }
  static constexpr DataType int32() { return {Code::Int, 32, 1}; }
  static constexpr DataType int64() { return {Code::Int, 64, 1}; }
  static constexpr DataType uint8() { return {Code::UInt, 8, 1}; }
  static constexpr DataType float16() { return {Code::Float, 16, 1}; }
  static constexpr DataType float32() { return {Code::Float, 32, 1}; }
  static constexpr DataType float64() { return {Code::Float, 64, 1}; }
  static constexpr DataType bfloat16() { return {Code::BFloat, 16, 1}; }
  static constexpr DataType boolean() { return {Code::Bool, 1, 1}; }

  /// Storage bytes of one element (all lanes); bool (1 bit) is stored as one byte per lane.
  constexpr int64_t bytes() const { return int64_t{(bits + 7) / 8} * lanes; }

  constexpr bool operator==(const DataType& other) const = default;

  /// "float32", "int64", "bool", "float32x8".
  std::string toString() const;
  /// Parses the toString() form; nullopt for anything else ("float", "int7", "float32x0").
  static std::optional<DataType> parse(std::string_view text);
};

/// The DataType that stores a C++ element type: float -> float32, int8_t -> int8, ...
template <class T>
constexpr std::optional<DataType> dataTypeOf() {
  if constexpr (std::is_same_v<T, float>) return DataType::float32();
  else if constexpr (std::is_same_v<T, double>) return DataType::float64();
  else if constexpr (std::is_same_v<T, bool>) return DataType::boolean();
  else if constexpr (std::is_integral_v<T>)
    return DataType{std::is_signed_v<T> ? DataType::Code::Int : DataType::Code::UInt,
                    static_cast<uint8_t>(sizeof(T) * 8), 1};
  else return std::nullopt;
}

}  // namespace tessel::runtime
