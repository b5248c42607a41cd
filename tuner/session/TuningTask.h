// The tasks of a tuning session: one per distinct workload key of a model, weighted by how
// many of the model's kernels compute it (identical layers are tuned once and count for all).
#pragma once

#include <string>
#include <vector>

#include "compiler/driver/ScheduleTask.h"
#include "compiler/ops/Workload.h"
#include "compiler/schedule/Primitive.h"
#include "core/support/Error.h"
#include "core/target/Target.h"

namespace tessel::tuner {

struct TuningTask {
  std::string name;                  ///< The kernel the measuring worker builds (the first with the key).
  std::vector<std::string> kernels;  ///< Every kernel of the model with this key, `name` first.
  std::string op;                    ///< "fused(Conv+Relu)", "matmul", ...: for tables.
  std::string workloadKey;           ///< WorkloadKey::text: what records are filed under.
  std::string workloadHash;          ///< WorkloadKey::hash (with the target).
  Workload workload;                 ///< The tensors to schedule.
  double flops = 0;                  ///< Per call of one kernel.
  /// Bytes of its inputs and outputs: the least memory traffic of one call (the roofline's
  /// measure of arithmetic intensity, flops / bytes). 0 when a shape is not constant.
  double bytes = 0;
  Trace defaultTrace;                ///< The compiler's default schedule.
  int weight = 1;                    ///< Kernels per model run with this key.
};

/// Σ over the workload's tensors (inputs and outputs) of elements × element size.
double workloadBytes(const Workload& workload);

/// One task per distinct workload key of `tasks` (a model's ScheduleTasks in plan order), in
/// order of first appearance, each weighted by its number of kernels.
std::vector<TuningTask> groupTasksByWorkload(const std::vector<driver::ScheduleTask>& tasks);

/// The task of a bare operator (`tessel tune matmul ...`): the worker knows it by the
/// workload's name.
TuningTask operatorTask(const Workload& workload, const Trace& defaultTrace, const Target& target);

/// The tasks named in `selection` (a kernel name of the task, its workload hash, or its op
/// summary, each naming at least one task); all of them when `selection` is empty. An unknown
/// name is a Diagnostic listing what there is.
Expected<std::vector<TuningTask>> selectTasks(const std::vector<TuningTask>& tasks,
                                              const std::vector<std::string>& selection);

}  // namespace tessel::tuner
