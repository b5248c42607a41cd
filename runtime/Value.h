// The values packed functions take and return: int, float, string, opaque pointer, array.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <variant>

#include "runtime/Error.h"
#include "runtime/NDArray.h"

namespace tessel::runtime {

/// One argument or result of a PackedFunc. Integers (bool included) are stored as int64
/// and floating-point numbers as double; accessors throw Error naming what the value really
/// holds when asked for something else.
class Value {
public:
  enum class Kind { None, Int, Float, String, Pointer, Array };

  Value() = default;
  template <std::integral T>
  Value(T value) : storage_(static_cast<int64_t>(value)) {}
  template <std::floating_point T>
  Value(T value) : storage_(static_cast<double>(value)) {}
  Value(std::string value) : storage_(std::move(value)) {}
  Value(std::string_view value) : storage_(std::string(value)) {}
  Value(const char* value) : storage_(std::string(value)) {}
  Value(void* value) : storage_(value) {}
  Value(std::nullptr_t) : storage_(static_cast<void*>(nullptr)) {}
  Value(NDArray value) : storage_(std::move(value)) {}

  Kind kind() const { return static_cast<Kind>(storage_.index()); }
  bool isNone() const { return kind() == Kind::None; }

  /// The integer; Error unless kind() is Int.
  int64_t asInt() const;
  /// The number; accepts Int (converted) and Float.
  double asDouble() const;
  const std::string& asString() const;
  /// The opaque pointer; Error unless kind() is Pointer.
  void* asPointer() const;
  const NDArray& asArray() const;

  /// Converts to T (an integral or floating type, std::string, void*, NDArray or Value),
  /// checking kind and, for narrow integers, range.
  template <class T>
  T as() const;

  /// "none", "int", "float", "string", "pointer", "array".
  static const char* kindName(Kind kind);
  /// The kind, plus the value where short: "int 3", "string \"relu\"", "array float32[2] on cpu:0".
  std::string describe() const;

private:
  /// Error saying this value is not a `expected`.
  [[noreturn]] void throwKindMismatch(const char* expected) const;

  // Alternatives in the order of Kind.
  std::variant<std::monostate, int64_t, double, std::string, void*, NDArray> storage_;
};

template <class T>
T Value::as() const {
  if constexpr (std::is_same_v<T, Value>) {
    return *this;
  } else if constexpr (std::is_same_v<T, bool>) {
    return asInt() != 0;
  } else if constexpr (std::is_integral_v<T>) {
    int64_t value = asInt();
    if constexpr (!std::is_same_v<T, int64_t>) {
      bool fits = std::is_signed_v<T> ? (value >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
                                         value <= static_cast<int64_t>(std::numeric_limits<T>::max()))
                                      : (value >= 0 && static_cast<uint64_t>(value) <= std::numeric_limits<T>::max());
      if (!fits)
        throw Error("expected " + std::string(std::is_signed_v<T> ? "a signed " : "an unsigned ") +
                    std::to_string(sizeof(T) * 8) + "-bit integer but got " + describe());
    }
    return static_cast<T>(value);
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(asDouble());
  } else if constexpr (std::is_same_v<T, std::string>) {
    return asString();
  } else if constexpr (std::is_same_v<T, void*>) {
    return asPointer();
  } else if constexpr (std::is_same_v<T, NDArray>) {
    return asArray();
  } else {
    static_assert(sizeof(T) == 0, "Value::as supports integers, floats, std::string, void*, NDArray, Value");
  }
}

}  // namespace tessel::runtime
