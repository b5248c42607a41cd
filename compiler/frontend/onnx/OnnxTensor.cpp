// ONNX tensors (TensorProto) to runtime arrays: element types, raw and typed data, external files.
#include "compiler/frontend/onnx/OnnxTensor.h"

#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include <onnx/onnx-data_pb.h>

#include "compiler/frontend/onnx/OnnxDiagnostic.h"
#include "compiler/frontend/onnx/OnnxImporter.h"
#include "compiler/frontend/onnx/OnnxModelFile.h"

namespace tessel::frontend {
namespace {

using onnx::TensorProto;

// No model has tensors this large; the cap keeps a corrupted dimension from turning into a
// giant allocation before the data size check can reject it.
constexpr int64_t kMaxTensorBytes = int64_t{1} << 40;

std::string describeTensor(const TensorProto& tensor) {
  return tensor.name().empty() ? std::string("a tensor") : "tensor '" + tensor.name() + "'";
}

Diagnostic tensorError(const TensorProto& tensor, const std::string& problem) {
  return importError(describeTensor(tensor) + " " + problem);
}

// Copies a typed repeated field into the array, converting each element to T.
template <class T, class Field>
void copyTypedField(const Field& field, const runtime::NDArray& array) {
  T* out = static_cast<T*>(array.data());
  for (int i = 0; i < field.size(); ++i) out[i] = static_cast<T>(field.Get(i));
}

// How many values a typed field must hold for the tensor and copies them; the field ONNX
// uses depends on the element type (16-bit floats travel as their bit patterns in int32_data).
std::optional<Diagnostic> copyTypedData(const TensorProto& tensor, const runtime::NDArray& array) {
  int64_t expected = array.numElements();
  auto checkCount = [&](int64_t count, const char* field) -> std::optional<Diagnostic> {
    if (count == expected) return std::nullopt;
    return tensorError(tensor, "has " + std::to_string(count) + " values in " + field + " but its dims " +
                                   "need " + std::to_string(expected));
  };
  switch (tensor.data_type()) {
    case TensorProto::FLOAT:
      if (auto e = checkCount(tensor.float_data_size(), "float_data")) return e;
      copyTypedField<float>(tensor.float_data(), array);
      return std::nullopt;
    case TensorProto::DOUBLE:
      if (auto e = checkCount(tensor.double_data_size(), "double_data")) return e;
      copyTypedField<double>(tensor.double_data(), array);
      return std::nullopt;
    case TensorProto::INT64:
      if (auto e = checkCount(tensor.int64_data_size(), "int64_data")) return e;
      copyTypedField<int64_t>(tensor.int64_data(), array);
      return std::nullopt;
    case TensorProto::UINT32:
      if (auto e = checkCount(tensor.uint64_data_size(), "uint64_data")) return e;
      copyTypedField<uint32_t>(tensor.uint64_data(), array);
      return std::nullopt;
    case TensorProto::UINT64:
      if (auto e = checkCount(tensor.uint64_data_size(), "uint64_data")) return e;
      copyTypedField<uint64_t>(tensor.uint64_data(), array);
      return std::nullopt;
    default:
      break;
  }
  // Every remaining type travels in int32_data, narrowed to its width.
  if (auto e = checkCount(tensor.int32_data_size(), "int32_data")) return e;
  const auto& values = tensor.int32_data();
  switch (tensor.data_type()) {
    case TensorProto::INT32: copyTypedField<int32_t>(values, array); break;
    case TensorProto::INT16: copyTypedField<int16_t>(values, array); break;
    case TensorProto::INT8: copyTypedField<int8_t>(values, array); break;
    case TensorProto::UINT16:
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16: copyTypedField<uint16_t>(values, array); break;
    case TensorProto::UINT8: copyTypedField<uint8_t>(values, array); break;
    case TensorProto::BOOL: {
      auto* out = static_cast<uint8_t*>(array.data());
      for (int i = 0; i < values.size(); ++i) out[i] = values.Get(i) != 0;
      break;
    }
    default: TESSEL_ICHECK(false) << "element type " << tensor.data_type() << " passed the type check";
  }
  return std::nullopt;
}

std::optional<int64_t> parseByteCount(const std::string& text) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

// Reads the tensor's bytes from the file its external_data names into a new `array` of
// `shape`, allocated only once the file is known to hold them. ONNX requires the path to be
// relative and inside the model's directory; anything else is refused rather than read.
std::optional<Diagnostic> readExternalData(const TensorProto& tensor, const std::string& modelDirectory,
                                           const std::vector<int64_t>& shape, runtime::DataType type, int64_t bytes,
                                           runtime::NDArray& array) {
  std::string location;
  int64_t offset = 0;
  std::optional<int64_t> length;
  for (const auto& entry : tensor.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset" || entry.key() == "length") {
      auto number = parseByteCount(entry.value());
      if (!number) return tensorError(tensor, "has external data " + entry.key() + " '" + entry.value() +
                                                   "', which is not a byte count");
      if (entry.key() == "offset") offset = *number;
      else length = *number;
    }
  }
  if (location.empty()) return tensorError(tensor, "stores its data externally but names no location");
  std::filesystem::path relative(location);
  bool escapes = relative.is_absolute();
  for (const auto& part : relative) escapes = escapes || part == "..";
  if (escapes)
    return tensorError(tensor, "stores its data in '" + location +
                                   "', outside the model's directory (ONNX requires a relative path below it)");
  std::filesystem::path path = modelDirectory.empty() ? relative : std::filesystem::path(modelDirectory) / relative;
  std::error_code sizeError;
  auto fileSize = std::filesystem::file_size(path, sizeError);
  if (sizeError) return tensorError(tensor, "stores its data in '" + path.string() + "', which cannot be read");
  if (length && *length != bytes)
    return tensorError(tensor, "has external data of " + std::to_string(*length) + " bytes but its dims and type need " +
                                   std::to_string(bytes));
  if (offset > int64_t(fileSize) || int64_t(fileSize) - offset < bytes)
    return tensorError(tensor, "needs bytes " + std::to_string(offset) + ".." + std::to_string(offset + bytes) +
                                   " of '" + path.string() + "', which has " + std::to_string(fileSize));
  try {
    array = runtime::NDArray::empty(shape, type);
  } catch (const std::exception& failure) {
    return tensorError(tensor, std::string("cannot be allocated: ") + failure.what());
  }
  std::ifstream file(path, std::ios::binary);
  file.seekg(offset);
  file.read(static_cast<char*>(array.data()), bytes);
  if (!file) return tensorError(tensor, "stores its data in '" + path.string() + "', which cannot be read");
  return std::nullopt;
}

}  // namespace

