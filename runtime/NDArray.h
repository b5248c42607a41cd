// N-dimensional arrays: the values that flow between compiled kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "runtime/DataType.h"
#include "runtime/Device.h"
#include "runtime/Error.h"

namespace tessel::runtime {

/// A dense row-major array on a device. Copies of an NDArray share its data (a copy is a
/// second handle, like a shared_ptr); use empty() + copyFrom for a deep copy. Data is
/// 64-byte aligned, so kernels may use aligned vector loads. Shape, type and device never
/// change after creation.
class NDArray {
public:
  /// Alignment of every allocation, in bytes.
  static constexpr size_t kAlignment = 64;

  /// An undefined array (defined() is false).
  NDArray() = default;

  /// A new uninitialized array. Throws Error for a negative extent or a size that
  /// overflows, and when the device cannot allocate.
  static NDArray empty(std::vector<int64_t> shape, DataType dtype, Device device = Device::cpu());

  bool defined() const { return storage_ != nullptr; }
  /// Whether this handle is the only one to its memory (views share it). Not for arrays
  /// that other threads may copy at the same time.
  bool soleHandle() const { return storage_ != nullptr && storage_.use_count() == 1; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  DataType dtype() const { return dtype_; }
  Device device() const;
  /// Product of the extents (1 for a scalar of shape {}).
  int64_t numElements() const;
  /// numElements() * dtype().bytes().
  int64_t byteSize() const;
  /// The first element on the array's device; null when undefined.
  void* data() const;

  /// data() as T*, after checking that T is the element type (float for float32, ...).
  template <class T>
  T* dataAs() const {
    checkElementType(dataTypeOf<T>(), sizeof(T));
    return static_cast<T*>(data());
  }
  /// The elements as a span over host memory; requires a CPU array of element type T.
  template <class T>
  std::span<T> values() const {
    checkHostAccess();
    return {dataAs<T>(), static_cast<size_t>(numElements())};
  }

  /// Copies exactly byteSize() bytes from host memory; Error when `bytes` differs.
  void copyFrom(const void* source, size_t bytes);
  /// Copies exactly byteSize() bytes to host memory; Error when `bytes` differs.
  void copyTo(void* destination, size_t bytes) const;
  /// Copies another array's contents; Error unless shape and dtype match. Devices may differ.
  void copyFrom(const NDArray& source);
  void copyTo(NDArray destination) const;

  /// Typed host copies with the element type checked.
  template <class T>
  void copyFrom(const std::vector<T>& source) {
    checkElementType(dataTypeOf<T>(), sizeof(T));
    copyFrom(source.data(), source.size() * sizeof(T));
  }
  template <class T>
  std::vector<T> toVector() const {
    checkElementType(dataTypeOf<T>(), sizeof(T));
    std::vector<T> result(static_cast<size_t>(numElements()));
    copyTo(result.data(), result.size() * sizeof(T));
    return result;
  }

  /// Another shape and type over the same data (sharing it), for memory planning and
  /// reshapes. Error when the view needs more bytes than this array holds.
  NDArray view(std::vector<int64_t> shape, DataType dtype) const;

  /// "float32[2, 3] on cpu:0", for messages.
  std::string describe() const;

private:
  struct Storage;

  void checkElementType(std::optional<DataType> requested, size_t elementBytes) const;
  void checkHostAccess() const;
  void checkDefined(const char* operation) const;

  std::shared_ptr<Storage> storage_;
  std::vector<int64_t> shape_;
  DataType dtype_;
};

}  // namespace tessel::runtime
