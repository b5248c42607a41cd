// .tgpu parsing and validation, and the device-independent half of running a GPU module.
#include "runtime/GpuModule.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "runtime/CudaDriver.h"
#include "runtime/Error.h"
#include "runtime/OpenCLDriver.h"

namespace tessel::runtime {

namespace {

using Json = nlohmann::ordered_json;

/// Reads the fields of one JSON object of a .tgpu file; every complaint names the file and the
/// field's path ("kernels[0].grid[1]") so that the compiler's author can find the bad value.
class FieldReader {
public:
  FieldReader(const Json& object, std::string path, const std::string& fileName)
      : object_(object), path_(std::move(path)), fileName_(fileName) {
    if (!object_.is_object()) fail(path_, "expected an object, found " + describe(object_));
  }

  [[noreturn]] void fail(const std::string& where, const std::string& message) const {
    throw Error(fileName_ + ": " + (where.empty() ? "" : where + ": ") + message);
  }

  bool has(const std::string& key) const { return object_.contains(key); }
  const Json& field(const std::string& key) const {
    auto it = object_.find(key);
    if (it == object_.end()) fail(path_, "missing field \"" + key + "\"");
    return *it;
  }
  std::string string(const std::string& key) const {
    const Json& value = field(key);
    if (!value.is_string()) fail(at(key), "expected a string, found " + describe(value));
    return value.get<std::string>();
  }
  const Json& array(const std::string& key) const {
    const Json& value = field(key);
    if (!value.is_array()) fail(at(key), "expected an array, found " + describe(value));
    return value;
  }
  int64_t integer(const Json& value, const std::string& where) const {
    if (!value.is_number_integer()) fail(where, "expected an integer, found " + describe(value));
    if (value.is_number_unsigned() && value.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
      fail(where, "integer too large");
    return value.get<int64_t>();
  }
  int64_t integer(const std::string& key) const { return integer(field(key), at(key)); }

  std::string at(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

  static std::string describe(const Json& value) {
    std::string text = value.dump();
    if (text.size() > 40) text = text.substr(0, 37) + "...";
    return std::string(value.type_name()) + " " + text;
  }

private:
  const Json& object_;
  std::string path_;
  const std::string& fileName_;
};

std::string indexed(const std::string& list, size_t index) { return list + "[" + std::to_string(index) + "]"; }

/// Standard base64 (RFC 4648, with '=' padding). Line breaks are skipped, since some encoders
/// wrap at 76 columns; any other character outside the alphabet is an error.
std::optional<std::string> decodeBase64(const std::string& text) {
  auto valueOf = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string symbols;
  symbols.reserve(text.size());
  for (char c : text)
    if (c != '\n' && c != '\r') symbols.push_back(c);
  if (symbols.size() % 4 != 0) return std::nullopt;
  size_t padding = 0;
  while (padding < 2 && padding < symbols.size() && symbols[symbols.size() - 1 - padding] == '=') ++padding;
  std::string bytes;
  bytes.reserve(symbols.size() / 4 * 3);
  uint32_t accumulator = 0;
  int bitsHeld = 0;
  for (size_t i = 0; i + padding < symbols.size(); ++i) {
    int value = valueOf(symbols[i]);
    if (value < 0) return std::nullopt;
    accumulator = (accumulator << 6) | uint32_t(value);
    bitsHeld += 6;
    if (bitsHeld >= 8) {
      bitsHeld -= 8;
      bytes.push_back(char((accumulator >> bitsHeld) & 0xff));
    }
  }
  // The bits left over by padding must be zero in canonical base64; non-zero ones mean a
  // truncated or corrupted string.
  if (bitsHeld > 0 && (accumulator & ((1u << bitsHeld) - 1)) != 0) return std::nullopt;
  return bytes;
}

std::array<uint32_t, 3> readDimensions(const FieldReader& reader, const std::string& key) {
  const Json& values = reader.array(key);
  if (values.empty() || values.size() > 3)
    reader.fail(reader.at(key), "expected 1 to 3 extents, found " + std::to_string(values.size()));
  std::array<uint32_t, 3> dimensions{1, 1, 1};
  for (size_t d = 0; d < values.size(); ++d) {
    int64_t extent = reader.integer(values[d], indexed(reader.at(key), d));
    if (extent <= 0 || extent > int64_t(std::numeric_limits<int32_t>::max()))
      reader.fail(indexed(reader.at(key), d), "extent " + std::to_string(extent) + " is not positive or too large");
    dimensions[d] = uint32_t(extent);
  }
  return dimensions;
}

GpuModuleParam readParam(const Json& value, const std::string& where, const std::string& fileName) {
  FieldReader reader(value, where, fileName);
  GpuModuleParam param;
  param.name = reader.string("name");
  if (param.name.empty()) reader.fail(reader.at("name"), "empty name");
  std::string dtype = reader.string("dtype");
  std::optional<DataType> parsed = DataType::parse(dtype);
  if (!parsed || parsed->lanes != 1)
    reader.fail(reader.at("dtype"), "unknown element type \"" + dtype +
                                        "\" (expected float32, float64, float16, bfloat16, int8, int16, int32, "
                                        "int64, uint8 or bool)");
  param.dtype = *parsed;
  const Json& shape = reader.array("shape");
  int64_t elements = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t extent = reader.integer(shape[d], indexed(reader.at("shape"), d));
    // 0 is an empty tensor (a slice past the end): a buffer of one byte that nothing reads.
    if (extent < 0) reader.fail(indexed(reader.at("shape"), d), "extent " + std::to_string(extent) + " is negative");
    if (extent > 0 && elements > std::numeric_limits<int64_t>::max() / param.dtype.bytes() / extent)
      reader.fail(reader.at("shape"), "the buffer's size overflows");
    elements *= extent;
    param.shape.push_back(extent);
  }
  if (reader.has("data")) {
    std::optional<std::string> bytes = decodeBase64(reader.string("data"));
    if (!bytes) reader.fail(reader.at("data"), "a constant's data must be base64 text; this is not valid base64");
    if (int64_t(bytes->size()) != param.byteSize())
      reader.fail(reader.at("data"), "holds " + std::to_string(bytes->size()) + " bytes, but the param's type and shape need " +
                                         std::to_string(param.byteSize()));
    param.constantData = std::move(*bytes);
    param.isConstant = true;
  }
  return param;
}

GpuKernelLaunch readKernel(const Json& value, const std::string& where, const std::string& fileName, size_t paramCount) {
  FieldReader reader(value, where, fileName);
  GpuKernelLaunch kernel;
  kernel.name = reader.string("name");
  if (kernel.name.empty()) reader.fail(reader.at("name"), "empty kernel name");
  kernel.grid = readDimensions(reader, "grid");
  kernel.block = readDimensions(reader, "block");
  if (reader.has("shared_bytes")) {
    int64_t shared = reader.integer("shared_bytes");
    if (shared < 0 || shared > int64_t(std::numeric_limits<int32_t>::max()))
      reader.fail(reader.at("shared_bytes"), "expected a non-negative byte count, found " + std::to_string(shared));
    kernel.sharedBytes = uint32_t(shared);
  }
  const Json& args = reader.array("args");
  for (size_t i = 0; i < args.size(); ++i) {
    int64_t index = reader.integer(args[i], indexed(reader.at("args"), i));
    if (index < 0 || size_t(index) >= paramCount)
      reader.fail(indexed(reader.at("args"), i), "param index " + std::to_string(index) + " is out of range (the module has " +
                                                     std::to_string(paramCount) + " params)");
    kernel.args.push_back(size_t(index));
  }
  return kernel;
}

}  // namespace

int64_t GpuModuleParam::numElements() const {
  int64_t count = 1;
  for (int64_t extent : shape) count *= extent;
  return count;
}

GpuModule GpuModule::load(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw Error(path + ": cannot open the GPU module file");
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) throw Error(path + ": cannot read the GPU module file");
  return parse(text.str(), path);
}

GpuModule GpuModule::parse(const std::string& jsonText, const std::string& nameForMessages) {
  Json root;
  try {
    root = Json::parse(jsonText);
  } catch (const nlohmann::json::exception& error) {
    throw Error(nameForMessages + ": not a valid JSON GPU module: " + error.what());
  }
  FieldReader reader(root, "", nameForMessages);
  GpuModule module;
  module.name = nameForMessages;

  std::string format = reader.string("format");
  if (format != "tessel-gpu-module")
    reader.fail("format", "expected \"tessel-gpu-module\", found \"" + format + "\" (is this a .tgpu file?)");
  int64_t version = reader.integer("version");
  if (version != 1)
    reader.fail("version", "version " + std::to_string(version) +
                               " is not supported by this runtime (it reads version 1): use a runtime as new as the compiler");
  if (reader.has("target")) module.target = reader.string("target");

  std::string device = reader.string("device");
  if (device == "cuda") module.device = GpuDeviceKind::CUDA;
  else if (device == "opencl") module.device = GpuDeviceKind::OpenCL;
  else reader.fail("device", "unknown device \"" + device + "\" (expected \"cuda\" or \"opencl\")");

  std::string codeFormat = reader.string("code_format");
  if (codeFormat == "cubin") module.codeFormat = GpuCodeFormat::Cubin;
  else if (codeFormat == "ptx") module.codeFormat = GpuCodeFormat::PTX;
  else if (codeFormat == "opencl-c") module.codeFormat = GpuCodeFormat::OpenCLC;
  else reader.fail("code_format", "unknown code format \"" + codeFormat + "\" (expected \"cubin\", \"ptx\" or \"opencl-c\")");
  bool forOpenCL = module.codeFormat == GpuCodeFormat::OpenCLC;
  if (forOpenCL != (module.device == GpuDeviceKind::OpenCL))
    reader.fail("code_format", "\"" + codeFormat + "\" code cannot run on device \"" + device + "\"");

  if (module.device == GpuDeviceKind::CUDA && (module.codeFormat == GpuCodeFormat::Cubin || reader.has("arch"))) {
    module.arch = reader.string("arch");
    if (!parseCudaArch(module.arch))
      reader.fail("arch", "\"" + module.arch + "\" is not a CUDA architecture (expected the form sm_90)");
  }

  std::string code = reader.string("code");
  if (code.empty()) reader.fail("code", "empty");
  if (module.codeFormat == GpuCodeFormat::Cubin) {
    std::optional<std::string> decoded = decodeBase64(code);
    if (!decoded) reader.fail("code", "a cubin must be base64 text; this is not valid base64");
    if (decoded->empty()) reader.fail("code", "the cubin is empty");
    module.code = std::move(*decoded);
  } else {
    module.code = std::move(code);
  }
  if (reader.has("source")) module.source = reader.string("source");

  const Json& params = reader.array("params");
  if (params.empty()) reader.fail("params", "a module needs at least one param");
  std::set<std::string> paramNames;
  for (size_t i = 0; i < params.size(); ++i) {
    module.params.push_back(readParam(params[i], indexed("params", i), nameForMessages));
    if (!paramNames.insert(module.params.back().name).second)
      reader.fail(indexed("params", i) + ".name", "duplicate param \"" + module.params.back().name + "\"");
  }

  const Json& outputs = reader.array("outputs");
  if (outputs.empty()) reader.fail("outputs", "a module needs at least one output");
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i].is_string())
      reader.fail(indexed("outputs", i), "expected a param name, found " + FieldReader::describe(outputs[i]));
    std::string output = outputs[i].get<std::string>();
    auto param = std::find_if(module.params.begin(), module.params.end(), [&](const GpuModuleParam& p) { return p.name == output; });
    if (param == module.params.end()) reader.fail(indexed("outputs", i), "no param is named \"" + output + "\"");
    if (param->isOutput) reader.fail(indexed("outputs", i), "\"" + output + "\" is listed twice");
    if (param->isConstant) reader.fail(indexed("outputs", i), "\"" + output + "\" is a constant (it has data)");
    param->isOutput = true;
  }

  if (reader.has("workspaces")) {
    const Json& workspaces = reader.array("workspaces");
    for (size_t i = 0; i < workspaces.size(); ++i) {
      if (!workspaces[i].is_string())
        reader.fail(indexed("workspaces", i), "expected a param name, found " + FieldReader::describe(workspaces[i]));
      std::string workspace = workspaces[i].get<std::string>();
      auto param = std::find_if(module.params.begin(), module.params.end(),
                                [&](const GpuModuleParam& p) { return p.name == workspace; });
      if (param == module.params.end()) reader.fail(indexed("workspaces", i), "no param is named \"" + workspace + "\"");
      if (param->isOutput || param->isWorkspace || param->isConstant)
        reader.fail(indexed("workspaces", i), "\"" + workspace + "\" is already an output, a workspace or a constant");
      param->isWorkspace = true;
    }
  }

  if (reader.has("flops")) {
    const Json& flops = reader.field("flops");
    if (!flops.is_number() || flops.get<double>() < 0)
      reader.fail("flops", "expected a non-negative number, found " + FieldReader::describe(flops));
    module.flops = flops.get<double>();
  }

  const Json& kernels = reader.array("kernels");
  for (size_t i = 0; i < kernels.size(); ++i)
    module.kernels.push_back(readKernel(kernels[i], indexed("kernels", i), nameForMessages, module.params.size()));
  return module;
}

