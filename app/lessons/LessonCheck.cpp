#include "app/lessons/LessonCheck.h"

#include <chrono>
#include <cmath>
#include <random>
#include <set>

#include "app/lessons/LessonOperators.h"
#include "compiler/lower/Build.h"
#include "compiler/schedule/TraceText.h"
#include "runtime/NDArray.h"
#include "runtime/PeakFlops.h"
#include "runtime/ThreadPool.h"
#include "runtime/Timer.h"
#include "tuner/features/WorkingSet.h"

namespace tessel::lessons {

namespace {

/// The root axes a loop of `stage` comes from, through splits and fuses.
std::set<std::string> rootAxesOf(const Stage& stage, const IterVar& loop) {
  std::set<std::string> roots;
  std::vector<IterVar> pending = {loop};
  while (!pending.empty()) {
    IterVar current = pending.back();
    pending.pop_back();
    bool derived = false;
    for (const IterVarRelation& relation : stage.relations) {
      if (relation.kind == IterVarRelation::Kind::Split &&
          (relation.outer.same(current) || relation.inner.same(current))) {
        pending.push_back(relation.parent);
        derived = true;
      } else if (relation.kind == IterVarRelation::Kind::Fuse && relation.fused.same(current)) {
        pending.push_back(relation.outer);
        pending.push_back(relation.inner);
        derived = true;
      }
    }
    if (!derived) roots.insert(current.name());
  }
  return roots;
}

std::string joined(const std::set<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : " and ") + name;
  return text;
}

CheckResult structural(const GoalCheck& check, const Schedule& schedule, const Trace& trace) {
  CheckResult result{check, false, ""};
  if (check.kind == "uses") {
    for (const Primitive& primitive : trace.primitives)
      if (primitiveName(primitive.kind) == check.primitive && (check.stage.empty() || primitive.stage == check.stage)) {
        result.passed = true;
        result.message = "the schedule uses " + check.primitive + (check.stage.empty() ? "" : " on " + check.stage) +
                         " (line " + std::to_string(primitive.location.line) + ")";
        return result;
      }
    result.message = "the schedule does not use " + check.primitive + (check.stage.empty() ? "" : " on " + check.stage);
    return result;
  }
  const Stage* stage = schedule.findStage(check.stage);
  if (!stage) {
    result.message = "there is no stage '" + check.stage + "' in this operator";
    return result;
  }
  if (check.kind == "attached") {
    AttachKind wanted = check.how == "inline" ? AttachKind::Inline : check.how == "at" ? AttachKind::At : AttachKind::Root;
    std::string now = stage->attach == AttachKind::Inline ? "inlined into its consumers"
                      : stage->attach == AttachKind::At   ? "computed at " + stage->attachStage + "'s loop " +
                                                              stage->attachIterVar.name()
                                                          : "computed in full before its consumers (root)";
    result.passed = stage->attach == wanted && (wanted != AttachKind::At || stage->attachStage == check.to);
    std::string goal = check.how == "inline" ? "inlined" : check.how == "at" ? "computed at a loop of " + check.to : "a root stage";
    result.message = check.stage + " is " + now + (result.passed ? "" : "; the goal wants it " + goal);
    return result;
  }
  if (stage->attach == AttachKind::Inline || stage->leafIterVars.empty()) {
    result.message = check.stage + " is inlined and has no loops of its own";
    return result;
  }
  if (check.kind == "innermost_axis") {
    const IterVar& innermost = stage->leafIterVars.back();
    std::set<std::string> roots = rootAxesOf(*stage, innermost);
    result.passed = roots.count(check.axis) > 0;
    result.message = "the innermost loop of " + check.stage + " is '" + innermost.name() + "', from axis " +
                     joined(roots) + (result.passed ? "" : "; the goal wants one from axis " + check.axis);
    return result;
  }
  if (check.kind == "vectorized") {
    const IterVar& innermost = stage->leafIterVars.back();
    const IterVarAttr* attr = stage->attr(innermost);
    result.passed = attr && attr->forKind == ForKind::Vectorized;
    result.message = "the innermost loop of " + check.stage + " ('" + innermost.name() + "') is " +
                     (result.passed ? "vectorized" : "not vectorized");
    return result;
  }
  if (check.kind == "parallel") {
    for (const IterVar& loop : stage->leafIterVars)
      if (const IterVarAttr* attr = stage->attr(loop); attr && attr->forKind == ForKind::Parallel) {
        result.passed = true;
        result.message = "loop '" + loop.name() + "' of " + check.stage + " runs in parallel";
        return result;
      }
    result.message = "no loop of " + check.stage + " runs in parallel";
    return result;
  }
  result.message = "unknown check '" + check.kind + "'";
  return result;
}

std::string kibText(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, bytes < 10 * 1024 ? "%.1f KiB" : "%.0f KiB", bytes / 1024);
  return text;
}

