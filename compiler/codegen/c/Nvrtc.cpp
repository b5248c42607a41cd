// NVRTC through dlopen (see Nvrtc.h). The few declarations needed are written here so the
// toolkit's headers are not needed to build.
#include "compiler/codegen/c/Nvrtc.h"

#include <dlfcn.h>

#include <cstddef>
#include <mutex>
#include <vector>

namespace tessel {

namespace {
using NvrtcProgram = void*;
using NvrtcResult = int;
constexpr NvrtcResult kNvrtcSuccess = 0;

struct NvrtcApi {
  void* library = nullptr;
  std::string path;
  std::string tried;
  const char* (*getErrorString)(NvrtcResult) = nullptr;
  NvrtcResult (*createProgram)(NvrtcProgram*, const char*, const char*, int, const char* const*,
                               const char* const*) = nullptr;
  NvrtcResult (*destroyProgram)(NvrtcProgram*) = nullptr;
  NvrtcResult (*compileProgram)(NvrtcProgram, int, const char* const*) = nullptr;
  NvrtcResult (*getPTXSize)(NvrtcProgram, size_t*) = nullptr;
  NvrtcResult (*getPTX)(NvrtcProgram, char*) = nullptr;
  NvrtcResult (*getCUBINSize)(NvrtcProgram, size_t*) = nullptr;
  NvrtcResult (*getCUBIN)(NvrtcProgram, char*) = nullptr;
  NvrtcResult (*getProgramLogSize)(NvrtcProgram, size_t*) = nullptr;
  NvrtcResult (*getProgramLog)(NvrtcProgram, char*) = nullptr;
};

template <class F>
bool resolve(void* library, const char* symbol, F* out) {
  *out = reinterpret_cast<F>(dlsym(library, symbol));
  return *out != nullptr;
}

// Loads NVRTC once: TESSEL_NVRTC names the library if set; then the toolkit's usual place
// and the loader's search path, newest first.
const NvrtcApi& nvrtc() {
  static NvrtcApi api;
  static std::once_flag once;
  std::call_once(once, [] {
    std::vector<std::string> candidates;
    if (const char* chosen = std::getenv("TESSEL_NVRTC")) candidates.push_back(chosen);
    for (const char* name : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"}) {
      candidates.push_back(std::string("/usr/local/cuda/lib64/") + name);
      candidates.push_back(name);
    }
    for (const std::string& candidate : candidates) {
      api.tried += (api.tried.empty() ? "" : ", ") + candidate;
      void* library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!library) continue;
      bool ok = resolve(library, "nvrtcGetErrorString", &api.getErrorString) &&
                resolve(library, "nvrtcCreateProgram", &api.createProgram) &&
                resolve(library, "nvrtcDestroyProgram", &api.destroyProgram) &&
                resolve(library, "nvrtcCompileProgram", &api.compileProgram) &&
                resolve(library, "nvrtcGetPTXSize", &api.getPTXSize) && resolve(library, "nvrtcGetPTX", &api.getPTX) &&
                resolve(library, "nvrtcGetCUBINSize", &api.getCUBINSize) &&
                resolve(library, "nvrtcGetCUBIN", &api.getCUBIN) &&
                resolve(library, "nvrtcGetProgramLogSize", &api.getProgramLogSize) &&
                resolve(library, "nvrtcGetProgramLog", &api.getProgramLog);
      if (!ok) {
        dlclose(library);
        continue;
      }
      api.library = library;
      api.path = candidate;
      return;
    }
  });
  return api;
}

std::string programLog(const NvrtcApi& api, NvrtcProgram program) {
  size_t size = 0;
  if (api.getProgramLogSize(program, &size) != kNvrtcSuccess || size <= 1) return "";
  std::string log(size, '\0');
  if (api.getProgramLog(program, log.data()) != kNvrtcSuccess) return "";
  log.resize(size - 1);
  return log;
}
}  // namespace

bool nvrtcAvailable(std::string* where) {
  const NvrtcApi& api = nvrtc();
  if (where) *where = api.library ? api.path : api.tried;
  return api.library != nullptr;
}

Expected<NvrtcOutput> compileWithNvrtc(const std::string& source, const std::string& arch, bool wantCubin,
                                       const std::string& name) {
  const NvrtcApi& api = nvrtc();
  if (!api.library)
    return Diagnostic{"NVRTC (the CUDA runtime compiler) is not installed: tried " + api.tried, name, 0, 0,
                      "install the CUDA toolkit in /usr/local/cuda, or set TESSEL_NVRTC to libnvrtc.so's path"};
  if (arch.rfind("sm_", 0) != 0 || arch.size() < 5)
    return Diagnostic{"'" + arch + "' is not a GPU architecture", name, 0, 0, "use -arch=sm_80, sm_90, ..."};
  NvrtcProgram program = nullptr;
  if (NvrtcResult r = api.createProgram(&program, source.c_str(), name.c_str(), 0, nullptr, nullptr); r != kNvrtcSuccess)
    return Diagnostic{std::string("nvrtcCreateProgram failed: ") + api.getErrorString(r), name, 0, 0, ""};
  // sm_XX gives a cubin for exactly that architecture; compute_XX gives PTX only.
  std::string archOption = "--gpu-architecture=" + (wantCubin ? arch : "compute_" + arch.substr(3));
  std::vector<const char*> options = {archOption.c_str(), "--std=c++17", "-default-device"};
  NvrtcResult compiled = api.compileProgram(program, int(options.size()), options.data());
  NvrtcOutput output;
  output.log = programLog(api, program);
  if (compiled != kNvrtcSuccess) {
    api.destroyProgram(&program);
    return Diagnostic{std::string("NVRTC could not compile the CUDA source for ") + arch + " (" +
                          api.getErrorString(compiled) + "):\n" + output.log,
                      name, 0, 0, ""};
  }
  size_t size = 0;
  if (api.getPTXSize(program, &size) == kNvrtcSuccess && size > 0) {
    output.ptx.resize(size);
    api.getPTX(program, output.ptx.data());
    if (!output.ptx.empty() && output.ptx.back() == '\0') output.ptx.pop_back();
  }
  if (wantCubin) {
    size = 0;
    if (NvrtcResult r = api.getCUBINSize(program, &size); r != kNvrtcSuccess || size == 0) {
      api.destroyProgram(&program);
      return Diagnostic{"NVRTC produced no cubin for " + arch, name, 0, 0, ""};
    }
    output.cubin.resize(size);
    api.getCUBIN(program, output.cubin.data());
  }
  api.destroyProgram(&program);
  return output;
}

}  // namespace tessel
