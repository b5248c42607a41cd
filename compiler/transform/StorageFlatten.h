// Storage flattening: multi-dimensional buffer accesses become flat element offsets.
#pragma once

#include "core/ir/Stmt.h"

namespace tessel {

/// Rewrites every BufferLoad/BufferStore to a single flat element index and every
/// BufferRealize to an Allocate.
///
/// - A BufferRealize(buffer, bounds, body) becomes an Allocate of a fresh 1-D buffer with
///   the realized buffer's name, dtype, scope and data variable. Accesses inside use the
///   logical coordinates of `bounds`, so the flat index is sum_d (index_d - min_d) *
///   stride_d, with compact row-major strides over the realized extents unless the buffer
///   declares strides (then those, and the size is strides[0] * extent[0], at least the
///   compact size).
/// - Parameters (and any other buffer not introduced by a realize) are indexed with their
///   own strides (compact row-major over their shape unless explicit) through a 1-D buffer
///   that shares their data variable; the parameter list itself keeps its multi-dimensional
///   shapes, which describe the function's interface.
/// - A vector (ramp) index stays a vector access: i*32 + ramp(j, 1, 8) is built as
///   ramp(i*32 + j, 1, 8).
///
/// Returns `f` itself when every access is already flat.
PrimFunc storageFlatten(const PrimFunc& f);

}  // namespace tessel
