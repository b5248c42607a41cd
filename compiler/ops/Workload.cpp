// Host facts for default schedules.
#include "compiler/ops/Workload.h"

#include "compiler/codegen/llvm/CodeGenLLVM.h"
#include "runtime/ThreadPool.h"

namespace tessel {

ScheduleTarget ScheduleTarget::host() {
  ScheduleTarget target;
  target.vectorLanes = std::max(4, TargetInfo::host().vectorBits / 32);
  target.threads = runtime::ThreadPool::global().numThreads();
  return target;
}

}  // namespace tessel
