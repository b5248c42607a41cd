// GPU verification (see VerifyGpuCode.h).
#include "compiler/transform/VerifyGpuCode.h"

#include "compiler/transform/GpuKernel.h"
#include "core/ir/IRVisitor.h"

namespace tessel {

namespace {
struct KernelChecker : IRVisitor {
  KernelLaunch launch;
  std::optional<GpuCodeProblem> problem;
  // Bound loops narrower than the block, innermost last.
  std::vector<const ForNode*> partialThreadLoops;
  using IRVisitor::visit;

  void visit(const ForNode* node) override {
    if (problem) return;
    if (node->forKind == ForKind::Parallel) {
      problem = GpuCodeProblem{node->loopVar.name(),
                               "loop '" + node->loopVar.name() + "' is parallel inside a GPU kernel",
                               "bind it to blockIdx or threadIdx instead of parallel()"};
      return;
    }
    bool partial = false;
    if (node->forKind == ForKind::ThreadBinding && !isBlockIndexTag(node->threadTag)) {
      const int64_t* extent = asConstInt(node->extent);
      partial = extent && *extent < launch.block[threadTagDimension(node->threadTag)];
    }
    if (partial) partialThreadLoops.push_back(node);
    IRVisitor::visit(node);
    if (partial) partialThreadLoops.pop_back();
  }

  void visit(const AttrStmtNode* node) override {
    if (!problem && node->key == kSyncThreadsAttr && !partialThreadLoops.empty()) {
      const ForNode* loop = partialThreadLoops.back();
      problem = GpuCodeProblem{
          loop->loopVar.name(),
          "a barrier for shared memory is inside loop '" + loop->loopVar.name() + "', bound to " + loop->threadTag +
              " with fewer threads than the block has: the others would wait for it forever",
          "give every stage of the kernel the same number of threads along " + loop->threadTag};
    }
    IRVisitor::visit(node);
  }
};
}  // namespace

std::optional<GpuCodeProblem> verifyGpuCode(const PrimFunc& f, const Target& target) {
  for (const AttrStmtNode* kernel : deviceKernels(f)) {
    KernelLaunch launch = kernelLaunch(f, kernel);
    if (!launch.nonConstantExtent.empty())
      return GpuCodeProblem{launch.nonConstantExtent,
                            "a loop bound to " + launch.nonConstantExtent + " has no constant extent",
                            "split it by a constant factor and bind the inner loop"};
    int64_t threads = launch.threadsPerBlock();
    if (threads > maxThreadsPerBlock(target))
      return GpuCodeProblem{"threadIdx",
                            launch.name + " asks for " + std::to_string(threads) + " threads per block (" +
                                std::to_string(launch.block[0]) + " x " + std::to_string(launch.block[1]) + " x " +
                                std::to_string(launch.block[2]) + "), more than the " +
                                std::to_string(maxThreadsPerBlock(target)) + " a block can have",
                            "split the loops bound to threadIdx by smaller factors"};
    if (launch.sharedBytes > maxSharedBytesPerBlock(target))
      return GpuCodeProblem{"shared",
                            launch.name + " needs " + std::to_string(launch.sharedBytes) +
                                " bytes of shared memory per block, more than the " +
                                std::to_string(maxSharedBytesPerBlock(target)) + " available",
                            "compute the shared stages at an inner loop, or use smaller tiles"};
    KernelChecker checker;
    checker.launch = launch;
    checker.visitStmt(kernel->body);
    if (checker.problem) return checker.problem;
  }
  return std::nullopt;
}

}  // namespace tessel
