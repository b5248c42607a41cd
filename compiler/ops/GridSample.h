// ONNX GridSample (opset 16) on NCHW: each output pixel samples the input at a normalized
// position read from a grid, with nearest, bilinear or bicubic interpolation.
#pragma once

#include "compiler/ops/Workload.h"

namespace tessel {

enum class GridSampleInterpolation { Nearest, Bilinear, Bicubic };

/// What a tap outside the input reads: zero, the nearest border pixel, or the input mirrored
/// at its border.
enum class GridSamplePadding { Zeros, Border, Reflection };

/// out[n, c, y, x] samples in[n, c] at grid[n, y, x] = (gx, gy) in [-1, 1] (-1 the left/top
/// edge: the first pixel's center with alignCorners, its outer edge without). Inputs "in"
/// [N, C, H, W] and "grid" [N, Hout, Wout, 2], both of the floating type `dtype`.
Expected<Workload> gridSample(const std::vector<int64_t>& shape, const std::vector<int64_t>& gridShape,
                              GridSampleInterpolation interpolation, GridSamplePadding padding, bool alignCorners,
                              DataType dtype = DataType::float32());

}  // namespace tessel
