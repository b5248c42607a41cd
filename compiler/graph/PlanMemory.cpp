// Liveness-based storage reuse for the tensors of an execution plan.
#include "compiler/graph/PlanMemory.h"

#include <algorithm>
#include <numeric>

#include "core/support/Error.h"

namespace tessel::graph {

namespace {
struct Storage {
  int64_t bytes = 0;
  int busyUntil = 0;  ///< The last step that reads the tensor it holds now.
};

// The storage a tensor of `bytes` produced at `step` should take, or -1 for a new one.
int chooseStorage(const std::vector<Storage>& storages, int64_t bytes, int step) {
  int bestFit = -1, largest = -1;
  for (int s = 0; s < int(storages.size()); ++s) {
    const Storage& storage = storages[size_t(s)];
    if (storage.busyUntil >= step) continue;
    if (storage.bytes >= bytes && (bestFit < 0 || storage.bytes < storages[size_t(bestFit)].bytes)) bestFit = s;
    if (largest < 0 || storage.bytes > storages[size_t(largest)].bytes) largest = s;
  }
  // Growing the largest free storage costs the least extra memory when none fits.
  return bestFit >= 0 ? bestFit : largest;
}
}  // namespace

MemoryAssignment planMemory(const std::vector<TensorLifetime>& tensors) {
  MemoryAssignment result;
  result.storageOf.assign(tensors.size(), -1);
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return tensors[a].producedAt < tensors[b].producedAt; });
  std::vector<Storage> storages;
  for (size_t t : order) {
    const TensorLifetime& tensor = tensors[t];
    if (tensor.external) continue;
    TESSEL_ICHECK(tensor.bytes >= 0) << "tensor " << t << " of " << tensor.bytes << " bytes";
    // An unread tensor is still written by its producer's kernel.
    int busyUntil = std::max(tensor.producedAt, tensor.lastUsedAt);
    int s = chooseStorage(storages, tensor.bytes, tensor.producedAt);
    if (s < 0) {
      s = int(storages.size());
      storages.push_back({});
    }
    Storage& storage = storages[size_t(s)];
    storage.bytes = std::max(storage.bytes, tensor.bytes);
    storage.busyUntil = busyUntil;
    result.storageOf[t] = s;
    result.naiveBytes += tensor.bytes;
  }
  for (const Storage& storage : storages) {
    result.storageBytes.push_back(storage.bytes);
    result.plannedBytes += storage.bytes;
  }
  return result;
}

}  // namespace tessel::graph
