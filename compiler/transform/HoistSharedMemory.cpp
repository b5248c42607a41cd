// Hoisting of shared allocations (see HoistSharedMemory.h).
#include "compiler/transform/HoistSharedMemory.h"

#include "compiler/transform/GpuKernel.h"
#include "core/ir/IRMutator.h"

namespace tessel {

namespace {
// Removes the shared allocations below a kernel, keeping their buffers in order.
class SharedAllocationRemover : public IRMutator {
public:
  std::vector<Buffer> removed;
  using IRMutator::mutate;

protected:
  using IRMutator::visit;
  Stmt visit(const AllocateNode* node, const Stmt& self) override {
    if (node->buffer->scope != "shared") return IRMutator::visit(node, self);
    removed.push_back(node->buffer);
    return mutate(node->body);
  }
};

}  // namespace

PrimFunc hoistSharedMemory(const PrimFunc& f) {
  return rewriteKernelBodies(f, [](const Stmt& kernel) {
    SharedAllocationRemover remover;
    Stmt body = remover.mutate(kernel);
    if (remover.removed.empty()) return kernel;
    for (auto it = remover.removed.rbegin(); it != remover.removed.rend(); ++it) body = AllocateNode::make(*it, body);
    return body;
  });
}

}  // namespace tessel
