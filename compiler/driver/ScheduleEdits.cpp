// Replaying user-written schedule traces on a compiled model's kernels.
#include "compiler/driver/ScheduleEdits.h"

#include "compiler/driver/FusedKernel.h"
#include "compiler/lower/Lower.h"
#include "compiler/schedule/TraceText.h"

namespace tessel::driver {

namespace {

// Diagnostics about one task are located at it, so a project with many edits says which.
Diagnostic taskError(const std::string& task, Diagnostic d) {
  d.location = "task " + task;
  return d;
}

Diagnostic taskError(const std::string& task, std::string message, std::string hint = "") {
  return Diagnostic{std::move(message), "task " + task, 0, 0, std::move(hint)};
}

// The tasks named in a "no such task" hint: enough to recognise the naming, not a wall of text.
std::string listTasks(const CompiledModel& model) {
  std::vector<std::string> tasks = schedulableTasks(model);
  constexpr size_t kShown = 8;
  std::string text;
  for (size_t i = 0; i < tasks.size() && i < kShown; ++i) text += (i ? ", " : "") + tasks[i];
  if (tasks.size() > kShown) text += ", ... (" + std::to_string(tasks.size()) + " in all)";
  return tasks.empty() ? "the model has no schedulable kernels" : "the model's tasks: " + text;
}

// The kernel named `task`, or a Diagnostic saying why it cannot be scheduled.
Expected<size_t> findTask(const CompiledModel& model, const std::string& task) {
  for (size_t i = 0; i < model.kernels.size(); ++i) {
    if (model.kernels[i].name != task) continue;
    if (!model.kernels[i].node)
      return taskError(task, "this kernel copies a graph output and has no schedule to edit");
    return i;
  }
  return taskError(task, "the model has no task named '" + task + "'", listTasks(model));
}

// The kernel's workload, rebuilt the way the plan built it; builders throw UserError for
// malformed computes.
Expected<graph::OpKernel> rebuildKernel(const CompiledKernel& kernel, const Target& target) {
  auto built = buildKernelForNode(*kernel.node, target);
  if (!built) return taskError(kernel.name, built.error());
  return built;
}

Expected<PrimFunc> lowerEdit(const CompiledKernel& kernel, const ScheduleEdit& edit, const Target& target) {
  auto built = rebuildKernel(kernel, target);
  if (!built) return built.error();
  const Workload& workload = built->workload;
  if (workload.name != edit.workload)
    return taskError(edit.task,
                     "the schedule was written for workload '" + edit.workload + "' but the task now computes '" +
                         workload.name + "'",
                     "the model changed since the schedule was saved: reset the task to its default schedule "
                     "or remove the edit");
  auto trace = parseTraceText(edit.trace);
  if (!trace) return taskError(edit.task, trace.error());
  try {
    auto schedule = Schedule::replay(workload.outputs, *trace);
    if (!schedule) return taskError(edit.task, schedule.error());
    auto lowered = lower(*schedule, workload.args(), kernel.name);
    if (!lowered) return taskError(edit.task, lowered.error());
    return lowered->func;
  } catch (const UserError& error) {
    return taskError(edit.task, error.diagnostic);
  }
}

}  // namespace

std::vector<std::string> schedulableTasks(const CompiledModel& model) {
  std::vector<std::string> tasks;
  for (auto& kernel : model.kernels)
    if (kernel.node) tasks.push_back(kernel.name);
  return tasks;
}

Expected<ScheduleEdit> defaultScheduleEdit(const CompiledModel& model, const std::string& task,
                                           const Target& target) {
  auto index = findTask(model, task);
  if (!index) return index.error();
  const CompiledKernel& kernel = model.kernels[*index];
  auto built = rebuildKernel(kernel, target);
  if (!built) return built.error();
  Trace trace;
  if (built->schedule) {
    auto schedule = built->schedule(built->workload, target);
    if (!schedule) return taskError(task, schedule.error());
    trace = schedule->trace();
  }
  return ScheduleEdit{task, built->workload.name, printTraceText(trace)};
}

Expected<CompiledModel> applyScheduleEdits(CompiledModel model, const std::vector<ScheduleEdit>& edits,
                                           const Target& target) {
  for (const ScheduleEdit& edit : edits) {
    auto index = findTask(model, edit.task);
    if (!index) return index.error();
    CompiledKernel& kernel = model.kernels[*index];
    auto function = lowerEdit(kernel, edit, target);
    if (!function) return function.error();
    kernel.function = *function;
    // A person's schedule overrides a tuned one: the kernel no longer runs the record's.
    kernel.tuned = false;
    kernel.tunedTrace.clear();
  }
  return model;
}

}  // namespace tessel::driver
