// Reading and writing NumPy .npy files: how tessel-deploy-run takes inputs and returns outputs.
#pragma once

#include <string>

#include "runtime/NDArray.h"

namespace tessel::runtime {

/// Reads a .npy file (format versions 1 to 3) holding a little-endian, C-order array of
/// bool, int8..int64, uint8..uint64, float16, float32 or float64. Anything else (big-endian
/// data, Fortran order, object or structured arrays, a truncated file) throws Error naming
/// the file and the problem.
NDArray readNpy(const std::string& path);

/// readNpy of a .npy file's bytes already in memory (an entry of an .npz archive); `name` is
/// what its errors call it.
NDArray parseNpy(const std::string& contents, const std::string& name);

/// Writes `array` (a CPU array of a type readNpy accepts) as a version 1.0 .npy file.
/// Throws Error when the type has no .npy equivalent or the file cannot be written.
void writeNpy(const std::string& path, const NDArray& array);

}  // namespace tessel::runtime