/// The largest reuse distance of the lowered kernel against the check's bound, naming the
/// buffer and loop behind it so the learner sees which reuse the schedule leaves too far apart.
CheckResult workingSet(const GoalCheck& check, const PrimFunc& lowered) {
  CheckResult result{check, false, ""};
  std::vector<features::ReuseDistance> distances = features::reuseDistances(lowered);
  const features::ReuseDistance* widest = nullptr;
  for (const features::ReuseDistance& distance : distances)
    if (!widest || distance.bytesBetweenUses > widest->bytesBetweenUses) widest = &distance;
  const double bound = check.atMostKib * 1024;
  std::string goal = "the goal: at most " + kibText(bound);
  if (!widest) {
    result.passed = true;
    result.message = "no element is used twice, so there is no working set to keep; " + goal;
    return result;
  }
  result.passed = widest->bytesBetweenUses <= bound;
  std::string where = widest->loop.empty() ? "within one execution of " + widest->storedBuffer + "'s statement"
                                           : "in the next iteration of loop " + widest->loop;
  result.message = "the widest reuse: each element of " + widest->buffer + " is used again " + where + ", after " +
                   kibText(widest->bytesBetweenUses) + " of data; " + goal;
  if (!result.passed && !widest->loop.empty())
    result.message += " (one iteration of loop " + widest->loop + " touches all of it: split or tile the loops inside " +
                      widest->loop + " into smaller blocks, or move a loop that " + widest->buffer +
                      " does not depend on further in)";
  return result;
}

std::vector<int64_t> shapeOf(const te::Tensor& tensor) {
  std::vector<int64_t> shape;
  for (const Expr& extent : tensor.shape()) shape.push_back(*asConstInt(extent));
  return shape;
}

/// The kernel and the FMA peak probe in alternating blocks; medians, as `tessel bench` measures.
void measure(const BuiltFunction& built, std::vector<runtime::Value>& arguments, double flops, double seconds,
             StepGrade& grade) {
  constexpr double kBlockSeconds = 0.1;
  auto& pool = runtime::ThreadPool::global();
  runtime::PeakProbe probe(pool, runtime::bestFmaKernel());
  auto kernelGflops = [&] {
    auto start = std::chrono::steady_clock::now();
    double elapsed = 0;
    int64_t calls = 0;
    while (elapsed < kBlockSeconds || calls == 0) {
      built.function.callPacked(arguments);
      ++calls;
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    return flops * double(calls) / elapsed * 1e-9;
  };
  kernelGflops();  // warm-up
  std::vector<double> kernel, peak, ratios;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (kernel.size() < 3 || std::chrono::steady_clock::now() < deadline) {
    kernel.push_back(kernelGflops());
    peak.push_back(probe.sustainedGflops(kBlockSeconds));
    ratios.push_back(kernel.back() / peak.back());
  }
  grade.gflops = runtime::median(kernel);
  grade.peakGflops = runtime::median(peak);
  grade.fractionOfPeak = runtime::median(ratios);
}

}  // namespace

