// Elementwise operators (unary and binary, with NumPy-style broadcasting) and their default schedule.
#pragma once

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

/// The default schedule for an elementwise stage "out": all axes fused, split into vector
/// chunks (vectorized) and parallel blocks large enough to amortize a thread launch.
Expected<Schedule> defaultElementwiseSchedule(const Workload& workload,
                                              const ScheduleTarget& target = ScheduleTarget::host());

}  // namespace tessel
