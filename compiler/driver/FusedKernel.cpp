// Kernels for graph operations; fused operations are composed from their primitives.
#include "compiler/driver/FusedKernel.h"

#include "compiler/driver/FusedComposition.h"

namespace tessel::driver {

Expected<graph::OpKernel> buildKernelForNode(const graph::OperationNode& node, const Target& target) {
  try {
    if (node.isFused()) return composeFusedKernel(node, target, graph::OpRegistry::global());
    return graph::buildOpKernel(graph::makeOpCall(node, target));
  } catch (const UserError& error) {
    // Tensor-expression builders throw for malformed computes; say which node made it.
    Diagnostic d = error.diagnostic;
    d.message = node.op + " '" + node.name + "': " + d.message;
    d.location = node.name;
    return d;
  }
}

}  // namespace tessel::driver
