// The lowering pipeline, one step per line: read this file to know the compiler's order.
#include "compiler/lower/Lower.h"

#include <algorithm>
#include <chrono>

#include "compiler/arith/Simplify.h"
#include "compiler/schedule/ScheduleOps.h"
#include "compiler/transform/HoistSharedMemory.h"
#include "compiler/transform/InsertBarriers.h"
#include "compiler/transform/LoopPartition.h"
#include "compiler/transform/SplitHostDevice.h"
#include "compiler/transform/RemoveNoOp.h"
#include "compiler/transform/StorageFlatten.h"
#include "compiler/transform/StorageRewrite.h"
#include "compiler/transform/TensorizeLoops.h"
#include "compiler/transform/UnrollLoops.h"
#include "compiler/transform/VectorizeLoops.h"
#include "compiler/transform/VerifyGpuCode.h"

namespace tessel {

namespace {
class StepRecorder {
public:
  explicit StepRecorder(std::vector<LoweringStep>& steps) : steps_(steps) {}

  // Runs one step, timing it and keeping its result.
  template <class F>
  PrimFunc run(const char* name, const PrimFunc& input, F&& step) {
    auto start = std::chrono::steady_clock::now();
    PrimFunc output = step(input);
    auto end = std::chrono::steady_clock::now();
    steps_.push_back({name, output, std::chrono::duration<double, std::milli>(end - start).count()});
    return output;
  }

private:
  std::vector<LoweringStep>& steps_;
};
// The mismatch at the line of the tensorize primitive that marked the loop.
Diagnostic tensorizeDiagnostic(const Schedule& schedule, const std::string& function, const TensorizeMismatch& mismatch) {
  for (const Primitive& p : schedule.trace().primitives)
    if (p.kind == PrimitiveKind::Tensorize && !p.axes.empty() && p.axes[0] == mismatch.loop)
      return scheduleError(p, "cannot tensorize '" + p.axes[0] + "' of " + p.stage + " with " + p.target + ": " +
                                  mismatch.message,
                           mismatch.hint);
  return Diagnostic{"cannot tensorize '" + mismatch.loop + "': " + mismatch.message, function, 0, 0, mismatch.hint};
}

// A GPU problem at the schedule line that caused it: the bind of the loop named, else the
// last bind to the thread tag named, else the last cache_read/cache_write into that scope.
Diagnostic gpuDiagnostic(const Schedule& schedule, const std::string& function, const std::string& loop,
                         const std::string& message, const std::string& hint) {
  const Primitive* best = nullptr;
  const Primitive* onLoop = nullptr;
  for (const Primitive& p : schedule.trace().primitives) {
    bool bindOfLoop = p.kind == PrimitiveKind::Bind && !p.axes.empty() && p.axes[0] == loop;
    bool bindOfTag = p.kind == PrimitiveKind::Bind && !loop.empty() && p.target.rfind(loop, 0) == 0;
    bool cacheOfScope = (p.kind == PrimitiveKind::CacheRead || p.kind == PrimitiveKind::CacheWrite) &&
                        !loop.empty() && p.target == loop;
    bool makesOrMarksLoop = !loop.empty() && ((!p.axes.empty() && p.axes[0] == loop) ||
                                              std::find(p.results.begin(), p.results.end(), loop) != p.results.end());
    if (bindOfLoop) return scheduleError(p, message, hint);
    if (bindOfTag || cacheOfScope) best = &p;
    if (makesOrMarksLoop) onLoop = &p;
  }
  // The last primitive that made or marked the loop (the parallel() of a parallel loop, the
  // split that made an unbound one), else the bind or cache that set the tag or scope.
  if (onLoop) return scheduleError(*onLoop, message, hint);
  if (best) return scheduleError(*best, message, hint);
  return Diagnostic{message, function, 0, 0, hint};
}
}  // namespace

const std::vector<std::string>& gpuLoweringStepNames() {
  static const std::vector<std::string> names = {"host_device_split", "storage_scopes", "barriers", "verify_gpu"};
  return names;
}

const std::vector<std::string>& loweringStepNames() {
  static const std::vector<std::string> names = {"loop_nest",      "bound_inference", "storage_flatten",
                                                 "simplify",       "tensorize",       "loop_partition",
                                                 "simplify_partitioned",
                                                 "vectorize",      "unroll",          "storage_rewrite"};
  return names;
}

Expected<LoweredFunction> lower(const Schedule& schedule, const std::vector<te::Tensor>& args,
                                const std::string& name) {
  return lower(schedule, args, name, Target{});
}

Expected<LoweredFunction> lower(const Schedule& schedule, const std::vector<te::Tensor>& args,
                                const std::string& name, const Target& target) {
  LoweredFunction result;
  StepRecorder step(result.steps);

  // The loop nest as the schedule writes it, every stage over its whole domain ...
  auto start = std::chrono::steady_clock::now();
  auto nest = scheduleOps(schedule, args, name, BoundMode::FullDomain);
  if (!nest) return nest.error();
  double nestMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  result.steps.push_back({"loop_nest", *nest, nestMs});

  // ... and with bound inference: each stage only over the region its consumers read.
  start = std::chrono::steady_clock::now();
  auto bounded = scheduleOps(schedule, args, name,
                             target.kind == TargetKind::Cpu ? BoundMode::Inferred : BoundMode::InferredWithinDomain);
  if (!bounded) return bounded.error();
  double boundMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  result.steps.push_back({"bound_inference", *bounded, boundMs});

  PrimFunc f = *bounded;
  f = step.run("storage_flatten", f, storageFlatten);
  f = step.run("simplify", f, [](const PrimFunc& g) { return simplify(g); });
  // Tensorized nests become intrinsic calls while their indices are plain flat sums; a nest
  // that does not match is the tensorize line's error.
  std::optional<TensorizeMismatch> mismatch;
  f = step.run("tensorize", f, [&](const PrimFunc& g) { return tensorizeLoops(g, &mismatch); });
  if (mismatch) return tensorizeDiagnostic(schedule, name, *mismatch);
  f = step.run("loop_partition", f, loopPartition);
  // Each part's narrower range decides more than the conditions it was cut for: the clamps
  // beside them go (min(c//196, 255)*196 + c % 196 folds back to c only once min is gone), so
  // the vectorizer finds contiguous indices to turn into ramps instead of gathers.
  f = step.run("simplify_partitioned", f, [](const PrimFunc& g) { return simplify(g); });
  f = step.run("vectorize", f, vectorizeLoops);
  f = step.run("unroll", f, unrollLoops);
  f = step.run("storage_rewrite", f, [](const PrimFunc& g) { return removeNoOp(simplify(storageRewrite(g))); });
  if (target.kind != TargetKind::Cpu) {
    // Each top-level loop nest becomes a kernel; shared memory is the block's, declared at the
    // kernel's top; barriers order the threads' writes and reads of it; then the launch is
    // checked against what a block may have.
    std::optional<HostCodeProblem> hostCode;
    f = step.run("host_device_split", f, [&](const PrimFunc& g) { return splitHostDevice(g, &hostCode); });
    if (hostCode) return gpuDiagnostic(schedule, name, hostCode->loop, hostCode->message, hostCode->hint);
    f = step.run("storage_scopes", f, hoistSharedMemory);
    f = step.run("barriers", f, insertBarriers);
    std::optional<GpuCodeProblem> problem;
    f = step.run("verify_gpu", f, [&](const PrimFunc& g) {
      problem = verifyGpuCode(g, target);
      return g;
    });
    if (problem) return gpuDiagnostic(schedule, name, problem->loop, problem->message, problem->hint);
  }
  result.func = f;
  return result;
}

}  // namespace tessel
