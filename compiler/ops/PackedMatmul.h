// Matmuls on the tensor intrinsics, with the weight packed in the blocks they read: the
// operators `tessel lower`, `tessel bench` and `tessel measure` offer as bf16_matmul and
// int8_matmul, so the intrinsics can be scheduled, read and timed from the command line.
#pragma once

#include "compiler/ops/Workload.h"
#include "compiler/schedule/Schedule.h"
#include "core/target/Target.h"

namespace tessel {

/// The element types of a packed matmul: bfloat16 A and W summed in float32 (dot_16x2_bf16's
/// [16 columns][2 reduction elements] blocks), or uint8 A and int8 W summed in int32
/// (dot_16x4_u8i8's and tile_u8i8's [16][4] blocks).
enum class PackedMatmulKind { BFloat16, Int8 };

/// C[i, j] = sum over k of A[i, k] * W[j / 16, k / g, j % 16, k % g], g the elements of one
/// packed 32-bit word (2 bfloat16 or 4 bytes). n must be a multiple of 16 and k of g.
Workload packedMatmul(int64_t m, int64_t n, int64_t k, PackedMatmulKind kind);

/// Why m, n, k do not fit `kind`'s packing, or empty.
std::string packedMatmulProblem(int64_t m, int64_t n, int64_t k, PackedMatmulKind kind);

/// bfloat16, and int8 without AMX: column blocks in parallel; per block, rows in groups of 4
/// whose 4 x 16 sums stay in registers, each 16 columns x one word of products one
/// dot_16x2_bf16 / dot_16x4_u8i8 (the 8-lane forms on a 256-bit target). int8 on AMX, when k
/// is a multiple of 64 and the rows divide into tiles of at least 8: tiles of up to 128 rows x
/// 16 columns in parallel, each the whole reduction in tile registers (tile_u8i8).
Expected<Schedule> defaultPackedMatmulSchedule(const Workload& workload, PackedMatmulKind kind, const Target& target);

}  // namespace tessel