size_t GpuModule::paramIndex(const std::string& paramName) const {
  std::string known;
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].name == paramName) return i;
    known += (known.empty() ? "" : ", ") + params[i].name;
  }
  throw Error(name + ": no param named \"" + paramName + "\" (the params are " + known + ")");
}

std::vector<std::string> GpuModule::inputNames() const {
  std::vector<std::string> names;
  for (const GpuModuleParam& param : params)
    if (!param.isOutput && !param.isWorkspace && !param.isConstant) names.push_back(param.name);
  return names;
}

std::vector<std::string> GpuModule::outputNames() const {
  std::vector<std::string> names;
  for (const GpuModuleParam& param : params)
    if (param.isOutput) names.push_back(param.name);
  return names;
}

GpuModuleRunner::GpuModuleRunner(GpuModule module) : module_(std::move(module)) {
  if (module_.device == GpuDeviceKind::CUDA) backend_ = createCudaBackend(module_);
  else backend_ = createOpenCLBackend(module_);
  // Constants (a model's weights) go to the device once, with the module.
  for (size_t i = 0; i < module_.params.size(); ++i)
    if (module_.params[i].isConstant)
      backend_->upload(i, module_.params[i].constantData.data(), module_.params[i].constantData.size());
}

GpuModuleRunner::~GpuModuleRunner() = default;

