// From an optimized graph to kernels and an execution plan: one lowered kernel per operation,
// tensors for every value, storages from the memory planner, params for the constants.
#pragma once

#include <functional>
#include <string>

#include "compiler/driver/Driver.h"

namespace tessel::driver {

struct PlannedModel {
  std::vector<CompiledKernel> kernels;
  runtime::GraphPlan plan;
  std::map<std::string, runtime::NDArray> params;
  MemoryReport memory;
  std::vector<std::string> tuningNotes;
};

/// Builds, schedules and lowers one kernel per operation of `graph` (in topological order)
/// and lays the tensors out: graph inputs and outputs keep the model's names, constants read
/// by kernels become params, intermediates share storages where their lifetimes allow. A
/// graph output that is not computed by a kernel of its own (an input, a constant, or a value
/// returned twice) gets a copy kernel. A Diagnostic names the node and op that failed.
///
/// `beforeKernel`, when given, is asked before each operation is lowered (its index, the
/// operation count, its name); returning false stops planning with a Diagnostic saying so
/// (what a cancelled compile uses, and how it reports progress kernel by kernel).
Expected<PlannedModel> planModel(
    const graph::Graph& graph, const Target& target,
    const std::function<bool(size_t index, size_t count, const std::string& name)>& beforeKernel = {},
    const TunedSchedules* tunedSchedules = nullptr);

}  // namespace tessel::driver
