#include "tuner/session/TuningTask.h"

#include <algorithm>
#include <map>

#include "compiler/driver/Roofline.h"
#include "compiler/driver/WorkloadKey.h"

namespace tessel::tuner {

double workloadBytes(const Workload& workload) {
  double total = 0;
  for (const te::Tensor& tensor : workload.args()) {
    std::optional<double> bytes = driver::constantShapeBytes(tensor.shape(), tensor.dtype());
    if (!bytes) return 0;
    total += *bytes;
  }
  return total;
}

std::vector<TuningTask> groupTasksByWorkload(const std::vector<driver::ScheduleTask>& tasks) {
  std::vector<TuningTask> grouped;
  std::map<std::string, size_t> byKey;
  for (const driver::ScheduleTask& task : tasks) {
    auto [it, fresh] = byKey.try_emplace(task.workloadKey, grouped.size());
    if (!fresh) {
      TuningTask& same = grouped[it->second];
      same.kernels.push_back(task.name);
      ++same.weight;
      continue;
    }
    TuningTask& added = grouped.emplace_back();
    added.name = task.name;
    added.kernels = {task.name};
    added.op = task.op;
    added.workloadKey = task.workloadKey;
    added.workloadHash = task.workloadHash;
    added.workload = task.workload;
    added.flops = task.flops;
    added.bytes = workloadBytes(task.workload);
    added.defaultTrace = task.defaultTrace;
  }
  return grouped;
}

TuningTask operatorTask(const Workload& workload, const Trace& defaultTrace, const Target& target) {
  driver::WorkloadKey key = driver::operatorWorkloadKey(workload, target);
  TuningTask task;
  task.name = workload.name;
  task.kernels = {workload.name};
  task.op = workload.name.substr(0, workload.name.find('_'));
  task.workloadKey = key.text;
  task.workloadHash = key.hash;
  task.workload = workload;
  task.flops = workload.flops;
  task.bytes = workloadBytes(workload);
  task.defaultTrace = defaultTrace;
  return task;
}

Expected<std::vector<TuningTask>> selectTasks(const std::vector<TuningTask>& tasks,
                                              const std::vector<std::string>& selection) {
  if (selection.empty()) return tasks;
  std::vector<bool> chosen(tasks.size(), false);
  for (const std::string& wanted : selection) {
    bool found = false;
    for (size_t i = 0; i < tasks.size(); ++i) {
      const TuningTask& task = tasks[i];
      bool named = std::find(task.kernels.begin(), task.kernels.end(), wanted) != task.kernels.end();
      if (named || task.workloadHash == wanted || task.op == wanted) chosen[i] = found = true;
    }
    if (!found) {
      std::string names;
      for (size_t i = 0; i < tasks.size() && i < 12; ++i) names += (i ? ", " : "") + tasks[i].name;
      if (tasks.size() > 12) names += ", ... (" + std::to_string(tasks.size()) + " in all)";
      return Diagnostic{"no task is named '" + wanted + "'", "--tasks", 0, 0,
                        "name a kernel, a workload hash or an op such as fused(Conv+Relu); the tasks: " + names};
    }
  }
  std::vector<TuningTask> out;
  for (size_t i = 0; i < tasks.size(); ++i)
    if (chosen[i]) out.push_back(tasks[i]);
  return out;
}

}  // namespace tessel::tuner
