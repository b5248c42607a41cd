// ONNX reductions (ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd) over a set of axes,
// ArgMax/ArgMin along one axis, and their default schedules.
#pragma once

#include <functional>

#include "compiler/ops/Workload.h"

namespace tessel {

/// The ONNX reductions. SumSquare, L1 and L2 reduce x*x, |x| and x*x (L2 then takes the
/// square root); LogSum is log(sum(x)); LogSumExp is log(sum(exp(x - max))) + max, which
/// does not overflow where exp(x) would.
enum class ReduceKind { Sum, Mean, Max, Min, Prod, SumSquare, L1, L2, LogSum, LogSumExp };
const char* reduceKindName(ReduceKind kind);

struct ReduceParams {
  ReduceKind kind = ReduceKind::Sum;
  std::vector<int64_t> shape;       ///< Input shape.
  std::vector<int64_t> axes;        ///< Reduced axes, negative counting from the end; empty: see below.
  bool keepDims = true;             ///< Reduced axes stay as extent 1.
  bool noopWithEmptyAxes = false;   ///< Empty `axes`: reduce nothing (a copy) instead of everything.
  /// The reduced axes in [0, rank), sorted, or why `axes` is invalid (out of range, repeated).
  Expected<std::vector<int64_t>> resolvedAxes() const;
};

/// One stage "reduce" whose axes are named ax<d> after the input dimension they keep
/// (extent 1 for reduced dimensions under keepDims) and whose reduction axes are r<d>.
/// Mean sums x / count. A rank-0 result when every axis is reduced without keepDims.
/// When the reduced axes are the trailing ones (contiguous in memory), "reduce" is a
/// laneSplitReduce() over them flattened, with a "reduce.lanes" stage. Kinds with a final
/// map (L2, LogSum, LogSumExp) accumulate in a stage "reduce.acc" of the same form and
/// "reduce" applies the map; LogSumExp first finds the maximum in "reduce.max".
Expected<Workload> reduce(const ReduceParams& params, DataType dtype = DataType::float32());

/// The default schedule: when the input's innermost dimension is kept it becomes vector
/// lanes with the reduction loops outside them (contiguous loads); the kept axes before it
/// are fused into parallel rows. Trailing-axis reductions run across vector lanes per row.
Expected<Schedule> defaultReduceSchedule(const Workload& workload, const ReduceParams& params,
                                         const Target& target = hostTarget());

struct ArgReduceParams {
  bool isMax = true;              ///< ArgMax, or ArgMin when false.
  std::vector<int64_t> shape;     ///< Input shape.
  int64_t axis = 0;               ///< Negative counts from the end.
  bool keepDims = true;
  bool selectLastIndex = false;   ///< Ties resolve to the last index instead of the first.
};

/// ArgMax/ArgMin: int64 indices along `axis`. Stages "arg.value" (the extreme value per
/// position; reduction axis "k") and "arg" (the first, or last, index holding it; reduction
/// axis "k"). Axes named as in reduce().
Expected<Workload> argReduce(const ArgReduceParams& params, DataType dtype = DataType::float32());

/// The default schedule: the extreme value computed right before its index, the outer
/// output axes in parallel.
Expected<Schedule> defaultArgReduceSchedule(const Workload& workload,
                                            const Target& target = hostTarget());

/// Lanes of a lane-split row reduction: one AVX-512 vector or two AVX2 vectors of float32
/// accumulators, enough independent sums to hide the latency of a vector add.
constexpr int64_t kReductionLanes = 16;

/// A reduction of source(row, k) over k in [0, extent) for every position `row` of
/// `rowShape`, split so its inner loop runs across vector lanes instead of along one
/// serial chain: stage "<name>.lanes"[row..., lane] reduces k = j * kReductionLanes + lane
/// (reduction axis "j"), stage "<name>" combines the lanes (reduction axis "lane"). Rows
/// shorter than two vectors reduce directly in one stage "<name>" (reduction axis "k").
te::Tensor laneSplitReduce(Reducer reducer, const std::vector<Expr>& rowShape, const std::vector<std::string>& rowNames,
                           int64_t extent, const std::function<Expr(const std::vector<Expr>& row, Expr k)>& source,
                           DataType dtype, const std::string& name, const std::string& tag);

/// Schedules a laneSplitReduce(): its lanes computed right before they are combined, one
/// row at a time, as vectors. Appends each step's status to `steps`.
void scheduleLaneSplitReduce(Schedule& schedule, const std::string& name, std::vector<Status>& steps);

}  // namespace tessel
