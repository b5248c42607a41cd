// Scalar and vector element types of the IR.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tessel {

/// An element type: a code, a bit width and a number of vector lanes (1 for scalars).
class DataType {
public:
  enum class Code : uint8_t { Int, UInt, Float, BFloat, Bool, Handle };

  constexpr DataType() = default;
  constexpr DataType(Code code, int bits, int lanes = 1)
      : code_(code), bits_(static_cast<uint8_t>(bits)), lanes_(static_cast<uint16_t>(lanes)) {}

  static constexpr DataType int8(int lanes = 1) { return {Code::Int, 8, lanes}; }
  static constexpr DataType int16(int lanes = 1) { return {Code::Int, 16, lanes}; }
  static constexpr DataType int32(int lanes = 1) { return {Code::Int, 32, lanes}; }
  static constexpr DataType int64(int lanes = 1) { return {Code::Int, 64, lanes}; }
  static constexpr DataType uint8(int lanes = 1) { return {Code::UInt, 8, lanes}; }
  static constexpr DataType uint16(int lanes = 1) { return {Code::UInt, 16, lanes}; }
  static constexpr DataType uint32(int lanes = 1) { return {Code::UInt, 32, lanes}; }
  static constexpr DataType uint64(int lanes = 1) { return {Code::UInt, 64, lanes}; }
  static constexpr DataType float16(int lanes = 1) { return {Code::Float, 16, lanes}; }
  static constexpr DataType float32(int lanes = 1) { return {Code::Float, 32, lanes}; }
  static constexpr DataType float64(int lanes = 1) { return {Code::Float, 64, lanes}; }
  static constexpr DataType bfloat16(int lanes = 1) { return {Code::BFloat, 16, lanes}; }
  static constexpr DataType boolean(int lanes = 1) { return {Code::Bool, 1, lanes}; }
  static constexpr DataType handle() { return {Code::Handle, 64, 1}; }
  /// The type of every loop variable, shape and index expression.
  static constexpr DataType index() { return int64(); }

  constexpr Code code() const { return code_; }
  constexpr int bits() const { return bits_; }
  constexpr int lanes() const { return lanes_; }
  constexpr int bytes() const { return (bits_ + 7) / 8; }
  constexpr bool isScalar() const { return lanes_ == 1; }
  constexpr bool isVector() const { return lanes_ > 1; }
  constexpr bool isInt() const { return code_ == Code::Int; }
  constexpr bool isUInt() const { return code_ == Code::UInt; }
  /// Int or UInt (not bool).
  constexpr bool isIntegral() const { return code_ == Code::Int || code_ == Code::UInt; }
  constexpr bool isFloat() const { return code_ == Code::Float || code_ == Code::BFloat; }
  constexpr bool isBool() const { return code_ == Code::Bool; }
  constexpr bool isHandle() const { return code_ == Code::Handle; }

  constexpr DataType withLanes(int lanes) const { return {code_, bits_, lanes}; }
  constexpr DataType element() const { return withLanes(1); }

  constexpr bool operator==(const DataType& other) const = default;

  /// "float32", "int64x8", "bool", "handle".
  std::string toString() const;
  /// Parses the toString() form; nullopt for anything else.
  static std::optional<DataType> parse(std::string_view text);

private:
  Code code_ = Code::Handle;
  uint8_t bits_ = 0;
  uint16_t lanes_ = 0;
};

}  // namespace tessel
