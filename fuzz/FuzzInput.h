// What the harnesses share: the fuzzer's bytes as a string, and splitting them into files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

namespace tessel::fuzz {

inline std::string asString(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

/// Splits an input that stands for two files at the first `separator` line; without one the
/// whole input is the first file and the second is empty.
inline std::pair<std::string, std::string> splitAt(const std::string& input, const std::string& separator) {
  size_t at = input.find(separator);
  if (at == std::string::npos) return {input, std::string()};
  return {input.substr(0, at), input.substr(at + separator.size())};
}

}  // namespace tessel::fuzz
