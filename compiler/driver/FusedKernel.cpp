// Kernels for graph operations; fused operations are composed from their primitives.
#include "compiler/driver/FusedKernel.h"

#include "compiler/driver/FusedComposition.h"

namespace tessel::driver {

Expected<graph::OpKernel> buildKernelForNode(const graph::OperationNode& node, const ScheduleTarget& target) {
  if (node.isFused()) return composeFusedKernel(node, target, graph::OpRegistry::global());
  return graph::buildOpKernel(graph::makeOpCall(node, target));
}

}  // namespace tessel::driver
