// Batched matrix multiplication with numpy.matmul semantics (ONNX MatMul beyond 2-D): batch
// dimensions broadcast, 1-D operands promoted and their axis dropped; the attention product
// of transformers.
#pragma once

#include "compiler/ops/Workload.h"

namespace tessel {

struct BatchMatmulParams {
  std::vector<int64_t> aShape;  ///< [batch.., M, K], or [K] (a row vector whose M axis is dropped).
  std::vector<int64_t> bShape;  ///< [batch.., K, N], or [K] (a column vector whose N axis is dropped).
};

/// numpy.matmul's result shape: the broadcast batch dimensions, then M and N (each only when
/// its operand has rank >= 2); or why the shapes do not multiply.
Expected<std::vector<int64_t>> batchMatmulOutputShape(const std::vector<int64_t>& aShape,
                                                      const std::vector<int64_t>& bShape);

/// C[b.., i, j] = sum over k of A[b.. broadcast, i, k] * B[b.. broadcast, k, j]: one stage "C"
/// with axes b0, b1, .. (batch), i (when A has rank >= 2), j (when B has rank >= 2) and
/// reduction axis k. Inputs A, B. A 2-D B shared by every batch is first repacked into
/// matmul's column panels for `target` (stage "B.packed", see packMatmulB).
Expected<Workload> batchMatmul(const BatchMatmulParams& params, DataType dtype = DataType::float32(),
                               const Target& target = hostTarget());

/// The product of two tensors of any producers (placeholders or computes), numpy.matmul's
/// shapes (which must multiply), accumulated in `accumulate`: a stage `name` with the axes
/// and reduction of batchMatmul()'s "C", for operators that build on it (quantized ones).
te::Tensor batchMatmulCompute(const te::Tensor& A, const te::Tensor& B, const std::string& name,
                              DataType accumulate);

/// The default schedule: an accumulator tile of rows x one or two vectors of columns kept
/// in registers ("C.local"), batch and row blocks fused into parallel tasks; B is read along
/// its contiguous rows, so it needs no packing. Vector products (a 1-D operand) run their
/// outer axes in parallel.
Expected<Schedule> defaultBatchMatmulSchedule(const Workload& workload, const BatchMatmulParams& params,
                                              const Target& target = hostTarget());

}  // namespace tessel
