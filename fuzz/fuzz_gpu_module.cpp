// Fuzzes GpuModule::parse, what tessel-deploy-run --gpu-module reads first: a .tgpu file's JSON
// (params, outputs, workspaces, kernels and their launch shapes, base64 code). Every field is
// checked before a runner sees it, so the parsed module's indices and sizes are then used as a
// runner would use them, to show that a module that parses is one a runner can trust.
#include "fuzz/FuzzInput.h"
#include "runtime/Error.h"
#include "runtime/GpuModule.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessel;
  try {
    runtime::GpuModule module = runtime::GpuModule::parse(fuzz::asString(data, size), "fuzz.tgpu");
    volatile int64_t total = 0;
    for (const runtime::GpuModuleParam& param : module.params) total = total + param.byteSize();
    for (const runtime::GpuKernelLaunch& kernel : module.kernels)
      for (size_t arg : kernel.args) total = total + module.params.at(arg).numElements();
    for (const std::string& name : module.inputNames()) total = total + int64_t(module.paramIndex(name));
    for (const std::string& name : module.outputNames()) total = total + int64_t(module.paramIndex(name));
  } catch (const runtime::Error&) {
    // A clear error is the expected outcome for a malformed file.
  }
  return 0;
}