Expected<DataType> elementTypeFromOnnx(int onnxType) {
  switch (onnxType) {
    case TensorProto::FLOAT: return DataType::float32();
    case TensorProto::DOUBLE: return DataType::float64();
    case TensorProto::FLOAT16: return DataType::float16();
    case TensorProto::BFLOAT16: return DataType::bfloat16();
    case TensorProto::INT8: return DataType::int8();
    case TensorProto::INT16: return DataType::int16();
    case TensorProto::INT32: return DataType::int32();
    case TensorProto::INT64: return DataType::int64();
    case TensorProto::UINT8: return DataType::uint8();
    case TensorProto::UINT16: return DataType::uint16();
    case TensorProto::UINT32: return DataType::uint32();
    case TensorProto::UINT64: return DataType::uint64();
    case TensorProto::BOOL: return DataType::boolean();
    case TensorProto::STRING: return importError("string tensors are not supported");
    case TensorProto::COMPLEX64:
    case TensorProto::COMPLEX128: return importError("complex tensors are not supported");
    default: return importError("element type code " + std::to_string(onnxType) + " is not one Tessel knows");
  }
}

runtime::DataType toRuntimeType(DataType type) {
  auto code = type.isBool()    ? runtime::DataType::Code::Bool
              : type.isInt()   ? runtime::DataType::Code::Int
              : type.isUInt()  ? runtime::DataType::Code::UInt
              : type.code() == DataType::Code::BFloat ? runtime::DataType::Code::BFloat
                                                       : runtime::DataType::Code::Float;
  TESSEL_ICHECK(type.isBool() || type.isIntegral() || type.isFloat()) << "no array type for " << type.toString();
  return runtime::DataType{code, static_cast<uint8_t>(type.bits()), static_cast<uint16_t>(type.lanes())};
}

