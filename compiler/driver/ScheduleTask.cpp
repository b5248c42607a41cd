// Tasks of a compiled model and lowering one of them under schedule text.
#include "compiler/driver/ScheduleTask.h"

#include "compiler/codegen/c/CodeGenC.h"
#include "compiler/driver/FusedKernel.h"
#include "compiler/lower/Lower.h"
#include "compiler/schedule/TraceText.h"
#include "compiler/transform/GpuKernel.h"
#include "core/ir/IRPrinter.h"

namespace tessel::driver {

std::string operationSummary(const graph::OperationNode& node) {
  if (!node.isFused()) return node.op;
  std::string summary = "fused(";
  bool first = true;
  for (const graph::OperationNode* op : node.body->operations()) {
    if (!first) summary += "+";
    summary += op->op;
    first = false;
  }
  return summary + ")";
}

namespace {

Expected<ScheduleTask> taskForKernel(const CompiledKernel& kernel, const Target& target) {
  const graph::OperationNode& node = *kernel.node;
  Expected<graph::OpKernel> built = buildKernelForNode(node, target);
  if (!built) return built.error();
  ScheduleTask task;
  task.name = kernel.name;
  task.nodeName = node.name;
  task.op = operationSummary(node);
  task.workload = built->workload;
  task.workloadName = task.workload.name;
  task.flops = task.workload.flops;
  task.workloadKey = kernel.workloadKey;
  task.workloadHash = kernel.workloadHash;
  task.tuned = kernel.tuned;
  task.tunedTraceText = kernel.tunedTrace;
  Expected<Schedule> schedule = built->schedule ? built->schedule(task.workload, target)
                                                : Expected<Schedule>(Schedule(task.workload.outputs));
  if (!schedule) {
    Diagnostic d = schedule.error();
    d.message = node.op + " '" + node.name + "': default schedule: " + d.message;
    return d;
  }
  task.defaultTrace = schedule->trace();
  return task;
}

std::vector<LoweringStepText> printSteps(const std::vector<LoweringStep>& steps) {
  std::vector<LoweringStepText> printed;
  printed.reserve(steps.size());
  for (const LoweringStep& step : steps) printed.push_back({step.name, toString(step.func), step.milliseconds});
  return printed;
}

}  // namespace

std::string ScheduleTask::defaultTraceText() const { return printTraceText(defaultTrace); }

std::string ScheduleTask::compiledTraceText() const {
  if (!tuned || tunedTraceText.empty()) return defaultTraceText();
  // Records keep the text as printed; reprinting makes it read like every other schedule.
  auto parsed = parseTraceText(tunedTraceText);
  return parsed ? printTraceText(*parsed) : tunedTraceText;
}

Expected<std::vector<ScheduleTask>> extractTasks(const CompiledModel& model, const Target& target) {
  std::vector<ScheduleTask> tasks;
  for (const CompiledKernel& kernel : model.kernels) {
    if (!kernel.node) continue;
    Expected<ScheduleTask> task = taskForKernel(kernel, target);
    if (!task) return task.error();
    tasks.push_back(std::move(*task));
  }
  return tasks;
}

std::vector<StageLoops> stageLoopsOf(const Schedule& schedule) {
  std::vector<StageLoops> stages;
  for (const Stage& stage : schedule.stages()) {
    StageLoops loops;
    loops.stage = stage.name;
    loops.placeholder = te::asCompute(stage.op) == nullptr;
    loops.inlined = stage.attach == AttachKind::Inline;
    for (const IterVar& iv : stage.leafIterVars) loops.loops.push_back(iv.name());
    for (const IterVar& iv : stage.allIterVars) loops.allLoops.push_back(iv.name());
    stages.push_back(std::move(loops));
  }
  return stages;
}

namespace {
// The device code of `schedule` for a GPU target, or a comment saying why there is none. A
// schedule that binds no loop to GPU threads still lowers, into kernels of one thread, and
// the comment at the top says so.
std::string gpuSourceOf(const Schedule& schedule, const ScheduleTask& task, const Target& target) {
  auto comment = [](const std::string& text) {
    std::string out;
    size_t start = 0;
    while (start <= text.size()) {
      size_t end = text.find('\n', start);
      out += "// " + text.substr(start, end == std::string::npos ? std::string::npos : end - start) + "\n";
      if (end == std::string::npos) break;
      start = end + 1;
    }
    return out;
  };
  auto lowered = lower(schedule, task.workload.args(), task.name, target);
  if (!lowered) return comment("This schedule does not lower for " + target.toString() + ": " + lowered.error().toString());
  auto source = generateGpuSource(lowered->func, target);
  if (!source) return comment("No " + target.toString() + " code for this schedule: " + source.error().toString());
  bool threads = false;
  for (const AttrStmtNode* kernel : deviceKernels(lowered->func))
    threads = threads || kernelLaunch(lowered->func, kernel).threadsPerBlock() > 1;
  std::string note = threads ? "" : comment("No loop is bound to GPU threads (bind(STAGE, AXIS, \"threadIdx.x\")): "
                                             "each kernel below runs in one thread.");
  return note + source->code;
}
}  // namespace

Expected<TaskLowering> lowerTaskSchedule(const ScheduleTask& task, const std::string& traceText,
                                         const TaskLoweringOptions& options) {
  Expected<Trace> trace = parseTraceText(traceText);
  if (!trace) return trace.error();
  TaskLowering result;
  result.trace = *trace;
  try {
    // Applying one primitive at a time gives the loops after every line (for completion)
    // and the same schedule Schedule::replay would build.
    Schedule schedule(task.workload.outputs);
    result.initialStages = stageLoopsOf(schedule);
    for (const Primitive& primitive : trace->primitives) {
      Status applied = schedule.apply(primitive);
      if (!applied) return applied.error();
      result.stagesAfter.push_back(stageLoopsOf(schedule));
    }
    Expected<LoweredFunction> lowered = lower(schedule, task.workload.args(), task.name);
    if (!lowered) return lowered.error();
    result.function = lowered->func;
    result.loopNest = toString(lowered->func);
    result.steps = printSteps(lowered->steps);
    if (options.llvmIR) result.llvmIR = emitLLVMIR({lowered->func}, options.target);
    if (options.assembly) result.assembly = emitAssembly({lowered->func}, options.target);
    if (options.gpuTarget) result.gpuSource = gpuSourceOf(schedule, task, *options.gpuTarget);
  } catch (const UserError& error) {
    return error.diagnostic;
  }
  return result;
}

}  // namespace tessel::driver
