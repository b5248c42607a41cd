// ONNX Gemm: Y = alpha * A' * B' + beta * C, with A' and B' optionally transposed and C a
// bias broadcast to the result, on the packed matmul kernel and its default schedule.
#pragma once

#include <optional>

#include "compiler/ops/Workload.h"

namespace tessel {

struct GemmParams {
  int64_t m = 1, n = 1, k = 1;  ///< Y is [m, n]; the reduction has length k.
  bool transA = false;          ///< A is stored [k, m] instead of [m, k].
  bool transB = false;          ///< B is stored [n, k] (one row per output, as Linear) instead of [k, n].
  double alpha = 1.0, beta = 1.0;
  /// The shape of C, broadcast to [m, n] (ONNX unidirectional broadcasting: rank at most 2,
  /// each dimension 1 or equal to Y's); nullopt when there is no C.
  std::optional<std::vector<int64_t>> biasShape;
  /// A message naming the first impossible parameter, or empty when valid.
  std::string validate() const;
};

/// Inputs A, B and (when biasShape is set and beta is not 0) C; a C scaled by 0 is no
/// input at all, so callers drop it. Without C, with alpha 1 and A not
/// transposed this is exactly matmul()/dense() (stages C, B.packed). Otherwise the
/// reduction stage "C" feeds the output stage "out" = alpha * C + beta * bias (axes i, j).
Expected<Workload> gemm(const GemmParams& params, DataType dtype = DataType::float32(),
                        const Target& target = hostTarget());

/// The default schedule: defaultMatmulSchedule's register tiles and panel groups; the
/// scaling and bias are applied to each tile as it leaves the registers.
Expected<Schedule> defaultGemmSchedule(const Workload& workload, const Target& target = hostTarget());

}  // namespace tessel
