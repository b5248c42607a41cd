// Reading ONNX files: bytes from disk, a validated ModelProto, and the graph inputs a model declares.
#include "compiler/frontend/onnx/OnnxModelFile.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <set>

#include "compiler/frontend/onnx/OnnxDiagnostic.h"
#include "compiler/frontend/onnx/OnnxImporter.h"
#include "compiler/frontend/onnx/OnnxTensor.h"

namespace tessel::frontend {
namespace {

using google::protobuf::io::CodedInputStream;
using google::protobuf::internal::WireFormatLite;

// Field numbers from onnx.proto, for reading a model without decoding all of it.
constexpr int kModelIrVersionField = 1;
constexpr int kModelGraphField = 7;
constexpr int kGraphInitializerField = 5;
constexpr int kGraphInputField = 11;
constexpr int kTensorNameField = 8;

// What readOnnxInputs needs of a model: its graph inputs and which of them are initializers.
struct InputDeclarations {
  std::vector<onnx::ValueInfoProto> inputs;
  std::set<std::string> initializerNames;
};

bool isLengthDelimited(uint32_t tag) {
  return WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
}

// Runs `readFields` over the length-delimited submessage the stream is at.
template <class ReadFields>
bool readSubmessage(CodedInputStream& in, ReadFields readFields) {
  uint32_t length = 0;
  if (!in.ReadVarint32(&length)) return false;
  auto limit = in.PushLimit(int(length));
  bool ok = readFields() && in.ConsumedEntireMessage();
  in.PopLimit(limit);
  return ok;
}

bool scanTensorName(CodedInputStream& in, std::string& name) {
  while (uint32_t tag = in.ReadTag()) {
    bool ok = WireFormatLite::GetTagFieldNumber(tag) == kTensorNameField && isLengthDelimited(tag)
                  ? WireFormatLite::ReadString(&in, &name)
                  : WireFormatLite::SkipField(&in, tag);  // raw_data is skipped, not copied
    if (!ok) return false;
  }
  return true;
}

bool scanGraph(CodedInputStream& in, InputDeclarations& declarations) {
  while (uint32_t tag = in.ReadTag()) {
    int field = WireFormatLite::GetTagFieldNumber(tag);
    bool ok = true;
    if (field == kGraphInputField && isLengthDelimited(tag)) {
      std::string bytes;
      ok = WireFormatLite::ReadString(&in, &bytes) && declarations.inputs.emplace_back().ParseFromString(bytes);
    } else if (field == kGraphInitializerField && isLengthDelimited(tag)) {
      std::string name;
      ok = readSubmessage(in, [&] { return scanTensorName(in, name); });
      declarations.initializerNames.insert(name);
    } else {
      ok = WireFormatLite::SkipField(&in, tag);
    }
    if (!ok) return false;
  }
  return true;
}

// The input declarations of a serialized model, read from the wire format without decoding
// initializers: `tessel run` asks for a model's inputs before importing it, and a full parse
// would copy every weight once more. Nullopt for anything unusual; the caller then parses
// the whole model, which explains the problem.
std::optional<InputDeclarations> scanInputDeclarations(const std::string& bytes) {
  CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()), int(bytes.size()));
  InputDeclarations declarations;
  bool sawIrVersion = false, sawGraph = false;
  while (uint32_t tag = in.ReadTag()) {
    int field = WireFormatLite::GetTagFieldNumber(tag);
    bool ok = true;
    if (field == kModelIrVersionField && WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_VARINT) {
      uint64_t version = 0;
      ok = in.ReadVarint64(&version);
      sawIrVersion = version > 0;
    } else if (field == kModelGraphField && isLengthDelimited(tag)) {
      ok = readSubmessage(in, [&] { return scanGraph(in, declarations); });
      sawGraph = true;
    } else {
      ok = WireFormatLite::SkipField(&in, tag);
    }
    if (!ok) return std::nullopt;
  }
  if (!in.ConsumedEntireMessage() || !sawIrVersion || !sawGraph) return std::nullopt;
  return declarations;
}

InputDeclarations declarationsOf(const onnx::ModelProto& model) {
  InputDeclarations declarations;
  declarations.inputs.assign(model.graph().input().begin(), model.graph().input().end());
  for (const auto& tensor : model.graph().initializer()) declarations.initializerNames.insert(tensor.name());
  return declarations;
}

}  // namespace

