// The C entry points that generated kernels call: parallel loops and scratch memory.
#include "runtime/c_backend_api.h"

#include "runtime/ThreadPool.h"
#include "runtime/WorkspacePool.h"

namespace {

/// Status returned to a kernel when the runtime itself failed (no exception may cross
/// into generated code).
constexpr int32_t kRuntimeFailure = -1;

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
  // A zero-byte request still gets a unique pointer so that kernels can treat null as failure.
  return tessel::runtime::WorkspacePool::global().allocate(static_cast<size_t>(bytes));
}

void tessel_workspace_free(void* pointer) { tessel::runtime::WorkspacePool::global().free(pointer); }

}  // extern "C"
