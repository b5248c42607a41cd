// C source for GPU targets from the lowered loop IR: one printer, two dialects (CUDA C for
// NVRTC and OpenCL C), as TVM's CodeGenC and its CUDA/OpenCL subclasses.
#pragma once

#include <string>
#include <vector>

#include "compiler/transform/GpuKernel.h"
#include "core/support/Error.h"
#include "core/target/Target.h"

namespace tessel {

/// The device code of one lowered function: the source text and how to launch each kernel.
/// Every kernel takes all of the function's buffers, in parameter order, then its workspaces.
struct GpuSource {
  std::string code;
  std::vector<Buffer> workspaces;  ///< Global scratch between kernels (see deviceWorkspaces).
  std::vector<KernelLaunch> kernels;
  /// For each kernel, the source line its `__global__`/`__kernel` signature is on (1-based),
  /// so a reader can jump from a kernel to its code.
  std::vector<int> kernelLines;
};

/// Prints `f` (lowered for `target`, a CUDA or OpenCL target) as device source. What the
/// printer cannot express yet (vector types, half precision, global scratch) is a Diagnostic
/// naming the construct.
Expected<GpuSource> generateGpuSource(const PrimFunc& f, const Target& target);

}  // namespace tessel
