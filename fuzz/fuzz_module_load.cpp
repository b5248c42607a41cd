// Fuzzes GraphExecutor::load, the deployed runtime's loader: graph.json and params.bin (the
// params are checked against the file, storages allocated, kernels bound, params copied in).
//
// An input is graph.json, then optionally a line "--params.bin--" and the params.bin bytes.
// The module's library is FuzzKernels.cpp (symbols fuzz_kernel and fused_add), so a plan that
// passes every check is loaded, run and read back for real.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <numeric>
#include <string>
#include <unistd.h>

#include "fuzz/FuzzInput.h"
#include "runtime/Error.h"
#include "runtime/GraphExecutor.h"

namespace {

namespace fs = std::filesystem;

// One module folder per process, reused by every input.
const fs::path& moduleFolder() {
  static const fs::path folder = [] {
    fs::path path = fs::temp_directory_path() / ("tessel-fuzz-module-" + std::to_string(getpid()));
    fs::create_directories(path);
    fs::remove(path / "kernels.so");
    fs::create_symlink(TESSEL_FUZZ_KERNELS, path / "kernels.so");
    std::atexit([] {
      std::error_code ignored;
      fs::remove_all(folder, ignored);
    });
    return path;
  }();
  return folder;
}

void writeFile(const fs::path& path, const std::string& bytes) {
  std::ofstream stream(path, std::ios::binary | std::ios::trunc);
  stream.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessel;
  auto [graph, params] = fuzz::splitAt(fuzz::asString(data, size), "\n--params.bin--\n");
  // Storages are allocated as graph.json says; a legitimate model may ask for gigabytes, so
  // only plans that ask for little are loaded (the parser and its checks still see the rest).
  try {
    runtime::GraphPlan plan = runtime::parseGraphJson(graph, "graph.json");
    int64_t total = 0;
    for (const runtime::GraphStorage& storage : plan.storages) {
      if (storage.bytes > (int64_t(64) << 20) || (total += storage.bytes) > (int64_t(64) << 20)) return 0;
    }
  } catch (const runtime::Error&) {
    return 0;
  }
  const fs::path& folder = moduleFolder();
  writeFile(folder / "graph.json", graph);
  writeFile(folder / "params.bin", params);
  try {
    std::unique_ptr<runtime::GraphExecutor> executor = runtime::GraphExecutor::load(folder.string());
    executor->run();
    for (const std::string& output : executor->outputNames()) executor->getOutput(output);
  } catch (const runtime::Error&) {
  }
  return 0;
}
