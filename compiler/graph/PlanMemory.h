// PlanMemory: the static memory planner, intermediate tensors sharing storages by liveness.
#pragma once

#include <cstdint>
#include <vector>

namespace tessel::graph {

/// One tensor of an execution plan, seen by the planner. Steps are kernel indices in
/// execution order.
struct TensorLifetime {
  int64_t bytes = 0;
  int producedAt = 0;  ///< The step whose kernel writes the tensor.
  int lastUsedAt = 0;  ///< The last step whose kernel reads it (producedAt, or less, when none does).
  /// Graph inputs, outputs and params live in memory of their own and are not planned.
  bool external = false;
};

/// Where the planner put every tensor.
struct MemoryAssignment {
  std::vector<int> storageOf;          ///< Per tensor: its storage, or -1 for an external tensor.
  std::vector<int64_t> storageBytes;   ///< Per storage: its size (the largest tensor it holds).
  int64_t plannedBytes = 0;            ///< Sum of storageBytes.
  int64_t naiveBytes = 0;              ///< Sum of the planned tensors' bytes (one storage each).
};

/// Assigns each non-external tensor a storage so that tensors whose lifetimes overlap never
/// share one. A storage becomes free after the last step that reads its current tensor; a
/// tensor produced at a later step may take it (never one produced at that same step: a
/// kernel reads its inputs while it writes its outputs). Among free storages the smallest one
/// that is large enough wins; when none is, the largest free one grows; when none is free, a
/// new storage starts. Tensors are placed in the order they are produced.
MemoryAssignment planMemory(const std::vector<TensorLifetime>& tensors);

}  // namespace tessel::graph
