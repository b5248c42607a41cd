// Kernels for graph operations; fused operations are composed from their primitives.
#include "compiler/driver/FusedKernel.h"

namespace tessel::driver {

Expected<graph::OpKernel> buildKernelForNode(const graph::OperationNode& node, const ScheduleTarget& target) {
  if (node.isFused()) {
    Diagnostic d;
    d.message = node.op + " '" + node.name + "': fused kernels are not composed yet";
    d.location = node.name;
    return d;
  }
  return graph::buildOpKernel(graph::makeOpCall(node, target));
}

}  // namespace tessel::driver
