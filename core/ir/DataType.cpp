// Text form of DataType.
#include "core/ir/DataType.h"

#include <charconv>

namespace tessel {

std::string DataType::toString() const {
  std::string base;
  switch (code_) {
    case Code::Int: base = "int" + std::to_string(bits_); break;
    case Code::UInt: base = "uint" + std::to_string(bits_); break;
    case Code::Float: base = "float" + std::to_string(bits_); break;
    case Code::BFloat: base = "bfloat" + std::to_string(bits_); break;
    case Code::Bool: base = "bool"; break;
    case Code::Handle: return "handle";
  }
  if (lanes_ > 1) base += "x" + std::to_string(lanes_);
  return base;
}

std::optional<DataType> DataType::parse(std::string_view text) {
  int lanes = 1;
  if (auto x = text.rfind('x'); x != std::string_view::npos && x + 1 < text.size()) {
    auto digits = text.substr(x + 1);
    if (std::from_chars(digits.data(), digits.data() + digits.size(), lanes).ec != std::errc() || lanes < 1)
      return std::nullopt;
    text = text.substr(0, x);
  }
  if (text == "bool") return DataType::boolean(lanes);
  if (text == "handle") return lanes == 1 ? std::optional(DataType::handle()) : std::nullopt;
  struct Prefix { std::string_view name; Code code; };
  for (Prefix prefix : {Prefix{"uint", Code::UInt}, Prefix{"int", Code::Int},
                        Prefix{"bfloat", Code::BFloat}, Prefix{"float", Code::Float}}) {
    if (text.substr(0, prefix.name.size()) != prefix.name) continue;
    auto digits = text.substr(prefix.name.size());
    int bits = 0;
    if (std::from_chars(digits.data(), digits.data() + digits.size(), bits).ec != std::errc())
      return std::nullopt;
    bool valid = (prefix.code == Code::Float && (bits == 16 || bits == 32 || bits == 64)) ||
                 (prefix.code == Code::BFloat && bits == 16) ||
                 ((prefix.code == Code::Int || prefix.code == Code::UInt) &&
                  (bits == 8 || bits == 16 || bits == 32 || bits == 64));
    if (!valid) return std::nullopt;
    return DataType(prefix.code, bits, lanes);
  }
  return std::nullopt;
}

}  // namespace tessel
