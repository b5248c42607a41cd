// User-written schedules for a compiled model's kernels: the edits a project file stores and
// the Studio's schedule editor makes, replayed in place of the default schedules.
#pragma once

#include <string>
#include <vector>

#include "compiler/driver/Driver.h"
#include "core/support/Error.h"

namespace tessel::driver {

/// One kernel's schedule as the user wrote it. A task is a kernel of the compiled model
/// (CompiledKernel::name, e.g. "fused_Conv_Relu_2"); `workload` is the name of the Workload
/// the trace was written for, so an edit made for one model is not replayed on a kernel that
/// now computes something else; `trace` is the whole schedule in trace text (TraceText.h),
/// replayed on a fresh schedule of the workload (it replaces the default, it does not extend it).
struct ScheduleEdit {
  std::string task;
  std::string workload;
  std::string trace;

  bool operator==(const ScheduleEdit& other) const = default;
};

/// The edit that reproduces `task`'s default schedule: the starting point for a user's
/// edit (the Studio's editor, `tessel project new`). A Diagnostic when the model has no such
/// task (the known tasks are listed) or the task is a copy kernel with nothing to schedule.
Expected<ScheduleEdit> defaultScheduleEdit(const CompiledModel& model, const std::string& task,
                                           const Target& target = hostTarget());

/// The kernels a user can schedule: every kernel made from an operation of the graph (copy
/// kernels for repeated outputs have none), in plan order.
std::vector<std::string> schedulableTasks(const CompiledModel& model);

/// `model` with each edit's kernel rebuilt for `target` (the target the model was compiled
/// for), its trace replayed and lowered, and the kernel's function replaced (an edited kernel is
/// no longer `tuned`: the edit wins over a tuning record); everything else (plan, params,
/// snapshots) is unchanged. Stops at the first edit that fails, with a
/// Diagnostic located at "task NAME": an unknown task, a workload name that no longer
/// matches (the model changed since the edit was written), or a trace that does not parse,
/// replay or lower (the message carries the trace's line and column).
Expected<CompiledModel> applyScheduleEdits(CompiledModel model, const std::vector<ScheduleEdit>& edits,
                                           const Target& target = hostTarget());

}  // namespace tessel::driver
