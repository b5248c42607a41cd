// The OpenCL API, loaded with dlopen from the ICD loader so the runtime links no GPU library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tessel::runtime {

struct GpuModule;
class GpuBackend;

/// The OpenCL 1.2 types and constants the runtime uses, declared here (not from CL/cl.h) so
/// that the runtime builds without OpenCL headers. Values are the Khronos ABI.
namespace opencl {
using cl_int = int32_t;
using cl_uint = uint32_t;
using cl_ulong = uint64_t;
using cl_bitfield = cl_ulong;
using cl_device_type = cl_bitfield;
using cl_mem_flags = cl_bitfield;
using cl_command_queue_properties = cl_bitfield;
using cl_bool = cl_uint;
using cl_platform_info = cl_uint;
using cl_device_info = cl_uint;
using cl_program_build_info = cl_uint;
using cl_context_properties = intptr_t;
using cl_platform_id = struct _cl_platform_id*;
using cl_device_id = struct _cl_device_id*;
using cl_context = struct _cl_context*;
using cl_command_queue = struct _cl_command_queue*;
using cl_program = struct _cl_program*;
using cl_kernel = struct _cl_kernel*;
using cl_mem = struct _cl_mem*;
using cl_event = struct _cl_event*;

constexpr cl_int CL_SUCCESS = 0;
constexpr cl_int CL_DEVICE_NOT_FOUND = -1;
constexpr cl_int CL_BUILD_PROGRAM_FAILURE = -11;
constexpr cl_int CL_PLATFORM_NOT_FOUND_KHR = -1001;
constexpr cl_bool CL_TRUE = 1;
constexpr cl_platform_info CL_PLATFORM_NAME = 0x0902;
constexpr cl_device_info CL_DEVICE_TYPE = 0x1000;
constexpr cl_device_info CL_DEVICE_NAME = 0x102B;
constexpr cl_device_type CL_DEVICE_TYPE_GPU = 1 << 2;
constexpr cl_device_type CL_DEVICE_TYPE_ALL = 0xFFFFFFFF;
constexpr cl_mem_flags CL_MEM_READ_WRITE = 1 << 0;
constexpr cl_program_build_info CL_PROGRAM_BUILD_LOG = 0x1183;
}  // namespace opencl