std::string GpuModuleRunner::deviceName() const { return backend_->deviceName(); }

void GpuModuleRunner::setInput(size_t index, const void* data, size_t bytes) {
  if (index >= module_.params.size())
    throw Error(module_.name + ": param index " + std::to_string(index) + " is out of range (the module has " +
                std::to_string(module_.params.size()) + " params)");
  const GpuModuleParam& param = module_.params[index];
  if (bytes != size_t(param.byteSize()))
    throw Error(module_.name + ": param \"" + param.name + "\" holds " + std::to_string(param.byteSize()) + " bytes (" +
                param.dtype.toString() + " x " + std::to_string(param.numElements()) + "), given " + std::to_string(bytes));
  backend_->upload(index, data, bytes);
}

void GpuModuleRunner::setInput(const std::string& name, const void* data, size_t bytes) {
  setInput(module_.paramIndex(name), data, bytes);
}

void GpuModuleRunner::setInput(const std::string& name, const NDArray& array) {
  size_t index = module_.paramIndex(name);
  const GpuModuleParam& param = module_.params[index];
  if (array.dtype() != param.dtype || array.shape() != param.shape) {
    std::string expected = param.dtype.toString() + "[";
    for (size_t d = 0; d < param.shape.size(); ++d) expected += (d ? ", " : "") + std::to_string(param.shape[d]);
    throw Error(module_.name + ": param \"" + name + "\" is " + expected + "], given " + array.describe());
  }
  NDArray host = array;
  if (array.device().type != DeviceType::CPU) {
    host = NDArray::empty(array.shape(), array.dtype());
    array.copyTo(host);
  }
  setInput(index, host.data(), size_t(host.byteSize()));
}

