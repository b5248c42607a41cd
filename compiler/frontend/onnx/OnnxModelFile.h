// Reading ONNX files: bytes from disk, a validated ModelProto, and the graph inputs a model declares.
//
// Internal to the ONNX frontend: it names protobuf classes, so only frontend sources include it.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "core/ir/DataType.h"
#include "core/support/Error.h"

namespace tessel::frontend {

/// The whole file; a Diagnostic located at `path` when it is missing, a directory or unreadable.
Expected<std::string> readFileBytes(const std::string& path);

/// The directory external data of a model called `path` is relative to ("" for a bare name).
std::string directoryOf(const std::string& path);

/// Parses a model. An empty buffer and many non-ONNX files parse as protobuf without error,
/// so a model must also carry an IR version and a graph; otherwise a Diagnostic located at
/// `sourceName` says the bytes are not an ONNX model.
Expected<onnx::ModelProto> parseModel(const std::string& bytes, const std::string& sourceName);

/// A graph input's declared type: element type and dimensions, -1 for dynamic ones.
struct DeclaredType {
  DataType dtype;
  std::vector<int64_t> shape;
  std::vector<std::string> dimNames;  ///< dim_param per dimension ("" when static or unnamed).
  bool rankKnown = false;             ///< False when the input declares no shape at all.
  /// A sequence of tensors of this type (an ONNX sequence_type); its length is not declared.
  bool sequence = false;
  /// A tensor of strings (dtype is then meaningless): only the interpreter reads those.
  bool strings = false;
};

/// The declared type of graph input `info`: a tensor, a sequence of tensors, or an optional
/// one (read as what it holds: the importer and runner take it as present). A Diagnostic
/// (without location) for a map, for no type, an unsupported element type or a negative
/// dimension.
Expected<DeclaredType> declaredTypeOf(const onnx::ValueInfoProto& info);

/// "[N, 3, 224, 224]": a shape with dynamic dimensions shown by name ("?" when unnamed).
std::string shapeText(const std::vector<int64_t>& shape, const std::vector<std::string>& dimNames = {});

}  // namespace tessel::frontend
