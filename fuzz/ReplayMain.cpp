// Runs a fuzz harness over files and folders of inputs without libFuzzer: the normal build's
// regression tests (every seed and every crash ever found stays a test).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

void runOne(const std::filesystem::path& path) {
  std::ifstream stream(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(stream)), std::istreambuf_iterator<char>());
  if (!stream.good() && !stream.eof()) {
    std::fprintf(stderr, "%s: cannot read\n", path.c_str());
    std::exit(1);
  }
  // A copy in its own allocation, as libFuzzer hands inputs, so reads past the end are caught.
  std::vector<uint8_t> data(bytes.begin(), bytes.end());
  LLVMFuzzerTestOneInput(data.data(), data.size());
}

}  // namespace

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  int inputs = 0;
  for (int i = 1; i < argc; ++i) {
    fs::path argument(argv[i]);
    std::error_code error;
    if (fs::is_directory(argument, error)) {
      std::vector<fs::path> files;
      for (const auto& entry : fs::recursive_directory_iterator(argument))
        if (entry.is_regular_file() && entry.path().filename().string()[0] != '.') files.push_back(entry.path());
      std::sort(files.begin(), files.end());
      for (const fs::path& file : files) {
        runOne(file);
        ++inputs;
      }
    } else if (fs::exists(argument, error)) {
      runOne(argument);
      ++inputs;
    }
    // A missing folder is an empty one: regressions/NAME exists only once something crashed.
  }
  std::printf("%s: %d inputs ran without a crash\n", argc > 0 ? argv[0] : "replay", inputs);
  return 0;
}
