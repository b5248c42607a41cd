// The text form of a schedule trace: one primitive per line, as people read and edit it.
//
//   io, ii = split(C, i, factor=32)       # or nparts=4
//   f = fuse(C, io, jo)
//   reorder(C, io, jo, k, ii, ji)
//   io, jo, ii, ji = tile(C, i, j, 32, 32)
//   vectorize(C, ji)    unroll(C, ii)    parallel(C, io)
//   compute_at(B, C, jo)    compute_inline(B)    compute_root(B)
//   AA = cache_read(A, local, [C])    CC = cache_write(C, local)
//   C.rf = rfactor(C, k, 8)           # C.rf[i, j, k.inner] = partial sums over k.outer
//   storage_align(AA, i, 16, 1)    pragma(C, io, auto_unroll_max_step, 16)    bind(C, io, blockIdx.x)
#pragma once

#include <string>

#include "compiler/schedule/Primitive.h"
#include "core/support/Error.h"

namespace tessel {

/// Parses schedule text. The first error is returned with its line and column.
Expected<Trace> parseTraceText(const std::string& text);

/// The canonical text of a trace (parseTraceText of it gives the same trace back).
std::string printTraceText(const Trace& trace);
std::string printPrimitive(const Primitive& primitive);

}  // namespace tessel
