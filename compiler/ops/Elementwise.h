// Elementwise operators (unary and binary, with NumPy-style broadcasting) and their default schedule.
#pragma once

#include <functional>
#include <optional>

#include "compiler/ops/Workload.h"

namespace tessel {

enum class UnaryOp { Relu, Neg, Abs, Exp, Log, Sqrt, Tanh, Sigmoid, Erf };
enum class BinaryOp { Add, Sub, Mul, Div, Max, Min };

const char* unaryOpName(UnaryOp op);
const char* binaryOpName(BinaryOp op);
/// The expression an op computes on one element (also used by fused kernels later).
Expr applyUnary(UnaryOp op, Expr x);
Expr applyBinary(BinaryOp op, Expr a, Expr b);

/// out = op(in) over a tensor of `shape`. Stage "out" (axes ax0, ax1, ...).
Workload unaryElementwise(UnaryOp op, const std::vector<int64_t>& shape, DataType dtype = DataType::float32());

/// out = op(a, b) with NumPy broadcasting of `aShape` and `bShape` (trailing dimensions
/// line up; a dimension of 1 stretches). Stage "out". Returns a message on shapes that do
/// not broadcast.
Expected<Workload> binaryElementwise(BinaryOp op, const std::vector<int64_t>& aShape,
                                     const std::vector<int64_t>& bShape, DataType dtype = DataType::float32());

/// The NumPy (ONNX multidirectional) broadcast of `shapes`: trailing dimensions line up and
/// a dimension of 1 stretches. A Diagnostic naming the clashing dimension otherwise.
Expected<std::vector<int64_t>> broadcastShapes(const std::vector<std::vector<int64_t>>& shapes);

/// Reads `tensor` (whose shape is `shape`) at output position `axes` of a broadcast: its
/// dimensions line up with the trailing axes, and stretched dimensions read element 0.
Expr broadcastRead(const te::Tensor& tensor, const std::vector<int64_t>& shape, const std::vector<Var>& axes);

/// One input of an n-ary elementwise compute.
struct ElementwiseOperand {
  std::vector<int64_t> shape;
  DataType dtype;
  std::string name;  ///< The placeholder's name.
};

/// One output of an n-ary elementwise compute: its stage name, element type, and the
/// expression of one element given every operand's element at that position.
struct ElementwiseResult {
  std::string name;
  DataType dtype;
  std::function<Expr(const std::vector<Expr>&)> element;
};

/// Outputs over the broadcast shape of `operands`, each element a function of the operands'
/// elements at that position (one placeholder per operand, in order). The first result
/// should be named "out" for defaultElementwiseSchedule. `outShape`, when given, is the
/// output shape (it must be a broadcast of every operand's shape; operators use it when some
/// inputs were folded into the expression as constants). A Diagnostic located at `name` when
/// the shapes do not broadcast.
Expected<Workload> broadcastElementwise(const std::string& name, const std::vector<ElementwiseOperand>& operands,
                                        const std::vector<ElementwiseResult>& results,
                                        const std::optional<std::vector<int64_t>>& outShape = std::nullopt);

/// The default schedule for an elementwise stage "out": all axes fused, split into vector
/// chunks (vectorized) and parallel blocks large enough to amortize a thread launch. Per-row
/// operands keep rows of contiguous planes; a fused relayout (a read that steps across an
/// outer axis of its tensor along the output's innermost axis) keeps the output's rows, the
/// innermost axis in vectors.
Expected<Schedule> defaultElementwiseSchedule(const Workload& workload,
                                              const Target& target = hostTarget());

}  // namespace tessel
