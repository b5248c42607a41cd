// C source for GPU targets from the lowered loop IR: one printer, two dialects (CUDA C for
// NVRTC and OpenCL C), as TVM's CodeGenC and its CUDA/OpenCL subclasses.
#pragma once

#include <string>
#include <vector>

#include "compiler/transform/GpuKernel.h"
#include "core/support/Error.h"
#include "core/target/Target.h"

namespace tessel {

/// The device code of lowered functions: the source text and how to launch each kernel.
/// Every kernel takes all of its function's buffers, in parameter order, then the function's
/// workspaces.
struct GpuSource {
  std::string code;
  std::vector<KernelLaunch> kernels;
  /// For each kernel, the index of the function it belongs to.
  std::vector<size_t> kernelFunctions;
  /// For each function, its global scratch between kernels (see deviceWorkspaces).
  std::vector<std::vector<Buffer>> workspaces;
  /// For each kernel, the source line its `__global__`/`__kernel` signature is on (1-based),
  /// so a reader can jump from a kernel to its code.
  std::vector<int> kernelLines;
};

/// Prints `f` (lowered for `target`, a CUDA or OpenCL target) as device source. What the
/// printer cannot express yet (a vector outside a vector store, global
/// scratch inside a kernel) is a Diagnostic naming the construct.
Expected<GpuSource> generateGpuSource(const PrimFunc& f, const Target& target);
/// Several functions in one source (a whole model), their kernels in order; their names
/// must differ. `title` heads the file.
Expected<GpuSource> generateGpuSource(const std::vector<PrimFunc>& funcs, const Target& target,
                                      const std::string& title);

}  // namespace tessel
