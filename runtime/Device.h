// Where an array lives: a device type and an ordinal.
#pragma once

#include <cstdint>
#include <string>

namespace tessel::runtime {

/// Kinds of device; the values are stable because exported models store them.
enum class DeviceType : int32_t { CPU = 1, CUDA = 2 };

/// One device: its type and its index among devices of that type.
struct Device {
  DeviceType type = DeviceType::CPU;
  int id = 0;

  static constexpr Device cpu(int id = 0) { return {DeviceType::CPU, id}; }
  static constexpr Device cuda(int id = 0) { return {DeviceType::CUDA, id}; }

  constexpr bool operator==(const Device& other) const = default;

  /// "cpu:0", "cuda:1".
  std::string toString() const;
};

/// "cpu", "cuda".
std::string toString(DeviceType type);

}  // namespace tessel::runtime
