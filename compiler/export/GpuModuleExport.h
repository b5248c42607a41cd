// Lowered GPU functions as a `.tgpu` file: device code (a cubin for CUDA, the source for
// OpenCL) with its launch shapes and buffers, what `tessel-deploy-run --gpu-module` and the
// runtime's GpuModule load. runtime/GpuModuleFormat.md describes the format.
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

/// One device buffer of a module made of several functions (a model): a graph input, a
/// constant (its bytes given), an intermediate result (a workspace) or an output.
struct GpuModuleBuffer {
  std::string name;
  DataType dtype;
  std::vector<int64_t> shape;
  bool output = false;
  bool workspace = false;
  std::string constantBytes;  ///< A constant's contents (row-major); empty for the others.
};

/// One function of such a module, launched in order; `buffers` names the module buffer that
/// each of its parameters is, in parameter order.
struct GpuModuleFunction {
  PrimFunc func;
  std::vector<size_t> buffers;
};

/// A module of several functions over shared buffers (each function's own scratch becomes a
/// workspace of the module). `title` names it in the source.
Expected<std::string> exportGpuModule(std::vector<GpuModuleBuffer> buffers, const std::vector<GpuModuleFunction>& functions,
                                      const Target& target, const std::string& title, const GpuModuleOptions& options);

}  // namespace tessel
