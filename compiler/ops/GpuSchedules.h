// Default schedules for GPU targets (CUDA and OpenCL): which loops become blocks and
// threads, what is staged in shared memory and what stays in registers.
#pragma once

#include "compiler/ops/Conv2d.h"
#include "compiler/ops/Workload.h"

namespace tessel {

/// Matmul and dense on a GPU (the compute without B's CPU packing): each block computes a
/// tile of C, staging the slices of A and B it needs in shared memory one k step at a time
/// (loaded by all of the block's threads together), and each thread accumulates a small
/// tile of C in registers. Tile sizes are the largest that divide the problem.
Expected<Schedule> defaultGpuMatmulSchedule(const Workload& workload, const Target& target);

/// A 2-D convolution for GPUs, in the layouts the model gives (data NCHW, weight OIHW, any
/// groups, strides, dilations and padding, optional bias): stages "data.pad" (inlined by the
/// schedule), the reduction "conv" and, with a bias, "out" = conv + bias.
Workload gpuConv2d(const Conv2dParams& p, DataType dtype);

/// Its default schedule: each block computes a tile of filters x output pixels of one image,
/// staging the padded input and the weights in shared memory a few input channels at a time;
/// each thread accumulates a few filters of one pixel in registers.
Expected<Schedule> defaultGpuConv2dSchedule(const Workload& workload, const Conv2dParams& p, const Target& target);

/// Any operator on a GPU, when it has no schedule of its own: stages without a reduction
/// that feed others are inlined; every remaining stage (outputs, and reductions other stages
/// read, which become kernels of their own with their results in device memory between
/// them) becomes a kernel:
/// - a reduction over at least 64 elements (softmax and layer norm rows, global pooling, a
///   ReduceMean) gets a block per output: its up to 256 threads read consecutive elements and
///   fold their partial results in shared memory (bind of a reduction loop to threadIdx.x);
/// - anything else has its data-parallel axes fused and split into blocks of up to
///   `threadsPerBlock` threads, one output element per thread, any short reduction (a pooling
///   window) running in that thread.
/// A reduction with few outputs (under 256) and a long reduce axis is first split by rfactor
/// into up to 1024 partial sums per output (a stage NAME.rf, a kernel with a thread per
/// partial sum), which its own stage then reduces across a block: a tensor summed to one value
/// does not run in one block. Correct for every operator; fast for elementwise ones and such
/// reductions, not for convolutions and products (they have schedules of their own).
Expected<Schedule> defaultGpuSchedule(const Workload& workload, const Target& target, int64_t threadsPerBlock = 256);

}  // namespace tessel
