/* The C API of the Tessel runtime: load an exported model directory, set inputs, run, read
 * outputs. No call throws; each returns TESSEL_OK or TESSEL_ERROR, and tessel_last_error()
 * says what went wrong. Directory layout: runtime/GraphFormat.md. */
#ifndef TESSEL_RUNTIME_TESSEL_RUNTIME_H
#define TESSEL_RUNTIME_TESSEL_RUNTIME_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TESSEL_OK 0
#define TESSEL_ERROR (-1)

/* A loaded model. Not safe to use from several threads at once; separate handles are. */
typedef struct TesselModule TesselModule;

/* Loads the module in `directory` (kernels.so, graph.json, params.bin). On success stores a
 * new handle in *module (free it with tessel_module_free); on failure stores NULL. */
int tessel_module_load(const char* directory, TesselModule** module);

/* Copies `bytes` bytes of host memory into input `name`; bytes must equal its size. */
int tessel_module_set_input(TesselModule* module, const char* name, const void* data, size_t bytes);

/* Runs every node of the plan in order. */
int tessel_module_run(TesselModule* module);

/* Copies output `name` into `data`; bytes must equal its size. */
int tessel_module_get_output(TesselModule* module, const char* name, void* data, size_t bytes);

/* Stores the size in bytes of tensor `name` (an input or output) in *bytes. */
int tessel_module_tensor_bytes(TesselModule* module, const char* name, size_t* bytes);

/* Frees a handle from tessel_module_load; NULL is ignored. */
void tessel_module_free(TesselModule* module);

/* The message of this thread's most recent failed call ("" if none). Valid until the next
 * call on this thread. */
const char* tessel_last_error(void);

#ifdef __cplusplus
}
#endif

#endif
