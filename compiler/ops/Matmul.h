// Matrix multiplication C[M,N] = A[M,K] * B[K,N] (and dense, B transposed) with a packed,
// register-blocked default schedule.
#pragma once

#include "compiler/ops/Workload.h"

namespace tessel {

/// The matmul compute. B is repacked into column panels (stage "B.packed") so the inner
/// kernel reads it contiguously; the panel width is two vectors of the target.
Workload matmul(int64_t m, int64_t n, int64_t k, DataType dtype = DataType::float32(),
                const ScheduleTarget& target = ScheduleTarget::host());

/// A fully connected layer: C[M,N] = A[M,K] * B[N,K]^T (B holds one row of weights per
/// output, as ONNX Gemm with transB and PyTorch's Linear store them). Same stages and
/// default schedule as matmul.
Workload dense(int64_t m, int64_t n, int64_t k, DataType dtype = DataType::float32(),
               const ScheduleTarget& target = ScheduleTarget::host());

/// The width of B's column panels for an N-column output (two vectors, or N if smaller).
int64_t matmulPanelWidth(int64_t n, const ScheduleTarget& target);
/// The "B.packed" stage the matmul-like computes share: B[k, n] (or B[n, k] when
/// `bTransposed`) regrouped into panels [n / width][k][width], zero past N, so the inner
/// kernel reads it contiguously. Compute C with packed(j / width, k, j % width).
te::Tensor packMatmulB(const te::Tensor& B, int64_t n, int64_t k, bool bTransposed, const ScheduleTarget& target);

/// The default schedule for matmul and dense (TVM's "How to optimize GEMM on CPU" recipe): an accumulator
/// tile kept in registers (cache_write to local, unrolled rows, vectorized columns),
/// computed per output block, blocks parallel over column panels.
Expected<Schedule> defaultMatmulSchedule(const Workload& workload, const ScheduleTarget& target = ScheduleTarget::host());

/// Names of the stages and axes that a hand-written matmul schedule can refer to.
/// Stages: C (output), B.packed; axes of C: i, j, k.
std::string matmulScheduleHelp();

}  // namespace tessel
