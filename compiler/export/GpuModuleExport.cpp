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
}  // namespace

Expected<std::string> exportGpuModule(const PrimFunc& f, const Target& target, const GpuModuleOptions& options) {
  auto source = generateGpuSource(f, target);
  if (!source) return source.error();
  nlohmann::ordered_json module;
  module["format"] = "tessel-gpu-module";
  module["version"] = 1;
  module["target"] = target.toString();
  module["function"] = f->name;
  module["device"] = target.kind == TargetKind::Cuda ? "cuda" : "opencl";
  if (target.kind == TargetKind::Cuda) {
    std::string arch = target.gpuArch.empty() ? "sm_80" : target.gpuArch;
    auto compiled = compileWithNvrtc(source->code, arch, !options.ptx, f->name + ".cu");
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
  std::vector<Buffer> buffers = f->params;
  for (const Buffer& workspace : source->workspaces) buffers.push_back(workspace);
  for (const Buffer& buffer : buffers) {
    nlohmann::ordered_json shape = nlohmann::ordered_json::array();
    for (const Expr& extent : buffer->shape) {
      const int64_t* value = asConstInt(extent);
      if (!value) return Diagnostic{"parameter " + buffer->name + " has no constant shape", f->name, 0, 0, ""};
      shape.push_back(*value);
    }
    params.push_back({{"name", buffer->name}, {"dtype", buffer->dtype.toString()}, {"shape", shape}});
  }
  module["params"] = params;
  module["outputs"] = options.outputs;
  if (!source->workspaces.empty()) {
    nlohmann::ordered_json workspaces = nlohmann::ordered_json::array();
    for (const Buffer& workspace : source->workspaces) workspaces.push_back(workspace->name);
    module["workspaces"] = workspaces;
  }
  if (options.flops > 0) module["flops"] = options.flops;
  nlohmann::ordered_json kernels = nlohmann::ordered_json::array();
  for (const KernelLaunch& launch : source->kernels) {
    nlohmann::ordered_json args = nlohmann::ordered_json::array();
    for (size_t i = 0; i < buffers.size(); ++i) args.push_back(i);
    kernels.push_back({{"name", launch.name},
                       {"grid", {launch.grid[0], launch.grid[1], launch.grid[2]}},
                       {"block", {launch.block[0], launch.block[1], launch.block[2]}},
                       {"shared_bytes", 0},
                       {"args", args}});
  }
  module["kernels"] = kernels;
  return module.dump(1);
}

}  // namespace tessel
