// A lowered GPU function as a `.tgpu` file: device code (a cubin for CUDA, the source for
// OpenCL) with its launch shapes and buffers, what `tessel-deploy-run --gpu-module` and the
// runtime's GpuModule load. runtime/GpuModule.h describes the format.
#pragma once

#include <string>
#include <vector>

#include "core/ir/Stmt.h"
#include "core/support/Error.h"
#include "core/target/Target.h"

namespace tessel {

struct GpuModuleOptions {
  std::vector<std::string> outputs;  ///< Names of the parameters the function writes.
  double flops = 0;                  ///< Floating-point operations of one run; 0: unknown.
  /// CUDA: embed PTX (which the driver compiles for the GPU it runs on) instead of a cubin
  /// for the target's architecture.
  bool ptx = false;
};

/// The module's JSON text for `f` lowered for `target` (cuda or opencl). CUDA code is
/// compiled with NVRTC here; an error in generation or compilation is the Diagnostic.
Expected<std::string> exportGpuModule(const PrimFunc& f, const Target& target, const GpuModuleOptions& options);

}  // namespace tessel
