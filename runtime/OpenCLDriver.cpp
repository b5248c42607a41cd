// Loading libOpenCL.so.1 at run time and running a GPU module's kernels through OpenCL.
#include "runtime/OpenCLDriver.h"

#ifndef _GNU_SOURCE
#define _GNU_SOURCE  // dlmopen
#endif

#include <algorithm>
#include <dlfcn.h>

#include <chrono>
#include <cstdlib>
#include <mutex>

#include "runtime/Error.h"
#include "runtime/GpuModule.h"

namespace tessel::runtime {

using namespace opencl;

namespace {

// The OpenCL loader and the platform it loads get a link namespace of their own (dlmopen):
// PoCL compiles kernels with its own LLVM (15 on Debian 12), and in the process's global
// namespace its calls to LLVM's inline and template functions bind to the compiler's LLVM 14
// loaded by the tessel program, and crash. Alone in a namespace, the platform sees only its
// own libraries. Where a new namespace cannot be had, the ordinary dlopen is the fallback.
void* openLoader() {
#ifdef LM_ID_NEWLM
  if (void* library = dlmopen(LM_ID_NEWLM, "libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL)) return library;
#endif
  return dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
}

OpenCLDriver openDriver() {
  void* library = openLoader();
  if (!library)
    throw Error(
        "no OpenCL loader (libOpenCL.so.1) on this machine: install an OpenCL ICD loader and a platform "
        "(Debian: ocl-icd-libopencl1 with pocl-opencl-icd for CPUs, or the GPU vendor's driver)");
  OpenCLDriver driver{};
  auto resolve = [&](auto& entry, const char* symbol) {
    void* address = dlsym(library, symbol);
    if (!address) throw Error(std::string("the OpenCL loader (libOpenCL.so.1) lacks ") + symbol + ": it is not OpenCL 1.2");
    entry = reinterpret_cast<std::remove_reference_t<decltype(entry)>>(address);
  };
  resolve(driver.clGetPlatformIDs, "clGetPlatformIDs");
  resolve(driver.clGetPlatformInfo, "clGetPlatformInfo");
  resolve(driver.clGetDeviceIDs, "clGetDeviceIDs");
  resolve(driver.clGetDeviceInfo, "clGetDeviceInfo");
  resolve(driver.clCreateContext, "clCreateContext");
  resolve(driver.clCreateCommandQueue, "clCreateCommandQueue");
  resolve(driver.clCreateProgramWithSource, "clCreateProgramWithSource");
  resolve(driver.clBuildProgram, "clBuildProgram");
  resolve(driver.clGetProgramBuildInfo, "clGetProgramBuildInfo");
  resolve(driver.clCreateKernel, "clCreateKernel");
  resolve(driver.clSetKernelArg, "clSetKernelArg");
  resolve(driver.clCreateBuffer, "clCreateBuffer");
  resolve(driver.clEnqueueWriteBuffer, "clEnqueueWriteBuffer");
  resolve(driver.clEnqueueReadBuffer, "clEnqueueReadBuffer");
  resolve(driver.clEnqueueNDRangeKernel, "clEnqueueNDRangeKernel");
  resolve(driver.clFinish, "clFinish");
  resolve(driver.clReleaseMemObject, "clReleaseMemObject");
  resolve(driver.clReleaseKernel, "clReleaseKernel");
  resolve(driver.clReleaseProgram, "clReleaseProgram");
  resolve(driver.clReleaseCommandQueue, "clReleaseCommandQueue");
  resolve(driver.clReleaseContext, "clReleaseContext");
  return driver;
}

/// A string-valued clGet*Info query (names), trimmed of its terminating NUL.
template <class Handle, class Query>
std::string infoString(Query query, Handle handle, cl_uint what) {
  size_t size = 0;
  if (query(handle, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string text(size, '\0');
  if (query(handle, what, size, text.data(), nullptr) != CL_SUCCESS) return "";
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

std::string deviceList(const std::vector<OpenCLDeviceInfo>& devices) {
  std::string list;
  for (size_t i = 0; i < devices.size(); ++i)
    list += "\n  " + std::to_string(i) + ": " + devices[i].deviceName + " (" + devices[i].platformName + ")";
  return list;
}

/// A module built for one device: a context, an in-order queue, one kernel object per launch
/// (arguments set once) and one buffer per param.
class OpenCLBackend final : public GpuBackend {
public:
  explicit OpenCLBackend(const GpuModule& module) : driver_(OpenCLDriver::instance()), module_(module) {
    try {
      initialize();
    } catch (...) {
      release();
      throw;
    }
  }

  ~OpenCLBackend() override { release(); }

  std::string deviceName() const override { return device_.deviceName; }

  void upload(size_t param, const void* host, size_t bytes) override {
    if (bytes == 0) return;  // an empty tensor: nothing to copy (and a zero-sized copy is an error)
    OpenCLDriver::check(driver_.clEnqueueWriteBuffer(queue_, buffers_[param], CL_TRUE, 0, bytes, host, 0, nullptr, nullptr),
                        "clEnqueueWriteBuffer", " copying param \"" + module_.params[param].name + "\" to the device");
  }

  void download(size_t param, void* host, size_t bytes) override {
    if (bytes == 0) return;
    OpenCLDriver::check(driver_.clEnqueueReadBuffer(queue_, buffers_[param], CL_TRUE, 0, bytes, host, 0, nullptr, nullptr),
                        "clEnqueueReadBuffer", " copying param \"" + module_.params[param].name + "\" from the device");
  }

  void run() override {
    enqueueAll();
    OpenCLDriver::check(driver_.clFinish(queue_), "clFinish", " after the kernels of " + module_.name);
  }

  double timedRun() override {
    // Wall clock: event profiling would need a profiling queue, and PoCL's CPU device reports
    // the same time either way.
    auto start = std::chrono::steady_clock::now();
    run();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }

private:
  void initialize() {
    device_ = chooseOpenCLDevice();
    cl_int error = CL_SUCCESS;
    context_ = driver_.clCreateContext(nullptr, 1, &device_.device, nullptr, nullptr, &error);
    OpenCLDriver::check(error, "clCreateContext", " on " + device_.deviceName);
    queue_ = driver_.clCreateCommandQueue(context_, device_.device, 0, &error);
    OpenCLDriver::check(error, "clCreateCommandQueue", " on " + device_.deviceName);
    buildProgram();
    allocateBuffers();
    createKernels();
  }

  void release() {
    // Teardown errors are ignored: there is nobody to report them to.
    for (cl_kernel kernel : kernels_) driver_.clReleaseKernel(kernel);
    for (cl_mem buffer : buffers_)
      if (buffer) driver_.clReleaseMemObject(buffer);
    if (program_) driver_.clReleaseProgram(program_);
    if (queue_) driver_.clReleaseCommandQueue(queue_);
    if (context_) driver_.clReleaseContext(context_);
    kernels_.clear();
    buffers_.clear();
    program_ = nullptr;
    queue_ = nullptr;
    context_ = nullptr;
  }

  void buildProgram() {
    const char* source = module_.code.c_str();
    size_t length = module_.code.size();
    cl_int error = CL_SUCCESS;
    program_ = driver_.clCreateProgramWithSource(context_, 1, &source, &length, &error);
    OpenCLDriver::check(error, "clCreateProgramWithSource", " for " + module_.name);
    error = driver_.clBuildProgram(program_, 1, &device_.device, nullptr, nullptr, nullptr);
    if (error != CL_SUCCESS) {
      std::string log = infoString(
          [&](cl_device_id device, cl_uint what, size_t size, void* value, size_t* returned) {
            return driver_.clGetProgramBuildInfo(program_, device, what, size, value, returned);
          },
          device_.device, CL_PROGRAM_BUILD_LOG);
      throw Error(module_.name + ": the OpenCL C code does not build for " + device_.deviceName + " (clBuildProgram: " +
                  OpenCLDriver::describe(error) + ")" + (log.empty() ? "" : "; build log:\n" + log));
    }
  }

  void allocateBuffers() {
    buffers_.assign(module_.params.size(), nullptr);
    for (size_t i = 0; i < module_.params.size(); ++i) {
      size_t bytes = size_t(module_.params[i].byteSize());
      cl_int error = CL_SUCCESS;
      // An empty tensor gets a buffer of one byte: OpenCL has no buffers of zero bytes.
      buffers_[i] = driver_.clCreateBuffer(context_, CL_MEM_READ_WRITE, std::max<size_t>(bytes, 1), nullptr, &error);
      OpenCLDriver::check(error, "clCreateBuffer",
                          " allocating " + std::to_string(bytes) + " bytes for param \"" + module_.params[i].name + "\"");
      // Outputs start at zero, so an element no kernel writes reads back the same every run.
      std::vector<char> zeros(bytes, 0);
      upload(i, zeros.data(), bytes);
    }
  }

  void createKernels() {
    for (const GpuKernelLaunch& launch : module_.kernels) {
      cl_int error = CL_SUCCESS;
      cl_kernel kernel = driver_.clCreateKernel(program_, launch.name.c_str(), &error);
      OpenCLDriver::check(error, "clCreateKernel",
                          ": " + module_.name + " names kernel \"" + launch.name + "\" but its code does not define it");
      kernels_.push_back(kernel);
      for (size_t a = 0; a < launch.args.size(); ++a)
        OpenCLDriver::check(driver_.clSetKernelArg(kernel, cl_uint(a), sizeof(cl_mem), &buffers_[launch.args[a]]),
                            "clSetKernelArg",
                            " setting argument " + std::to_string(a) + " of kernel \"" + launch.name +
                                "\" (does the kernel take exactly " + std::to_string(launch.args.size()) +
                                " __global pointers?)");
    }
  }

  void enqueueAll() {
    for (size_t k = 0; k < module_.kernels.size(); ++k) {
      const GpuKernelLaunch& launch = module_.kernels[k];
      size_t global[3], local[3];
      for (int d = 0; d < 3; ++d) {
        global[d] = size_t(launch.grid[d]) * launch.block[d];
        local[d] = launch.block[d];
      }
      cl_int error = driver_.clEnqueueNDRangeKernel(queue_, kernels_[k], 3, nullptr, global, local, 0, nullptr, nullptr);
      if (error != CL_SUCCESS)
        OpenCLDriver::check(error, "clEnqueueNDRangeKernel",
                            " enqueuing kernel \"" + launch.name + "\" of " + module_.name + " with global size [" +
                                std::to_string(global[0]) + ", " + std::to_string(global[1]) + ", " +
                                std::to_string(global[2]) + "], local size [" + std::to_string(local[0]) + ", " +
                                std::to_string(local[1]) + ", " + std::to_string(local[2]) + "] on " +
                                device_.deviceName);
    }
  }

  const OpenCLDriver& driver_;
  const GpuModule& module_;
  OpenCLDeviceInfo device_;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  cl_program program_ = nullptr;
  std::vector<cl_kernel> kernels_;
  std::vector<cl_mem> buffers_;
};

}  // namespace

const OpenCLDriver& OpenCLDriver::instance() {
  static std::once_flag once;
  static OpenCLDriver driver;
  static std::string failure;
  std::call_once(once, [] {
    try {
      driver = openDriver();
    } catch (const Error& error) {
      failure = error.what();
    }
  });
  if (!failure.empty()) throw Error(failure);
  return driver;
}

std::string OpenCLDriver::describe(cl_int result) {
  static const char* const kNames[] = {
      "CL_SUCCESS", "CL_DEVICE_NOT_FOUND", "CL_DEVICE_NOT_AVAILABLE", "CL_COMPILER_NOT_AVAILABLE",
      "CL_MEM_OBJECT_ALLOCATION_FAILURE", "CL_OUT_OF_RESOURCES", "CL_OUT_OF_HOST_MEMORY",
      "CL_PROFILING_INFO_NOT_AVAILABLE", "CL_MEM_COPY_OVERLAP", "CL_IMAGE_FORMAT_MISMATCH",
      "CL_IMAGE_FORMAT_NOT_SUPPORTED", "CL_BUILD_PROGRAM_FAILURE", "CL_MAP_FAILURE"};
  // -30 to -63: the CL_INVALID_* codes, in the order cl.h numbers them.
  static const char* const kInvalidNames[] = {
      "CL_INVALID_VALUE", "CL_INVALID_DEVICE_TYPE", "CL_INVALID_PLATFORM", "CL_INVALID_DEVICE", "CL_INVALID_CONTEXT",
      "CL_INVALID_QUEUE_PROPERTIES", "CL_INVALID_COMMAND_QUEUE", "CL_INVALID_HOST_PTR", "CL_INVALID_MEM_OBJECT",
      "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR", "CL_INVALID_IMAGE_SIZE", "CL_INVALID_SAMPLER", "CL_INVALID_BINARY",
      "CL_INVALID_BUILD_OPTIONS", "CL_INVALID_PROGRAM", "CL_INVALID_PROGRAM_EXECUTABLE", "CL_INVALID_KERNEL_NAME",
      "CL_INVALID_KERNEL_DEFINITION", "CL_INVALID_KERNEL", "CL_INVALID_ARG_INDEX", "CL_INVALID_ARG_VALUE",
      "CL_INVALID_ARG_SIZE", "CL_INVALID_KERNEL_ARGS", "CL_INVALID_WORK_DIMENSION", "CL_INVALID_WORK_GROUP_SIZE",
      "CL_INVALID_WORK_ITEM_SIZE", "CL_INVALID_GLOBAL_OFFSET", "CL_INVALID_EVENT_WAIT_LIST", "CL_INVALID_EVENT",
      "CL_INVALID_OPERATION", "CL_INVALID_GL_OBJECT", "CL_INVALID_BUFFER_SIZE", "CL_INVALID_MIP_LEVEL",
      "CL_INVALID_GLOBAL_WORK_SIZE"};
  const char* name = nullptr;
  if (result <= 0 && result > -int(std::size(kNames))) name = kNames[-result];
  else if (result <= -30 && result > -30 - int(std::size(kInvalidNames))) name = kInvalidNames[-30 - result];
  else if (result == CL_PLATFORM_NOT_FOUND_KHR) name = "CL_PLATFORM_NOT_FOUND_KHR";
  return std::string(name ? name : "OpenCL error") + " (" + std::to_string(result) + ")";
}

void OpenCLDriver::check(cl_int result, const char* call, const std::string& context) {
  if (result != CL_SUCCESS) throw Error(std::string(call) + " failed: " + describe(result) + context);
}

std::vector<OpenCLDeviceInfo> listOpenCLDevices() {
  const OpenCLDriver& driver = OpenCLDriver::instance();
  cl_uint platformCount = 0;
  cl_int result = driver.clGetPlatformIDs(0, nullptr, &platformCount);
  // The ICD loader answers CL_PLATFORM_NOT_FOUND_KHR when no platform is installed.
  if (result == CL_PLATFORM_NOT_FOUND_KHR || (result == CL_SUCCESS && platformCount == 0)) return {};
  OpenCLDriver::check(result, "clGetPlatformIDs");
  std::vector<cl_platform_id> platforms(platformCount);
  OpenCLDriver::check(driver.clGetPlatformIDs(platformCount, platforms.data(), nullptr), "clGetPlatformIDs");

  std::vector<OpenCLDeviceInfo> devices;
  for (cl_platform_id platform : platforms) {
    cl_uint deviceCount = 0;
    result = driver.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &deviceCount);
    if (result == CL_DEVICE_NOT_FOUND || deviceCount == 0) continue;
    OpenCLDriver::check(result, "clGetDeviceIDs");
    std::vector<cl_device_id> ids(deviceCount);
    OpenCLDriver::check(driver.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, deviceCount, ids.data(), nullptr),
                        "clGetDeviceIDs");
    std::string platformName = infoString(driver.clGetPlatformInfo, platform, CL_PLATFORM_NAME);
    for (cl_device_id id : ids) {
      OpenCLDeviceInfo info;
      info.platform = platform;
      info.device = id;
      info.platformName = platformName;
      info.deviceName = infoString(driver.clGetDeviceInfo, id, CL_DEVICE_NAME);
      cl_device_type type = 0;
      if (driver.clGetDeviceInfo(id, CL_DEVICE_TYPE, sizeof(type), &type, nullptr) == CL_SUCCESS)
        info.isGpu = (type & CL_DEVICE_TYPE_GPU) != 0;
      devices.push_back(info);
    }
  }
  return devices;
}

OpenCLDeviceInfo chooseOpenCLDevice() {
  std::vector<OpenCLDeviceInfo> devices = listOpenCLDevices();
  if (devices.empty())
    throw Error(
        "no OpenCL platform with a device on this machine: install one (Debian: pocl-opencl-icd for CPUs, or the GPU "
        "vendor's OpenCL driver)");
  if (const char* chosen = std::getenv("TESSEL_OPENCL_DEVICE"); chosen && *chosen) {
    char* end = nullptr;
    long index = std::strtol(chosen, &end, 10);
    if (*end != '\0' || index < 0 || size_t(index) >= devices.size())
      throw Error(std::string("TESSEL_OPENCL_DEVICE=") + chosen + " names no device; the OpenCL devices are:" +
                  deviceList(devices));
    return devices[size_t(index)];
  }
  for (const OpenCLDeviceInfo& device : devices)
    if (device.isGpu) return device;
  return devices.front();
}

std::unique_ptr<GpuBackend> createOpenCLBackend(const GpuModule& module) {
  return std::make_unique<OpenCLBackend>(module);
}

}  // namespace tessel::runtime
