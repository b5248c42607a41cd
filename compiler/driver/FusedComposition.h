// Composing a fused operation's primitive kernels into one kernel, with the operators taken
// from a given registry (the global one in the compiler, a small one in tests).
#pragma once

#include "compiler/opdefs/OpRegistry.h"

namespace tessel::driver {

/// One kernel for the fused operation `node` (node.body set by FuseOps; its body has one
/// output). Each body operation's kernel comes from `registry`, built with the body's
/// constants known (and the fused node's constant inputs, as an unfused node would see them).
/// The kernels are joined by rewiring each consumer's placeholders to its producer's output;
/// the Workload's placeholders stand for the fused node's inputs that some kernel reads at
/// run time (inputIndices index node.inputs).
///
/// The anchor is the body's OutElemwiseFusable operation (Conv, MatMul), else its CommReduce
/// one (ReduceMean, Softmax), else the operation producing the output. Its default schedule is
/// replayed on the composed pipeline, so its stage and axis names keep their meaning:
/// - operations before the anchor (injective producers) are computed inline;
/// - an elementwise epilogue after the anchor is merged into the anchor's output stage (same
///   name and axes, body = epilogue(anchor body)), so it never reaches memory; when that
///   output stage is a reduction kept in registers by cache_write (matmul's "C"), the
///   epilogue stage takes over the loops the schedule gives the output, as Gemm does;
/// - otherwise the anchor's output is materialized and the epilogue gets an elementwise
///   schedule of its own.
/// Each form is checked by lowering it; when one fails the next, slower one is used, down to
/// every stage at root, so a schedule problem costs speed, never correctness. The kernel's
/// schedule replays the form chosen here, for `target` (its own target argument is unused).
/// A Diagnostic names the fused node and the body operation that cannot be built.
Expected<graph::OpKernel> composeFusedKernel(const graph::OperationNode& node, const Target& target,
                                            const graph::OpRegistry& registry);

}  // namespace tessel::driver
