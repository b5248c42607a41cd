// An operator instance ready to schedule: its tensors, arguments and work.
#pragma once

#include <string>
#include <vector>

#include "compiler/codegen/llvm/HostTarget.h"
#include "compiler/schedule/Schedule.h"
#include "core/te/Tensor.h"

namespace tessel {

struct Workload {
  std::string name;                  ///< Function name ("matmul_1024x1024x1024").
  std::vector<te::Tensor> inputs;    ///< Placeholders, in argument order.
  std::vector<te::Tensor> outputs;   ///< Results, after the inputs in argument order.
  double flops = 0;                  ///< Floating-point operations per call (multiply-add = 2).
  /// The stages are an algorithm whose arrangement the schedule must keep (Winograd's
  /// transforms around its matrix products: inlined or retiled, they recompute each other's
  /// work or stop folding to constants). The tuner then opens only the register tile of the
  /// main reduction and generates no schedules of its own.
  bool fixedStructure = false;

  std::vector<te::Tensor> args() const {
    std::vector<te::Tensor> all = inputs;
    all.insert(all.end(), outputs.begin(), outputs.end());
    return all;
  }
};

// Helpers the operators share for shapes, names and common schedule steps.

/// The shape as index-typed immediates, for compute() and placeholder().
std::vector<Expr> toExprs(const std::vector<int64_t>& shape);
/// Variables as expressions, for indexing a tensor with a compute's axes.
std::vector<Expr> asExprs(const std::vector<Var>& vars);
/// "1x3x224x224" (in workload names); "scalar" for rank 0.
std::string shapeName(const std::vector<int64_t>& shape);
/// "ax0", "ax1", ...: the axis names of generic operators' stages.
std::string axisName(int64_t dimension);
std::vector<std::string> axisNames(size_t rank);
int64_t elementCount(const std::vector<int64_t>& shape);

/// The checks every convolution's operands share: an N x C x D1 .. Dn input with at least
/// one spatial axis, a weight of the same rank, every dimension positive. A message naming
/// the first problem, or empty.
std::string convOperandProblem(const std::vector<int64_t>& inputShape, const std::vector<int64_t>& weightShape);

/// The widest divisor of `n` that is at most `limit` (1 when none is larger): a split factor
/// that leaves no partial tile (whose guard would break a tensorized nest).
int64_t widestDivisor(int64_t n, int64_t limit);

/// Fuses `axes` (outermost loops of `stage`) into one loop named "rows" and runs it in
/// parallel, when there are `rows` >= 2 of them and more than one thread; each step's
/// status is appended to `steps`.
void parallelizeRows(Schedule& schedule, const std::string& stage, const std::vector<std::string>& axes,
                     int64_t rows, const Target& target, std::vector<Status>& steps);

/// With more than one thread, runs the outermost axis of more than one iteration of every
/// root compute stage of `schedule` in parallel (the axes outside it have one iteration);
/// each step's status is appended to `steps`. Inlined and attached stages are left alone.
void parallelizeRootStages(Schedule& schedule, const Target& target, std::vector<Status>& steps);

}  // namespace tessel
