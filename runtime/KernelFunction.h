// Wraps a compiled kernel (the TesselKernel C signature) as a PackedFunc over NDArrays.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/DataType.h"
#include "runtime/PackedFunc.h"
#include "runtime/c_backend_api.h"

namespace tessel::runtime {

/// One buffer parameter of a compiled kernel: what the caller must pass in its place.
struct KernelParameter {
  std::string name;
  std::vector<int64_t> shape;
  DataType dtype;
};

/// A PackedFunc that takes one NDArray per parameter, checks each against the parameter's
/// shape, dtype and device (CPU), passes the data pointers to `kernel` in order and returns
/// None. Wrong arguments and a non-zero kernel status become Errors that name the kernel,
/// so a bad call never reaches generated code. Module subclasses (JIT, shared library) use
/// this to expose their kernels.
PackedFunc wrapKernel(std::string name, TesselKernel kernel, std::vector<KernelParameter> parameters);

}  // namespace tessel::runtime
