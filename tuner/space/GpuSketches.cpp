// GPU sketches: the default GPU schedules' structures (compiler/ops/GpuSchedules.cpp) read
// from their traces, with the numbers that must change together opened as one decision.
#include <algorithm>
#include <string>
#include <vector>

#include "core/te/Tensor.h"
#include "tuner/space/Sketches.h"

namespace tessel::tuner {

namespace {

// A GPU's limits a generated tile must respect (the CUDA and OpenCL limits Tessel verifies).
constexpr int64_t kGpuMaxThreads = 1024;
constexpr int64_t kGpuSharedBytes = 48 * 1024;
constexpr int64_t kGpuMaxKStep = 32;
constexpr int64_t kGpuMaxRegisterTile = 64;

// The index of the first primitive of `trace` of `kind` on `stage` whose first axis is `axis`.
std::optional<size_t> tracePrimitive(const Trace& trace, PrimitiveKind kind, const std::string& stage,
                                     const std::string& axis) {
  for (size_t i = 0; i < trace.primitives.size(); ++i) {
    const Primitive& p = trace.primitives[i];
    if (p.kind == kind && p.stage == stage && !p.axes.empty() && p.axes[0] == axis && !p.values.empty()) return i;
  }
  return std::nullopt;
}

// The rest of a GPU sketch read from a default trace: the reduction's step (the split at
// `step`: the default's factor, then the divisors of `extent` up to `maxStep`, which bound the
// shared tiles) and whether each unroll is kept. Nullopt when nothing is left open.
std::optional<Sketch> withStepAndUnrolling(Sketch sketch, size_t step, int64_t extent, int64_t maxStep,
                                           const std::string& stepName) {
  const int64_t original = sketch.trace.primitives[step].values[0];
  std::vector<std::vector<int64_t>> steps = {{original}};
  for (int64_t d : divisorsOf(extent))
    if (d <= maxStep && d != original) steps.push_back({d});
  if (steps.size() > 1) sketch.decisions.push_back({stepName, steps, {{step, 0}}});
  for (size_t i = 0; i < sketch.trace.primitives.size(); ++i) {
    const Primitive& p = sketch.trace.primitives[i];
    if (p.kind == PrimitiveKind::Unroll)
      sketch.decisions.push_back({"unroll " + p.stage + "." + p.axes[0], {{1}, {0}}, {{i, -1}}});
  }
  if (sketch.decisions.empty()) return std::nullopt;
  return sketch;
}

}  // namespace

// Multi-level tiling for a GPU (Ansor's SSSRRSRS, TVM's "How to optimize GEMM on GPU"), for a
// product C[i, j] = sum over k of A and B (matmul, dense), on the default GPU matmul schedule's
// structure (GpuSchedules.cpp: C in blocks of rows x columns, one block per blockIdx.y/x; each
// thread a register tile of them, accumulated in local memory over k in steps, each step's
// slices of A and B staged in shared memory by all of the block's threads) with its numbers
// opened: the register tile and the threads per block are one decision, since the block tile
// is their product and the cooperative copies deal their elements out over the same threads;
// then the k step and the unrolling of the register tile.
std::optional<Sketch> gpuTilingSketch(const Workload& workload, const Trace& defaultTrace) {
  if (workload.outputs.size() != 1) return std::nullopt;
  const te::Tensor& C = workload.outputs[0];
  const auto* compute = te::asCompute(C.op());
  if (!compute || compute->axes.size() != 2 || compute->reduceAxes.size() != 1) return std::nullopt;
  const int64_t m = constantOr(compute->axes[0]->dom.extent, 0), n = constantOr(compute->axes[1]->dom.extent, 0);
  const int64_t k = constantOr(compute->reduceAxes[0]->dom.extent, 0);
  if (m <= 0 || n <= 0 || k <= 0) return std::nullopt;
  const std::string out = C.name();
  auto blockTile = tracePrimitive(defaultTrace, PrimitiveKind::Tile, out, "i");
  auto rowTile = tracePrimitive(defaultTrace, PrimitiveKind::Split, out, "yi");
  auto columnTile = tracePrimitive(defaultTrace, PrimitiveKind::Split, out, "xi");
  auto step = tracePrimitive(defaultTrace, PrimitiveKind::Split, out + ".local", "k");
  auto aX = tracePrimitive(defaultTrace, PrimitiveKind::Split, "A.shared", "f");
  auto aY = tracePrimitive(defaultTrace, PrimitiveKind::Split, "A.shared", "f.o");
  auto bX = tracePrimitive(defaultTrace, PrimitiveKind::Split, "B.shared", "f");
  auto bY = tracePrimitive(defaultTrace, PrimitiveKind::Split, "B.shared", "f.o");
  if (!blockTile || !rowTile || !columnTile || !step || !aX || !aY || !bX || !bY) return std::nullopt;
  if (defaultTrace.primitives[*blockTile].values.size() != 2) return std::nullopt;
  // The padded rows of B's transposed tile (dense), aligned to the column tile.
  std::optional<size_t> align;
  for (size_t i = 0; i < defaultTrace.primitives.size(); ++i)
    if (defaultTrace.primitives[i].kind == PrimitiveKind::StorageAlign && defaultTrace.primitives[i].stage == "B.shared")
      align = i;

  Sketch sketch{"gpu multi-level tiling", defaultTrace, {}};
  Decision tiles{"gpu tiles " + out + " (rows, columns, thread rows, thread columns, threads)",
                 {},
                 {{*blockTile, 0}, {*blockTile, 1}, {*rowTile, 0}, {*columnTile, 0}, {*aX, 0}, {*aY, 0}, {*bX, 0},
                  {*bY, 0}}};
  if (align) tiles.uses.push_back({*align, 0});
  auto valueAt = [&](size_t i, size_t v = 0) { return defaultTrace.primitives[i].values[v]; };
  std::vector<int64_t> first = {valueAt(*blockTile, 0), valueAt(*blockTile, 1), valueAt(*rowTile), valueAt(*columnTile),
                                valueAt(*aX), valueAt(*aY), valueAt(*bX), valueAt(*bY)};
  if (align) first.push_back(valueAt(*align));
  tiles.choices.push_back(first);
  for (int64_t threadRows : {1, 2, 4, 8})
    for (int64_t threadCols : {1, 2, 4, 8})
      for (int64_t threadsY : {1, 2, 4, 8, 16, 32})
        for (int64_t threadsX : {1, 2, 4, 8, 16, 32, 64}) {
          int64_t rows = threadRows * threadsY, cols = threadCols * threadsX, threads = threadsX * threadsY;
          // No more threads along an axis than it has register tiles (the bound loop would
          // then have fewer iterations than the block has threads, and the block's barriers
          // would wait for threads that never come), a register tile the registers hold, a
          // block the GPU allows, room in shared memory for the deepest k step, and at least
          // a warp where the matrix has that many register tiles.
          if (threadsY > (m + threadRows - 1) / threadRows || threadsX > (n + threadCols - 1) / threadCols) continue;
          if (threadRows * threadCols > kGpuMaxRegisterTile || threads > kGpuMaxThreads) continue;
          if ((rows + cols + 4) * kGpuMaxKStep * 4 > kGpuSharedBytes) continue;
          if (threads < std::min<int64_t>(32, (m * n) / (threadRows * threadCols))) continue;
          std::vector<int64_t> choice = {rows, cols, threadRows, threadCols, threadsX, threadsY, threadsX, threadsY};
          if (align) choice.push_back(cols > 4 ? cols : 8);  // storage_align needs its offset 4 < factor
          if (std::find(tiles.choices.begin(), tiles.choices.end(), choice) == tiles.choices.end())
            tiles.choices.push_back(std::move(choice));
        }
  if (tiles.choices.size() > 1) sketch.decisions.push_back(std::move(tiles));
  return withStepAndUnrolling(std::move(sketch), *step, k, kGpuMaxKStep, "gpu k step " + out + ".local");
}

// A direct convolution on a GPU (the default GPU conv2d schedule's structure: a block per
// tile of output pixels and group of filters, each thread a few filters of one pixel in
// registers, input channels staged in shared memory a few at a time by the whole block), its
// numbers opened together: filters per thread, filter threads and the pixel tile (rows x
// columns, a thread per pixel) are one decision, since the shared copies deal their elements
// out over the same threads; then the channel step and the unrolling of the filters. Only
// divisors, so that every stage of the kernel has the block's thread counts.
std::optional<Sketch> gpuConvolutionSketch(const Workload& workload, const Trace& defaultTrace) {
  if (workload.outputs.size() != 1 || workload.outputs[0].shape().size() != 4) return std::nullopt;
  const std::string out = workload.outputs[0].name();
  std::vector<int64_t> shape;
  for (const Expr& extent : workload.outputs[0].shape()) shape.push_back(constantOr(extent, 0));
  const int64_t filters = shape[1], height = shape[2], width = shape[3];
  if (filters <= 0 || height <= 0 || width <= 0) return std::nullopt;
  auto filterBlock = tracePrimitive(defaultTrace, PrimitiveKind::Split, out, "f");
  auto filterThread = tracePrimitive(defaultTrace, PrimitiveKind::Split, out, "fi");
  auto rows = tracePrimitive(defaultTrace, PrimitiveKind::Split, out, "y");
  auto columns = tracePrimitive(defaultTrace, PrimitiveKind::Split, out, "x");
  auto dataX = tracePrimitive(defaultTrace, PrimitiveKind::Split, "data.shared", "f");
  auto dataY = tracePrimitive(defaultTrace, PrimitiveKind::Split, "data.shared", "f.o");
  auto weightX = tracePrimitive(defaultTrace, PrimitiveKind::Split, "weight.shared", "f");
  auto weightY = tracePrimitive(defaultTrace, PrimitiveKind::Split, "weight.shared", "f.o");
  auto channels = tracePrimitive(defaultTrace, PrimitiveKind::Split, "conv.local", "rc");
  if (!filterBlock || !filterThread || !rows || !columns || !dataX || !dataY || !weightX || !weightY || !channels)
    return std::nullopt;
  Sketch sketch{"gpu convolution tiling", defaultTrace, {}};
  Decision tiles{"gpu tiles " + out + " (filters per block, per thread, pixel rows, columns, threads)",
                 {},
                 {{*filterBlock, 0}, {*filterThread, 0}, {*rows, 0}, {*columns, 0},
                  {*dataX, 0}, {*dataY, 0}, {*weightX, 0}, {*weightY, 0}}};
  auto valueAt = [&](size_t i) { return defaultTrace.primitives[i].values[0]; };
  tiles.choices.push_back({valueAt(*filterBlock), valueAt(*filterThread), valueAt(*rows), valueAt(*columns),
                           valueAt(*dataX), valueAt(*dataY), valueAt(*weightX), valueAt(*weightY)});
  for (int64_t perThread : divisorsOf(filters)) {
    if (perThread > 8) break;
    for (int64_t filterThreads : divisorsOf(filters / perThread)) {
      if (filterThreads > 16) break;
      for (int64_t tileY : divisorsOf(height)) {
        if (tileY > 8) break;
        for (int64_t tileX : divisorsOf(width)) {
          if (tileX > 32) break;
          int64_t pixelThreads = tileX * tileY, threads = pixelThreads * filterThreads;
          if (pixelThreads > 256 || threads > kGpuMaxThreads) continue;
          // At least a warp where the output has that many pixels and filter groups.
          if (threads < std::min<int64_t>(32, height * width * (filters / perThread))) continue;
          std::vector<int64_t> choice = {perThread * filterThreads, perThread, tileY, tileX,
                                         pixelThreads, filterThreads, pixelThreads, filterThreads};
          if (choice != tiles.choices.front()) tiles.choices.push_back(std::move(choice));
        }
      }
    }
  }
  if (tiles.choices.size() > 1) sketch.decisions.push_back(std::move(tiles));
  // The channel step: divisors of the channels per group, at most 16 (shared memory).
  int64_t channelsPerGroup = 0;
  for (const te::Tensor& input : workload.inputs)
    if (input.name() == "weight" && input.shape().size() == 4) channelsPerGroup = constantOr(input.shape()[1], 0);
  return withStepAndUnrolling(std::move(sketch), *channels, std::max<int64_t>(channelsPerGroup, 1), 16,
                              "gpu channel step conv.local");
}

}  // namespace tessel::tuner
