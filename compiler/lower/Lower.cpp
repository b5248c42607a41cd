// The lowering pipeline, one step per line: read this file to know the compiler's order.
#include "compiler/lower/Lower.h"

#include <chrono>

#include "compiler/arith/Simplify.h"
#include "compiler/schedule/ScheduleOps.h"
#include "compiler/transform/LoopPartition.h"
#include "compiler/transform/RemoveNoOp.h"
#include "compiler/transform/StorageFlatten.h"
#include "compiler/transform/StorageRewrite.h"
#include "compiler/transform/TensorizeLoops.h"
#include "compiler/transform/UnrollLoops.h"
#include "compiler/transform/VectorizeLoops.h"

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
}  // namespace

const std::vector<std::string>& loweringStepNames() {
  static const std::vector<std::string> names = {"loop_nest",      "bound_inference", "storage_flatten",
                                                 "simplify",       "tensorize",       "loop_partition",
                                                 "simplify_partitioned",
                                                 "vectorize",      "unroll",          "storage_rewrite"};
  return names;
}

Expected<LoweredFunction> lower(const Schedule& schedule, const std::vector<te::Tensor>& args,
                                const std::string& name) {
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
  auto bounded = scheduleOps(schedule, args, name, BoundMode::Inferred);
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
  result.func = f;
  return result;
}

}  // namespace tessel
