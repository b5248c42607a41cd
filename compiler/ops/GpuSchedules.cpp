// Default GPU schedules. The matmul recipe is the classic one (TVM's "How to optimize
// GEMM on GPU", the CUTLASS hierarchy without tensor cores): block tiles of C, k steps
// staged in shared memory by all threads, thread tiles of C accumulated in registers.
#include "compiler/ops/GpuSchedules.h"

#include <algorithm>

#include "core/ir/IROperators.h"
#include "core/te/Tensor.h"

namespace tessel {

namespace {
// The largest of `choices` (descending) that divides `extent`; 1 if none does.
int64_t largestDivisor(int64_t extent, std::initializer_list<int64_t> choices) {
  for (int64_t choice : choices)
    if (extent % choice == 0) return choice;
  return 1;
}

// A stage copied into shared memory by every thread of a threadsX x threadsY block: its loops
// (`axes`, outermost first) fused into one, consecutive threads taking consecutive elements.
void copyWithAllThreads(Schedule& s, const std::string& stage, const std::vector<std::string>& axes, int64_t threadsX,
                        int64_t threadsY, std::vector<Status>& steps) {
  steps.push_back(s.fuse(stage, axes, "f"));
  steps.push_back(s.split(stage, "f", threadsX, "f.o", "tx"));
  steps.push_back(s.split(stage, "f.o", threadsY, "f.oo", "ty"));
  steps.push_back(s.bind(stage, "ty", "threadIdx.y"));
  steps.push_back(s.bind(stage, "tx", "threadIdx.x"));
}

Expected<Schedule> firstError(Schedule s, const std::vector<Status>& steps) {
  for (const Status& status : steps)
    if (!status) return status.error();
  return s;
}
}  // namespace

Expected<Schedule> defaultGpuMatmulSchedule(const Workload& workload, const Target& target) {
  (void)target;
  Schedule s(workload.outputs);
  const te::Tensor& C = workload.outputs[0];
  if (C.shape().size() != 2)
    return Diagnostic{"the GPU matmul schedule handles two-dimensional products only", workload.name, 0, 0,
                      "write a schedule with bind() for this shape"};
  int64_t m = *asConstInt(C.shape()[0]);
  int64_t n = *asConstInt(C.shape()[1]);
  const auto* compute = te::asCompute(C.op());
  int64_t k = *asConstInt(compute->reduceAxes.at(0)->dom.extent);
  // Each thread keeps threadRows x threadCols accumulators; 16 x 16 threads per block.
  int64_t threadRows = largestDivisor(m, {8, 4, 2});
  int64_t threadCols = largestDivisor(n, {8, 4, 2});
  int64_t threadsY = std::min<int64_t>(16, std::max<int64_t>(1, m / threadRows));
  int64_t threadsX = std::min<int64_t>(16, std::max<int64_t>(1, n / threadCols));
  int64_t blockRows = threadRows * threadsY;
  int64_t blockCols = threadCols * threadsX;
  // Deep k tiles mean fewer barriers per product: measured on an H200 at 4096^3 against
  // cuBLAS, k steps of 8, 16 and 32 ran at 0.68, 0.75 and 0.79 of its speed. 32 takes
  // 32 KiB of shared memory per block.
  int64_t kStep = largestDivisor(k, {32, 16, 8, 4, 2});

  std::vector<Status> steps;
  steps.push_back(s.cacheWrite("C", "local", "C.local"));
  steps.push_back(s.cacheRead("A", "shared", {"C.local"}, "A.shared"));
  // Dense: B.t (B transposed) is what C reads; its shared copy reads B itself.
  bool transposedB = s.findStage("B.t") != nullptr;
  steps.push_back(s.cacheRead(transposedB ? "B.t" : "B", "shared", {"C.local"}, "B.shared"));
  if (transposedB) steps.push_back(s.computeInline("B.t"));
  steps.push_back(s.tile("C", "i", "j", blockRows, blockCols, "by", "bx", "yi", "xi"));
  steps.push_back(s.split("C", "yi", threadRows, "ty", "yt"));
  steps.push_back(s.split("C", "xi", threadCols, "tx", "xt"));
  steps.push_back(s.reorder("C", {"by", "bx", "ty", "tx", "yt", "xt"}));
  steps.push_back(s.bind("C", "by", "blockIdx.y"));
  steps.push_back(s.bind("C", "bx", "blockIdx.x"));
  steps.push_back(s.bind("C", "ty", "threadIdx.y"));
  steps.push_back(s.bind("C", "tx", "threadIdx.x"));
  steps.push_back(s.computeAt("C.local", "C", "tx"));
  steps.push_back(s.split("C.local", "k", kStep, "ko", "ki"));
  steps.push_back(s.reorder("C.local", {"ko", "ki", "i", "j"}));
  steps.push_back(s.unroll("C.local", "ki"));
  steps.push_back(s.unroll("C.local", "i"));
  steps.push_back(s.unroll("C.local", "j"));
  // The k step's slices of A and B, loaded cooperatively: every thread of the block copies
  // every (threadsX * threadsY)-th element, consecutive threads consecutive elements.
  for (const char* operand : {"A.shared", "B.shared"}) {
    steps.push_back(s.computeAt(operand, "C.local", "ko"));
    const Stage* stage = s.findStage(operand);
    if (!stage) continue;
    std::vector<std::string> axes;
    for (auto& iv : stage->leafIterVars) axes.push_back(iv.name());
    // Transposing B, consecutive threads read consecutive k of a row of B (coalesced) and
    // write down a column of the tile; its rows are padded by four floats so those writes
    // fall in different banks while rows stay 16-byte aligned for vector reads.
    if (transposedB && std::string(operand) == "B.shared" && axes.size() == 2) {
      std::swap(axes[0], axes[1]);
      steps.push_back(s.reorder(operand, axes));
      if (blockCols > 4) steps.push_back(s.storageAlign(operand, axes[1], blockCols, 4));
    }
    copyWithAllThreads(s, operand, axes, threadsX, threadsY, steps);
  }
  return firstError(std::move(s), steps);
}

Workload gpuConv2d(const Conv2dParams& p, DataType dtype) {
  Workload w;
  w.name = conv2dName(p);
  te::Tensor data = te::placeholder({Expr(p.batch), Expr(p.channels), Expr(p.height), Expr(p.width)}, dtype, "data");
  int64_t cpg = p.channelsPerGroup(), fpg = p.filtersPerGroup();
  te::Tensor weight =
      te::placeholder({Expr(p.filters), Expr(cpg), Expr(p.kernelH), Expr(p.kernelW)}, dtype, "weight");
  te::Tensor padded = padConv2dInput(p, data, dtype);
  IterVar c = te::reduceAxis(Expr(cpg), "rc");
  IterVar r = te::reduceAxis(Expr(p.kernelH), "ry");
  IterVar s = te::reduceAxis(Expr(p.kernelW), "rx");
  int64_t sh = p.strideAlongHeight(), sw = p.strideAlongWidth();
  te::Tensor conv = te::compute(
      {Expr(p.batch), Expr(p.filters), Expr(p.outHeight()), Expr(p.outWidth())},
      [&](Var n, Var f, Var y, Var x) {
        Expr channel = p.groups == 1 ? Expr(c) : f / fpg * cpg + c;
        return te::sum(padded(n, channel, y * sh + r * p.dilationH, x * sw + s * p.dilationW) * weight(f, c, r, s),
                       {c, r, s});
      },
      "conv", {"n", "f", "y", "x"}, "conv2d");
  w.inputs = {data, weight};
  w.outputs = {conv};
  if (p.bias) {
    te::Tensor bias = te::placeholder({Expr(p.filters)}, dtype, "bias");
    w.inputs.push_back(bias);
    w.outputs = {te::compute(
        {Expr(p.batch), Expr(p.filters), Expr(p.outHeight()), Expr(p.outWidth())},
        [&](Var n, Var f, Var y, Var x) { return conv(n, f, y, x) + bias(f); }, "out", {"n", "f", "y", "x"})};
  }
  w.flops = 2.0 * double(p.batch) * double(p.filters) * double(p.outHeight()) * double(p.outWidth()) * double(cpg) *
            double(p.kernelH) * double(p.kernelW);
  return w;
}

Expected<Schedule> defaultGpuConv2dSchedule(const Workload& workload, const Conv2dParams& p, const Target& target) {
  (void)target;
  Schedule s(workload.outputs);
  std::vector<Status> steps;
  // The accumulators in registers; with a bias, the reduction's own copy is inlined into the
  // output, so the thread adds the bias as it writes. The padded input and the weights are
  // staged in shared memory a few input channels at a time (the padding applied as the
  // input is copied); measured on an H200 against reading them through the cache, this ran
  // ResNet-18's convolutions 1.1-1.9x faster.
  steps.push_back(s.cacheWrite("conv", "local", "conv.local"));
  steps.push_back(s.cacheRead("data.pad", "shared", {"conv.local"}, "data.shared"));
  steps.push_back(s.computeInline("data.pad"));
  steps.push_back(s.cacheRead("weight", "shared", {"conv.local"}, "weight.shared"));
  std::string out = "conv";
  if (p.bias) {
    steps.push_back(s.computeInline("conv"));
    out = "out";
  }
  // Threads: a few filters each (threadIdx.y), one output pixel each of a tile of rows and
  // columns (threadIdx.x, neighbouring threads neighbouring pixels).
  int64_t filtersPerThread = largestDivisor(p.filters, {4, 2});
  int64_t filterThreads = std::min<int64_t>(8, std::max<int64_t>(1, p.filters / filtersPerThread));
  int64_t tileX = largestDivisor(p.outWidth(), {16, 14, 8, 7, 4, 2});
  int64_t tileY = largestDivisor(p.outHeight(), {8, 7, 4, 2});
  while (tileY > 1 && tileX * tileY > 64) tileY = tileY % 2 == 0 ? tileY / 2 : 1;
  int64_t pixelThreads = tileX * tileY;
  int64_t channelStep = largestDivisor(p.channelsPerGroup(), {8, 4, 2});
  steps.push_back(s.split(out, "f", filtersPerThread * filterThreads, "fo", "fi"));
  steps.push_back(s.split(out, "fi", filtersPerThread, "tf", "ft"));
  steps.push_back(s.split(out, "y", tileY, "yo", "yi"));
  steps.push_back(s.split(out, "x", tileX, "xo", "xi"));
  steps.push_back(s.reorder(out, {"n", "fo", "yo", "xo", "tf", "yi", "xi", "ft"}));
  steps.push_back(s.fuse(out, {"n", "fo"}, "nf"));
  steps.push_back(s.fuse(out, {"yo", "xo"}, "tile"));
  steps.push_back(s.fuse(out, {"yi", "xi"}, "pixel"));
  steps.push_back(s.bind(out, "nf", "blockIdx.y"));
  steps.push_back(s.bind(out, "tile", "blockIdx.x"));
  steps.push_back(s.bind(out, "tf", "threadIdx.y"));
  steps.push_back(s.bind(out, "pixel", "threadIdx.x"));
  steps.push_back(s.computeAt("conv.local", out, "pixel"));
  steps.push_back(s.split("conv.local", "rc", channelStep, "rco", "rci"));
  steps.push_back(s.reorder("conv.local", {"rco", "rci", "ry", "rx", "n", "f", "y", "x"}));
  steps.push_back(s.unroll("conv.local", "f"));
  // Both copies by every thread of the block, consecutive threads consecutive elements.
  for (const char* operand : {"data.shared", "weight.shared"}) {
    steps.push_back(s.computeAt(operand, "conv.local", "rco"));
    const Stage* stage = s.findStage(operand);
    if (!stage) continue;
    std::vector<std::string> axes;
    for (auto& iv : stage->leafIterVars) axes.push_back(iv.name());
    copyWithAllThreads(s, operand, axes, pixelThreads, filterThreads, steps);
  }
  return firstError(std::move(s), steps);
}

namespace {
// A reduction with fewer outputs than this is split into partial sums (see splitLongReductions):
// with one block per output (reduceAcrossThreads), fewer blocks than about two per
// multiprocessor of a large GPU would leave most of it idle.
constexpr int64_t kFewOutputs = 256;
// Each partial sum covers at least this many elements, and there are at most kMaxPartials.
constexpr int64_t kMinPerPartial = 16;
constexpr int64_t kMaxPartials = 1024;

// Few outputs of long reductions would leave a GPU idle even with a block per output (a
// tensor summed to one value: a kernel of one block). rfactor splits such a reduction into partial sums per output, a kernel of their own
// with one thread per partial sum (outputs x partials threads), and the stage then adds each
// output's partials up. Reduce axes are fused into one first; a stage where that or rfactor
// does not apply keeps one thread per output.
void splitLongReductions(Schedule& s) {
  std::vector<std::string> reductions;
  for (const Stage& stage : s.stages())
    if (const auto* compute = te::asCompute(stage.op); compute && !compute->reduceAxes.empty())
      reductions.push_back(stage.name);
  for (const std::string& name : reductions) {
    const Stage* stage = s.findStage(name);
    int64_t outputs = 1, reduceExtent = 1;
    std::vector<std::string> reduceAxes;
    bool constant = true;
    for (const IterVar& iv : stage->leafIterVars) {
      const int64_t* extent = asConstInt(iv->dom.extent);
      if (!extent) constant = false;
      else if (iv.type() == IterVarType::Reduce) reduceExtent *= *extent, reduceAxes.push_back(iv.name());
      else outputs *= *extent;
    }
    if (!constant || outputs >= kFewOutputs || reduceExtent < 2 * kMinPerPartial) continue;
    int64_t partials = 2;
    while (partials * 2 <= kMaxPartials && partials * 2 * kMinPerPartial <= reduceExtent) partials *= 2;
    std::string axis = reduceAxes.front();
    if (reduceAxes.size() > 1) {
      axis = "k.fused";
      if (!s.fuse(name, reduceAxes, axis)) continue;
    }
    (void)s.rfactor(name, axis, partials, name + ".rf");  // where it does not apply, one thread per output stays
  }
}

// A reduction at least this long is spread over the threads of a block (one block per output)
// instead of run in one thread per output: the threads read consecutive elements (coalesced)
// and fold their partial results in shared memory. Shorter ones (pooling windows, small
// channel counts) stay one thread per output, where many outputs keep the GPU busy.
constexpr int64_t kCrossThreadMinExtent = 64;
// Threads per block of a cross-thread reduction: a power of two (the folding halves), at most.
constexpr int64_t kReductionThreads = 256;

int64_t largestPowerOfTwoUpTo(int64_t limit) {
  int64_t power = 1;
  while (power * 2 <= limit) power *= 2;
  return power;
}

// One block per output of `name` (per row, for the lanes of a lane-split row reduction),
// its threads splitting the (fused) reduction: thread t combines elements t, t + T, t + 2T,
// ... Returns false (and leaves the stage alone) where the stage is not such a reduction.
//
// The row reductions of softmax, layer norm and ReduceOp are written lane-split for CPU
// vectors (Reduction.h: NAME.lanes sums every 16th element of a row into 16 lanes, NAME adds
// the lanes). On a GPU the 16 lanes are threadIdx.x and the steps along the row are split
// over threadIdx.y, so a warp reads 32 consecutive elements; NAME's 16-element sums stay one
// thread per row.
bool reduceAcrossThreads(Schedule& s, const std::string& name, std::vector<Status>& steps) {
  if (name.size() > 3 && name.ends_with(".rf")) return false;  // partial sums: one thread each
  const Stage* stage = s.findStage(name);
  std::vector<std::string> dataAxes, reduceAxes;
  int64_t reduceExtent = 1, innermostData = 1;
  for (const IterVar& iv : stage->leafIterVars) {
    const int64_t* extent = asConstInt(iv->dom.extent);
    if (!extent) return false;
    if (iv.type() == IterVarType::Reduce) {
      reduceExtent *= *extent, reduceAxes.push_back(iv.name());
    } else if (reduceAxes.empty()) {
      dataAxes.push_back(iv.name());
      innermostData = *extent;
    } else {
      return false;  // a data-parallel loop inside the reduction: not the plain order
    }
  }
  bool lanes = name.ends_with(".lanes") && !dataAxes.empty() && dataAxes.back() == "lane" &&
               innermostData * 2 <= kReductionThreads;
  if (reduceAxes.empty() || reduceExtent * (lanes ? innermostData : 1) < kCrossThreadMinExtent) return false;
  std::string axis = reduceAxes.front();
  if (reduceAxes.size() > 1) {
    axis = "k.fused";
    if (!s.fuse(name, reduceAxes, axis)) return false;
  }
  int64_t threadsPerOutput = kReductionThreads / (lanes ? innermostData : 1);
  int64_t threads = largestPowerOfTwoUpTo(std::min(threadsPerOutput, reduceExtent));
  std::string outer = axis + ".o", thread = axis + ".t";
  steps.push_back(s.split(name, axis, threads, outer, thread));
  std::vector<std::string> blockAxes = dataAxes;
  if (lanes) blockAxes.pop_back();
  std::vector<std::string> order;
  if (!blockAxes.empty()) {
    std::string block = blockAxes.front();
    if (blockAxes.size() > 1) {
      block = "fused";
      steps.push_back(s.fuse(name, blockAxes, block));
    }
    steps.push_back(s.bind(name, block, "blockIdx.x"));
    order.push_back(block);
  }
  if (lanes) {
    order.push_back("lane");
    steps.push_back(s.bind(name, "lane", "threadIdx.x"));
  }
  order.push_back(thread);
  order.push_back(outer);
  steps.push_back(s.reorder(name, order));
  steps.push_back(s.bind(name, thread, lanes ? "threadIdx.y" : "threadIdx.x"));
  return true;
}
}  // namespace

Expected<Schedule> defaultGpuSchedule(const Workload& workload, const Target& target, int64_t threadsPerBlock) {
  (void)target;
  Schedule s(workload.outputs);
  std::vector<Status> steps;
  splitLongReductions(s);
  std::vector<std::string> kernels;
  for (const Stage& stage : s.stages()) {
    const auto* compute = te::asCompute(stage.op);
    if (!compute) continue;
    if (!stage.isOutput && compute->reduceAxes.empty()) {
      steps.push_back(s.computeInline(stage.name));
      if (!steps.back()) kernels.push_back(stage.name);  // cannot be inlined: a kernel of its own
      else continue;
    } else {
      kernels.push_back(stage.name);
    }
  }
  steps.erase(std::remove_if(steps.begin(), steps.end(), [](const Status& status) { return !status; }), steps.end());
  for (const std::string& name : kernels) {
    if (reduceAcrossThreads(s, name, steps)) continue;
    const Stage* stage = s.findStage(name);
    std::vector<std::string> axes;
    int64_t elements = 1;
    for (auto& iv : stage->leafIterVars) {
      if (iv.type() != IterVarType::DataParallel) break;
      axes.push_back(iv.name());
      elements *= *asConstInt(iv->dom.extent);
    }
    if (axes.empty()) continue;  // a reduction to one value: a kernel of one thread
    if (elements == 0) continue;  // an empty tensor: its loops run zero times, no kernel
    std::string fused = axes[0];
    if (axes.size() > 1) {
      fused = "fused";
      steps.push_back(s.fuse(name, axes, fused));
    }
    steps.push_back(s.split(name, fused, std::min(threadsPerBlock, elements), "block", "thread"));
    steps.push_back(s.bind(name, "block", "blockIdx.x"));
    steps.push_back(s.bind(name, "thread", "threadIdx.x"));
  }
  return firstError(std::move(s), steps);
}

}  // namespace tessel
