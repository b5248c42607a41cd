// Loading libcuda.so.1 at run time and running a GPU module's kernels through the driver API.
#include "runtime/CudaDriver.h"

#include <algorithm>
#include <dlfcn.h>

#include <cctype>
#include <mutex>
#include <vector>

#include "runtime/Error.h"
#include "runtime/GpuModule.h"

namespace tessel::runtime {

using namespace cuda;

namespace {

std::string archName(const CudaArch& arch) {
  return "sm_" + std::to_string(arch.major) + std::to_string(arch.minor) + (arch.archSpecific ? "a" : "");
}

/// Opens the driver and resolves every entry point; the library stays open for the process's
/// life, since contexts and modules may outlive any one runner.
CudaDriver openDriver() {
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library)
    throw Error(
        "no CUDA driver (libcuda.so.1) on this machine: run the module on a machine with an NVIDIA GPU and driver, "
        "or compile for --target opencl / llvm");
  CudaDriver driver{};
  auto resolve = [&](auto& entry, const char* symbol) {
    void* address = dlsym(library, symbol);
    if (!address)
      throw Error(std::string("the CUDA driver (libcuda.so.1) lacks ") + symbol +
                  ": it is older than this runtime supports; update the NVIDIA driver");
    entry = reinterpret_cast<std::remove_reference_t<decltype(entry)>>(address);
  };
  resolve(driver.cuInit, "cuInit");
  resolve(driver.cuDeviceGetCount, "cuDeviceGetCount");
  resolve(driver.cuDeviceGet, "cuDeviceGet");
  resolve(driver.cuDeviceGetName, "cuDeviceGetName");
  resolve(driver.cuDeviceGetAttribute, "cuDeviceGetAttribute");
  resolve(driver.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  resolve(driver.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
  resolve(driver.cuCtxSetCurrent, "cuCtxSetCurrent");
  resolve(driver.cuCtxSynchronize, "cuCtxSynchronize");
  resolve(driver.cuModuleLoadDataEx, "cuModuleLoadDataEx");
  resolve(driver.cuModuleUnload, "cuModuleUnload");
  resolve(driver.cuModuleGetFunction, "cuModuleGetFunction");
  resolve(driver.cuFuncSetAttribute, "cuFuncSetAttribute");
  resolve(driver.cuMemAlloc, "cuMemAlloc_v2");
  resolve(driver.cuMemFree, "cuMemFree_v2");
  resolve(driver.cuMemcpyHtoD, "cuMemcpyHtoD_v2");
  resolve(driver.cuMemcpyDtoH, "cuMemcpyDtoH_v2");
  resolve(driver.cuMemsetD8, "cuMemsetD8_v2");
  resolve(driver.cuLaunchKernel, "cuLaunchKernel");
  resolve(driver.cuEventCreate, "cuEventCreate");
  resolve(driver.cuEventRecord, "cuEventRecord");
  resolve(driver.cuEventSynchronize, "cuEventSynchronize");
  // The unversioned symbol: every driver has it, while _v2 appeared with CUDA 12.8's driver.
  resolve(driver.cuEventElapsedTime, "cuEventElapsedTime");
  resolve(driver.cuEventDestroy, "cuEventDestroy_v2");
  resolve(driver.cuGetErrorName, "cuGetErrorName");
  resolve(driver.cuGetErrorString, "cuGetErrorString");

  CUresult result = driver.cuInit(0);
  if (result == CUDA_ERROR_NO_DEVICE)
    throw Error("the CUDA driver found no GPU (cuInit: " + driver.describe(result) +
                "): run the module on a machine with an NVIDIA GPU, or compile for --target opencl / llvm");
  driver.check(result, "cuInit");
  return driver;
}

/// A module loaded on device 0's primary context, with one device buffer per param.
class CudaBackend final : public GpuBackend {
public:
  explicit CudaBackend(const GpuModule& module) : driver_(CudaDriver::instance()), module_(module) {
    // A throw from here on skips the destructor; release what was made before rethrowing.
    try {
      initialize();
    } catch (...) {
      release();
      throw;
    }
  }

  ~CudaBackend() override { release(); }

  std::string deviceName() const override { return deviceName_; }

private:
  void initialize() {
    int deviceCount = 0;
    driver_.check(driver_.cuDeviceGetCount(&deviceCount), "cuDeviceGetCount");
    if (deviceCount < 1)
      throw Error(module_.name + ": the CUDA driver reports no GPU: run on a machine with an NVIDIA GPU");
    driver_.check(driver_.cuDeviceGet(&device_, 0), "cuDeviceGet", " for device 0");
    char name[256] = {};
    driver_.check(driver_.cuDeviceGetName(name, int(sizeof(name) - 1), device_), "cuDeviceGetName");
    deviceName_ = name;
    driver_.check(driver_.cuDeviceGetAttribute(&capability_.major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device_),
                  "cuDeviceGetAttribute", " (compute capability major)");
    driver_.check(driver_.cuDeviceGetAttribute(&capability_.minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device_),
                  "cuDeviceGetAttribute", " (compute capability minor)");
    checkArchitecture();

    // The primary context is the one the CUDA runtime API and other libraries share, so a
    // process mixing this runner with them uses one context per device, not two.
    driver_.check(driver_.cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
    makeCurrent();
    loadModule();
    allocateBuffers();
    driver_.check(driver_.cuEventCreate(&start_, CU_EVENT_DEFAULT), "cuEventCreate");
    driver_.check(driver_.cuEventCreate(&stop_, CU_EVENT_DEFAULT), "cuEventCreate");
  }

  void release() {
    // Teardown errors are ignored: a destructor cannot report them, and after a failed
    // kernel (a sticky context error) every call here fails anyway.
    if (!context_) return;
    driver_.cuCtxSetCurrent(context_);
    if (start_) driver_.cuEventDestroy(start_);
    if (stop_) driver_.cuEventDestroy(stop_);
    for (CUdeviceptr buffer : buffers_)
      if (buffer) driver_.cuMemFree(buffer);
    if (cudaModule_) driver_.cuModuleUnload(cudaModule_);
    driver_.cuDevicePrimaryCtxRelease(device_);
    context_ = nullptr;
  }

public:
  void upload(size_t param, const void* host, size_t bytes) override {
    if (bytes == 0) return;  // an empty tensor: nothing to copy (and a zero-sized copy is an error)
    makeCurrent();
    driver_.check(driver_.cuMemcpyHtoD(buffers_[param], host, bytes), "cuMemcpyHtoD",
                  " copying param \"" + module_.params[param].name + "\" to the GPU");
  }

  void download(size_t param, void* host, size_t bytes) override {
    if (bytes == 0) return;
    makeCurrent();
    driver_.check(driver_.cuMemcpyDtoH(host, buffers_[param], bytes), "cuMemcpyDtoH",
                  " copying param \"" + module_.params[param].name + "\" from the GPU");
  }

  void run() override {
    makeCurrent();
    launchAll();
    driver_.check(driver_.cuCtxSynchronize(), "cuCtxSynchronize", " after the kernels of " + module_.name);
  }

  double timedRun() override {
    makeCurrent();
    driver_.check(driver_.cuEventRecord(start_, nullptr), "cuEventRecord");
    launchAll();
    driver_.check(driver_.cuEventRecord(stop_, nullptr), "cuEventRecord");
    driver_.check(driver_.cuEventSynchronize(stop_), "cuEventSynchronize", " after the kernels of " + module_.name);
    float milliseconds = 0;
    driver_.check(driver_.cuEventElapsedTime(&milliseconds, start_, stop_), "cuEventElapsedTime");
    return milliseconds;
  }

private:
  // Every call runs on the calling thread's current context; a runner used from a thread
  // other than its creator's, or after another library switched contexts, sets its own.
  void makeCurrent() { driver_.check(driver_.cuCtxSetCurrent(context_), "cuCtxSetCurrent"); }

  void checkArchitecture() {
    if (module_.arch.empty()) return;
    std::optional<CudaArch> code = parseCudaArch(module_.arch);  // validated when parsed
    bool runs = module_.codeFormat == GpuCodeFormat::Cubin
                    ? cubinRunsOn(*code, capability_)
                    : (capability_.major > code->major || (capability_.major == code->major && capability_.minor >= code->minor));
    if (!runs) throw Error(architectureMismatch());
  }

  std::string architectureMismatch() const {
    std::string deviceArch = archName(capability_);
    return "module " + module_.name + " holds code for " + module_.arch + " but device 0 (" + deviceName_ + ") is " + deviceArch +
           ": compile it with --target \"cuda -arch=" + deviceArch + "\"";
  }

  void loadModule() {
    // PTX and cubin load through the same call (the driver JIT-compiles PTX); PTX must end in
    // a NUL, which std::string's c_str() guarantees. The error log explains a failed JIT.
    std::vector<char> errorLog(16384, '\0');
    CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* optionValues[] = {errorLog.data(), reinterpret_cast<void*>(uintptr_t(errorLog.size() - 1))};
    CUresult result = driver_.cuModuleLoadDataEx(&cudaModule_, module_.code.c_str(), 2, options, optionValues);
    if (result == CUDA_ERROR_NO_BINARY_FOR_GPU) throw Error(architectureMismatch());
    if (result == CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
      throw Error(module_.name + ": the NVIDIA driver is older than the CUDA toolkit that wrote this PTX (" +
                  driver_.describe(result) + "): update the driver, or compile to cubin for " + archName(capability_));
    if (result != CUDA_SUCCESS) {
      std::string log = errorLog.data();
      driver_.check(result, "cuModuleLoadDataEx", " loading " + module_.name + (log.empty() ? "" : "\n" + log));
    }
    for (const GpuKernelLaunch& kernel : module_.kernels) {
      CUfunction function = nullptr;
      driver_.check(driver_.cuModuleGetFunction(&function, cudaModule_, kernel.name.c_str()), "cuModuleGetFunction",
                    ": " + module_.name + " names kernel \"" + kernel.name +
                        "\" but its code does not define it (is it declared extern \"C\"?)");
      // Over 48 KiB of dynamic shared memory must be requested per function (Volta and later).
      if (kernel.sharedBytes > 48 * 1024)
        driver_.check(driver_.cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                 int(kernel.sharedBytes)),
                      "cuFuncSetAttribute", " asking " + std::to_string(kernel.sharedBytes) +
                                                " bytes of shared memory for kernel \"" + kernel.name + "\" on " +
                                                deviceName_);
      functions_.push_back(function);
    }
  }

  void allocateBuffers() {
    buffers_.assign(module_.params.size(), 0);
    for (size_t i = 0; i < module_.params.size(); ++i) {
      size_t bytes = size_t(module_.params[i].byteSize());
      // An empty tensor gets a buffer of one byte: cuMemAlloc refuses zero.
      driver_.check(driver_.cuMemAlloc(&buffers_[i], std::max<size_t>(bytes, 1)), "cuMemAlloc",
                    " allocating " + std::to_string(bytes) + " bytes for param \"" + module_.params[i].name + "\"");
      // Outputs start at zero, so an element no kernel writes reads back the same every run.
      driver_.check(driver_.cuMemsetD8(buffers_[i], 0, bytes), "cuMemsetD8");
    }
    // cuLaunchKernel reads each argument through a pointer to its value; these stay put
    // because neither vector changes size after this.
    argumentValues_.resize(module_.kernels.size());
    argumentPointers_.resize(module_.kernels.size());
    for (size_t k = 0; k < module_.kernels.size(); ++k) {
      for (size_t param : module_.kernels[k].args) argumentValues_[k].push_back(buffers_[param]);
      for (CUdeviceptr& value : argumentValues_[k]) argumentPointers_[k].push_back(&value);
    }
  }

  void launchAll() {
    for (size_t k = 0; k < module_.kernels.size(); ++k) {
      const GpuKernelLaunch& kernel = module_.kernels[k];
      CUresult result =
          driver_.cuLaunchKernel(functions_[k], kernel.grid[0], kernel.grid[1], kernel.grid[2], kernel.block[0],
                                 kernel.block[1], kernel.block[2], kernel.sharedBytes, nullptr,
                                 argumentPointers_[k].empty() ? nullptr : argumentPointers_[k].data(), nullptr);
      if (result != CUDA_SUCCESS)
        driver_.check(result, "cuLaunchKernel",
                      " launching kernel \"" + kernel.name + "\" of " + module_.name + " with grid [" +
                          std::to_string(kernel.grid[0]) + ", " + std::to_string(kernel.grid[1]) + ", " +
                          std::to_string(kernel.grid[2]) + "], block [" + std::to_string(kernel.block[0]) + ", " +
                          std::to_string(kernel.block[1]) + ", " + std::to_string(kernel.block[2]) + "], " +
                          std::to_string(kernel.sharedBytes) + " shared bytes on " + deviceName_);
    }
  }

  const CudaDriver& driver_;
  const GpuModule& module_;
  CUdevice device_ = 0;
  std::string deviceName_;
  CudaArch capability_;
  CUcontext context_ = nullptr;
  CUmodule cudaModule_ = nullptr;
  std::vector<CUfunction> functions_;
  std::vector<CUdeviceptr> buffers_;
  std::vector<std::vector<CUdeviceptr>> argumentValues_;
  std::vector<std::vector<void*>> argumentPointers_;
  CUevent start_ = nullptr;
  CUevent stop_ = nullptr;
};

}  // namespace

const CudaDriver& CudaDriver::instance() {
  // Opened once; a failure is remembered and rethrown, so every runner reports the same cause
  // without another dlopen.
  static std::once_flag once;
  static CudaDriver driver;
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

std::string CudaDriver::describe(CUresult result) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (cuGetErrorName(result, &name) != CUDA_SUCCESS || !name) name = nullptr;
  if (cuGetErrorString(result, &text) != CUDA_SUCCESS || !text) text = nullptr;
  std::string description = name ? name : "CUDA error " + std::to_string(result);
  if (text) description += std::string(" (") + text + ")";
  return description;
}

void CudaDriver::check(CUresult result, const char* call, const std::string& context) const {
  if (result != CUDA_SUCCESS) throw Error(std::string(call) + " failed: " + describe(result) + context);
}

std::optional<CudaArch> parseCudaArch(const std::string& text) {
  std::string digits;
  if (text.rfind("sm_", 0) == 0) digits = text.substr(3);
  else if (text.rfind("compute_", 0) == 0) digits = text.substr(8);
  else return std::nullopt;
  CudaArch arch;
  if (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f')) {
    // "a": arch-specific features, exactly that device; "f": the family, treated as plain.
    arch.archSpecific = digits.back() == 'a';
    digits.pop_back();
  }
  if (digits.size() < 2 || digits.size() > 3) return std::nullopt;
  for (char c : digits)
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  arch.minor = digits.back() - '0';
  arch.major = std::stoi(digits.substr(0, digits.size() - 1));
  if (arch.major < 1) return std::nullopt;
  return arch;
}

bool cubinRunsOn(const CudaArch& code, const CudaArch& device) {
  if (code.major != device.major) return false;
  return code.archSpecific ? device.minor == code.minor : device.minor >= code.minor;
}

std::unique_ptr<GpuBackend> createCudaBackend(const GpuModule& module) { return std::make_unique<CudaBackend>(module); }

}  // namespace tessel::runtime
