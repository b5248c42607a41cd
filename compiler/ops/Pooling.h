// Max and average pooling over the spatial axes of an NCHW (N, C, D1..Dn) tensor, or of a
// channel-blocked NCHW<b>c one, ONNX semantics.
#pragma once

#include "compiler/ops/Workload.h"

namespace tessel {

/// Lp: (sum of |x|^p over the window)^(1/p), padding adding nothing (ONNX LpPool).
enum class PoolKind { Max, Average, Lp };

/// ONNX MaxPool / AveragePool attributes (explicit padding; auto_pad is resolved by the importer).
struct PoolParams {
  PoolKind kind = PoolKind::Max;
  std::vector<int64_t> inputShape;  ///< N, C, then one extent per spatial axis.
  std::vector<int64_t> kernel;      ///< One per spatial axis.
  std::vector<int64_t> strides;     ///< Empty: all 1.
  std::vector<int64_t> padsBegin;   ///< Empty: all 0. ONNX `pads` is padsBegin followed by padsEnd.
  std::vector<int64_t> padsEnd;     ///< Empty: all 0.
  std::vector<int64_t> dilations;   ///< Empty: all 1.
  bool countIncludePad = false;     ///< Average only: padded positions count in the divisor.
  bool ceilMode = false;            ///< Output extents round up; windows starting in the end padding are dropped.
  int64_t lpExponent = 2;           ///< Lp only: p >= 1.
  /// 0: the input and output are NCHW. Otherwise both are channel-blocked NCHW<b>c with this
  /// block b ([N, C / b, H, W, b], 2-D only, b dividing C): pooling works per channel, so the
  /// blocked tensor is read in place. `inputShape` stays the logical NCHW shape.
  int64_t channelBlock = 0;
};

/// Replaces the pads of `params` by those ONNX's auto_pad asks for: "NOTSET" (keep the
/// explicit pads), "VALID" (none), "SAME_UPPER" / "SAME_LOWER" (output extent
/// ceil(input / stride); an odd total pad puts the extra element at the end / the start).
/// Kernel, strides and dilations must be set first.
Status resolveAutoPad(PoolParams& params, const std::string& autoPad);

/// The output shape (N, C, O1..On) of valid parameters, or why they are invalid. Logical:
/// with a channel block, the tensor pool() writes is blockedChannelShape of it.
Expected<std::vector<int64_t>> poolOutputShape(const PoolParams& params);

/// Pooling windows over the padded input; padding never wins a max and adds zero to a sum.
/// Max: one reduction stage "pool". Average: "pool.sum" (the window sum) and "pool" (the
/// sum times 1/count, count per ONNX count_include_pad). Lp: "pool.sum" (the sum of
/// |x|^p) and "pool" (its p-th root). Axes of "pool": n, c, then
/// x (1-D), y x (2-D), z y x (3-D) or d0.. (more); window axes r + that name ("ry", "rx").
/// With a channel block the axes are n, co, y, x, ci (channel co * b + ci), as the
/// LayoutTransform's.
Expected<Workload> pool(const PoolParams& params, DataType dtype = DataType::float32());

/// GlobalMaxPool / GlobalAveragePool / GlobalLpPool: one value per (n, c), output shape
/// (N, C, 1, .., 1). `inputShape` is logical NCHW; a nonzero `channelBlock` reads and writes
/// NCHW<channelBlock>c as pool() does (output [N, C / b, 1, 1, b]).
Expected<Workload> globalPool(PoolKind kind, const std::vector<int64_t>& inputShape,
                              DataType dtype = DataType::float32(), int64_t lpExponent = 2,
                              int64_t channelBlock = 0);

/// MaxPool with its Indices output: stages "pool" (the maximum, as pool()) and "pool.index"
/// (int64: the first flat offset into the whole input, N and C included, where the window
/// holds the maximum; padding never counts); NCHW only. `columnMajor` is ONNX storage_order 1: the
/// spatial offset counts the last axis slowest. Outputs: the maximum, then the indices.
Expected<Workload> maxPoolWithIndices(const PoolParams& params, bool columnMajor,
                                      DataType dtype = DataType::float32());
Expected<Schedule> defaultMaxPoolWithIndicesSchedule(const Workload& workload,
                                                     const Target& target = hostTarget());

/// The default schedule of pool() and globalPool() workloads: (n, c) planes in parallel,
/// each output element's window reduced in a local accumulator ("pool.local" for the max,
/// "pool.sum" for the average) right before it is stored. Over a channel block, rows of
/// (n, co, y) in parallel and each window tap read as one vector of the block's lanes (ci).
Expected<Schedule> defaultPoolSchedule(const Workload& workload, const Target& target = hostTarget());

}  // namespace tessel
