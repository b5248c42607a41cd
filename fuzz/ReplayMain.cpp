// Runs a fuzz harness without libFuzzer, in the normal build:
//
//   fuzz_replay_NAME INPUT...                    every file (folders recursively), once
//   fuzz_replay_NAME --mutate-seconds N [--dict FILE] [--seed S] [--crash-dir DIR] INPUT...
//
// The first form is the regression test: every seed and every crash ever found stays a test.
// The second then keeps mutating the inputs for N seconds (bit flips, interesting integers,
// dictionary tokens, copies, insertions, deletions, splices of two inputs) and runs each
// mutant: what CI affords in place of the libFuzzer build (scripts/fuzz.sh), with neither
// coverage guidance nor sanitizers, but enough to catch a parser that crashes, throws or
// hangs on a malformed file. A crashing or hanging mutant is written to the crash folder
// before the process dies, so that it can become a regression input.
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;

/// The mutant being run, where the fatal-signal handler can write it out.
std::vector<uint8_t> gCurrent;
char gCrashPath[4096] = "";

constexpr unsigned kSecondsPerInput = 20;  // a mutant running longer counts as a hang

void writeAll(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t written = ::write(fd, p, size);
    if (written <= 0) return;
    p += written;
    size -= size_t(written);
  }
}

/// Async-signal-safe: saves the mutant, says where, and dies of the same signal.
extern "C" void onFatalSignal(int signal) {
  if (gCrashPath[0]) {
    int fd = ::open(gCrashPath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      writeAll(fd, gCurrent.data(), gCurrent.size());
      ::close(fd);
    }
    const char* what = signal == SIGALRM ? "\nfuzz: a mutant hung; it is saved as " : "\nfuzz: a mutant crashed; it is saved as ";
    writeAll(2, what, std::strlen(what));
    writeAll(2, gCrashPath, std::strlen(gCrashPath));
    writeAll(2, "\n", 1);
  }
  std::signal(signal == SIGALRM ? SIGABRT : signal, SIG_DFL);
  std::raise(signal == SIGALRM ? SIGABRT : signal);
}

std::vector<uint8_t> readFile(const fs::path& path) {
  std::ifstream stream(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(stream)), std::istreambuf_iterator<char>());
  if (!stream.good() && !stream.eof()) {
    std::fprintf(stderr, "%s: cannot read\n", path.c_str());
    std::exit(1);
  }
  return std::vector<uint8_t>(bytes.begin(), bytes.end());
}

void runOne(const std::vector<uint8_t>& input) {
  // A copy in its own allocation, as libFuzzer hands inputs, so reads past the end are caught.
  gCurrent = input;
  std::vector<uint8_t> data(input);
  LLVMFuzzerTestOneInput(data.data(), data.size());
}

/// The tokens of a libFuzzer dictionary: one "quoted string" per line (\\, \" and \xHH escapes),
/// optionally after a name and '='; '#' starts a comment.
std::vector<std::string> readDictionary(const fs::path& path) {
  std::vector<std::string> tokens;
  std::ifstream stream(path);
  std::string line;
  while (std::getline(stream, line)) {
    size_t open = line.find('"');
    size_t hash = line.find('#');
    if (open == std::string::npos || (hash != std::string::npos && hash < open)) continue;
    std::string token;
    for (size_t i = open + 1; i < line.size() && line[i] != '"'; ++i) {
      if (line[i] == '\\' && i + 1 < line.size()) {
        char next = line[++i];
        if (next == 'x' && i + 2 < line.size()) {
          token += char(std::strtol(line.substr(i + 1, 2).c_str(), nullptr, 16));
          i += 2;
        } else {
          token += next;
        }
      } else {
        token += line[i];
      }
    }
    if (!token.empty()) tokens.push_back(token);
  }
  return tokens;
}

class Mutator {
public:
  Mutator(uint64_t seed, std::vector<std::string> dictionary, size_t maxSize)
      : random_(seed), dictionary_(std::move(dictionary)), maxSize_(maxSize) {}

  std::vector<uint8_t> mutate(const std::vector<std::vector<uint8_t>>& corpus) {
    std::vector<uint8_t> data = corpus[pick(corpus.size())];
    int steps = 1 + int(pick(4));
    for (int s = 0; s < steps; ++s) mutateOnce(data, corpus);
    if (data.size() > maxSize_) data.resize(maxSize_);
    return data;
  }

private:
  size_t pick(size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(random_); }

  void insert(std::vector<uint8_t>& data, const std::string& bytes) {
    size_t at = pick(data.size() + 1);
    data.insert(data.begin() + std::ptrdiff_t(at), bytes.begin(), bytes.end());
  }

