// A model whose control flow is decided while it runs, as a program: compiled segments of plain
// operations, and the control-flow operations between them for an interpreter to carry out.
//
// Tessel compiles static graphs and expands control flow while importing where the values
// deciding it are known (OnnxControlFlow.h). Where they are not (an If on a sum of the data, a
// while loop whose condition the body computes, a loop longer than is sensible to unroll) the
// model is read as this program instead: each graph (the model's and every branch and body) is
// cut at its control-flow nodes into segments of the operations between them, ordered in
// stages. A segment is an ONNX model of its own, compiled once the types of its inputs are
// known (driver/InterpretedModel.h runs the program); the control-flow nodes stay nodes, with
// their subgraphs read the same way.
//
// This header names no protobuf class: the segments carry their operations as ONNX bytes, and
// segmentModelBytes() turns them into a model for the importer.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/support/Error.h"
#include "runtime/NDArray.h"

namespace tessel::frontend {

/// A run of plain operations (no control flow, no sequences): compiled as a model whose inputs
/// are the values it reads from elsewhere and whose outputs are the values read after it.
struct ProgramSegment {
  std::vector<std::string> inputs;   ///< Read from the graph's inputs, earlier steps or enclosing graphs.
  std::vector<std::string> outputs;  ///< Read by later steps, subgraphs or the graph's outputs.
  std::string graphBytes;            ///< A serialized onnx.GraphProto: the nodes and the initializers they read.
  int nodeCount = 0;
  std::string firstNode;             ///< For messages: the name of its first node.
};

struct ProgramGraph;

/// A control-flow or sequence node, carried out by the interpreter.
struct ProgramControlNode {
  std::string name;    ///< The node's name, or "<OpType>_<index>" when it has none.
  std::string opType;  ///< If, Loop, Scan, SequenceConstruct, ...
  std::vector<std::string> inputs;   ///< In ONNX order; "" where an optional input is omitted.
  std::vector<std::string> outputs;  ///< In ONNX order; "" where an output is not wanted.
  std::map<std::string, int64_t> ints;                 ///< INT attributes (axis, new_axis, ...).
  std::map<std::string, std::vector<int64_t>> intLists;  ///< INTS attributes (Scan's axes).
  std::map<std::string, std::string> strings;                  ///< STRING attributes (case_change_action).
  std::map<std::string, std::vector<std::string>> stringLists;  ///< STRINGS attributes (stopwords).
  /// Subgraph attributes by name (then_branch, else_branch, body).
  std::map<std::string, std::shared_ptr<const ProgramGraph>> bodies;
};

/// One step of a graph: a segment or a control node.
struct ProgramStep {
  bool isSegment = false;
  ProgramSegment segment;
  ProgramControlNode control;
};

/// A graph (the model's, or a branch or body) as steps in an order that respects every read.
struct ProgramGraph {
  std::string name;
  std::vector<std::string> inputs;   ///< The model's graph inputs (initializers excluded), or a body's formal inputs.
  std::vector<std::string> outputs;
  /// The graph's initializers that control nodes or the graph's outputs read directly
  /// (segments carry the ones their operations read).
  std::map<std::string, runtime::NDArray> initializers;
  std::vector<ProgramStep> steps;
};

struct ControlFlowProgram {
  std::string sourceName;  ///< The model file, for messages.
  ProgramGraph main;
  /// What segmentModelBytes() needs of the model: its IR version and opset imports, serialized.
  std::string modelHeaderBytes;
  int opset = 0;  ///< The model's opset of the default ONNX domain.
  int segmentCount = 0;
  int controlNodeCount = 0;
};

/// Whether the interpreter carries out operator `opType` itself (a control node): control flow,
/// sequences and optional values (isControlFlowOperator), and StringNormalizer, whose tensors
/// of strings no compiled kernel takes.
bool isInterpretedOperator(const std::string& opType);

/// Reads `path` as a program: every isInterpretedOperator node is a control node, and so is a
/// Cast or CastLike to or from strings (its "to" string attribute names the target type:
/// "string" or DataType::toString()); the others are cut into segments. Every node of a segment whose operator Tessel does not implement is
/// named in one Diagnostic. Diagnostics name the file.
Expected<ControlFlowProgram> readControlFlowProgram(const std::string& path);
/// The same from bytes in memory; `sourceName` names them in messages and anchors external data.
Expected<ControlFlowProgram> readControlFlowProgramBytes(const std::string& bytes, const std::string& sourceName);

/// The type a segment input has when it is compiled: what the value reaching it has.
struct SegmentInputType {
  runtime::DataType dtype;
  std::vector<int64_t> shape;
};

/// An ONNX model of `segment` with its inputs declared as `inputTypes` (one per input, in
/// order), to be imported and compiled (importOnnxBytes).
std::string segmentModelBytes(const ControlFlowProgram& program, const ProgramSegment& segment,
                              const std::vector<SegmentInputType>& inputTypes);

/// Whether `diagnostic` is an import refusing a model for what only the interpreter runs:
/// control flow decided by values known only when the model runs (or a loop too long to
/// unroll), or an input that is a tensor of strings. Such a model runs as a ControlFlowProgram.
bool needsInterpreter(const Diagnostic& diagnostic);

/// How the importer refuses strings, after "input 'NAME' is " or "node 'NAME' (Cast) makes "
/// (needsInterpreter recognizes it).
extern const char* const kStringsRefusal;

}  // namespace tessel::frontend
