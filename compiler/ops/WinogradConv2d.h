// 3x3 convolutions by Winograd's minimal filtering, F(m x m, 3 x 3) (Lavin and Gray, "Fast
// Algorithms for Convolutional Neural Networks"): each m x m tile of output pixels costs
// (m + 2)^2 multiplications per channel pair instead of 9 m^2, 4x fewer for m = 4. The weight
// transform happens once at compile time; a call transforms its input tiles, multiplies
// them with the transformed weights as (m + 2)^2 independent matrix products over the
// channels, and transforms the products back into output pixels.
#pragma once

#include <vector>

#include "compiler/ops/Conv2d.h"

namespace tessel {

/// Whether F(m x m, 3 x 3) can compute this convolution at all: a dense (one group) 3x3
/// kernel, stride 1 on both axes, the same dilation d on both axes, and output rows and
/// columns that split into d phases (each phase is an ordinary 3x3 convolution of every
/// d-th input pixel; a dilated convolution with d = 1 is the plain case).
bool winogradApplies(const Conv2dParams& p);

/// The output tile m (4 or 2) that the default pipeline computes this convolution with, or 0
/// to keep the direct convolution: Winograd must apply, the channel and filter counts must be
/// large enough that the matrix products dominate the transforms (at least 64 each), with the
/// filters in whole vector blocks and channels in whole vectors, and a call must have at
/// least 16 tiles to use each transformed weight on. F(4x4, 3x3) is preferred; F(2x2, 3x3)
/// where the 4x4 tiles would be fewer than 32 and 2x2 ones cover the output exactly.
int64_t winogradTileFor(const Conv2dParams& p, const Target& target = hostTarget());

/// The transformed weight conv2d reads when p.winogradTile is set:
/// [ceil(K / kb)][m + 2][m + 2][C][kb], kb = conv2dFilterBlock.
std::vector<int64_t> winogradPackedWeightShape(const Conv2dParams& p, const Target& target = hostTarget());

/// G g G^T of every filter and channel (float32 or float64 OIHW weight [K, C, 3, 3]),
/// computed in double precision, in the layout of winogradPackedWeightShape.
runtime::NDArray packWinogradWeight(const Conv2dParams& p, const runtime::NDArray& weight,
                                    const Target& target = hostTarget());

/// The convolution by F(m x m, 3 x 3), m = p.winogradTile, over `activations` (NCHW or
/// NCHW<b>c in, NCHW or NCHW<kb>c out), the weight transformed by packWinogradWeight.
/// Stages: "data.pad" (zero padded, and extended to whole tiles), "winograd.data.rows"
/// (B^T applied down each tile's columns), "winograd.data" [a][b][t][c] (the transformed
/// tiles, t the tile index), "winograd.product" [a][b][ko][t][ki] (one matrix product over
/// channels per a, b) and "conv" (A^T M A plus bias, in the output layout; axes n, ko, y, x,
/// ki when blocked, n, k, y, x when not). FLOPs are counted as the direct convolution's, so
/// GFLOP/s compare with it.
Workload winogradConv2d(const Conv2dParams& p, const Conv2dActivationLayout& activations, DataType dtype,
                        const Target& target = hostTarget());

/// Transforms vectorized over channels (the input block), the products with a register tile
/// of several tiles times the filter block, each (a, b, filter block) a parallel task, and
/// the output transform tile by tile into the output.
Expected<Schedule> defaultWinogradConv2dSchedule(const Workload& workload, const Conv2dParams& p,
                                                 const Conv2dActivationLayout& activations,
                                                 const Target& target = hostTarget());

}  // namespace tessel
