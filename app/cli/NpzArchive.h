// Reading NumPy .npz archives (numpy.savez and numpy.savez_compressed): a zip file of .npy
// entries, stored or deflated, with or without zip64 records.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/support/Error.h"
#include "runtime/NDArray.h"

namespace tessel::cli {

/// The arrays of the .npz at `path` in archive order, each with its name (the entry's name
/// less ".npy": "arr_0" for numpy.savez's positional arrays). A Diagnostic naming the file
/// (and entry) for anything that is not a readable archive of .npy entries.
Expected<std::vector<std::pair<std::string, runtime::NDArray>>> readNpz(const std::string& path);

}  // namespace tessel::cli
