/* The C ABI between generated kernels and the runtime. Generated code (JIT or exported
 * shared library) calls only these functions; keep them stable and C-compatible. */
#ifndef TESSEL_RUNTIME_C_BACKEND_API_H
#define TESSEL_RUNTIME_C_BACKEND_API_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Every compiled PrimFunc is exported under its name with this signature: `args` holds the
 * data pointers of its buffer parameters, in parameter order. Returns 0 on success. */
typedef int32_t (*TesselKernel)(void** args);

/* The body of a parallel loop, outlined by codegen: runs iterations [begin, end) using the
 * variables captured in `closure`. Returns 0 on success. */
typedef int32_t (*TesselParallelBody)(int64_t begin, int64_t end, void* closure);

/* Runs body over [0, extent) on the runtime thread pool, split into contiguous chunks, one
 * per worker (the calling thread takes part). Returns the first non-zero body result, or 0.
 * Called from inside a parallel body, it runs the whole range on the calling thread. */
int32_t tessel_parallel_for(int64_t extent, TesselParallelBody body, void* closure);

/* Scratch memory for allocations too large for the stack, 64-byte aligned. */
void* tessel_workspace_alloc(int64_t bytes);
void tessel_workspace_free(void* pointer);

#ifdef __cplusplus
}
#endif

#endif
