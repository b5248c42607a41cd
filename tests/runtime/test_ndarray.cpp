// NDArray: allocation, alignment, shared ownership, copies, views and their error messages.
#include <QtTest>

#include <cstring>
#include <numeric>

#include "runtime/DeviceAPI.h"
#include "runtime/NDArray.h"

using namespace tessel::runtime;

namespace {

/// The message of the Error that `action` throws; empty when it throws none.
template <class Action>
QString errorMessageOf(Action action) {
  try {
    action();
  } catch (const Error& error) {
    return QString::fromUtf8(error.what());
  }
  return QString();
}

}  // namespace

class TestNDArray : public QObject {
  Q_OBJECT
private slots:
  void describesItsShapeAndSize() {
    NDArray array = NDArray::empty({2, 3, 4}, DataType::float32());
    QVERIFY(array.defined());
    QCOMPARE(array.ndim(), 3);
    QCOMPARE(array.shape(), (std::vector<int64_t>{2, 3, 4}));
    QCOMPARE(array.numElements(), int64_t(24));
    QCOMPARE(array.byteSize(), int64_t(96));
    QVERIFY(array.device() == Device::cpu());
    QCOMPARE(QString::fromStdString(array.describe()), QString("float32[2, 3, 4] on cpu:0"));
  }

  void scalarsAndEmptyArraysHaveTheRightSize() {
    NDArray scalar = NDArray::empty({}, DataType::int64());
    QCOMPARE(scalar.numElements(), int64_t(1));
    QCOMPARE(scalar.byteSize(), int64_t(8));
    NDArray nothing = NDArray::empty({0, 5}, DataType::float32());
    QCOMPARE(nothing.numElements(), int64_t(0));
    QVERIFY(nothing.data() != nullptr);
    nothing.copyFrom(std::vector<float>{});
  }

  void dataIs64ByteAligned() {
    std::vector<NDArray> arrays;
    for (int64_t elements : {1, 3, 17, 63, 1000, 4097})
      for (DataType type : {DataType::int8(), DataType::float32(), DataType::float64()})
        arrays.push_back(NDArray::empty({elements}, type));
    for (const NDArray& array : arrays) QCOMPARE(reinterpret_cast<uintptr_t>(array.data()) % 64, uintptr_t(0));
  }

  void copiesShareData() {
    NDArray original = NDArray::empty({4}, DataType::int32());
    original.copyFrom(std::vector<int32_t>{1, 2, 3, 4});
    NDArray copy = original;
    QCOMPARE(copy.data(), original.data());
    copy.values<int32_t>()[2] = 30;
    QCOMPARE(original.toVector<int32_t>(), (std::vector<int32_t>{1, 2, 30, 4}));
    // The data outlives the handle it was created with.
    original = NDArray();
    QCOMPARE(copy.values<int32_t>()[3], 4);
  }

  void copiesToAndFromHostMemory() {
    NDArray array = NDArray::empty({2, 3}, DataType::float32());
    std::vector<float> input(6);
    std::iota(input.begin(), input.end(), 0.5f);
    array.copyFrom(input.data(), input.size() * sizeof(float));
    std::vector<float> output(6, -1.0f);
    array.copyTo(output.data(), output.size() * sizeof(float));
    QCOMPARE(output, input);
  }

  void deepCopiesBetweenArrays() {
    NDArray source = NDArray::empty({3}, DataType::float64());
    source.copyFrom(std::vector<double>{1.5, 2.5, 3.5});
    NDArray destination = NDArray::empty({3}, DataType::float64());
    destination.copyFrom(source);
    QVERIFY(destination.data() != source.data());
    source.values<double>()[0] = 100.0;
    QCOMPARE(destination.toVector<double>(), (std::vector<double>{1.5, 2.5, 3.5}));
    NDArray other = NDArray::empty({3}, DataType::float64());
    source.copyTo(other);
    QCOMPARE(other.toVector<double>(), (std::vector<double>{100.0, 2.5, 3.5}));
  }

