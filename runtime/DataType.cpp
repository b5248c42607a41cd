// Text form of runtime element types.
#include "runtime/DataType.h"

#include <charconv>

namespace tessel::runtime {

std::string DataType::toString() const {
  std::string base;
  switch (code) {
    case Code::Int: base = "int" + std::to_string(bits); break;
    case Code::UInt: base = "uint" + std::to_string(bits); break;
    case Code::Float: base = "float" + std::to_string(bits); break;
    case Code::BFloat: base = "bfloat" + std::to_string(bits); break;
    case Code::Bool: base = "bool"; break;
  }
  if (lanes > 1) {
    base += 'x';
    base += std::to_string(lanes);
  }
  return base;
}

namespace {

/// Reads a whole decimal number; nullopt when `digits` is empty or has anything else.
std::optional<int> parseNumber(std::string_view digits) {
  int value = 0;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<DataType> DataType::parse(std::string_view text) {
  int lanes = 1;
  if (auto x = text.rfind('x'); x != std::string_view::npos) {
    std::optional<int> parsedLanes = parseNumber(text.substr(x + 1));
    if (!parsedLanes || *parsedLanes < 1 || *parsedLanes > UINT16_MAX) return std::nullopt;
    lanes = *parsedLanes;
    text = text.substr(0, x);
  }
  if (text == "bool") return DataType{Code::Bool, 1, static_cast<uint16_t>(lanes)};
  struct Prefix {
    std::string_view name;
    Code code;
  };
  // "uint" before "int" so that "uint8" is not read as "u" + "int8".
  for (Prefix prefix : {Prefix{"uint", Code::UInt}, Prefix{"int", Code::Int}, Prefix{"bfloat", Code::BFloat},
                        Prefix{"float", Code::Float}}) {
    if (!text.starts_with(prefix.name)) continue;
    std::optional<int> bits = parseNumber(text.substr(prefix.name.size()));
    if (!bits) return std::nullopt;
    bool valid = (prefix.code == Code::Float && (*bits == 16 || *bits == 32 || *bits == 64)) ||
                 (prefix.code == Code::BFloat && *bits == 16) ||
                 ((prefix.code == Code::Int || prefix.code == Code::UInt) &&
                  (*bits == 8 || *bits == 16 || *bits == 32 || *bits == 64));
    if (!valid) return std::nullopt;
    return DataType{prefix.code, static_cast<uint8_t>(*bits), static_cast<uint16_t>(lanes)};
  }
  return std::nullopt;
}

}  // namespace tessel::runtime
