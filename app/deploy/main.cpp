// tessel-deploy-run: loads an exported module, feeds .npy inputs, runs it, writes .npy outputs.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "runtime/BFloat16.h"
#include "runtime/CudaDriver.h"
#include "runtime/Error.h"
#include "runtime/GpuModule.h"
#include "runtime/GraphExecutor.h"
#include "runtime/Npy.h"
#include "runtime/OpenCLDriver.h"

namespace {

constexpr int kRuntimeError = 1;
constexpr int kUsageError = 2;

const char* kUsage =
    "usage: tessel-deploy-run DIR [--input NAME=FILE]... [--output-dir DIR] [--profile]\n"
    "       tessel-deploy-run --gpu-module FILE.tgpu [--input NAME=FILE]... [--random-inputs]\n"
    "                         [--output-dir DIR] [--repeat N] [--device cuda|opencl[:N]]\n"
    "       tessel-deploy-run --list-devices\n"
    "\n"
    "Runs the model exported to DIR (kernels.so, graph.json, params.bin) with the Tessel\n"
    "runtime alone. With --gpu-module, runs a GPU module (.tgpu, CUDA or OpenCL kernels) on\n"
    "the first CUDA GPU or the OpenCL device TESSEL_OPENCL_DEVICE=N picks (default: the\n"
    "first GPU, else the first device); neither driver is needed to build or start the tool.\n"
    "\n"
    "  --input NAME=FILE  sets input NAME from FILE, a C-order .npy array of the input's\n"
    "                     shape and element type; every input must be given\n"
    "  --output-dir DIR   writes each output as DIR/NAME.npy (default: the current directory)\n"
    "  --profile          prints the time of each node\n"
    "  --gpu-module FILE  runs the GPU module FILE instead of an exported directory\n"
    "  --random-inputs    (GPU modules) fills inputs not given with --input with fixed-seed\n"
    "                     random values: floats uniform in [-1, 1), integers in [0, 4)\n"
    "  --repeat N         (GPU modules) after the run, times N more runs and prints the\n"
    "                     median (time_ms_median) and, when the module counts its flops, gflops\n"
    "  --device KIND      where to run: cpu (a module directory), cuda or opencl (a GPU\n"
    "                     module of that kind); opencl:N picks device N of --list-devices\n"
    "                     (as TESSEL_OPENCL_DEVICE=N does). A module of another kind than\n"
    "                     KIND is refused, naming both. Default: what the module is for\n"
    "  --list-devices     lists the OpenCL devices (numbered, for opencl:N) and whether the\n"
    "                     CUDA driver loads, then exits\n"
    "  --help             shows this text\n"
    "\n"
    "Exit status: 0 on success, 2 for a usage error, 1 when a GPU module fails to load or run\n"
    "(2 for an exported directory, as before).\n";

struct Options {
  std::string moduleDirectory;
  std::string gpuModule;
  std::vector<std::pair<std::string, std::string>> inputs;  // name, file
  std::string outputDirectory = ".";
  bool profile = false;
  bool randomInputs = false;
  int repeat = 0;
  std::string device;       // "", "cpu", "cuda" or "opencl"
  int openCLDevice = -1;    // opencl:N
  bool listDevices = false;
};

int usageError(const std::string& message) {
  std::fprintf(stderr, "tessel-deploy-run: %s\n(see tessel-deploy-run --help)\n", message.c_str());
  return kUsageError;
}

/// `text` as a whole number from 0 to `most`; nullopt when it is not one.
std::optional<int> wholeNumber(const std::string& text, long most) {
  char* end = nullptr;
  long parsed = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || parsed < 0 || parsed > most) return std::nullopt;
  return int(parsed);
}

