// Bound inference: the range of every loop of every stage, from what its consumers read.
#pragma once

#include <unordered_map>

#include "compiler/schedule/ScheduleView.h"

namespace tessel {

/// Range of each iteration variable, keyed by IterVar node. Root variables hold the
/// region a stage must produce (its min may refer to enclosing loop variables); split and
/// fuse results start at 0.
using BoundMap = std::unordered_map<const Node*, Range>;

enum class BoundMode {
  /// Every stage computes its whole domain wherever it is placed: what the loop nest
  /// would be without bound inference (correct but wasteful; shown as a lowering step).
  FullDomain,
  /// Each stage computes only the region its consumers read inside its attach loop.
  Inferred,
  /// Inferred, and a stage at root never computes past its own domain. GPU targets: a
  /// consumer split into blocks that do not divide its extent guards its last block, so it
  /// never reads there, while a producer computed past its domain would read past its own
  /// inputs. (CPU code may read there, in vectors the guard leaves whole: CPU lowering keeps
  /// Inferred, and producers such as B's packing clamp their reads instead.)
  InferredWithinDomain,
};

BoundMap inferBound(const ScheduleView& view, BoundMode mode);

/// Each of `stage`'s iteration variables as an offset from its min, in terms of the
/// stage's loop variables (what split predicates compare against the extent).
std::unordered_map<const Node*, Expr> iterVarOffsets(const Stage& stage, const BoundMap& bounds);

/// The value of each of `stage`'s root iteration variables in terms of its loop variables:
/// root variables get min + offset, so they index the op's domain directly.
std::unordered_map<const Node*, Expr> iterVarValues(const Stage& stage, const BoundMap& bounds);

/// The loop variables (leaf IterVar nodes) whose loops enclose a stage's computation:
/// the loops of its attach target down to the attach loop, and theirs, transitively.
std::vector<IterVar> enclosingLoops(const ScheduleView& view, const Stage& stage);

}  // namespace tessel