Expected<runtime::NDArray> tensorToArray(const TensorProto& tensor, const std::string& modelDirectory) {
  auto elementType = elementTypeFromOnnx(tensor.data_type());
  if (!elementType) return tensorError(tensor, "has an unsupported element type: " + elementType.error().message);
  if (tensor.has_segment()) return tensorError(tensor, "is segmented, which Tessel does not support");
  std::vector<int64_t> shape(tensor.dims().begin(), tensor.dims().end());
  int64_t elementBytes = toRuntimeType(*elementType).bytes();
  int64_t bytes = elementBytes;
  for (int64_t dim : shape) {
    if (dim < 0) return tensorError(tensor, "has a negative dimension (" + std::to_string(dim) + ")");
    if (dim != 0 && bytes > kMaxTensorBytes / dim)
      return tensorError(tensor, "is too large (over 2^40 bytes); its dims are probably corrupted");
    bytes *= dim;
  }
  // Check the claimed size against the bytes at hand before allocating it: dims of a corrupt
  // or hostile file may ask for up to 2^40 bytes that the data cannot fill.
  const bool external = tensor.data_location() == TensorProto::EXTERNAL;
  if (!external && tensor.has_raw_data() && int64_t(tensor.raw_data().size()) != bytes)
    return tensorError(tensor, "has " + std::to_string(tensor.raw_data().size()) + " bytes of raw_data but its dims " +
                                   "and type need " + std::to_string(bytes));
  // Typed data takes at least a byte of the message per element, packed 4-bit types half of one.
  if (!external && !tensor.has_raw_data() && bytes / elementBytes > 2 * int64_t(tensor.ByteSizeLong()) + 16)
    return tensorError(tensor, "has dims of " + std::to_string(bytes / elementBytes) + " elements but holds only " +
                                   std::to_string(tensor.ByteSizeLong()) + " bytes; its dims are probably corrupted");
  runtime::NDArray array;
  if (external) {
    if (auto e = readExternalData(tensor, modelDirectory, shape, toRuntimeType(*elementType), bytes, array)) return *e;
    return array;
  }
  try {
    array = runtime::NDArray::empty(shape, toRuntimeType(*elementType));
  } catch (const std::exception& failure) {
    return tensorError(tensor, std::string("cannot be allocated: ") + failure.what());
  }
  if (tensor.has_raw_data()) {
    if (bytes > 0) std::memcpy(array.data(), tensor.raw_data().data(), size_t(bytes));
  } else if (auto e = copyTypedData(tensor, array)) {
    return *e;
  }
  return array;
}

namespace {

// readTensorProtoFile on the file's bytes, already read.
Expected<runtime::NDArray> tensorFromFileBytes(const std::string& bytes, const std::string& path) {
  if (bytes.empty()) return importError("is empty; expected a serialized ONNX TensorProto", path);
  onnx::TensorProto tensor;
  if (!tensor.ParseFromString(bytes))
    return importError("is not an ONNX tensor: it does not parse as a TensorProto (truncated or another format)", path);
  auto array = tensorToArray(tensor, directoryOf(path));
  if (!array) {
    // Sequence-, Map- and OptionalProto files (other inputs of the test suite) start with
    // their name, a length-delimited field 1; ONNX writes a TensorProto's field 1 (dims) as
    // plain varints. Such files parse as a garbled tensor, so say what they probably are.
    const bool startsWithName = bytes[0] == '\x0a';
    if (startsWithName)
      return importError("holds a sequence, map or optional value, not a tensor; Tessel reads tensors only", path);
    bool probablyNotATensor = tensor.data_type() == onnx::TensorProto::UNDEFINED || tensor.has_segment() ||
                              tensor.unknown_fields().field_count() > 0;
    return importError(array.error().message, path,
                       probablyNotATensor ? "the file may hold a sequence, map or optional value rather than a tensor; "
                                            "Tessel reads tensors only"
                                          : "");
  }
  return array;
}

}  // namespace