/// Parses the command line; returns -1 to go on, or an exit status.
int parseArguments(int argc, char** argv, Options& options) {
  for (int i = 1; i < argc; ++i) {
    std::string argument = argv[i];
    // Whether `argument` is flag `name`, given as "NAME VALUE" or "NAME=VALUE"; `value` is set
    // to the value, or left empty when none follows.
    std::optional<std::string> value;
    auto isFlag = [&](const std::string& name) {
      if (argument == name) {
        if (i + 1 < argc) value = argv[++i];
        return true;
      }
      if (argument.rfind(name + "=", 0) != 0) return false;
      value = argument.substr(name.size() + 1);
      return true;
    };
    if (argument == "--help" || argument == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (isFlag("--input")) {
      if (!value) return usageError("--input needs NAME=FILE");
      size_t equals = value->find('=');
      if (equals == std::string::npos || equals == 0 || equals + 1 == value->size())
        return usageError("--input expects NAME=FILE, got \"" + *value + "\"");
      options.inputs.emplace_back(value->substr(0, equals), value->substr(equals + 1));
    } else if (isFlag("--output-dir")) {
      if (!value) return usageError("--output-dir needs a directory");
      options.outputDirectory = *value;
    } else if (argument == "--profile") {
      options.profile = true;
    } else if (isFlag("--gpu-module")) {
      if (!value || value->empty()) return usageError("--gpu-module needs a .tgpu file");
      options.gpuModule = *value;
    } else if (isFlag("--device")) {
      if (!value) return usageError("--device needs cpu, cuda or opencl[:N]");
      std::string device = *value;
      if (device.rfind("opencl:", 0) == 0) {
        std::optional<int> number = wholeNumber(device.substr(7), 1000);
        if (!number)
          return usageError("--device opencl:N expects a device number (see --list-devices), got \"" + device + "\"");
        options.openCLDevice = *number;
        device = "opencl";
      }
      if (device != "cpu" && device != "cuda" && device != "opencl")
        return usageError("--device expects cpu, cuda or opencl[:N], got \"" + device + "\"");
      options.device = device;
    } else if (argument == "--list-devices") {
      options.listDevices = true;
    } else if (argument == "--random-inputs") {
      options.randomInputs = true;
    } else if (isFlag("--repeat")) {
      if (!value) return usageError("--repeat needs a count");
      std::optional<int> count = wholeNumber(*value, 1000000);
      if (!count) return usageError("--repeat expects a count from 0 to 1000000, got \"" + *value + "\"");
      options.repeat = *count;
    } else if (argument.rfind("-", 0) == 0 && argument != "-") {
      return usageError("unknown option " + argument);
    } else if (options.moduleDirectory.empty()) {
      options.moduleDirectory = argument;
    } else {
      return usageError("more than one module directory (" + options.moduleDirectory + ", " + argument + ")");
    }
  }
  if (options.listDevices) {
    if (!options.gpuModule.empty() || !options.moduleDirectory.empty())
      return usageError("--list-devices takes no module");
    return -1;
  }
  if (!options.gpuModule.empty()) {
    if (options.device == "cpu")
      return usageError("--device cpu runs a module directory (tessel export); " + options.gpuModule +
                        " is a GPU module: give --device cuda or opencl, or export the model for the CPU");
    if (!options.moduleDirectory.empty())
      return usageError("give either a module directory (" + options.moduleDirectory + ") or --gpu-module, not both");
    if (options.profile) return usageError("--profile applies to module directories; use --repeat N with --gpu-module");
    return -1;
  }
  if (options.randomInputs || options.repeat > 0)
    return usageError("--random-inputs and --repeat apply to --gpu-module only");
  if (options.moduleDirectory.empty()) return usageError("no module directory given (or --gpu-module FILE.tgpu)");
  if (options.device == "cuda" || options.device == "opencl")
    return usageError("--device " + options.device + " runs a GPU module (--gpu-module FILE.tgpu, from tessel compile "
                      "MODEL --target " + options.device + "); " + options.moduleDirectory + " is a module for the CPU");
  return -1;
}

/// The file name for output `name`: tensor names may hold characters a path cannot.
std::string outputFileName(const std::string& name) {
  std::string file = name;
  for (char& c : file)
    if (c == '/' || c == '\\' || c == '\0') c = '_';
  return file + ".npy";
}

/// Bits of the float16 equal to k / 1024 for |k| <= 1024: every such value is exact in float16
/// (11 significant bits), so no rounding is needed.
uint16_t float16OfKth1024(int k) {
  if (k == 0) return 0;
  uint16_t sign = k < 0 ? 0x8000 : 0;
  unsigned magnitude = unsigned(k < 0 ? -k : k);
  int exponent = 0;
  while ((magnitude >> (exponent + 1)) != 0) ++exponent;  // floor(log2(magnitude))
  unsigned mantissa = (magnitude - (1u << exponent)) << (10 - exponent);
  return uint16_t(sign | unsigned(exponent + 5) << 10 | mantissa);
}

/// Fixed-seed random contents for a GPU module's input, so that two runs (and two machines)
/// see the same data and their outputs can be compared.
tessel::runtime::NDArray randomInput(const tessel::runtime::GpuModuleParam& param, std::mt19937& generator) {
  using namespace tessel::runtime;
  NDArray array = NDArray::empty(param.shape, param.dtype);
  size_t count = size_t(array.numElements());
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> integer(0, 3);
  std::uniform_int_distribution<int> kth1024(-1024, 1023);
  auto fill = [&](auto* data, auto make) {
    for (size_t i = 0; i < count; ++i) data[i] = make();
  };
  void* data = array.data();
  const DataType dtype = param.dtype;
  if (dtype == DataType::float32()) fill(static_cast<float*>(data), [&] { return float(real(generator)); });
  else if (dtype == DataType::float64()) fill(static_cast<double*>(data), [&] { return real(generator); });
  else if (dtype == DataType::float16()) fill(static_cast<uint16_t*>(data), [&] { return float16OfKth1024(kth1024(generator)); });
  else if (dtype == DataType::bfloat16())
    fill(static_cast<uint16_t*>(data), [&] { return floatToBFloat16(float(real(generator))); });
  else if (dtype.code == DataType::Code::Int || dtype.code == DataType::Code::UInt) {
    // Small non-negative integers suit every integer width and signedness, and indices.
    std::vector<unsigned char> element(size_t(dtype.bytes()));
    auto* bytes = static_cast<unsigned char*>(data);
    for (size_t i = 0; i < count; ++i) {
      std::memset(element.data(), 0, element.size());
      element[0] = static_cast<unsigned char>(integer(generator));  // little-endian
      std::memcpy(bytes + i * element.size(), element.data(), element.size());
    }
  } else {
    throw Error("--random-inputs cannot fill param \"" + param.name + "\" of type " + dtype.toString() +
                ": give it with --input " + param.name + "=FILE.npy");
  }
  return array;
}

const char* deviceKindName(tessel::runtime::GpuDeviceKind kind) {
  return kind == tessel::runtime::GpuDeviceKind::CUDA ? "cuda" : "opencl";
}

/// "2 GPUs: cuda:0 NVIDIA H100 (sm_90), ..." or why there is none.
std::string cudaDriverStatus() {
  using namespace tessel::runtime;
  try {
    const CudaDriver& driver = CudaDriver::instance();
    int count = 0;
    driver.check(driver.cuDeviceGetCount(&count), "cuDeviceGetCount");
    std::string text = std::to_string(count) + (count == 1 ? " GPU" : " GPUs");
    for (int i = 0; i < count; ++i) {
      cuda::CUdevice device = 0;
      char name[256] = "";
      int major = 0, minor = 0;
      driver.check(driver.cuDeviceGet(&device, i), "cuDeviceGet");
      driver.check(driver.cuDeviceGetName(name, int(sizeof name), device), "cuDeviceGetName");
      driver.check(driver.cuDeviceGetAttribute(&major, cuda::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device),
                   "cuDeviceGetAttribute");
      driver.check(driver.cuDeviceGetAttribute(&minor, cuda::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device),
                   "cuDeviceGetAttribute");
      text += std::string(i == 0 ? ": " : ", ") + "cuda:" + std::to_string(i) + " " + name + " (sm_" +
              std::to_string(major) + std::to_string(minor) + ")";
    }
    return text;
  } catch (const Error& error) {
    return std::string("unavailable (") + error.what() + ")";
  }
}

int listDevices() {
  using namespace tessel::runtime;
  try {
    std::vector<OpenCLDeviceInfo> devices = listOpenCLDevices();
    if (devices.empty()) std::printf("opencl: no device\n");
    for (size_t i = 0; i < devices.size(); ++i)
      std::printf("opencl:%zu %s (%s%s)\n", i, devices[i].deviceName.c_str(), devices[i].platformName.c_str(),
                  devices[i].isGpu ? ", GPU" : "");
  } catch (const Error& error) {
    std::printf("opencl: unavailable (%s)\n", error.what());
  }
  std::printf("cuda: %s\n", cudaDriverStatus().c_str());
  return 0;
}

int runGpuModule(const Options& options) {
  using namespace tessel::runtime;
  GpuModule module = GpuModule::load(options.gpuModule);
  if (!options.device.empty() && options.device != deviceKindName(module.device))
    throw Error(options.gpuModule + " holds " + deviceKindName(module.device) + " code (target \"" + module.target +
                "\"), but --device " + options.device + " was asked for: compile the model with --target " +
                options.device + ", or run this module with --device " + deviceKindName(module.device));
  if (options.openCLDevice >= 0) {
    std::vector<OpenCLDeviceInfo> devices = listOpenCLDevices();
    if (size_t(options.openCLDevice) >= devices.size()) {
      std::string names;
      for (size_t i = 0; i < devices.size(); ++i) names += "\n  opencl:" + std::to_string(i) + " " + devices[i].deviceName;
      throw Error("--device opencl:" + std::to_string(options.openCLDevice) + " names no device; the OpenCL devices are:" +
                  (names.empty() ? std::string(" none") : names));
    }
    ::setenv("TESSEL_OPENCL_DEVICE", std::to_string(options.openCLDevice).c_str(), 1);
  }
  for (const auto& [name, file] : options.inputs) {
    size_t index = module.paramIndex(name);
    if (module.params[index].isOutput || module.params[index].isWorkspace || module.params[index].isConstant)
      throw Error(options.gpuModule + ": \"" + name + "\" is " +
                  (module.params[index].isOutput      ? "an output"
                   : module.params[index].isConstant ? "a constant (a weight)"
                                                     : "an internal workspace") +
                  " of the module, not an input");
  }
  GpuModuleRunner runner(std::move(module));
  const GpuModule& loaded = runner.module();
  std::printf("device: %s\n", runner.deviceName().c_str());
  std::fflush(stdout);  // before any error on stderr, so a merged log reads in order

  std::mt19937 generator(20240607);
  for (const GpuModuleParam& param : loaded.params) {
    if (param.isOutput || param.isWorkspace || param.isConstant) continue;
    const std::pair<std::string, std::string>* given = nullptr;
    for (const auto& entry : options.inputs)
      if (entry.first == param.name) given = &entry;
    if (given) {
      runner.setInput(param.name, readNpy(given->second));
    } else if (options.randomInputs) {
      runner.setInput(param.name, randomInput(param, generator));
    } else {
      throw Error("input '" + param.name + "' was not given (--input " + param.name +
                  "=FILE.npy, or --random-inputs for random values)");
    }
  }
  runner.run();

  std::error_code error;
  std::filesystem::create_directories(options.outputDirectory, error);
  if (error) throw Error(options.outputDirectory + ": cannot create the output directory: " + error.message());
  for (const std::string& output : loaded.outputNames()) {
    std::string path = (std::filesystem::path(options.outputDirectory) / outputFileName(output)).string();
    writeNpy(path, runner.getOutput(output));
    std::printf("%s -> %s\n", output.c_str(), path.c_str());
  }
  if (options.repeat > 0) {
    double milliseconds = runner.timeMilliseconds(options.repeat);
    std::printf("time_ms_median: %.6f\n", milliseconds);
    if (loaded.flops && milliseconds > 0) std::printf("gflops: %.3f\n", *loaded.flops / (milliseconds * 1e6));
  }
  return 0;
}

int run(const Options& options) {
  using namespace tessel::runtime;
  auto executor = GraphExecutor::load(options.moduleDirectory);
  for (const auto& [name, file] : options.inputs) executor->setInput(name, readNpy(file));
  for (const std::string& input : executor->inputNames()) {
    bool given = false;
    for (const auto& entry : options.inputs) given = given || entry.first == input;
    if (!given) throw Error("input '" + input + "' was not given (--input " + input + "=FILE.npy)");
  }
  executor->run();

  std::error_code error;
  std::filesystem::create_directories(options.outputDirectory, error);
  if (error) throw Error(options.outputDirectory + ": cannot create the output directory: " + error.message());
  for (const std::string& output : executor->outputNames()) {
    std::string path = (std::filesystem::path(options.outputDirectory) / outputFileName(output)).string();
    writeNpy(path, executor->getOutput(output));
    std::printf("%s -> %s\n", output.c_str(), path.c_str());
  }
  if (options.profile) {
    double total = 0;
    for (const NodeTiming& timing : executor->nodeTimings()) {
      std::printf("%-32s %-40s %10.3f ms\n", timing.node.c_str(), timing.kernel.c_str(), timing.milliseconds);
      total += timing.milliseconds;
    }
    std::printf("%-73s %10.3f ms\n", "total", total);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (int status = parseArguments(argc, argv, options); status >= 0) return status;
  if (options.listDevices) return listDevices();
  if (!options.gpuModule.empty()) {
    try {
      return runGpuModule(options);
    } catch (const std::exception& error) {
      std::fprintf(stderr, "tessel-deploy-run: error: %s\n", error.what());
      return kRuntimeError;
    }
  }
  try {
    return run(options);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "tessel-deploy-run: error: %s\n", error.what());
    return kUsageError;
  }
}