  void viewsShareDataWithAnotherShape() {
    NDArray array = NDArray::empty({2, 3}, DataType::float32());
    array.copyFrom(std::vector<float>{0, 1, 2, 3, 4, 5});
    NDArray flat = array.view({6}, DataType::float32());
    QCOMPARE(flat.data(), array.data());
    QCOMPARE(flat.toVector<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5}));
    NDArray bytes = array.view({24}, DataType::uint8());
    QCOMPARE(bytes.byteSize(), array.byteSize());
    QVERIFY(errorMessageOf([&] { array.view({7}, DataType::float32()); }).contains("needs 28 bytes"));
  }

  void sizeMismatchesAreClearErrors() {
    NDArray array = NDArray::empty({2, 3}, DataType::float32());
    std::vector<float> tooSmall(5);
    QString message = errorMessageOf([&] { array.copyFrom(tooSmall.data(), tooSmall.size() * sizeof(float)); });
    QVERIFY2(message.contains("20 bytes") && message.contains("float32[2, 3]") && message.contains("24 bytes"),
             qPrintable(message));
    message = errorMessageOf([&] { array.copyTo(tooSmall.data(), tooSmall.size() * sizeof(float)); });
    QVERIFY2(message.contains("20 bytes") && message.contains("float32[2, 3]"), qPrintable(message));
  }

  void shapeAndTypeMismatchesAreClearErrors() {
    NDArray array = NDArray::empty({2, 3}, DataType::float32());
    QString message = errorMessageOf([&] { array.copyFrom(NDArray::empty({3, 2}, DataType::float32())); });
    QVERIFY2(message.contains("float32[3, 2]") && message.contains("float32[2, 3]"), qPrintable(message));
    message = errorMessageOf([&] { array.copyFrom(NDArray::empty({2, 3}, DataType::int32())); });
    QVERIFY2(message.contains("int32[2, 3]"), qPrintable(message));
    message = errorMessageOf([&] { array.values<int32_t>(); });
    QVERIFY2(message.contains("float32[2, 3]") && message.contains("int32"), qPrintable(message));
    message = errorMessageOf([&] { array.copyFrom(std::vector<double>(6)); });
    QVERIFY2(message.contains("float64"), qPrintable(message));
  }

  void invalidShapesAreRejected() {
    QVERIFY(errorMessageOf([] { NDArray::empty({2, -1}, DataType::float32()); }).contains("negative extent"));
    QVERIFY(errorMessageOf([] { NDArray::empty({int64_t(1) << 40, int64_t(1) << 40}, DataType::float32()); })
                .contains("too many elements"));
  }

  void undefinedArraysRefuseAccess() {
    NDArray undefined;
    QVERIFY(!undefined.defined());
    QCOMPARE(undefined.data(), static_cast<void*>(nullptr));
    float value = 0;
    QVERIFY(errorMessageOf([&] { undefined.copyTo(&value, sizeof(value)); }).contains("undefined"));
  }

  void missingDeviceIsAClearError() {
    if (hasDeviceAPI(DeviceType::CUDA)) QSKIP("a CUDA device API is registered in this process");
    QString message = errorMessageOf([] { NDArray::empty({4}, DataType::float32(), Device::cuda()); });
    QVERIFY2(message.contains("cuda"), qPrintable(message));
  }

  void registeredDeviceAPIAllocatesAndCopies() {
    // A stand-in for a GPU: host memory that counts what the runtime asks of it.
    struct CountingDeviceAPI : DeviceAPI {
      int allocations = 0, frees = 0, copies = 0;
      void* allocate(Device device, size_t bytes, size_t alignment) override {
        ++allocations;
        return deviceAPI(DeviceType::CPU).allocate(Device::cpu(), bytes, alignment);
      }
      void free(Device, void* pointer) override {
        ++frees;
        deviceAPI(DeviceType::CPU).free(Device::cpu(), pointer);
      }
      void copy(const void* source, Device, void* destination, Device, size_t bytes) override {
        ++copies;
        std::memcpy(destination, source, bytes);
      }
      void synchronize(Device) override {}
    };
    if (hasDeviceAPI(DeviceType::CUDA)) QSKIP("a CUDA device API is registered in this process");
    auto owned = std::make_unique<CountingDeviceAPI>();
    CountingDeviceAPI* api = owned.get();
    registerDeviceAPI(DeviceType::CUDA, std::move(owned));
    QVERIFY(!errorMessageOf([] { registerDeviceAPI(DeviceType::CUDA, std::make_unique<CountingDeviceAPI>()); })
                 .isEmpty());
    {
      NDArray onDevice = NDArray::empty({3}, DataType::int32(), Device::cuda(1));
      QCOMPARE(QString::fromStdString(onDevice.describe()), QString("int32[3] on cuda:1"));
      onDevice.copyFrom(std::vector<int32_t>{7, 8, 9});
      NDArray onHost = NDArray::empty({3}, DataType::int32());
      onDevice.copyTo(onHost);
      QCOMPARE(onHost.toVector<int32_t>(), (std::vector<int32_t>{7, 8, 9}));
      QVERIFY(errorMessageOf([&] { onDevice.values<int32_t>(); }).contains("copy it to the CPU"));
      QCOMPARE(api->allocations, 1);
      QCOMPARE(api->copies, 2);
    }
    QCOMPARE(api->frees, 1);
  }
};

QTEST_GUILESS_MAIN(TestNDArray)
#include "test_ndarray.moc"
