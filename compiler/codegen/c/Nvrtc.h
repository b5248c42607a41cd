// CUDA C to device code with NVRTC, loaded with dlopen: Tessel builds and runs without the
// CUDA toolkit, and compiles for any GPU architecture without a GPU where it is installed.
#pragma once

#include <string>

#include "core/support/Error.h"

namespace tessel {

/// What NVRTC produced for one source.
struct NvrtcOutput {
  std::string cubin;  ///< Machine code for the architecture (empty when only PTX was asked for).
  std::string ptx;    ///< The PTX assembly.
  std::string log;    ///< NVRTC's messages (warnings on success).
};

/// Whether NVRTC can be loaded on this machine; `where` receives the library's path or
/// what was tried.
bool nvrtcAvailable(std::string* where = nullptr);

/// Compiles CUDA C `source` for `arch` ("sm_90"): the PTX, and the cubin too when
/// `wantCubin`. A compile error is a Diagnostic holding NVRTC's log; no NVRTC is one that
/// says where it was looked for and how to install it.
Expected<NvrtcOutput> compileWithNvrtc(const std::string& source, const std::string& arch, bool wantCubin = true,
                                       const std::string& name = "kernel.cu");

}  // namespace tessel
