// The C entry points that generated kernels call: parallel loops and scratch memory.
#include "runtime/c_backend_api.h"

#include <cstdlib>

#include "runtime/ThreadPool.h"

namespace {

/// Status returned to a kernel when the runtime itself failed (no exception may cross
/// into generated code).
constexpr int32_t kRuntimeFailure = -1;
constexpr int64_t kWorkspaceAlignment = 64;

}  // namespace

extern "C" {

int32_t tessel_parallel_for(int64_t extent, TesselParallelBody body, void* closure) {
  if (body == nullptr) return kRuntimeFailure;
  try {
    return tessel::runtime::ThreadPool::global().parallelForChunks(extent, body, closure);
  } catch (...) {
    // A C body cannot throw, so this is the runtime failing (e.g. no thread could start).
    return kRuntimeFailure;
  }
}

void* tessel_workspace_alloc(int64_t bytes) {
  if (bytes < 0) return nullptr;
  // aligned_alloc wants a multiple of the alignment; a zero-byte request still gets a
  // unique pointer so that kernels can treat null as failure.
  int64_t rounded = (bytes + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
  if (rounded == 0) rounded = kWorkspaceAlignment;
  return std::aligned_alloc(kWorkspaceAlignment, static_cast<size_t>(rounded));
}

void tessel_workspace_free(void* pointer) { std::free(pointer); }

}  // extern "C"
