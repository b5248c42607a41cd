// Writing GPU modules (see GpuModuleExport.h).
#include "compiler/export/GpuModuleExport.h"

#include <nlohmann/json.hpp>

#include "compiler/codegen/c/CodeGenC.h"
#include "compiler/codegen/c/Nvrtc.h"

namespace tessel {

namespace {
std::string base64(const std::string& bytes) {
  static const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    uint32_t v = uint32_t(uint8_t(bytes[i])) << 16 | uint32_t(uint8_t(bytes[i + 1])) << 8 | uint8_t(bytes[i + 2]);
    for (int shift : {18, 12, 6, 0}) out += alphabet[(v >> shift) & 63];
  }
  if (i < bytes.size()) {
    uint32_t v = uint32_t(uint8_t(bytes[i])) << 16;
    if (i + 1 < bytes.size()) v |= uint32_t(uint8_t(bytes[i + 1])) << 8;
    out += alphabet[(v >> 18) & 63];
    out += alphabet[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? alphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

// A buffer's constant shape, or a Diagnostic.
Expected<std::vector<int64_t>> constantShape(const Buffer& buffer, const std::string& function) {
  std::vector<int64_t> shape;
  for (const Expr& extent : buffer->shape) {
    const int64_t* value = asConstInt(extent);
    if (!value) return Diagnostic{"buffer " + buffer->name + " has no constant shape", function, 0, 0, ""};
    shape.push_back(*value);
  }
  return shape;
}
}  // namespace

Expected<std::string> exportGpuModule(const PrimFunc& f, const Target& target, const GpuModuleOptions& options) {
  std::vector<GpuModuleBuffer> buffers;
  GpuModuleFunction function{f, {}};
  for (const Buffer& param : f->params) {
    auto shape = constantShape(param, f->name);
    if (!shape) return shape.error();
    bool output = std::find(options.outputs.begin(), options.outputs.end(), param->name) != options.outputs.end();
    function.buffers.push_back(buffers.size());
    buffers.push_back({param->name, param->dtype, *shape, output, false, ""});
  }
  return exportGpuModule(std::move(buffers), {function}, target, f->name, options);
}

Expected<std::string> exportGpuModule(std::vector<GpuModuleBuffer> buffers, const std::vector<GpuModuleFunction>& functions,
                                      const Target& target, const std::string& title, const GpuModuleOptions& options) {
  std::vector<PrimFunc> funcs;
  for (const GpuModuleFunction& function : functions) funcs.push_back(function.func);
  auto source = generateGpuSource(funcs, target, title);
  if (!source) return source.error();
  // Each function's own scratch becomes a module workspace; its kernels take the function's
  // parameters, then those.
  std::vector<std::vector<size_t>> functionArgs;
  for (size_t i = 0; i < functions.size(); ++i) {
    std::vector<size_t> args = functions[i].buffers;
    for (const Buffer& workspace : source->workspaces[i]) {
      auto shape = constantShape(workspace, functions[i].func->name);
      if (!shape) return shape.error();
      args.push_back(buffers.size());
      buffers.push_back({functions[i].func->name + "." + workspace->name, workspace->dtype, *shape, false, true, ""});
    }
    functionArgs.push_back(std::move(args));
  }

  nlohmann::ordered_json module;
  module["format"] = "tessel-gpu-module";
  module["version"] = 1;
  module["target"] = target.toString();
  module["function"] = title;
  module["device"] = target.kind == TargetKind::Cuda ? "cuda" : "opencl";
  if (target.kind == TargetKind::Cuda) {
    std::string arch = target.gpuArch.empty() ? "sm_80" : target.gpuArch;
    auto compiled = compileWithNvrtc(source->code, arch, !options.ptx, title + ".cu");
    if (!compiled) return compiled.error();
    module["arch"] = arch;
    module["code_format"] = options.ptx ? "ptx" : "cubin";
    module["code"] = options.ptx ? compiled->ptx : base64(compiled->cubin);
  } else {
    module["code_format"] = "opencl-c";
    module["code"] = source->code;
  }
  module["source"] = source->code;
  nlohmann::ordered_json params = nlohmann::ordered_json::array();
  nlohmann::ordered_json outputs = nlohmann::ordered_json::array();
  nlohmann::ordered_json workspaces = nlohmann::ordered_json::array();
  for (const GpuModuleBuffer& buffer : buffers) {
    nlohmann::ordered_json param = {{"name", buffer.name}, {"dtype", buffer.dtype.toString()}, {"shape", buffer.shape}};
    if (!buffer.constantBytes.empty()) param["data"] = base64(buffer.constantBytes);
    params.push_back(param);
    if (buffer.output) outputs.push_back(buffer.name);
    if (buffer.workspace) workspaces.push_back(buffer.name);
  }
  module["params"] = params;
  module["outputs"] = outputs;
  if (!workspaces.empty()) module["workspaces"] = workspaces;
  if (options.flops > 0) module["flops"] = options.flops;
  nlohmann::ordered_json kernels = nlohmann::ordered_json::array();
  for (size_t k = 0; k < source->kernels.size(); ++k) {
    const KernelLaunch& launch = source->kernels[k];
    kernels.push_back({{"name", launch.name},
                       {"grid", {launch.grid[0], launch.grid[1], launch.grid[2]}},
                       {"block", {launch.block[0], launch.block[1], launch.block[2]}},
                       {"shared_bytes", 0},
                       {"args", functionArgs[source->kernelFunctions[k]]}});
  }
  module["kernels"] = kernels;
  return module.dump(1);
}

}  // namespace tessel