/// libOpenCL.so.1 (the ICD loader, which dispatches to installed platforms such as PoCL or a
/// GPU vendor's) opened once per process, with the entry points the runtime calls.
struct OpenCLDriver {
  opencl::cl_int (*clGetPlatformIDs)(opencl::cl_uint count, opencl::cl_platform_id* platforms, opencl::cl_uint* found);
  opencl::cl_int (*clGetPlatformInfo)(opencl::cl_platform_id platform, opencl::cl_platform_info what, size_t size,
                                      void* value, size_t* sizeReturned);
  opencl::cl_int (*clGetDeviceIDs)(opencl::cl_platform_id platform, opencl::cl_device_type type, opencl::cl_uint count,
                                   opencl::cl_device_id* devices, opencl::cl_uint* found);
  opencl::cl_int (*clGetDeviceInfo)(opencl::cl_device_id device, opencl::cl_device_info what, size_t size, void* value,
                                    size_t* sizeReturned);
  opencl::cl_context (*clCreateContext)(const opencl::cl_context_properties* properties, opencl::cl_uint deviceCount,
                                        const opencl::cl_device_id* devices,
                                        void (*notify)(const char*, const void*, size_t, void*), void* userData,
                                        opencl::cl_int* error);
  opencl::cl_command_queue (*clCreateCommandQueue)(opencl::cl_context context, opencl::cl_device_id device,
                                                   opencl::cl_command_queue_properties properties,
                                                   opencl::cl_int* error);
  opencl::cl_program (*clCreateProgramWithSource)(opencl::cl_context context, opencl::cl_uint count,
                                                  const char** strings, const size_t* lengths, opencl::cl_int* error);
  opencl::cl_int (*clBuildProgram)(opencl::cl_program program, opencl::cl_uint deviceCount,
                                   const opencl::cl_device_id* devices, const char* options,
                                   void (*notify)(opencl::cl_program, void*), void* userData);
  opencl::cl_int (*clGetProgramBuildInfo)(opencl::cl_program program, opencl::cl_device_id device,
                                          opencl::cl_program_build_info what, size_t size, void* value,
                                          size_t* sizeReturned);
  opencl::cl_kernel (*clCreateKernel)(opencl::cl_program program, const char* name, opencl::cl_int* error);
  opencl::cl_int (*clSetKernelArg)(opencl::cl_kernel kernel, opencl::cl_uint index, size_t size, const void* value);
  opencl::cl_mem (*clCreateBuffer)(opencl::cl_context context, opencl::cl_mem_flags flags, size_t size, void* host,
                                   opencl::cl_int* error);
  opencl::cl_int (*clEnqueueWriteBuffer)(opencl::cl_command_queue queue, opencl::cl_mem buffer, opencl::cl_bool blocking,
                                         size_t offset, size_t size, const void* source, opencl::cl_uint waitCount,
                                         const opencl::cl_event* waitList, opencl::cl_event* event);
  opencl::cl_int (*clEnqueueReadBuffer)(opencl::cl_command_queue queue, opencl::cl_mem buffer, opencl::cl_bool blocking,
                                        size_t offset, size_t size, void* destination, opencl::cl_uint waitCount,
                                        const opencl::cl_event* waitList, opencl::cl_event* event);
  opencl::cl_int (*clEnqueueNDRangeKernel)(opencl::cl_command_queue queue, opencl::cl_kernel kernel,
                                           opencl::cl_uint dimensions, const size_t* globalOffset,
                                           const size_t* globalSize, const size_t* localSize,
                                           opencl::cl_uint waitCount, const opencl::cl_event* waitList,
                                           opencl::cl_event* event);
  opencl::cl_int (*clFinish)(opencl::cl_command_queue queue);
  opencl::cl_int (*clReleaseMemObject)(opencl::cl_mem buffer);
  opencl::cl_int (*clReleaseKernel)(opencl::cl_kernel kernel);
  opencl::cl_int (*clReleaseProgram)(opencl::cl_program program);
  opencl::cl_int (*clReleaseCommandQueue)(opencl::cl_command_queue queue);
  opencl::cl_int (*clReleaseContext)(opencl::cl_context context);

  /// The process's ICD loader, opened on first use. Throws Error when libOpenCL.so.1 is
  /// missing or lacks an entry point.
  static const OpenCLDriver& instance();

  /// Throws Error "`call` failed: CL_X (-n)`context`" unless result is CL_SUCCESS.
  static void check(opencl::cl_int result, const char* call, const std::string& context = "");
  /// "CL_OUT_OF_RESOURCES (-5)" for a result code.
  static std::string describe(opencl::cl_int result);
};

/// One OpenCL device of one platform, as TESSEL_OPENCL_DEVICE numbers them.
struct OpenCLDeviceInfo {
  opencl::cl_platform_id platform = nullptr;
  opencl::cl_device_id device = nullptr;
  std::string platformName;
  std::string deviceName;
  bool isGpu = false;
};

/// Every device of every platform, platforms in the loader's order. Throws Error when the
/// loader is missing; an empty list when it finds no platform or no device.
std::vector<OpenCLDeviceInfo> listOpenCLDevices();

/// The device a runner uses: device N of listOpenCLDevices() when the environment sets
/// TESSEL_OPENCL_DEVICE=N, else the first GPU, else the first device (PoCL's CPU device
/// where no GPU driver is installed). Throws Error naming the fix when there is none.
OpenCLDeviceInfo chooseOpenCLDevice();

/// Builds a module's OpenCL C for the chosen device and allocates its params; see
/// GpuModuleRunner. A build failure's Error carries the compiler's build log.
std::unique_ptr<GpuBackend> createOpenCLBackend(const GpuModule& module);

}  // namespace tessel::runtime
