// The ONNX frontend: a model file (protobuf) to Tessel's graph IR, and ONNX tensor files to arrays.
//
// This is the only code that sees protobuf or ONNX's generated classes; everything after it
// works on core/graph.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/graph/Graph.h"
#include "core/support/Error.h"
#include "runtime/NDArray.h"

namespace tessel::frontend {

struct OnnxImportOptions {
  /// Shapes for graph inputs, by name (`--input-shape data:1,3,224,224`). Needed for every
  /// input with a dynamic or missing dimension; a given shape must agree with the static
  /// dimensions the model declares.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// Graph inputs to bind as constants with these values (shape-like inputs whose values
  /// the compiler needs); they are no longer inputs of the imported graph.
  std::map<std::string, runtime::NDArray> inputValues;
  /// Values known for graph inputs (`tessel run` reads its inputs before compiling). An input
  /// that decides control flow (an If's condition, a Loop's trip count, a sequence position;
  /// see OnnxControlFlow.h) is bound to its value, so that the control flow is expanded for
  /// it; the others stay inputs.
  std::map<std::string, runtime::NDArray> knownInputValues;
  /// How many tensors each sequence input holds: element i becomes the graph input
  /// sequenceElementName(name, i), whose shape --input-shape may give under that name.
  std::map<std::string, size_t> sequenceLengths;
  /// Asked between nodes while they are imported; returning true stops the import with a
  /// Diagnostic that importCancelled() recognizes. (Parsing the file itself is one step.)
  std::function<bool()> cancelled;
  /// Told how far the import is (0-100, never decreasing) and what it is doing.
  std::function<void(int percent, const std::string& what)> progress;
  /// What becomes of nodes whose operator Tessel does not implement (one the operator registry
  /// lacks, or any operator outside the default ONNX domain). False (to compile): the import
  /// fails with one Diagnostic naming every such node (graph::unsupportedOperationsError). True
  /// (to view the model's structure, as the Studio's graph does for a model it cannot compile):
  /// each becomes a placeholder operation (graph::kUnsupportedOp) that no pass or lowering
  /// accepts, and every operation's output takes the static type the model declares for it
  /// (value_info), where it declares one.
  bool unsupportedAsPlaceholders = false;
};

/// The name of element `index` of a sequence graph input or output `name`: each element is
/// a tensor input or output of its own ("seq[0]").
std::string sequenceElementName(const std::string& name, size_t index);

/// Whether `diagnostic` is an import stopped by OnnxImportOptions::cancelled.
bool importCancelled(const Diagnostic& diagnostic);

/// The model's graph inputs (initializers excluded) with their declared types; a dynamic
/// dimension is -1. For messages and for choosing which inputs to bind.
struct OnnxInputInfo {
  std::string name;
  DataType dtype;
  std::vector<int64_t> shape;  ///< -1 for dynamic dimensions; empty for unknown rank.
  bool rankKnown = true;
  /// A sequence of tensors of that type: each element is an input of its own
  /// (sequenceElementName), their number given by OnnxImportOptions::sequenceLengths.
  bool sequence = false;
  /// A tensor of strings (ONNX STRING; dtype is then meaningless). Compiled kernels take no
  /// strings: a model with them runs interpreted (OnnxProgram.h).
  bool strings = false;
};

/// A tensor of strings (ONNX STRING elements, row-major), as StringNormalizer reads and writes.
struct StringTensor {
  std::vector<int64_t> shape;
  std::vector<std::string> elements;
  bool operator==(const StringTensor&) const = default;
};

/// Imports a model file. Operations are created with the ONNX op type as op, the ONNX
/// attributes (absent ones left absent: operators apply the spec's defaults), omitted
/// optional inputs as undefined Values, provenance {node name, op type} (a node without a
/// name gets "<OpType>_<index>"), and unknown output types (InferTypes fills them).
/// Initializers and Constant nodes become ConstantNodes; external data files are read
/// relative to the model's directory. The graph IR has no tensor attribute: a TENSOR
/// attribute `K` (ConstantOfShape's `value`) arrives as `K` (every element, as doubles for
/// floating-point types, else as int64), `K.dtype` ("float32") and `K.shape` (its dims). Every
/// problem (unreadable, truncated or non-protobuf file, unsupported IR/opset, an input without a
/// shape, a node reading a value nothing produced earlier (this includes cycles), a bad tensor)
/// is a Diagnostic naming the file and, where there is one, the node and its op. Operators Tessel
/// does not implement are all named in one Diagnostic, after every node was read (see
/// OnnxImportOptions::unsupportedAsPlaceholders).
Expected<graph::Graph> importOnnxFile(const std::string& path, const OnnxImportOptions& options = {});
/// The same from bytes in memory; `sourceName` names them in messages and anchors external data.
Expected<graph::Graph> importOnnxBytes(const std::string& bytes, const std::string& sourceName,
                                       const OnnxImportOptions& options = {});

/// The graph inputs a model file declares (without importing it).
Expected<std::vector<OnnxInputInfo>> readOnnxInputs(const std::string& path);

/// Reads a serialized ONNX TensorProto (the test suite's input_0.pb / output_0.pb), raw or
/// typed-field data, any element type Tessel has. A Diagnostic names the file on failure.
Expected<runtime::NDArray> readTensorProtoFile(const std::string& path);
/// The same from the file's bytes already in memory; `sourceName` names them in messages and
/// anchors external data.
Expected<runtime::NDArray> readTensorProtoBytes(const std::string& bytes, const std::string& sourceName);

/// What an ONNX test-data file holds: a tensor, or a sequence of tensors.
struct OnnxValue {
  runtime::NDArray tensor;
  std::optional<std::vector<runtime::NDArray>> sequence;
  std::optional<StringTensor> strings;  ///< Set (and tensor undefined) for a tensor of strings.
  bool absent = false;                   ///< An empty optional value (nothing else is set).
};
/// Reads a TensorProto (of numbers or strings), a SequenceProto of tensors, or an OptionalProto
/// holding either (read as what it holds; an empty one reads as `absent`). A map or a sequence
/// of non-tensors is a Diagnostic naming the file.
Expected<OnnxValue> readOnnxValueFile(const std::string& path);

/// Parses "NAME:D0,D1,..." (the --input-shape syntax) into a name and dimensions.
Expected<std::pair<std::string, std::vector<int64_t>>> parseInputShape(const std::string& text);

}  // namespace tessel::frontend