void GpuModuleRunner::run() { backend_->run(); }

void GpuModuleRunner::getOutput(const std::string& name, void* data, size_t bytes) {
  size_t index = module_.paramIndex(name);
  const GpuModuleParam& param = module_.params[index];
  if (bytes != size_t(param.byteSize()))
    throw Error(module_.name + ": param \"" + name + "\" holds " + std::to_string(param.byteSize()) + " bytes, asked for " +
                std::to_string(bytes));
  backend_->download(index, data, bytes);
}

NDArray GpuModuleRunner::getOutput(const std::string& name) {
  const GpuModuleParam& param = module_.params[module_.paramIndex(name)];
  NDArray result = NDArray::empty(param.shape, param.dtype);
  getOutput(name, result.data(), size_t(result.byteSize()));
  return result;
}

double GpuModuleRunner::timeMilliseconds(int repeats) {
  if (repeats < 1) throw Error("GpuModuleRunner::timeMilliseconds: repeats must be at least 1, given " + std::to_string(repeats));
  backend_->run();  // warm-up: first launches pay for lazy loading and caches
  std::vector<double> times;
  times.reserve(size_t(repeats));
  for (int i = 0; i < repeats; ++i) times.push_back(timedRunMilliseconds());
  std::sort(times.begin(), times.end());
  size_t middle = times.size() / 2;
  return times.size() % 2 ? times[middle] : (times[middle - 1] + times[middle]) / 2;
}

double GpuModuleRunner::timedRunMilliseconds() { return backend_->timedRun(); }

}  // namespace tessel::runtime
