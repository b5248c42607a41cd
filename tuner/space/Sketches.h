// What the sketch rules of tuner/space share across files: the GPU sketches (GpuSketches.cpp)
// beside the CPU ones in SearchSpace.cpp, which picks among them by target.
#pragma once

#include <cstdint>
#include <optional>

#include "compiler/ops/Workload.h"
#include "compiler/schedule/Primitive.h"
#include "tuner/space/SearchSpace.h"

namespace tessel::tuner {

/// The value of `e` when it is an integer constant, else `fallback`.
int64_t constantOr(const Expr& e, int64_t fallback);

/// A product C[i, j] = sum over k (matmul, dense) on a GPU: the default GPU matmul schedule's
/// structure with its numbers opened (register tile and threads per block as one decision,
/// the k step, the unrolling); nullopt when `defaultTrace` does not have that structure.
std::optional<Sketch> gpuTilingSketch(const Workload& workload, const Trace& defaultTrace);

/// A direct convolution on a GPU: the default GPU conv2d schedule's structure with its
/// numbers opened (filters per thread, filter threads and pixel tile as one decision, the
/// channel step, the unrolling); nullopt when `defaultTrace` does not have that structure.
std::optional<Sketch> gpuConvolutionSketch(const Workload& workload, const Trace& defaultTrace);

}  // namespace tessel::tuner
