// tessel lower OP [flags]: the loop IR of an operator after lowering, or after every step.
#include <iostream>

#include "app/cli/Commands.h"
#include "app/cli/OperatorSpec.h"
#include <fstream>

#include "compiler/codegen/c/CodeGenC.h"
#include "compiler/codegen/c/Nvrtc.h"
#include "compiler/codegen/llvm/CodeGenLLVM.h"
#include "compiler/export/GpuModuleExport.h"
#include "compiler/lower/Lower.h"
#include "core/ir/IRPrinter.h"

namespace tessel::cli {

namespace {
// --emit source|ptx|module for a GPU target.
int emitGpuCode(const OperatorSpec& spec, const PrimFunc& func, const std::string& emit, const CommandLine& line) {
  const Target& target = spec.target;
  if (emit == "source") {
    auto source = generateGpuSource(func, target);
    if (!source) {
      std::cerr << source.error().toString() << "\n";
      return kExitError;
    }
    std::cout << source->code;
    return kExitOk;
  }
  if (emit == "ptx") {
    if (target.kind != TargetKind::Cuda) {
      std::cerr << "tessel lower: --emit ptx needs --target cuda\n";
      return kExitError;
    }
    auto source = generateGpuSource(func, target);
    if (!source) {
      std::cerr << source.error().toString() << "\n";
      return kExitError;
    }
    auto compiled = compileWithNvrtc(source->code, target.gpuArch.empty() ? "sm_80" : target.gpuArch,
                                     /*wantCubin=*/false, func->name + ".cu");
    if (!compiled) {
      std::cerr << compiled.error().toString() << "\n";
      return kExitError;
    }
    std::cout << compiled->ptx;
    return kExitOk;
  }
  if (emit == "module") {
    std::string path = line.get("output");
    if (path.empty()) {
      std::cerr << "tessel lower: --emit module needs --output FILE.tgpu\n";
      return kExitError;
    }
    GpuModuleOptions options;
    for (const te::Tensor& output : spec.workload.outputs) options.outputs.push_back(output.name());
    options.flops = spec.workload.flops;
    options.ptx = line.has("ptx");
    auto module = exportGpuModule(func, target, options);
    if (!module) {
      std::cerr << module.error().toString() << "\n";
      return kExitError;
    }
    std::ofstream file(path, std::ios::binary);
    file << *module;
    if (!file.flush()) {
      std::cerr << "tessel lower: cannot write " << path << "\n";
      return kExitError;
    }
    std::cerr << "wrote " << path << " (" << spec.workload.name << " for " << target.toString() << ")\n";
    return kExitOk;
  }
  std::cerr << "tessel lower: --emit must be ir, source, ptx or module for a GPU target, got '" << emit << "'\n";
  return kExitError;
}
}  // namespace

int runLower(const std::vector<std::string>& args) {
  OperatorCommand command;
  std::vector<FlagSpec> flags = {
      {"all-steps", "print the IR after every lowering step", false, ""},
      {"emit",
       "what to print: ir (loop IR), llvm (optimized LLVM IR) or asm; for a GPU target: ir, source (CUDA or "
       "OpenCL C), ptx (CUDA, with NVRTC) or module (a .tgpu file for tessel-deploy-run, with --output)",
       true, "ir"},
      {"target", "where the code runs: llvm (this CPU, the default), opencl, or \"cuda -arch=sm_90\"", true, ""},
      {"output", "with --emit module: the .tgpu file to write", true, ""},
      {"ptx", "with --emit module for CUDA: embed PTX, which the driver compiles for the GPU it finds, "
              "instead of a cubin for the target's architecture", false, ""}};
  if (auto done = parseOperatorCommand(
          "lower", args, flags, "Prints the loop IR of the operator under its default schedule (or --schedule FILE).\n",
          &command))
    return *done;
  const CommandLine& line = command.line;
  const Workload& workload = command.spec->workload;
  const Target& target = command.spec->target;
  auto lowered = lower(*command.schedule, workload.args(), workload.name, target);
  if (!lowered) {
    std::cerr << command.locate(lowered.error()).toString() << "\n";
    return kExitError;
  }
  std::string emit = line.get("emit");
  if (target.kind != TargetKind::Cpu && emit != "ir") return emitGpuCode(*command.spec, lowered->func, emit, line);
  if (emit != "ir" && emit != "llvm" && emit != "asm") {
    std::cerr << "tessel lower: --emit must be ir, llvm or asm, got '" << emit << "'\n";
    return kExitError;
  }
  if (emit == "llvm") {
    std::cout << emitLLVMIR({lowered->func}, hostTarget());
    return kExitOk;
  }
  if (emit == "asm") {
    std::cout << emitAssembly({lowered->func}, hostTarget());
    return kExitOk;
  }
  if (line.has("all-steps")) {
    for (auto& step : lowered->steps)
      std::cout << "// ---- after " << step.name << " (" << step.milliseconds << " ms)\n" << toString(step.func) << "\n";
  } else {
    std::cout << toString(lowered->func);
  }
  return kExitOk;
}

}  // namespace tessel::cli
