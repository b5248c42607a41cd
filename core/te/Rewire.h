// Rewiring tensor-expression pipelines: copying operations onto other inputs under other
// names, and inlining one compute's body into the expressions that read it.
//
// A fused kernel is made of the pipelines of several operators; these are the edits that
// join them (a consumer's placeholder becomes its producer's output) without touching the
// operators' own code.
#pragma once

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/te/Tensor.h"

namespace tessel::te {

/// Replacement tensors keyed by the operation node of the tensor they stand in for.
using TensorReplacements = std::unordered_map<const Node*, Tensor>;

/// A copy of every compute operation that `outputs` depend on (up to the tensors in
/// `replacements`), in which reads of a replaced tensor read its replacement instead. The
/// replacement must have the replaced tensor's shape and element type. Each copy is named
/// `rename(original name)` and owns a fresh buffer of that name, so the copies can sit next
/// to the originals (or to other copies of them) in one schedule. Placeholders that are not
/// replaced stay shared. Returns the copies of `outputs` in order; when `copies` is given,
/// it receives the copy of every operation copied (keyed by the original operation node).
std::vector<Tensor> rewire(const std::vector<Tensor>& outputs, const TensorReplacements& replacements,
                           const std::function<std::string(const std::string&)>& rename,
                           TensorReplacements* copies = nullptr);

/// `body` with every read of a tensor in `inlined` replaced by that compute's body at the
/// read's indices, repeatedly (an inlined body may read another inlined tensor): what
/// compute_inline does at lowering, done on the expression. The inlined tensors must be
/// computes without reductions.
Expr inlineReads(const Expr& body, const std::vector<Tensor>& inlined);

/// The tensors among `candidates` whose buffers `body` reads, in first-read order: the
/// `inputs` list makeComputeOp wants for that body.
std::vector<Tensor> tensorsReadBy(const Expr& body, const std::vector<Tensor>& candidates);

}  // namespace tessel::te
