// tessel-compare-blas: Tessel's matmul against OpenBLAS's sgemm in one process. The two
// run in alternating blocks of 0.2 s (with the FMA peak probe as a third), and every
// figure is a median over blocks, the verdict the median of per-round ratios: on a shared
// or virtual machine whose speed drifts and is throttled in bursts, only side-by-side
// blocks compare. OpenBLAS is loaded with dlopen, so Tessel does not link against it.
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <random>
#include <sstream>

#include "app/cli/CommandLine.h"
#include "compiler/lower/Build.h"
#include "compiler/ops/Matmul.h"
#include "compiler/schedule/TraceText.h"
#include "runtime/NDArray.h"
#include "runtime/PeakFlops.h"
#include "runtime/ThreadPool.h"
#include "runtime/Timer.h"

using namespace tessel;

namespace {

// The CBLAS entry points used, resolved from libopenblas at run time.
struct OpenBlas {
  using Sgemm = void (*)(int order, int transA, int transB, int m, int n, int k, float alpha, const float* a,
                         int lda, const float* b, int ldb, float beta, float* c, int ldc);
  Sgemm sgemm = nullptr;
  void (*setNumThreads)(int) = nullptr;
  char* (*coreName)() = nullptr;
  std::string error;

  OpenBlas() {
    void* library = nullptr;
    for (const char* name : {"libopenblas.so.0", "libopenblasp.so.0", "libopenblas.so"})
      if ((library = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
    if (!library) {
      error = "OpenBLAS is not installed (apt-get install libopenblas0-pthread)";
      return;
    }
    sgemm = reinterpret_cast<Sgemm>(dlsym(library, "cblas_sgemm"));
    setNumThreads = reinterpret_cast<void (*)(int)>(dlsym(library, "openblas_set_num_threads"));
    coreName = reinterpret_cast<char* (*)()>(dlsym(library, "openblas_get_corename"));
    if (!sgemm || !setNumThreads) error = "the OpenBLAS library found lacks cblas_sgemm";
  }
};

constexpr int kRowMajor = 101, kNoTrans = 111;
constexpr double kBlockSeconds = 0.2;

// Runs `call` back to back for one block; returns GFLOP/s.
double blockGflops(const std::function<void()>& call, double flops) {
  auto start = std::chrono::steady_clock::now();
  int64_t calls = 0;
  double elapsed = 0;
  while (elapsed < kBlockSeconds || calls == 0) {
    call();
    ++calls;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return flops * double(calls) / elapsed * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::vector<cli::FlagSpec> specs = {{"size", "M = N = K", true, "1024"},
                                      {"threads", "threads for both", true, "2"},
                                      {"rounds", "alternating rounds (each one block of each)", true, "15"},
                                      {"schedule", "schedule text file instead of Tessel's default", true, ""}};
  cli::CommandLine line;
  if (auto error = cli::CommandLine::parse(args, specs, &line)) {
    std::cerr << "tessel-compare-blas: " << *error << "\n";
    return 2;
  }
  if (line.helpRequested()) {
    std::cout << cli::usage("tessel-compare-blas [options]", specs)
              << "\nCompares Tessel's matmul with OpenBLAS's cblas_sgemm in alternating 0.2 s blocks.\n"
                 "Set OPENBLAS_CORETYPE to choose OpenBLAS's kernel (bench/compare_blas.sh picks its best).\n";
    return 0;
  }
  int64_t size, threads, rounds;
  for (auto [name, out] : {std::pair{"size", &size}, std::pair{"threads", &threads}, std::pair{"rounds", &rounds}})
    if (auto error = line.getInt(name, out)) {
      std::cerr << "tessel-compare-blas: " << *error << "\n";
      return 2;
    }
  OpenBlas blas;
  if (!blas.error.empty()) {
    std::cerr << "tessel-compare-blas: " << blas.error << "\n";
    return 2;
  }
  blas.setNumThreads(int(threads));
  runtime::ThreadPool::global().setNumThreads(int(threads));

  Target target = hostTarget();
  Workload w = matmul(size, size, size, DataType::float32(), target);
  Expected<Schedule> schedule = defaultMatmulSchedule(w, target);
  if (std::string path = line.get("schedule"); !path.empty()) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    auto trace = parseTraceText(text.str());
    schedule = trace ? Schedule::replay(w.outputs, *trace) : Expected<Schedule>(trace.error());
  }
  if (!schedule) {
    std::cerr << schedule.error().toString() << "\n";
    return 2;
  }
  auto built = build(*schedule, w.args(), w.name);
  if (!built) {
    std::cerr << built.error().toString() << "\n";
    return 2;
  }

  std::mt19937 rng(42);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<int64_t> shape = {size, size};
  auto a = runtime::NDArray::empty(shape, runtime::DataType::float32());
  auto b = runtime::NDArray::empty(shape, runtime::DataType::float32());
  auto c = runtime::NDArray::empty(shape, runtime::DataType::float32());
  auto reference = runtime::NDArray::empty(shape, runtime::DataType::float32());
  for (auto* array : {&a, &b})
    for (float& v : array->values<float>()) v = uniform(rng);
  std::vector<runtime::Value> tesselArgs = {a, b, c};
  int n = int(size);
  auto runTessel = [&] { built->function.callPacked(tesselArgs); };
  auto runBlas = [&] {
    blas.sgemm(kRowMajor, kNoTrans, kNoTrans, n, n, n, 1.0f, a.dataAs<float>(), n, b.dataAs<float>(), n, 0.0f,
               reference.dataAs<float>(), n);
  };

  // Both must compute the same thing before either is timed.
  runTessel();
  runBlas();
  double worst = 0;
  for (int64_t i = 0; i < size * size; ++i) {
    float expected = reference.dataAs<float>()[i], got = c.dataAs<float>()[i];
    worst = std::max(worst, std::fabs(double(got) - expected) / (1e-3 + 1e-3 * std::fabs(double(expected))));
  }
  if (!(worst <= 1)) {
    std::cerr << "tessel-compare-blas: Tessel and OpenBLAS disagree (worst error " << worst << " of tolerance)\n";
    return 3;
  }

  runtime::PeakProbe probe(runtime::ThreadPool::global(), runtime::bestFmaKernel());
  double flops = 2.0 * double(size) * double(size) * double(size);
  std::vector<double> tesselRates, blasRates, peakRates, ratios, fractions;
  blockGflops(runTessel, flops);  // warm-up
  blockGflops(runBlas, flops);
  for (int64_t round = 0; round < rounds; ++round) {
    double tessel = blockGflops(runTessel, flops);
    double openblas = blockGflops(runBlas, flops);
    double peak = probe.sustainedGflops(kBlockSeconds);
    tesselRates.push_back(tessel);
    blasRates.push_back(openblas);
    peakRates.push_back(peak);
    ratios.push_back(tessel / openblas);
    fractions.push_back(tessel / peak);
  }
  std::printf("matmul %lldx%lldx%lld float32, %lld threads, %lld rounds of alternating 0.2 s blocks\n",
              (long long)size, (long long)size, (long long)size, (long long)threads, (long long)rounds);
  std::printf("openblas_kernel=%s\n", blas.coreName ? blas.coreName() : "unknown");
  std::printf("tessel_gflops=%.2f\nopenblas_gflops=%.2f\npeak_gflops=%.2f\n", runtime::median(tesselRates),
              runtime::median(blasRates), runtime::median(peakRates));
  std::printf("ratio_tessel_over_openblas=%.3f\ntessel_fraction_of_peak=%.3f\n", runtime::median(ratios),
              runtime::median(fractions));
  return 0;
}
