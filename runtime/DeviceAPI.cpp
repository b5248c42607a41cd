// The device API registry and the built-in CPU device.
#include "runtime/DeviceAPI.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "runtime/Error.h"

namespace tessel::runtime {

namespace {

/// Host memory: aligned heap allocations and memcpy.
class CPUDeviceAPI final : public DeviceAPI {
public:
  void* allocate(Device device, size_t bytes, size_t alignment) override {
    if (alignment == 0 || (alignment & (alignment - 1)) != 0)
      throw Error("cannot allocate on " + device.toString() + ": alignment " + std::to_string(alignment) +
                  " is not a power of two");
    alignment = std::max(alignment, sizeof(void*));
    void* pointer = nullptr;
    // posix_memalign accepts any size, including zero, and returns a freeable pointer.
    if (posix_memalign(&pointer, alignment, std::max<size_t>(bytes, 1)) != 0 || pointer == nullptr)
      throw Error("out of memory: cannot allocate " + std::to_string(bytes) + " bytes on " + device.toString());
    return pointer;
  }

  void free(Device, void* pointer) override { std::free(pointer); }

  void copy(const void* source, Device sourceDevice, void* destination, Device destinationDevice,
            size_t bytes) override {
    if (sourceDevice.type != DeviceType::CPU || destinationDevice.type != DeviceType::CPU)
      throw Error("the CPU device API cannot copy from " + sourceDevice.toString() + " to " +
                  destinationDevice.toString());
    if (bytes > 0) std::memmove(destination, source, bytes);
  }

  void synchronize(Device) override {}
};

/// Every registered API, by device type. APIs are never removed, so references handed out
/// stay valid without holding the lock.
struct Registry {
  std::mutex mutex;
  std::map<DeviceType, std::unique_ptr<DeviceAPI>> apis;

  Registry() { apis.emplace(DeviceType::CPU, std::make_unique<CPUDeviceAPI>()); }
};

Registry& registry() {
  // Never destroyed: arrays freed by late static destructors still need their API.
  static Registry* instance = new Registry();
  return *instance;
}

}  // namespace

DeviceAPI& deviceAPI(DeviceType type) {
  Registry& apis = registry();
  std::lock_guard lock(apis.mutex);
  auto found = apis.apis.find(type);
  if (found == apis.apis.end())
    throw Error("no device API is registered for " + toString(type) +
                " (is the runtime built with support for it, and its device library loaded?)");
  return *found->second;
}

bool hasDeviceAPI(DeviceType type) {
  Registry& apis = registry();
  std::lock_guard lock(apis.mutex);
  return apis.apis.count(type) > 0;
}

void registerDeviceAPI(DeviceType type, std::unique_ptr<DeviceAPI> api) {
  if (!api) throw Error("registerDeviceAPI: no API given for " + toString(type));
  Registry& apis = registry();
  std::lock_guard lock(apis.mutex);
  if (!apis.apis.emplace(type, std::move(api)).second)
    throw Error("a device API for " + toString(type) + " is already registered");
}

}  // namespace tessel::runtime