  void mutateOnce(std::vector<uint8_t>& data, const std::vector<std::vector<uint8_t>>& corpus) {
    // Integers at the edges of their types, written over the input little-endian.
    static const int64_t kInteresting[] = {0, 1, -1, 16, 32, 64, 100, 127, 128, 255, 256, 1024, 4096, 32767,
                                           32768, 65535, 65536, 0x7FFFFFFF, int64_t(0x80000000u), 0xFFFFFFFF,
                                           INT64_MAX, INT64_MIN};
    switch (pick(data.empty() ? 3 : 10)) {
      case 0:
        if (!dictionary_.empty()) insert(data, dictionary_[pick(dictionary_.size())]);
        return;
      case 1: {
        const std::vector<uint8_t>& other = corpus[pick(corpus.size())];
        size_t from = pick(other.size() + 1), length = pick(other.size() - from + 1);
        insert(data, std::string(other.begin() + std::ptrdiff_t(from), other.begin() + std::ptrdiff_t(from + length)));
        return;
      }
      case 2: {
        std::string digits = std::to_string(kInteresting[pick(std::size(kInteresting))]);
        insert(data, digits);
        return;
      }
      case 3: data[pick(data.size())] ^= uint8_t(1u << pick(8)); return;
      case 4: data[pick(data.size())] = uint8_t(pick(256)); return;
      case 5: {
        int64_t value = kInteresting[pick(std::size(kInteresting))];
        size_t width = size_t(1) << pick(4), at = pick(data.size());
        for (size_t b = 0; b < width && at + b < data.size(); ++b) data[at + b] = uint8_t(uint64_t(value) >> (8 * b));
        return;
      }
      case 6: {  // delete a range
        size_t from = pick(data.size()), length = 1 + pick(std::min<size_t>(data.size() - from, 64));
        data.erase(data.begin() + std::ptrdiff_t(from), data.begin() + std::ptrdiff_t(from + length));
        return;
      }
      case 7: {  // duplicate a range in place
        size_t from = pick(data.size()), length = 1 + pick(std::min<size_t>(data.size() - from, 64));
        insert(data, std::string(data.begin() + std::ptrdiff_t(from), data.begin() + std::ptrdiff_t(from + length)));
        return;
      }
      case 8: data.resize(pick(data.size())); return;  // truncate
      default: {  // swap two bytes
        size_t a = pick(data.size()), b = pick(data.size());
        std::swap(data[a], data[b]);
        return;
      }
    }
  }

  std::mt19937_64 random_;
  std::vector<std::string> dictionary_;
  size_t maxSize_;
};

[[noreturn]] void usage(const char* message) {
  std::fprintf(stderr,
               "%s\nusage: fuzz_replay_NAME [--mutate-seconds N [--dict FILE] [--seed S] [--crash-dir DIR]] "
               "INPUT...\n",
               message);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  double mutateSeconds = 0;
  // A new seed each run explores new mutants; it is printed, and a crash's file is named by it.
  uint64_t seed = uint64_t(std::chrono::system_clock::now().time_since_epoch().count()) ^ uint64_t(::getpid());
  fs::path dictionary, crashDirectory = fs::current_path();
  std::vector<fs::path> arguments;
  for (int i = 1; i < argc; ++i) {
    std::string argument = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage((argument + " needs a value").c_str());
      return argv[++i];
    };
    if (argument == "--mutate-seconds") {
      mutateSeconds = std::atof(value().c_str());
      if (!(mutateSeconds > 0)) usage("--mutate-seconds takes a number of seconds above 0");
    } else if (argument == "--dict") {
      dictionary = value();
    } else if (argument == "--seed") {
      seed = std::strtoull(value().c_str(), nullptr, 10);
    } else if (argument == "--crash-dir") {
      crashDirectory = value();
    } else if (argument.rfind("--", 0) == 0) {
      usage(("unknown option " + argument).c_str());
    } else {
      arguments.push_back(argument);
    }
  }

  std::vector<fs::path> files;
  for (const fs::path& argument : arguments) {
    std::error_code error;
    if (fs::is_directory(argument, error)) {
      std::vector<fs::path> found;
      for (const auto& entry : fs::recursive_directory_iterator(argument))
        if (entry.is_regular_file() && entry.path().filename().string()[0] != '.') found.push_back(entry.path());
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::exists(argument, error)) {
      files.push_back(argument);
    }
    // A missing folder is an empty one: regressions/NAME exists only once something crashed.
  }

  std::vector<std::vector<uint8_t>> corpus;
  for (const fs::path& file : files) {
    corpus.push_back(readFile(file));
    runOne(corpus.back());
  }
  const char* program = argc > 0 ? argv[0] : "replay";
  std::printf("%s: %zu inputs ran without a crash\n", program, corpus.size());
  if (mutateSeconds == 0) return 0;
  if (corpus.empty()) usage("--mutate-seconds needs at least one input to mutate");

  std::vector<std::string> tokens;
  if (!dictionary.empty()) {
    if (!fs::exists(dictionary)) usage(("no dictionary " + dictionary.string()).c_str());
    tokens = readDictionary(dictionary);
  }
  size_t largest = 0;
  for (const auto& input : corpus) largest = std::max(largest, input.size());
  Mutator mutator(seed, tokens, std::max<size_t>(4096, 2 * largest));
  std::error_code created;
  fs::create_directories(crashDirectory, created);
  std::printf("%s: mutating for %.0f s with seed %llu\n", program, mutateSeconds, static_cast<unsigned long long>(seed));
  std::fflush(stdout);
  std::string crashPath = (crashDirectory / ("crash-" + fs::path(program).filename().string() + "-seed" +
                                              std::to_string(seed)))
                              .string();
  std::snprintf(gCrashPath, sizeof gCrashPath, "%s", crashPath.c_str());
  for (int signal : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGALRM}) std::signal(signal, onFatalSignal);

  auto start = std::chrono::steady_clock::now();
  auto deadline = start + std::chrono::duration<double>(mutateSeconds);
  uint64_t runs = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    std::vector<uint8_t> mutant = mutator.mutate(corpus);
    ::alarm(kSecondsPerInput);
    runOne(mutant);
    ::alarm(0);
    ++runs;
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%s: %llu mutants of %zu inputs (%zu dictionary tokens, seed %llu) ran in %.0f s without a crash\n",
              program, static_cast<unsigned long long>(runs), corpus.size(), tokens.size(),
              static_cast<unsigned long long>(seed), seconds);
  return 0;
}
