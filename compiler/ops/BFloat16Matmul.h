// A bfloat16 matmul on the BF16 tensor intrinsic: the operator `tessel lower`, `tessel bench`
// and `tessel measure` offer as bf16_matmul, so the dot_16x2_bf16 intrinsic can be scheduled,
// read and timed from the command line (no model compiles to bfloat16 yet).
#pragma once

#include "compiler/ops/Workload.h"
#include "compiler/schedule/Schedule.h"
#include "core/target/Target.h"

namespace tessel {

/// C[i, j] (float32) = sum over k of A[i, k] * W[j / 16, k / 2, j % 16, k % 2], A and W
/// bfloat16: W is the [K, N] weight packed in the [16 columns][2 reduction elements] blocks
/// dot_16x2_bf16 reads. n must be a multiple of 16 and k of 2.
Workload bfloat16Matmul(int64_t m, int64_t n, int64_t k);

/// Column blocks in parallel; per block, rows in groups of 4 whose 4 x 16 sums stay in
/// registers, and the reduction in pairs, each pair of 16 columns one dot_16x2_bf16 (or
/// dot_8x2_bf16 on a 256-bit target). A message when n or k does not divide.
Expected<Schedule> defaultBFloat16MatmulSchedule(const Workload& workload, const Target& target);

}  // namespace tessel
