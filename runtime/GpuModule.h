// GPU modules (.tgpu files): kernels the compiler generated for CUDA or OpenCL, loaded and run.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/DataType.h"
#include "runtime/NDArray.h"

namespace tessel::runtime {

/// One buffer a GPU module's kernels read or write.
struct GpuModuleParam {
  std::string name;
  DataType dtype;
  std::vector<int64_t> shape;
  bool isOutput = false;
  /// Scratch the kernels pass between them (listed in "workspaces"): neither set nor read
  /// by the caller.
  bool isWorkspace = false;
  /// A constant (a model's weight): its contents, given in the file ("data", base64) and
  /// uploaded with the module.
  bool isConstant = false;
  std::string constantData;

  int64_t numElements() const;
  int64_t byteSize() const { return numElements() * dtype.bytes(); }
};

/// One kernel launch; its parameters are the device pointers of params[args[i]], in order.
struct GpuKernelLaunch {
  std::string name;
  std::array<uint32_t, 3> grid{1, 1, 1};   // blocks (CUDA) / work-groups (OpenCL) per dimension
  std::array<uint32_t, 3> block{1, 1, 1};  // threads per block / work-items per work-group
  uint32_t sharedBytes = 0;                // dynamic shared memory (CUDA only)
  std::vector<size_t> args;
};

enum class GpuDeviceKind { CUDA, OpenCL };
enum class GpuCodeFormat { Cubin, PTX, OpenCLC };

/// A parsed, validated .tgpu file (format described in runtime/GpuModuleFormat.md). Every
/// field is checked when parsing, so a runner never meets an index out of range or a
/// zero-sized launch.
struct GpuModule {
  std::string name;    // the file it came from, for messages
  std::string target;  // the compiler's target string ("cuda -arch=sm_90"), informational
  GpuDeviceKind device = GpuDeviceKind::CUDA;
  std::string arch;    // "sm_90" for CUDA; empty when not given (PTX, OpenCL)
  GpuCodeFormat codeFormat = GpuCodeFormat::Cubin;
  std::string code;    // cubin bytes (decoded from base64), PTX text or OpenCL C source
  std::string source;  // the generated CUDA C / OpenCL C, for reading; may be empty
  std::vector<GpuModuleParam> params;
  std::vector<GpuKernelLaunch> kernels;
  std::optional<double> flops;  // floating-point operations of one run

  /// Reads and parses `path`; throws Error naming the file when it cannot be read or is invalid.
  static GpuModule load(const std::string& path);
  /// Parses .tgpu JSON text; `nameForMessages` starts every error message.
  static GpuModule parse(const std::string& jsonText, const std::string& nameForMessages);

  /// The index of param `name`; throws Error listing the params when there is none.
  size_t paramIndex(const std::string& name) const;
  std::vector<std::string> inputNames() const;
  std::vector<std::string> outputNames() const;
};

/// Device-side work of a runner: what differs between CUDA and OpenCL. Implemented in
/// CudaDriver.cpp and OpenCLDriver.cpp.
class GpuBackend {
public:
  virtual ~GpuBackend() = default;
  virtual std::string deviceName() const = 0;
  virtual void upload(size_t param, const void* host, size_t bytes) = 0;
  virtual void download(size_t param, void* host, size_t bytes) = 0;
  /// Launches every kernel in order and waits for them to finish.
  virtual void run() = 0;
  /// run() timed on the device's own clock where it has one; milliseconds.
  virtual double timedRun() = 0;
};

/// Runs a GpuModule on the first CUDA device or the chosen OpenCL device (see OpenCLDriver.h).
/// Device buffers for every param are allocated once, zero-filled, and kept across runs,
/// so inputs set once stay set and repeated runs measure the kernels alone.
class GpuModuleRunner {
public:
  /// Compiles/loads the module's code and allocates its buffers. Throws Error when the
  /// device's driver is missing, the code does not build or load, or memory runs out.
  explicit GpuModuleRunner(GpuModule module);
  ~GpuModuleRunner();
  GpuModuleRunner(const GpuModuleRunner&) = delete;
  GpuModuleRunner& operator=(const GpuModuleRunner&) = delete;

  const GpuModule& module() const { return module_; }
  std::string deviceName() const;

  /// Copies exactly the param's byteSize() bytes from host memory; Error when `bytes` differs.
  void setInput(size_t index, const void* data, size_t bytes);
  void setInput(const std::string& name, const void* data, size_t bytes);
  /// Copies `array` after checking that its dtype and shape are the param's.
  void setInput(const std::string& name, const NDArray& array);

  /// Launches all kernels in order and waits for them.
  void run();

  /// Copies the param's contents to host memory; Error when `bytes` differs from its size.
  void getOutput(const std::string& name, void* data, size_t bytes);
  /// The param's contents as a new CPU array of its dtype and shape.
  NDArray getOutput(const std::string& name);

  /// Median milliseconds of `repeats` runs after one warm-up run (CUDA: device events around
  /// each run; OpenCL: wall clock around enqueue and clFinish). Error when repeats < 1.
  double timeMilliseconds(int repeats);
  /// One run, timed as timeMilliseconds times each (no warm-up): for callers that keep their
  /// own samples (tessel measure --target).
  double timedRunMilliseconds();

private:
  GpuModule module_;
  std::unique_ptr<GpuBackend> backend_;
};

}  // namespace tessel::runtime
