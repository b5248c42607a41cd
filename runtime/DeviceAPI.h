// The per-device-type interface for memory and synchronization, and its registry.
#pragma once

#include <cstddef>
#include <memory>

#include "runtime/Device.h"

namespace tessel::runtime {

/// What the runtime needs from a kind of device. One instance serves every device of its
/// type (the Device argument says which). CPU is built in; a CUDA implementation registers
/// itself with registerDeviceAPI when its library loads.
class DeviceAPI {
public:
  virtual ~DeviceAPI() = default;

  /// `bytes` of device memory aligned to `alignment` (a power of two). Throws Error when the
  /// device cannot provide it. A zero-byte request returns a valid, freeable pointer.
  virtual void* allocate(Device device, size_t bytes, size_t alignment) = 0;
  /// Releases memory from allocate(); null is ignored.
  virtual void free(Device device, void* pointer) = 0;
  /// Copies `bytes` from `source` on `sourceDevice` to `destination` on
  /// `destinationDevice`; at least one of the two is of this API's type, the other may be
  /// the CPU. Completes before returning unless the device documents otherwise.
  virtual void copy(const void* source, Device sourceDevice, void* destination, Device destinationDevice,
                    size_t bytes) = 0;
  /// Waits until all work queued on `device` has finished.
  virtual void synchronize(Device device) = 0;
};

/// The API registered for `type`. Throws Error naming the type when there is none.
DeviceAPI& deviceAPI(DeviceType type);

/// True when an API for `type` is registered (CPU always is).
bool hasDeviceAPI(DeviceType type);

/// Installs the API for `type`; throws Error when that type already has one (arrays
/// allocated through an API must be freed by it, so an API is never replaced). Registered
/// APIs live until the process ends.
void registerDeviceAPI(DeviceType type, std::unique_ptr<DeviceAPI> api);

}  // namespace tessel::runtime
