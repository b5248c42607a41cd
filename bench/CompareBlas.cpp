// tessel-compare-blas: Tessel's matmul (or dense) against OpenBLAS's sgemm (sgemv for a
// dense layer of batch 1, what OpenBLAS itself would use for a matrix-vector product) in one
// process. The two
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
#include "tuner/records/AppliedRecords.h"

using namespace tessel;

namespace {

// The CBLAS entry points used, resolved from libopenblas at run time.
struct OpenBlas {
  using Sgemm = void (*)(int order, int transA, int transB, int m, int n, int k, float alpha, const float* a,
                         int lda, const float* b, int ldb, float beta, float* c, int ldc);
  using Sgemv = void (*)(int order, int trans, int m, int n, float alpha, const float* a, int lda, const float* x,
                         int incx, float beta, float* y, int incy);
  Sgemm sgemm = nullptr;
  Sgemv sgemv = nullptr;
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
    sgemv = reinterpret_cast<Sgemv>(dlsym(library, "cblas_sgemv"));
    setNumThreads = reinterpret_cast<void (*)(int)>(dlsym(library, "openblas_set_num_threads"));
    coreName = reinterpret_cast<char* (*)()>(dlsym(library, "openblas_get_corename"));
    if (!sgemm || !sgemv || !setNumThreads) error = "the OpenBLAS library found lacks cblas_sgemm or cblas_sgemv";
  }
};

constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;
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
  std::vector<cli::FlagSpec> specs = {
      {"op", "matmul (C = A B) or dense (C = A W^T, a fully connected layer)", true, "matmul"},
      {"size", "M = N = K, unless --m, --n, --k say otherwise", true, "1024"},
      {"m", "rows of A (the batch of a dense layer)", true, ""},
      {"n", "columns of C (the outputs of a dense layer)", true, ""},
      {"k", "the reduction (the inputs of a dense layer)", true, ""},
      {"threads", "threads for both", true, "2"},
      {"rounds", "alternating rounds (each one block of each)", true, "15"},
      {"schedule", "schedule text file instead of Tessel's default", true, ""},
      {"tuning-records", "tuning records (tessel tune) whose best schedule for this operator replaces the default",
       true, ""}};
  cli::CommandLine line;
  if (auto error = cli::CommandLine::parse(args, specs, &line)) {
    std::cerr << "tessel-compare-blas: " << *error << "\n";
    return 2;
  }
  if (line.helpRequested()) {
    std::cout << cli::usage("tessel-compare-blas [options]", specs)
              << "\nCompares Tessel's matmul or dense with OpenBLAS's cblas_sgemm (cblas_sgemv for a dense layer of\n"
                 "batch 1) in alternating 0.2 s blocks.\n"
                 "Set OPENBLAS_CORETYPE to choose OpenBLAS's kernel (bench/compare_blas.sh picks its best).\n";
    return 0;
  }
  int64_t size, threads, rounds;
  for (auto [name, out] : {std::pair{"size", &size}, std::pair{"threads", &threads}, std::pair{"rounds", &rounds}})
    if (auto error = line.getInt(name, out)) {
      std::cerr << "tessel-compare-blas: " << *error << "\n";
      return 2;
    }
  int64_t m = size, n = size, k = size;
  for (auto [name, out] : {std::pair{"m", &m}, std::pair{"n", &n}, std::pair{"k", &k}})
    if (line.has(name))
      if (auto error = line.getInt(name, out)) {
        std::cerr << "tessel-compare-blas: " << *error << "\n";
        return 2;
      }
  const std::string op = line.get("op");
  if (op != "matmul" && op != "dense") {
    std::cerr << "tessel-compare-blas: --op must be matmul or dense\n";
    return 2;
  }
  const bool isDense = op == "dense";
  OpenBlas blas;
  if (!blas.error.empty()) {
    std::cerr << "tessel-compare-blas: " << blas.error << "\n";
    return 2;
  }
  blas.setNumThreads(int(threads));
  runtime::ThreadPool::global().setNumThreads(int(threads));

  Target target = hostTarget();
  Workload w = isDense ? dense(m, n, k, DataType::float32(), target) : matmul(m, n, k, DataType::float32(), target);
  Expected<Schedule> schedule = defaultMatmulSchedule(w, target);
  std::string scheduleSource = "default";
  if (std::string path = line.get("schedule"); !path.empty()) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    auto trace = parseTraceText(text.str());
    schedule = trace ? Schedule::replay(w.outputs, *trace) : Expected<Schedule>(trace.error());
    scheduleSource = path;
  } else if (std::string path = line.get("tuning-records"); !path.empty()) {
    auto applied = tuner::loadTuningRecords(path, target);
    if (!applied) {
      std::cerr << applied.error().toString() << "\n";
      return 2;
    }
    if (auto tuned = tuner::tunedOperatorSchedule(*applied, w)) {
      schedule = *tuned;
      scheduleSource = "tuned (" + path + ")";
    }
    for (const std::string& report : tuner::describeAppliedRecords(*applied)) std::cerr << report << "\n";
  }
  auto built = build(*schedule, w.args(), w.name);
  if (!built) {
    std::cerr << built.error().toString() << "\n";
    return 2;
  }

  std::mt19937 rng(42);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  auto array = [](int64_t rows, int64_t columns) {
    return runtime::NDArray::empty({rows, columns}, runtime::DataType::float32());
  };
  auto a = array(m, k);
  auto b = isDense ? array(n, k) : array(k, n);
  auto c = array(m, n);
  auto reference = array(m, n);
  for (auto* filled : {&a, &b})
    for (float& v : filled->values<float>()) v = uniform(rng);
  std::vector<runtime::Value> tesselArgs = {a, b, c};
  auto runTessel = [&] { built->function.callPacked(tesselArgs); };
  const int M = int(m), N = int(n), K = int(k);
  std::function<void()> runBlas;
  if (isDense && m == 1) {
    // y = W x: OpenBLAS's matrix-vector kernel, not a degenerate matrix product.
    runBlas = [&] { blas.sgemv(kRowMajor, kNoTrans, N, K, 1.0f, b.dataAs<float>(), K, a.dataAs<float>(), 1, 0.0f,
                               reference.dataAs<float>(), 1); };
  } else {
    runBlas = [&] {
      blas.sgemm(kRowMajor, kNoTrans, isDense ? kTrans : kNoTrans, M, N, K, 1.0f, a.dataAs<float>(), K,
                 b.dataAs<float>(), isDense ? K : N, 0.0f, reference.dataAs<float>(), N);
    };
  }

  // Both must compute the same thing before either is timed.
  runTessel();
  runBlas();
  double worst = 0;
  for (int64_t i = 0; i < m * n; ++i) {
    float expected = reference.dataAs<float>()[i], got = c.dataAs<float>()[i];
    worst = std::max(worst, std::fabs(double(got) - expected) / (1e-3 + 1e-3 * std::fabs(double(expected))));
  }
  if (!(worst <= 1)) {
    std::cerr << "tessel-compare-blas: Tessel and OpenBLAS disagree (worst error " << worst << " of tolerance)\n";
    return 3;
  }

  runtime::PeakProbe probe(runtime::ThreadPool::global(), runtime::bestFmaKernel());
  double flops = 2.0 * double(m) * double(n) * double(k);
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
  std::printf("%s m=%lld n=%lld k=%lld float32, %s schedule, %lld threads, %lld rounds of alternating 0.2 s blocks\n",
              op.c_str(), (long long)m, (long long)n, (long long)k, scheduleSource.c_str(), (long long)threads,
              (long long)rounds);
  std::printf("openblas_function=%s\n", isDense && m == 1 ? "sgemv" : "sgemm");
  std::printf("openblas_kernel=%s\n", blas.coreName ? blas.coreName() : "unknown");
  std::printf("tessel_gflops=%.2f\nopenblas_gflops=%.2f\npeak_gflops=%.2f\n", runtime::median(tesselRates),
              runtime::median(blasRates), runtime::median(peakRates));
  std::printf("ratio_tessel_over_openblas=%.3f\ntessel_fraction_of_peak=%.3f\n", runtime::median(ratios),
              runtime::median(fractions));
  return 0;
}
