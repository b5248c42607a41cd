// The schedulable tasks of a compiled model, and lowering one task under schedule text (what
// the Studio's schedule editor shows as the user types).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/codegen/llvm/CodeGenLLVM.h"
#include "compiler/driver/Driver.h"
#include "compiler/ops/Workload.h"
#include "compiler/schedule/Primitive.h"
#include "core/support/Error.h"

namespace tessel::driver {

/// One kernel of a compiled model as something a person (or the tuner) can schedule.
struct ScheduleTask {
  std::string name;          ///< The kernel's symbol (CompiledKernel::name); project files key edits by it.
  std::string nodeName;      ///< The graph operation it computes.
  std::string op;            ///< "Conv", or for a fused operation a summary such as "fused(Conv+Relu)".
  std::string workloadName;  ///< The workload's name ("conv2d_1x8x16x16_...").
  std::string workloadKey;   ///< What it computes (WorkloadKey::text): tasks with one key are one tuning task.
  std::string workloadHash;  ///< WorkloadKey::hash (the key on the model's target).
  double flops = 0;          ///< Floating-point operations per call.
  Workload workload;         ///< The tensors to schedule.
  Trace defaultTrace;        ///< The schedule the compiler chose (replayable on workload.outputs).
  bool tuned = false;        ///< The compiled kernel replays a tuning record instead (CompiledKernel::tuned).
  std::string tunedTraceText;  ///< That record's schedule, when tuned.

  /// The default schedule as editable text (printTraceText of defaultTrace).
  std::string defaultTraceText() const;
  /// The schedule the compiled kernel runs: the tuning record's when tuned, else the default.
  std::string compiledTraceText() const;
};

/// "Conv" for a primitive operation; "fused(Conv+Relu)" for a fused one, listing its body's
/// operators in order so two fused groups of different make-up read differently.
std::string operationSummary(const graph::OperationNode& node);

/// One task per kernel of `model` that computes a graph operation, in plan order. Kernels
/// the plan adds on its own (copies into model outputs) have no operation to schedule and
/// are left out. A Diagnostic names the node whose kernel could not be rebuilt.
Expected<std::vector<ScheduleTask>> extractTasks(const CompiledModel& model,
                                                 const Target& target = hostTarget());

/// The loops of one stage at some point of a schedule (for completion and linking).
struct StageLoops {
  std::string stage;
  std::vector<std::string> loops;     ///< Leaf loops, outermost first (empty for an inlined stage).
  std::vector<std::string> allLoops;  ///< Every loop name the stage has had (roots, split/fuse results).
  bool inlined = false;
  bool placeholder = false;  ///< An input: no loops, but cache_read can read it.
};

/// The IR after one lowering step, printed.
struct LoweringStepText {
  std::string name;
  std::string text;
  double milliseconds = 0;
};

struct TaskLoweringOptions {
  bool llvmIR = false;    ///< Also emit the optimized LLVM IR (slower).
  bool assembly = false;  ///< Also emit target assembly (slower).
  Target target = hostTarget();
  /// Also lower the schedule for this GPU target (opencl, cuda) and print its device code
  /// (TaskLowering::gpuSource): the Studio's GPU tab.
  std::optional<Target> gpuTarget;
};

/// What a schedule text lowers to.
struct TaskLowering {
  Trace trace;                                   ///< The parsed text (locations are its lines/columns).
  std::vector<StageLoops> initialStages;         ///< The stages before any primitive.
  std::vector<std::vector<StageLoops>> stagesAfter;  ///< stagesAfter[i]: after trace.primitives[i].
  PrimFunc function;                             ///< The final loop IR.
  std::string loopNest;                          ///< The final loop IR (IR printer text).
  std::vector<LoweringStepText> steps;           ///< The IR after every lowering step, in order.
  std::optional<std::string> llvmIR;             ///< When asked for.
  std::optional<std::string> assembly;           ///< When asked for.
  /// For options.gpuTarget: the CUDA or OpenCL C of the same schedule lowered for it, or, as a
  /// comment, why it does not lower there (the CPU code above is unaffected).
  std::optional<std::string> gpuSource;
};

/// Parses `traceText`, replays it on the task's workload and lowers it into a function named
/// after the task. A parse error or a schedule error (unknown stage or axis, bad factor, ...)
/// comes back as the Diagnostic with the line and column in `traceText`.
Expected<TaskLowering> lowerTaskSchedule(const ScheduleTask& task, const std::string& traceText,
                                         const TaskLoweringOptions& options = {});

/// The stages and their loops of `schedule` as it is now.
std::vector<StageLoops> stageLoopsOf(const Schedule& schedule);

}  // namespace tessel::driver
