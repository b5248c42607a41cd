// Text form of devices.
#include "runtime/Device.h"

namespace tessel::runtime {

std::string toString(DeviceType type) {
  switch (type) {
    case DeviceType::CPU: return "cpu";
    case DeviceType::CUDA: return "cuda";
  }
  return "device" + std::to_string(static_cast<int32_t>(type));
}

std::string Device::toString() const { return runtime::toString(type) + ":" + std::to_string(id); }

}  // namespace tessel::runtime
