// Elementwise operators described as data (accepted element types, output types, a formula
// per output element) and turned into registry OpDefs by one shared type checker and builder.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "compiler/opdefs/OpRegistry.h"

namespace tessel::graph {

/// The element types an operator accepts for an input, as ONNX's type constraints name them.
enum class TypeClass : uint8_t {
  Float,    ///< float16, bfloat16, float32, float64.
  Signed,   ///< Signed integers and floats (Neg, Sign of signed values).
  Numeric,  ///< Every integer and float type.
  Integer,  ///< Signed and unsigned integers.
  Unsigned, ///< Unsigned integers (BitShift).
  Bool,
  Any,      ///< Numeric or bool.
};

/// "float16, bfloat16, float32 or float64": for messages.
std::string typeClassText(TypeClass typeClass);
bool inTypeClass(DataType dtype, TypeClass typeClass);

/// The element of each present node input at one output position (undefined for omitted
/// inputs). float16 and bfloat16 elements arrive widened to float32: formulas compute in
/// float32 and the result is rounded once to the output type.
using Elements = std::vector<Expr>;
/// One output element from the inputs' elements; the builder casts it to the output type.
using ElementFormula = std::function<Expr(const Elements&)>;

/// An elementwise operator: every output has the broadcast shape of its "shaped" inputs, and
/// each output element is a formula of the inputs' elements at that position.
struct ElementwiseDefinition {
  std::string name;  ///< The ONNX op type.
  /// Broadcast when an input may be smaller than the output (TVM registers its broadcasting
  /// operators so); the registry's pattern is per operator, not per node.
  OpPattern pattern = OpPattern::ElementWise;
  int minInputs = 1;
  int maxInputs = 1;  ///< -1: variadic.
  int minOutputs = 1;
  int maxOutputs = 1;
  std::vector<int> valueInputs;
  /// Inputs that do not take part in the output shape (Clip's scalar bounds) or are not read
  /// at all (CastLike's exemplar, listed in `unreadInputs` too).
  std::vector<int> scalarInputs;
  std::vector<int> unreadInputs;
  /// Checks the inputs' element types; returns each output's element type.
  std::function<Expected<std::vector<DataType>>(const OpCall&)> outputTypes;
  /// Reads attributes and constant inputs; returns one formula per output. Called by build.
  std::function<Expected<std::vector<ElementFormula>>(const OpCall&)> formulas;
};

/// The OpDef of an elementwise operator. Its kernel has one placeholder per runtime input in
/// node-input order, except that a single-element constant input is folded into the
/// expression; its schedule is the default elementwise one.
OpDef makeElementwiseOpDef(ElementwiseDefinition definition);

// Checks shared by the operator definitions; each returns a Diagnostic through `call.error`.

/// Input `i` (when present) has an element type of `typeClass`.
Status requireTypeClass(const OpCall& call, size_t i, TypeClass typeClass);
/// Every present input among `inputs` (all when empty) has the element type of the first.
Status requireSameType(const OpCall& call, const std::vector<size_t>& inputs = {});

/// The value of constant input `i` when it holds exactly one element, as an immediate of its
/// element type (float16 and bfloat16 constants are not folded).
std::optional<Expr> scalarConstant(const OpCall& call, size_t i);

/// `value` as an immediate of `like`'s element type (for formula constants: alpha, 1, 0).
Expr constantLike(const Expr& like, double value);

/// The Tessel element type of an ONNX TensorProto element type number (Cast's 'to').
std::optional<DataType> dataTypeFromOnnx(int64_t elementType);

}  // namespace tessel::graph