Expected<std::string> readFileBytes(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) return importError("is a directory, not a file", path);
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) return importError("cannot be opened (missing or unreadable)", path);
  // One read into a buffer of the file's size: models are tens of megabytes.
  std::streamoff size = file.tellg();
  if (size < 0) return importError("cannot be read", path);
  std::string bytes(size_t(size), '\0');
  file.seekg(0);
  if (!file.read(bytes.data(), size)) return importError("cannot be read", path);
  return bytes;
}

std::string directoryOf(const std::string& path) { return std::filesystem::path(path).parent_path().string(); }

Expected<onnx::ModelProto> parseModel(const std::string& bytes, const std::string& sourceName) {
  const std::string notAModel = "is not an ONNX model";
  if (bytes.empty()) return importError("is empty; " + notAModel, sourceName);
  if (bytes.size() > size_t(std::numeric_limits<int>::max()))
    return importError("is over 2 GB, more than one protobuf message can hold", sourceName,
                       "save the model with its weights as external data (onnx.save(..., save_as_external_data=True))");
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes))
    return importError(notAModel + ": it does not parse as an ONNX protobuf (truncated or another format)",
                       sourceName);
  if (model.ir_version() <= 0 || !model.has_graph())
    return importError(notAModel + ": it has no " + std::string(model.ir_version() <= 0 ? "IR version" : "graph") +
                           " (truncated or another format)",
                       sourceName);
  return model;
}

Expected<DeclaredType> declaredTypeOf(const onnx::ValueInfoProto& info) {
  const std::string input = "input '" + info.name() + "'";
  if (!info.has_type()) return importError(input + " declares no type");
  const onnx::TypeProto* type = &info.type();
  if (type->has_optional_type()) type = &type->optional_type().elem_type();
  const bool sequence = type->has_sequence_type();
  if (sequence) type = &type->sequence_type().elem_type();
  if (!type->has_tensor_type())
    return importError(input + " is not a tensor, a sequence of tensors or an optional one (maps are not supported)");
  const auto& tensorType = type->tensor_type();
  const bool strings = tensorType.elem_type() == onnx::TensorProto::STRING;
  auto dtype = strings ? Expected<DataType>(DataType::uint8()) : elementTypeFromOnnx(tensorType.elem_type());
  if (!dtype) return importError(input + " has an unsupported element type: " + dtype.error().message);
  DeclaredType declared{*dtype, {}, {}, tensorType.has_shape(), sequence, strings};
  for (const auto& dim : tensorType.shape().dim()) {
    if (dim.has_dim_value() && dim.dim_value() < 0)
      return importError(input + " declares a negative dimension (" + std::to_string(dim.dim_value()) + ")");
    declared.shape.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
    declared.dimNames.push_back(dim.has_dim_param() ? dim.dim_param() : "");
  }
  return declared;
}

std::string shapeText(const std::vector<int64_t>& shape, const std::vector<std::string>& dimNames) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    bool named = i < dimNames.size() && !dimNames[i].empty();
    out += (i ? ", " : "") + (shape[i] >= 0 ? std::to_string(shape[i]) : named ? dimNames[i] : "?");
  }
  return out + "]";
}

Expected<std::vector<OnnxInputInfo>> readOnnxInputs(const std::string& path) {
  auto bytes = readFileBytes(path);
  if (!bytes) return bytes.error();
  std::optional<InputDeclarations> declarations = scanInputDeclarations(*bytes);
  if (!declarations) {
    auto model = parseModel(*bytes, path);
    if (!model) return model.error();
    declarations = declarationsOf(*model);
  }
  std::vector<OnnxInputInfo> inputs;
  for (const auto& info : declarations->inputs) {
    if (declarations->initializerNames.count(info.name())) continue;
    auto declared = declaredTypeOf(info);
    if (!declared) return importError(declared.error().message, path);
    inputs.push_back(OnnxInputInfo{info.name(), declared->dtype, declared->shape, declared->rankKnown, declared->sequence,
                                   declared->strings});
  }
  return inputs;
}

}  // namespace tessel::frontend
