// The CUDA driver API, loaded with dlopen so the runtime links no GPU library.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

namespace tessel::runtime {

struct GpuModule;
class GpuBackend;

/// The few driver API types the runtime uses, declared here (not from cuda.h) so that the
/// runtime builds without the CUDA toolkit. Values and layouts are the driver's ABI.
namespace cuda {
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUjit_option = int;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
constexpr CUresult CUDA_ERROR_NO_BINARY_FOR_GPU = 209;
constexpr CUresult CUDA_ERROR_INVALID_PTX = 218;
constexpr CUresult CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;
constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
constexpr CUjit_option CU_JIT_ERROR_LOG_BUFFER = 5;
constexpr CUjit_option CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;
constexpr unsigned CU_EVENT_DEFAULT = 0;
}  // namespace cuda

/// libcuda.so.1 opened once per process, with the entry points the runtime calls. instance()
/// throws Error when the library is absent, so a machine without an NVIDIA driver gets a
/// message saying what to do instead of a loader failure at start-up.
struct CudaDriver {
  cuda::CUresult (*cuInit)(unsigned flags);
  cuda::CUresult (*cuDeviceGetCount)(int* count);
  cuda::CUresult (*cuDeviceGet)(cuda::CUdevice* device, int ordinal);
  cuda::CUresult (*cuDeviceGetName)(char* name, int length, cuda::CUdevice device);
  cuda::CUresult (*cuDeviceGetAttribute)(int* value, int attribute, cuda::CUdevice device);
  cuda::CUresult (*cuDevicePrimaryCtxRetain)(cuda::CUcontext* context, cuda::CUdevice device);
  cuda::CUresult (*cuDevicePrimaryCtxRelease)(cuda::CUdevice device);  // the _v2 symbol
  cuda::CUresult (*cuCtxSetCurrent)(cuda::CUcontext context);
  cuda::CUresult (*cuCtxSynchronize)();
  cuda::CUresult (*cuModuleLoadDataEx)(cuda::CUmodule* module, const void* image, unsigned optionCount,
                                       cuda::CUjit_option* options, void** optionValues);
  cuda::CUresult (*cuModuleUnload)(cuda::CUmodule module);
  cuda::CUresult (*cuModuleGetFunction)(cuda::CUfunction* function, cuda::CUmodule module, const char* name);
  cuda::CUresult (*cuFuncSetAttribute)(cuda::CUfunction function, int attribute, int value);
  cuda::CUresult (*cuMemAlloc)(cuda::CUdeviceptr* pointer, size_t bytes);  // _v2 symbols from here on
  cuda::CUresult (*cuMemFree)(cuda::CUdeviceptr pointer);
  cuda::CUresult (*cuMemcpyHtoD)(cuda::CUdeviceptr destination, const void* source, size_t bytes);
  cuda::CUresult (*cuMemcpyDtoH)(void* destination, cuda::CUdeviceptr source, size_t bytes);
  cuda::CUresult (*cuMemsetD8)(cuda::CUdeviceptr destination, unsigned char value, size_t count);
  cuda::CUresult (*cuLaunchKernel)(cuda::CUfunction function, unsigned gridX, unsigned gridY, unsigned gridZ,
                                   unsigned blockX, unsigned blockY, unsigned blockZ, unsigned sharedBytes,
                                   cuda::CUstream stream, void** kernelParams, void** extra);
  cuda::CUresult (*cuEventCreate)(cuda::CUevent* event, unsigned flags);
  cuda::CUresult (*cuEventRecord)(cuda::CUevent event, cuda::CUstream stream);
  cuda::CUresult (*cuEventSynchronize)(cuda::CUevent event);
  cuda::CUresult (*cuEventElapsedTime)(float* milliseconds, cuda::CUevent start, cuda::CUevent end);
  cuda::CUresult (*cuEventDestroy)(cuda::CUevent event);  // the _v2 symbol
  cuda::CUresult (*cuGetErrorName)(cuda::CUresult error, const char** name);
  cuda::CUresult (*cuGetErrorString)(cuda::CUresult error, const char** text);

  /// The process's driver, opened and cuInit(0)-ed on first use. Throws Error when
  /// libcuda.so.1 is missing, lacks an entry point, or cuInit fails.
  static const CudaDriver& instance();

  /// Throws Error "`call` failed: CUDA_ERROR_X (description)`context`" unless result is success.
  void check(cuda::CUresult result, const char* call, const std::string& context = "") const;
  /// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)" for a result code.
  std::string describe(cuda::CUresult result) const;
};

/// A CUDA architecture named like "sm_90", "sm_90a" (arch-specific: runs on 9.0 alone) or
/// "compute_90" (PTX). Minor is the last digit, major the digits before it (sm_100 is 10.0).
struct CudaArch {
  int major = 0;
  int minor = 0;
  bool archSpecific = false;
};
std::optional<CudaArch> parseCudaArch(const std::string& text);

/// Whether cubin built for `code` runs on a device of compute capability `device`: the same
/// major version and a device minor at least the cubin's (an "a" cubin needs the exact one).
bool cubinRunsOn(const CudaArch& code, const CudaArch& device);

/// Loads a CUDA module on device 0, allocates its params; see GpuModuleRunner.
std::unique_ptr<GpuBackend> createCudaBackend(const GpuModule& module);

}  // namespace tessel::runtime
