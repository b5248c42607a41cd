// One kernel for one operation of an optimized graph: a primitive operation's kernel from the
// registry, or a fused operation's primitives composed into a single loop nest.
#pragma once

#include "compiler/opdefs/OpRegistry.h"

namespace tessel::driver {

/// The kernel for `node`. For a primitive operation it is the registry's kernel. For a fused
/// operation (node.body set, made by FuseOps) the body's primitive kernels are composed into
/// one Workload whose placeholders stand for the fused node's inputs (inputIndices index
/// node.inputs) and whose outputs are the node's outputs; its schedule is the anchor op's
/// default schedule with the other ops computed inline (injective producers) or merged into the
/// anchor's output stage (an elementwise epilogue), so intermediates never reach memory.
/// A Diagnostic names the node and op that cannot be compiled (also when a tensor-expression
/// builder throws a UserError: it is caught here).
Expected<graph::OpKernel> buildKernelForNode(const graph::OperationNode& node, const Target& target);

}  // namespace tessel::driver