Expected<StepGrade> gradeSchedule(const LessonStep& step, const std::string& scheduleText, const GradeOptions& options) {
  auto lesson = makeLessonOperator(step.op);
  if (!lesson) return lesson.error();
  const Workload& workload = lesson->workload;
  auto trace = parseTraceText(scheduleText);
  if (!trace) return trace.error();
  auto schedule = Schedule::replay(workload.outputs, *trace);
  if (!schedule) return schedule.error();

  StepGrade grade;
  bool needsBuild = false;
  for (const GoalCheck& check : step.checks) needsBuild |= check.kind == "matches_reference" || check.kind == "fraction_of_peak";
  std::optional<BuiltFunction> built;
  std::vector<runtime::NDArray> arrays;
  std::vector<runtime::Value> arguments;
  std::string runProblem;
  bool matches = false;
  std::string comparison;
  if (needsBuild) {
    auto compiled = build(*schedule, workload.args(), workload.name);
    if (!compiled) return compiled.error();
    built = std::move(*compiled);
    // Inputs uniform in [-1, 1] from a fixed seed.
    std::mt19937 random(7);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<const float*> inputs;
    for (const te::Tensor& input : workload.inputs) {
      auto array = runtime::NDArray::empty(shapeOf(input), runtime::DataType::float32());
      for (float& value : array.values<float>()) value = uniform(random);
      inputs.push_back(array.dataAs<float>());
      arrays.push_back(array);
    }
    auto output = runtime::NDArray::empty(shapeOf(workload.outputs[0]), runtime::DataType::float32());
    arrays.push_back(output);
    arguments.assign(arrays.begin(), arrays.end());
    try {
      built->function.callPacked(arguments);
    } catch (const std::exception& error) {
      runProblem = std::string("running it failed: ") + error.what();
    }
    if (runProblem.empty()) {
      std::vector<float> expected(size_t(output.numElements()));
      lesson->reference(inputs, expected.data());
      const float* got = output.dataAs<float>();
      matches = true;
      for (size_t i = 0; i < expected.size() && matches; ++i) {
        // Loose enough for any summation order, far too tight for a wrong schedule.
        double tolerance = 1e-3 + 1e-3 * std::fabs(expected[i]);
        if (!(std::fabs(double(got[i]) - double(expected[i])) <= tolerance)) {
          matches = false;
          comparison = "element " + std::to_string(i) + " is " + std::to_string(got[i]) + ", expected " +
                       std::to_string(expected[i]);
        }
      }
      if (matches) comparison = "all " + std::to_string(expected.size()) + " results match a plain C++ loop's";
    }
  }

  for (const GoalCheck& check : step.checks) {
    if (check.kind == "matches_reference") {
      CheckResult result{check, runProblem.empty() && matches, runProblem.empty() ? comparison : runProblem};
      grade.results.push_back(result);
    } else if (check.kind == "fraction_of_peak") {
      CheckResult result{check, false, ""};
      if (!runProblem.empty()) {
        result.message = runProblem;
      } else if (!matches) {
        result.message = "not measured: the results are wrong (" + comparison + ")";
      } else {
        measure(*built, arguments, workload.flops, options.measureSeconds, grade);
        char text[200];
        std::snprintf(text, sizeof text, "%.3g GFLOP/s, %.1f%% of this machine's %.4g GFLOP/s FMA peak (the goal: %.1f%%)",
                      grade.gflops, 100 * grade.fractionOfPeak, grade.peakGflops, 100 * check.atLeast);
        result.passed = grade.fractionOfPeak >= check.atLeast;
        result.message = text;
      }
      grade.results.push_back(result);
    } else if (check.kind == "working_set") {
      if (!built) {
        auto lowered = lower(*schedule, workload.args(), workload.name);
        if (!lowered) return lowered.error();
        grade.results.push_back(workingSet(check, lowered->func));
      } else {
        grade.results.push_back(workingSet(check, built->lowered.func));
      }
    } else {
      grade.results.push_back(structural(check, *schedule, *trace));
    }
  }
  grade.passed = true;
  for (const CheckResult& result : grade.results) grade.passed = grade.passed && result.passed;
  return grade;
}

}  // namespace tessel::lessons
