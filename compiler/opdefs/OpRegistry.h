// The operator registry: for each graph operator (ONNX op type), how to type it, how to
// compute it as tensor expressions with a default schedule, and how it fuses.
//
// Passes and the graph compiler look operators up here instead of switching on names:
// InferTypes calls inferTypes, FuseOps reads pattern, FoldConstant and the graph compiler
// call build. Adding an operator is one registration; nothing else changes.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler/ops/Workload.h"
#include "core/graph/Graph.h"
#include "core/support/Error.h"

namespace tessel::graph {

/// How an operator composes with its neighbours when fusing, TVM's op patterns, from the
/// most to the least fusable.
enum class OpPattern : uint8_t {
  ElementWise,         ///< Output element i reads input element i (Relu, Add of equal shapes).
  Broadcast,           ///< Output element reads inputs at broadcast indices (Add with a bias).
  Injective,           ///< Each output element is a function of one input element (Transpose, Slice).
  CommReduce,          ///< A reduction over some axes (ReduceSum, Softmax's row max).
  OutElemwiseFusable,  ///< Complex op whose output accepts an elementwise epilogue (Conv, MatMul).
  Opaque,              ///< Fuses with nothing (its own kernel).
};
const char* opPatternName(OpPattern pattern);

/// What an operator implementation sees of one operation node.
struct OpCall {
  std::string op;        ///< "Conv".
  std::string nodeName;  ///< The node's name, for diagnostics.
  Attributes attributes;
  /// One per node input; an omitted optional input has an unknown type (see hasInput).
  std::vector<TensorType> inputTypes;
  /// One per node input: the data when that input is a constant, else an undefined NDArray.
  /// Inputs an operator needs by value (Reshape's shape, Slice's starts) must be constants.
  std::vector<runtime::NDArray> constantInputs;
  /// How many outputs the node has (ONNX lets a node omit trailing optional outputs).
  int outputCount = 1;
  /// The ONNX opset the node was written against (0: unknown; take the newest semantics).
  /// Operators whose meaning changed between opsets (Softmax's axis, Slice's inputs) read it.
  int opset = 0;
  /// The target the default schedule is made for.
  Target target = hostTarget();

  bool hasInput(size_t i) const { return i < inputTypes.size() && inputTypes[i].known(); }
  bool isConstant(size_t i) const { return i < constantInputs.size() && constantInputs[i].defined(); }

  // Attribute access with ONNX defaults; a present attribute of the wrong kind is a
  // Diagnostic naming the node, the op and the attribute.
  Expected<int64_t> intAttr(const std::string& key, int64_t fallback) const;
  Expected<double> floatAttr(const std::string& key, double fallback) const;
  Expected<std::string> stringAttr(const std::string& key, const std::string& fallback) const;
  Expected<std::vector<int64_t>> intsAttr(const std::string& key, const std::vector<int64_t>& fallback) const;
  Expected<std::vector<double>> floatsAttr(const std::string& key, const std::vector<double>& fallback) const;
  bool hasAttr(const std::string& key) const { return attributes.count(key) != 0; }

  /// The values of constant input `i` converted to int64 (any integer type); a Diagnostic
  /// naming the input when it is not a constant ("must be a constant: compile with its value
  /// known") or not integral.
  Expected<std::vector<int64_t>> constantInts(size_t i, const std::string& what) const;
  /// The values of constant input `i` as doubles (any numeric type).
  Expected<std::vector<double>> constantDoubles(size_t i, const std::string& what) const;

  /// A Diagnostic located at this node: "Conv 'conv1': <message>", with a hint.
  Diagnostic error(const std::string& message, const std::string& hint = "") const;
};

/// An operator instance compiled as tensor expressions: a Workload whose placeholders stand
/// for some of the node's inputs, and whose outputs are the node's outputs in order.
struct OpKernel {
  Workload workload;
  /// For each placeholder of workload.inputs, the node input it reads. Inputs the op needs
  /// only by value (shapes, axes) or ignores are absent.
  std::vector<int> inputIndices;
  /// Schedules the workload's stages (null: every stage at root, loops in axis order).
  std::function<Expected<Schedule>(const Workload&, const Target&)> schedule;
};

/// One registered operator.
struct OpDef {
  std::string name;  ///< The ONNX op type ("Conv").
  OpPattern pattern = OpPattern::Opaque;
  int minInputs = 1;
  int maxInputs = 1;  ///< -1: variadic.
  int minOutputs = 1;
  int maxOutputs = 1;
  /// Inputs the operator needs by value when compiling (Reshape's shape, Slice's starts):
  /// they must be constants. A driver given those inputs' values binds them as constants.
  std::vector<int> valueInputs;
  /// Output types from input types and attributes. Called with the arity already checked.
  std::function<Expected<std::vector<TensorType>>(const OpCall&)> inferTypes;
  /// The kernel. Called with types already inferred; shapes are static.
  std::function<Expected<OpKernel>(const OpCall&)> build;
};

/// Every registered operator, by name. Registration happens once, on first use.
class OpRegistry {
public:
  static const OpRegistry& global();
  /// The operator called `name`, or null.
  const OpDef* find(const std::string& name) const;
  /// All names, sorted (for messages listing what is supported).
  std::vector<std::string> names() const;
  void add(OpDef def);  ///< Each name once: a second definition is an internal error.

private:
  std::map<std::string, OpDef> ops_;
};

/// The elements of a host array of an integer or boolean element type, as int64 (a bool as 0
/// or 1); nullopt for any other element type.
std::optional<std::vector<int64_t>> integerElements(const runtime::NDArray& array);
/// The elements of a host array of a numeric element type (integers, bool, float32, float64)
/// as doubles; nullopt for any other element type.
std::optional<std::vector<double>> numericElements(const runtime::NDArray& array);

/// A float attribute of `op` (alpha, beta, ...), which some writers store as an int;
/// `fallback` when absent or of another kind.
double numberAttribute(const OperationNode& op, const std::string& key, double fallback);

/// The OpCall for an operation node of a typed graph (every input's type known).
OpCall makeOpCall(const OperationNode& node, const Target& target = hostTarget());
/// The same with `inputs` in place of the node's own (a pass rebuilding the node).
OpCall makeOpCall(const OperationNode& node, const std::vector<Value>& inputs,
                  const Target& target = hostTarget());

/// Checks arity against the registry and infers the output types of `call`; a Diagnostic
/// for an unknown op (listing none, naming the op and node) or a wrong input/output count.
Expected<std::vector<TensorType>> inferOpTypes(const OpCall& call);

/// A new operation whose outputs (`outputCount` of them) are typed through the registry, as
/// InferTypes types one; the Diagnostic its operator gives when it cannot be typed. For passes
/// that replace an operation by others.
Expected<std::vector<Value>> makeTypedOperation(const std::string& name, const std::string& op,
                                                std::vector<Value> inputs, Attributes attributes,
                                                std::vector<Provenance> provenance, size_t outputCount = 1);

/// Builds the kernel of `call` through the registry.
Expected<OpKernel> buildOpKernel(const OpCall& call);

// Registration functions, one per family of operators (each in its own file).
void registerElementwiseOps(OpRegistry& registry);
void registerNeuralNetOps(OpRegistry& registry);
void registerShapeOps(OpRegistry& registry);
void registerLayoutOps(OpRegistry& registry);
void registerLossOps(OpRegistry& registry);
void registerQuantizationOps(OpRegistry& registry);
void registerSignalAndVisionOps(OpRegistry& registry);

}  // namespace tessel::graph