Expected<runtime::NDArray> readTensorProtoFile(const std::string& path) {
  auto bytes = readFileBytes(path);
  if (!bytes) return bytes.error();
  return tensorFromFileBytes(*bytes, path);
}

Expected<runtime::NDArray> readTensorProtoBytes(const std::string& bytes, const std::string& sourceName) {
  return tensorFromFileBytes(bytes, sourceName);
}

namespace {

Expected<std::vector<runtime::NDArray>> sequenceArrays(const onnx::SequenceProto& sequence, const std::string& path) {
  if (sequence.elem_type() != onnx::SequenceProto::TENSOR && sequence.tensor_values_size() == 0 &&
      sequence.elem_type() != onnx::SequenceProto::UNDEFINED)
    return importError("holds a sequence of sequences, maps or optionals; Tessel reads sequences of tensors only", path);
  std::vector<runtime::NDArray> elements;
  for (const auto& tensor : sequence.tensor_values()) {
    auto array = tensorToArray(tensor, directoryOf(path));
    if (!array) return importError("holds a sequence whose element " + std::to_string(elements.size()) + " is bad: " +
                                       array.error().message,
                                   path);
    elements.push_back(std::move(*array));
  }
  return elements;
}

}  // namespace

Expected<OnnxValue> readOnnxValueFile(const std::string& path) {
  auto bytes = readFileBytes(path);
  if (!bytes) return bytes.error();
  // Sequence- and OptionalProto files start with their name (field 1, length-delimited); a
  // TensorProto's field 1 (dims) is written as plain varints.
  if (bytes->empty() || (*bytes)[0] != '\x0a') {
    onnx::TensorProto proto;
    if (!bytes->empty() && proto.ParseFromString(*bytes) && proto.data_type() == onnx::TensorProto::STRING) {
      StringTensor strings{{proto.dims().begin(), proto.dims().end()}, {proto.string_data().begin(), proto.string_data().end()}};
      int64_t count = 1;
      for (int64_t d : strings.shape) count *= d;
      if (count != int64_t(strings.elements.size()))
        return importError("holds a string tensor of shape " + shapeText(strings.shape) + " with " +
                               std::to_string(strings.elements.size()) + " strings",
                           path);
      return OnnxValue{{}, std::nullopt, std::move(strings)};
    }
    auto tensor = tensorFromFileBytes(*bytes, path);
    if (!tensor) return tensor.error();
    return OnnxValue{*tensor, std::nullopt, std::nullopt};
  }
  // The two are the same on the wire (name 1, elem_type 2, tensors 3, sequences 5, the same
  // type codes): an optional tensor reads as a sequence of one tensor, an optional sequence as
  // a sequence holding one sequence. The caller knows from the model which was meant.
  onnx::SequenceProto sequence;
  if (!sequence.ParseFromString(*bytes))
    return importError("is neither an ONNX tensor, sequence nor optional value (truncated or another format)", path);
  if (sequence.sequence_values_size() == 1 && sequence.tensor_values_size() == 0) {
    auto elements = sequenceArrays(sequence.sequence_values(0), path);
    if (!elements) return elements.error();
    return OnnxValue{{}, std::move(*elements), std::nullopt};
  }
  if (sequence.elem_type() == onnx::SequenceProto::TENSOR || sequence.tensor_values_size() > 0) {
    auto elements = sequenceArrays(sequence, path);
    if (!elements) return elements.error();
    return OnnxValue{{}, std::move(*elements), std::nullopt};
  }
  if (sequence.elem_type() == onnx::SequenceProto::UNDEFINED) return OnnxValue{{}, std::nullopt, std::nullopt, true};
  return importError("holds a sequence of sequences, maps or optionals; Tessel reads sequences of tensors only", path);
}

}  // namespace tessel::frontend
