// NDArray storage, size checks and copies through the device API.
#include "runtime/NDArray.h"

#include <limits>

#include "runtime/DeviceAPI.h"

namespace tessel::runtime {

/// One allocation, freed through its device's API when the last handle goes away.
struct NDArray::Storage {
  Device device;
  void* data = nullptr;
  int64_t bytes = 0;

  Storage(Device device, int64_t bytes)
      : device(device), data(deviceAPI(device.type).allocate(device, static_cast<size_t>(bytes), kAlignment)),
        bytes(bytes) {}
  ~Storage() { deviceAPI(device.type).free(device, data); }
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
};

namespace {

std::string shapeToString(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

/// Bytes needed by `shape` elements of `dtype`; Error for negative extents or overflow.
int64_t checkedByteSize(const std::vector<int64_t>& shape, DataType dtype) {
  int64_t elements = 1;
  for (int64_t extent : shape) {
    if (extent < 0) throw Error("array shape " + shapeToString(shape) + " has a negative extent");
    if (extent != 0 && elements > std::numeric_limits<int64_t>::max() / extent)
      throw Error("array shape " + shapeToString(shape) + " has too many elements");
    elements *= extent;
  }
  if (dtype.lanes == 0) throw Error("array element type " + dtype.toString() + " has zero lanes");
  if (elements > std::numeric_limits<int64_t>::max() / dtype.bytes())
    throw Error("array of " + dtype.toString() + shapeToString(shape) + " is too large");
  return elements * dtype.bytes();
}

/// The API that can copy between two devices: the non-CPU one when there is one.
DeviceAPI& copyAPI(Device source, Device destination) {
  return deviceAPI(source.type != DeviceType::CPU ? source.type : destination.type);
}

}  // namespace

NDArray NDArray::empty(std::vector<int64_t> shape, DataType dtype, Device device) {
  NDArray array;
  array.storage_ = std::make_shared<Storage>(device, checkedByteSize(shape, dtype));
  array.shape_ = std::move(shape);
  array.dtype_ = dtype;
  return array;
}

Device NDArray::device() const { return storage_ ? storage_->device : Device::cpu(); }

int64_t NDArray::numElements() const {
  int64_t elements = 1;
  for (int64_t extent : shape_) elements *= extent;
  return elements;
}

int64_t NDArray::byteSize() const { return numElements() * dtype_.bytes(); }

void* NDArray::data() const { return storage_ ? storage_->data : nullptr; }

std::string NDArray::describe() const {
  if (!defined()) return "an undefined array";
  return dtype_.toString() + shapeToString(shape_) + " on " + device().toString();
}

void NDArray::checkDefined(const char* operation) const {
  if (!defined()) throw Error(std::string("NDArray::") + operation + " on an undefined array");
}

void NDArray::checkElementType(std::optional<DataType> requested, size_t elementBytes) const {
  checkDefined("typed access");
  if (!requested)
    throw Error("no array element type corresponds to a C++ type of " + std::to_string(elementBytes) + " bytes");
  if (*requested != dtype_)
    throw Error("the array is " + describe() + ", so its elements cannot be accessed as " + requested->toString());
}

void NDArray::checkHostAccess() const {
  checkDefined("host access");
  if (device().type != DeviceType::CPU)
    throw Error("the array is " + describe() + "; copy it to the CPU to read its elements");
}

void NDArray::copyFrom(const void* source, size_t bytes) {
  checkDefined("copyFrom");
  if (static_cast<int64_t>(bytes) != byteSize())
    throw Error("cannot copy " + std::to_string(bytes) + " bytes into " + describe() + ", which holds " +
                std::to_string(byteSize()) + " bytes");
  copyAPI(Device::cpu(), device()).copy(source, Device::cpu(), data(), device(), bytes);
}

void NDArray::copyTo(void* destination, size_t bytes) const {
  checkDefined("copyTo");
  if (static_cast<int64_t>(bytes) != byteSize())
    throw Error("cannot copy " + describe() + ", which holds " + std::to_string(byteSize()) + " bytes, into " +
                std::to_string(bytes) + " bytes");
  copyAPI(device(), Device::cpu()).copy(data(), device(), destination, Device::cpu(), bytes);
}

void NDArray::copyFrom(const NDArray& source) {
  checkDefined("copyFrom");
  source.checkDefined("copyTo");
  if (source.shape_ != shape_ || source.dtype_ != dtype_)
    throw Error("cannot copy " + source.describe() + " into " + describe() + ": shape and type must match");
  copyAPI(source.device(), device()).copy(source.data(), source.device(), data(), device(),
                                          static_cast<size_t>(byteSize()));
}

void NDArray::copyTo(NDArray destination) const { destination.copyFrom(*this); }

NDArray NDArray::view(std::vector<int64_t> shape, DataType dtype) const {
  checkDefined("view");
  int64_t bytes = checkedByteSize(shape, dtype);
  if (bytes > storage_->bytes)
    throw Error("a view of " + dtype.toString() + shapeToString(shape) + " needs " + std::to_string(bytes) +
                " bytes but " + describe() + " has only " + std::to_string(storage_->bytes));
  NDArray result;
  result.storage_ = storage_;
  result.shape_ = std::move(shape);
  result.dtype_ = dtype;
  return result;
}

}  // namespace tessel::runtime
