// ONNX's control flow (If, Loop, Scan, SequenceMap) and sequence operators, expanded while
// importing into plain graph operations.
//
// Tessel compiles static graphs. As LSTM is unrolled over time (OnnxRecurrent.h), control flow
// is expanded where the values deciding it are known while compiling: an If whose condition
// is known becomes the operations of the branch it takes, a Loop with a known trip count and
// condition becomes its iterations one after the other, a Scan (whose length is a static
// dimension) becomes its steps. A sequence is a list of tensors whose length the import knows:
// SequenceConstruct, SequenceInsert, SequenceAt and the others edit that list, and only the
// tensors in it reach the graph. "Known" means a constant, something computed from constants,
// or computed from graph inputs whose values the caller gave (`tessel run` knows its inputs
// before it compiles, OnnxImportOptions::knownInputValues); the compiled model is then specific
// to those values, as one specialized for a shape is. Control flow decided by data computed at
// run time is refused with a Diagnostic that says so (frontend::needsInterpreter
// recognizes it); such a model runs interpreted instead (OnnxProgram.h).
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/graph/Graph.h"
#include "core/support/Error.h"
#include "runtime/NDArray.h"

namespace onnx {
class GraphProto;
class NodeProto;
}  // namespace onnx

namespace tessel::frontend {

/// A value while importing: a tensor (a graph Value), or a sequence of tensors.
struct ImportedValue {
  graph::Value tensor;
  std::optional<std::vector<graph::Value>> sequence;

  static ImportedValue ofTensor(graph::Value value) { return ImportedValue{std::move(value), std::nullopt}; }
  static ImportedValue ofSequence(std::vector<graph::Value> elements) { return ImportedValue{{}, std::move(elements)}; }
  bool isSequence() const { return sequence.has_value(); }
};

/// The names visible while one graph is imported: its own, then its enclosing graphs' (an
/// ONNX subgraph reads the values of the graphs around it by name).
class ImportScope {
public:
  explicit ImportScope(const ImportScope* parent = nullptr) : parent_(parent) {}
  const ImportedValue* find(const std::string& name) const;
  bool bindsHere(const std::string& name) const { return values_.count(name) != 0; }
  void bind(const std::string& name, ImportedValue value) { values_[name] = std::move(value); }

private:
  const ImportScope* parent_;
  std::unordered_map<std::string, ImportedValue> values_;
};

/// What expanding a node needs from the importer.
class ExpansionContext {
public:
  virtual ~ExpansionContext() = default;
  /// Imports `body` once: its inputs bound to `arguments` in order, the names it reads from
  /// enclosing graphs looked up in `scope`, every operation named "<prefix><node name>". The
  /// values of its outputs, in order.
  virtual Expected<std::vector<ImportedValue>> importBody(const onnx::GraphProto& body,
                                                          const std::vector<ImportedValue>& arguments,
                                                          const ImportScope& scope, const std::string& prefix) = 0;
  /// The value of `value` when the import can know it (see the file comment), or a Diagnostic
  /// whose message reads on from "node '<name>' (<op>) " and says why it is not known;
  /// `role` names what the node needs it for ("its condition 'cond'").
  virtual Expected<runtime::NDArray> knownValue(const graph::Value& value, const std::string& role) = 0;
  /// The static type of `value`.
  virtual Expected<graph::TensorType> typeOf(const graph::Value& value) = 0;
  /// The model's opset, for the provenance of the operations an expansion makes.
  virtual int opset() const = 0;
};

/// One node to expand, as the importer sees it.
struct ExpansionNode {
  const onnx::NodeProto& proto;
  std::string name;  ///< The node's unique name; every operation it becomes is "<name>/...".
  std::vector<ImportedValue> inputs;  ///< In ONNX order; a default ImportedValue where omitted.
};

/// Whether expandControlFlow handles ONNX operator `opType`: If, Loop, Scan, SequenceMap and
/// the sequence operators (SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceErase,
/// SequenceAt, SequenceLength, SplitToSequence, ConcatFromSequence) and the optional ones
/// (Optional, OptionalHasElement, OptionalGetElement: an optional value is present or absent
/// while compiling, and present it is its value).
bool isControlFlowOperator(const std::string& opType);

/// Whether `value` is a sequence or a tensor is checked here; the values of `node`'s outputs
/// in order. A Diagnostic's message reads on from "node '<name>' (<op>) ".
Expected<std::vector<ImportedValue>> expandControlFlow(const ExpansionNode& node, const ImportScope& scope,
                                                       ExpansionContext& context);

/// The names a subgraph reads from the graphs around it (names its nodes use that neither its
/// inputs, its initializers nor its own nodes define), subgraphs of its nodes included.
std::vector<std::string> outerNamesRead(const onnx::GraphProto& body);

}  // namespace tessel::frontend
