// tessel-compare-int8-conv: Tessel's int8 convolution against its float32 convolution on the
// same layer, each in the layout a compiled model runs it in (float NCHW16c activations; int8
// in blocks of 64 on AMX tiles where the CPU has them and the channels allow, else NCHW16c on
// VNNI; weights packed at compile time), plus the machine ceilings: the float32 FMA probe,
// the int8 vpdpbusd probe, and the AMX tdpbusd probe. They run in alternating blocks of 0.2 s
// and every figure is a median over rounds (the ratios are medians of per-round ratios): on
// a shared or virtual machine whose speed drifts, only side-by-side blocks compare.
//
//   tessel-compare-int8-conv [--layers resnet18|resnet50] [--rounds 7]
#include <chrono>
#include <cmath>
#include <optional>
#include <cstdio>
#include <functional>
#include <random>

#include "app/cli/CommandLine.h"
#include "compiler/codegen/llvm/HostTarget.h"
#include "compiler/lower/Build.h"
#include "compiler/ops/Int8Conv2d.h"
#include "compiler/schedule/TensorIntrinsic.h"
#include "runtime/NDArray.h"
#include "runtime/PeakFlops.h"
#include "runtime/ThreadPool.h"
#include "runtime/Timer.h"

using namespace tessel;

namespace {

constexpr double kBlockSeconds = 0.2;

struct Layer {
  const char* name;
  int64_t channels, size, filters, kernel, stride, pad;
};

// ResNet-18's 3x3 convolutions after the stem, one per stage, and a 1x1 projection.
const std::vector<Layer> kResNet18 = {
    {"layer1 3x3 64", 64, 56, 64, 3, 1, 1},      {"layer2 3x3 128", 128, 28, 128, 3, 1, 1},
    {"layer3 3x3 256", 256, 14, 256, 3, 1, 1},   {"layer4 3x3 512", 512, 7, 512, 3, 1, 1},
    {"layer2 1x1 proj", 64, 56, 128, 1, 2, 0},
};

// ResNet-50's bottleneck convolutions (torchvision: the stride in the 3x3), one block per
// stage; most of its operations are in the 1x1 ones.
const std::vector<Layer> kResNet50 = {
    {"l1 1x1 64>64", 64, 56, 64, 1, 1, 0},          {"l1 3x3 64", 64, 56, 64, 3, 1, 1},
    {"l1 1x1 64>256", 64, 56, 256, 1, 1, 0},        {"l1 1x1 256>64", 256, 56, 64, 1, 1, 0},
    {"l2 1x1 512>128", 512, 28, 128, 1, 1, 0},      {"l2 3x3 128", 128, 28, 128, 3, 1, 1},
    {"l2 1x1 128>512", 128, 28, 512, 1, 1, 0},      {"l3 1x1 1024>256", 1024, 14, 256, 1, 1, 0},
    {"l3 3x3 256", 256, 14, 256, 3, 1, 1},          {"l3 1x1 256>1024", 256, 14, 1024, 1, 1, 0},
    {"l4 1x1 2048>512", 2048, 7, 512, 1, 1, 0},     {"l4 3x3 512", 512, 7, 512, 3, 1, 1},
    {"l4 1x1 512>2048", 512, 7, 2048, 1, 1, 0},
};

// Calls per block of at least kBlockSeconds; returns operations per second in G.
double blockRate(const std::function<void()>& call, double operations) {
  auto start = std::chrono::steady_clock::now();
  double elapsed = 0;
  int64_t calls = 0;
  while (elapsed < kBlockSeconds || calls == 0) {
    call();
    ++calls;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return operations * double(calls) / elapsed * 1e-9;
}

std::vector<runtime::NDArray> randomArgs(const Workload& w, std::mt19937& rng) {
  std::vector<runtime::NDArray> arrays;
  for (auto& tensor : w.args()) {
    std::vector<int64_t> shape;
    for (auto& extent : tensor.shape()) shape.push_back(*asConstInt(extent));
    auto array = runtime::NDArray::empty(shape, toRuntimeType(tensor.dtype()));
    auto bytes = static_cast<uint8_t*>(array.data());
    if (tensor.dtype() == DataType::float32()) {
      std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
      for (float& v : array.values<float>()) v = uniform(rng);
    } else if (tensor.name() == "scale") {
      for (float& v : array.values<float>()) v = 0.001f;
    } else {
      std::uniform_int_distribution<int> byte(0, 255);
      for (int64_t i = 0; i < array.byteSize(); ++i) bytes[i] = uint8_t(byte(rng));
    }
    arrays.push_back(array);
  }
  return arrays;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tessel::cli;
  std::vector<FlagSpec> flags = {{"layers", "which layers: resnet18 or resnet50", true, "resnet18"},
                                 {"rounds", "alternating rounds per layer", true, "7"}};
  CommandLine line;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (auto problem = CommandLine::parse(args, flags, &line)) {
    std::fprintf(stderr, "tessel-compare-int8-conv: %s\n", problem->c_str());
    return 2;
  }
  if (line.get("layers") != "resnet18" && line.get("layers") != "resnet50") {
    std::fprintf(stderr, "tessel-compare-int8-conv: --layers takes resnet18 or resnet50\n");
    return 2;
  }
  const std::vector<Layer>& layers = line.get("layers") == "resnet50" ? kResNet50 : kResNet18;
  int rounds = std::max(1, std::atoi(line.get("rounds").c_str()));
  if (!runtime::supportsFmaKernel(runtime::FmaKernel::Int8VNNI))
    std::fprintf(stderr, "note: this CPU has no AVX-512 VNNI; the int8 kernel runs its fallback and there is no "
                         "int8 peak to compare with\n");
  Target target = hostTarget();
  auto& pool = runtime::ThreadPool::global();
  runtime::PeakProbe floatProbe(pool, runtime::bestFmaKernel());
  std::optional<runtime::PeakProbe> int8Probe, tileProbe;
  if (runtime::supportsFmaKernel(runtime::FmaKernel::Int8VNNI)) int8Probe.emplace(pool, runtime::FmaKernel::Int8VNNI);
  if (runtime::supportsFmaKernel(runtime::FmaKernel::Int8Tile)) tileProbe.emplace(pool, runtime::FmaKernel::Int8Tile);
  std::printf("target: %s\nthreads: %d, rounds: %d of %.1f s blocks\n", target.toString().c_str(),
              pool.numThreads(), rounds, kBlockSeconds);
  auto sustained = [](std::optional<runtime::PeakProbe>& probe) {
    return probe ? std::to_string(int(probe->sustainedGflops(kBlockSeconds))) : std::string("-");
  };
  std::printf("float32 FMA peak now: %.0f GFLOP/s; int8 vpdpbusd peak now: %s GOP/s; AMX tdpbusd peak now: %s GOP/s\n\n",
              floatProbe.sustainedGflops(kBlockSeconds), sustained(int8Probe).c_str(), sustained(tileProbe).c_str());
  // int8 % peak: of the kernel's own ceiling (tdpbusd on tiles, vpdpbusd otherwise); vnni %:
  // of the vpdpbusd ceiling whatever the kernel runs on.
  std::printf("%-18s %10s %10s %9s %12s %6s %12s %9s\n", "layer", "fp32 ms", "int8 ms", "speedup", "fp32 % peak",
              "int8", "int8 % peak", "vnni %");
  std::mt19937 rng(42);
  for (const Layer& layer : layers) {
    Conv2dParams p;
    p.channels = layer.channels;
    p.height = p.width = layer.size;
    p.filters = layer.filters;
    p.kernelH = p.kernelW = layer.kernel;
    p.stride = layer.stride;
    p.pad = layer.pad;
    p.bias = true;
    Conv2dActivationLayout blocked{16, true};
    Workload fp32 = conv2d(p, Conv2dWeightLayout::Packed, blocked, DataType::float32(), target);
    auto fp32Schedule = defaultConv2dSchedule(fp32, p, blocked, target);
    Int8Conv2dParams q;
    q.conv = p;
    q.conv.bias = false;  // folded into the offset
    q.dataZeroPoint = 128;
    q.outputZeroPoint = 0;
    q.relu = true;
    bool tiles = hasIntegerTiles(target) && p.channels % 64 == 0 && p.filters % 64 == 0;
    if (tiles) q.inputBlock = q.filterBlock = 64;  // what AlterLayout chooses on AMX
    tiles = int8Conv2dUsesTiles(q, target);
    Workload int8 = int8Conv2d(q);
    auto int8Schedule = defaultInt8Conv2dSchedule(int8, q, target);
    if (!fp32Schedule || !int8Schedule) {
      std::fprintf(stderr, "%s: %s\n", layer.name,
                   (!fp32Schedule ? fp32Schedule.error() : int8Schedule.error()).toString().c_str());
      return 1;
    }
    auto fp32Built = build(*fp32Schedule, fp32.args(), fp32.name, target);
    auto int8Built = build(*int8Schedule, int8.args(), int8.name, target);
    if (!fp32Built || !int8Built) {
      std::fprintf(stderr, "%s: %s\n", layer.name,
                   (!fp32Built ? fp32Built.error() : int8Built.error()).toString().c_str());
      return 1;
    }
    auto fp32Args = randomArgs(fp32, rng), int8Args = randomArgs(int8, rng);
    std::vector<runtime::Value> fp32Call(fp32Args.begin(), fp32Args.end()), int8Call(int8Args.begin(), int8Args.end());
    auto runFp32 = [&] { fp32Built->function.callPacked(fp32Call); };
    auto runInt8 = [&] { int8Built->function.callPacked(int8Call); };
    runFp32();
    runInt8();
    std::vector<double> fp32Ms, int8Ms, speedups, fp32Peak, int8Peak, vnniPeak;
    std::optional<runtime::PeakProbe>& ownProbe = tiles ? tileProbe : int8Probe;
    for (int round = 0; round < rounds; ++round) {
      double fp32Rate = blockRate(runFp32, fp32.flops);
      double floatCeiling = floatProbe.sustainedGflops(kBlockSeconds);
      double int8Rate = blockRate(runInt8, int8.flops);
      fp32Ms.push_back(fp32.flops / fp32Rate * 1e-6);
      int8Ms.push_back(int8.flops / int8Rate * 1e-6);
      speedups.push_back(fp32Ms.back() / int8Ms.back());
      fp32Peak.push_back(fp32Rate / floatCeiling);
      if (ownProbe) int8Peak.push_back(int8Rate / ownProbe->sustainedGflops(kBlockSeconds));
      if (tiles && int8Probe) vnniPeak.push_back(int8Rate / int8Probe->sustainedGflops(kBlockSeconds));
    }
    if (!tiles) vnniPeak = int8Peak;
    auto share = [](const std::vector<double>& fractions) {
      char text[32] = "-";
      if (!fractions.empty()) std::snprintf(text, sizeof text, "%.1f%%", 100 * runtime::median(fractions));
      return std::string(text);
    };
    std::printf("%-18s %10.4f %10.4f %8.2fx %11.1f%% %6s %12s %9s\n", layer.name, runtime::median(fp32Ms),
                runtime::median(int8Ms), runtime::median(speedups), 100 * runtime::median(fp32Peak),
                tiles ? "amx" : "vnni", share(int8Peak).c_str(), share(vnniPeak).c_str());
    std::fflush(stdout);
  }
  return 0;
}
