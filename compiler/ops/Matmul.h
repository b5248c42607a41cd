// Matrix multiplication C[M,N] = A[M,K] * B[K,N] (and dense, B transposed) with a packed,
// register-blocked default schedule.
#pragma once

#include "compiler/ops/Workload.h"
#include "runtime/NDArray.h"

namespace tessel {

/// The matmul compute. B is repacked into column panels (stage "B.packed") so the inner
/// kernel reads it contiguously; the panel width is two vectors of the target.
Workload matmul(int64_t m, int64_t n, int64_t k, DataType dtype = DataType::float32(),
                const Target& target = hostTarget());

/// A fully connected layer: C[M,N] = A[M,K] * B[N,K]^T (B holds one row of weights per
/// output, as ONNX Gemm with transB and PyTorch's Linear store them). Same stages and
/// default schedule as matmul.
Workload dense(int64_t m, int64_t n, int64_t k, DataType dtype = DataType::float32(),
               const Target& target = hostTarget());

/// The width of B's column panels for an N-column output (two vectors, or N if smaller).
int64_t matmulPanelWidth(int64_t n, const Target& target);
/// The "B.packed" stage the matmul-like computes share: B[k, n] (or B[n, k] when
/// `bTransposed`) regrouped into panels [n / width][k][width], zero past N, so the inner
/// kernel reads it contiguously. Compute C with packed(j / width, k, j % width).
te::Tensor packMatmulB(const te::Tensor& B, int64_t n, int64_t k, bool bTransposed, const Target& target);

/// B's packed panels computed at compile time, exactly what "B.packed" holds: shape
/// [ceil(N / width)][K][width] with width = matmulPanelWidth(N), zero past N. `B` is [K, N]
/// (or [N, K] when `bTransposed`), float32 or float64.
runtime::NDArray packMatmulBConstant(const runtime::NDArray& B, bool bTransposed,
                                     const Target& target = hostTarget());
/// The packed layout's name for the graph IR: "KN<width>n" ("KN32n").
std::string matmulPackedBLayout(int64_t n, const Target& target = hostTarget());

/// Matmul against B already packed by packMatmulBConstant: inputs "A" of shape
/// `aShape` (any rank >= 1; every axis but the last is a row of the product) and "B" packed;
/// output "C" of shape aShape[:-1] + [n] (axes: "i" for the longest leading axis, the last of
/// equals, b0.. for the other leading axes in order, then j; reduction k). With rank-2 A it
/// is matmul() without the "B.packed" stage.
Workload matmulPrepacked(const std::vector<int64_t>& aShape, int64_t n, DataType dtype = DataType::float32(),
                         const Target& target = hostTarget());

/// The default schedule for matmul and dense (TVM's "How to optimize GEMM on CPU" recipe): an accumulator
/// tile kept in registers (cache_write to local, unrolled rows, vectorized columns),
/// computed per output block, blocks parallel over column panels. Also schedules
/// matmulPrepacked (leading axes fused into the rows). A dense layer of one row with
/// unpacked weights is a matrix-vector product instead: B read along its rows, partial sums
/// kept in vectors by rfactor (stage "C.rf").
Expected<Schedule> defaultMatmulSchedule(const Workload& workload, const Target& target = hostTarget());

/// Names of the stages and axes that a hand-written matmul schedule can refer to.
/// Stages: C (output), B.packed; axes of C: i, j, k.
std::string matmulScheduleHelp();

}  // namespace tessel
