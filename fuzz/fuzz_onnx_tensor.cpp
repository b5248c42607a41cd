// Fuzzes readTensorProtoBytes: a serialized ONNX TensorProto (test-data input_0.pb files).
#include "compiler/frontend/onnx/OnnxImporter.h"
#include "fuzz/FuzzInput.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessel;
  Expected<runtime::NDArray> array = frontend::readTensorProtoBytes(fuzz::asString(data, size), "/nonexistent/fuzz.pb");
  if (!array) return 0;
  const auto* bytes = static_cast<const uint8_t*>(array->data());
  volatile uint8_t sum = 0;
  for (int64_t i = 0; i < array->byteSize(); ++i) sum = sum + bytes[i];
  return 0;
}
