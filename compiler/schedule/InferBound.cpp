// Bound inference, consumers before producers. A producer's region is the union of its
// consumers' reads with every loop that does not enclose the producer relaxed over its
// range; split and fuse then pass ranges down to the loops.
#include "compiler/schedule/InferBound.h"

#include <unordered_set>

#include "compiler/arith/Analyzer.h"
#include "compiler/arith/IntervalSet.h"
#include "compiler/arith/Simplify.h"
#include "core/ir/IRMutator.h"
#include "core/ir/IROperators.h"

namespace tessel {

namespace {

Expr ceilDiv(const Expr& a, const Expr& b) { return simplify(floordiv(a + b - 1, b)); }

// Ranges of split/fuse results from their parents.
void passDown(const Stage& stage, BoundMap& bounds) {
  for (auto& rel : stage.relations) {
    if (rel.kind == IterVarRelation::Kind::Split) {
      const Range& parent = bounds.at(rel.parent.get());
      Expr outerExtent, innerExtent;
      if (rel.factor.defined()) {
        innerExtent = rel.factor;
        // A factor above a known extent would only add dead iterations.
        const int64_t* extent = asConstInt(parent.extent);
        const int64_t* factor = asConstInt(rel.factor);
        if (extent && factor && *extent < *factor) innerExtent = parent.extent;
        outerExtent = ceilDiv(parent.extent, innerExtent);
      } else {
        outerExtent = rel.nparts;
        innerExtent = ceilDiv(parent.extent, rel.nparts);
      }
      bounds[rel.outer.get()] = Range::fromMinExtent(Expr(0), outerExtent);
      bounds[rel.inner.get()] = Range::fromMinExtent(Expr(0), innerExtent);
    } else {
      const Range& outer = bounds.at(rel.outer.get());
      const Range& inner = bounds.at(rel.inner.get());
      bounds[rel.fused.get()] = Range::fromMinExtent(Expr(0), simplify(outer.extent * inner.extent));
    }
  }
}

Range fullDomain(const IterVar& iv) { return iv.dom(); }

// A constant upper bound of hi - lo, looking through the min/max that unions of intervals
// build (the simplifier does not distribute a difference over them); kPosInf if none.
int64_t differenceUpperBound(Analyzer& analyzer, const Expr& hi, const Expr& lo, int depth) {
  if (depth < 8) {
    auto bound = [&](const Expr& h, const Expr& l) { return differenceUpperBound(analyzer, h, l, depth + 1); };
    if (auto* m = hi.as<MinNode>()) return std::min(bound(m->a, lo), bound(m->b, lo));
    if (auto* m = hi.as<MaxNode>()) return std::max(bound(m->a, lo), bound(m->b, lo));
    if (auto* m = lo.as<MinNode>()) return std::max(bound(hi, m->a), bound(hi, m->b));
    if (auto* m = lo.as<MaxNode>()) return std::min(bound(hi, m->a), bound(hi, m->b));
  }
  return analyzer.constIntBound(analyzer.simplify(hi - lo)).max;
}

// The range of `region`, widened to a constant extent when its extent depends on the
// enclosing loops (bound in `analyzer`): later passes substitute loop variables into
// statements (unrolling, peeling one-iteration loops) but never into an allocation's
// size, so a realized region must not be sized by a loop variable. Reads past the op's
// domain are guarded by the stage's predicates.
Range constantExtentRegion(const Interval& region, const IterVar& axis, Analyzer& analyzer) {
  Range range = region.toRange();
  if (asConstInt(range.extent)) return range;
  int64_t widest = differenceUpperBound(analyzer, region.max, region.min, 0);
  if (widest < 0 || widest == ConstIntBound::kPosInf) return range;
  const int64_t* domain = asConstInt(axis.dom().extent);
  if (domain && widest + 1 >= *domain) return fullDomain(axis);
  return Range::fromMinExtent(range.min, Expr(widest + 1));
}

// `range` within the axis's domain, where both are constant.
Range clampToDomain(const Range& range, const IterVar& axis) {
  const int64_t *min = asConstInt(range.min), *extent = asConstInt(range.extent);
  const int64_t *domainMin = asConstInt(axis.dom().min), *domainExtent = asConstInt(axis.dom().extent);
  if (!min || !extent || !domainMin || !domainExtent) return range;
  int64_t first = std::max(*min, *domainMin), last = std::min(*min + *extent, *domainMin + *domainExtent);
  if (first == *min && last == *min + *extent) return range;
  if (last <= first) return range;
  return Range::fromMinExtent(Expr(first), Expr(last - first));
}

}  // namespace

std::unordered_map<const Node*, Expr> iterVarOffsets(const Stage& stage, const BoundMap& bounds) {
  // From the leaves up, through the relations in reverse order of creation.
  std::unordered_map<const Node*, Expr> offset;
  for (auto& leaf : stage.leafIterVars) offset[leaf.get()] = leaf.var();
  for (auto it = stage.relations.rbegin(); it != stage.relations.rend(); ++it) {
    const IterVarRelation& rel = *it;
    if (rel.kind == IterVarRelation::Kind::Split) {
      Expr innerExtent = bounds.at(rel.inner.get()).extent;
      offset[rel.parent.get()] = offset.at(rel.outer.get()) * innerExtent + offset.at(rel.inner.get());
    } else {
      Expr innerExtent = bounds.at(rel.inner.get()).extent;
      Expr fused = offset.at(rel.fused.get());
      offset[rel.outer.get()] = floordiv(fused, innerExtent);
      offset[rel.inner.get()] = floormod(fused, innerExtent);
    }
  }
  return offset;
}

std::unordered_map<const Node*, Expr> iterVarValues(const Stage& stage, const BoundMap& bounds) {
  auto offset = iterVarOffsets(stage, bounds);
  std::unordered_map<const Node*, Expr> values;
  for (auto& root : stage.rootIterVars) {
    const Range& range = bounds.at(root.get());
    Expr value = offset.at(root.get());
    values[root.get()] = isConstInt(range.min, 0) ? value : range.min + value;
  }
  return values;
}

std::vector<IterVar> enclosingLoops(const ScheduleView& view, const Stage& stage) {
  std::vector<IterVar> loops;
  const Stage* current = &stage;
  while (current->attach == AttachKind::At) {
    const LoweredStage* target = view.find(current->attachStage);
    TESSEL_ICHECK(target) << "stage " << current->name << " attached to missing stage " << current->attachStage;
    int position = target->stage->leafPosition(current->attachIterVar);
    TESSEL_ICHECK(position >= 0) << "attach loop is not a loop of " << target->stage->name;
    for (int i = 0; i <= position; ++i) loops.push_back(target->stage->leafIterVars[i]);
    current = target->stage;
  }
  return loops;
}

BoundMap inferBound(const ScheduleView& view, BoundMode mode) {
  BoundMap bounds;
  // Every loop variable seen so far with its [0, extent - 1] interval, for relaxing.
  IntervalMap loopIntervals;
  const auto& stages = view.stages();
  // Loops bound to GPU threads of a block. Shared memory belongs to the whole block, so a
  // stage kept there is produced for what all of the block's threads read: its region is
  // relaxed over these loops even where they enclose it (each thread then copies a share).
  std::unordered_set<const Node*> threadIndexLoops;
  for (const LoweredStage& lowered : stages)
    for (auto& [iterVar, attr] : lowered.stage->attrs)
      if (attr.forKind == ForKind::ThreadBinding && attr.threadTag.rfind("threadIdx", 0) == 0)
        threadIndexLoops.insert(iterVar);
  for (auto it = stages.rbegin(); it != stages.rend(); ++it) {
    const LoweredStage& lowered = *it;
    const Stage& stage = *lowered.stage;
    const auto& axes = lowered.compute->axes;
    auto consumers = view.consumersOf(lowered);
    for (auto& axis : lowered.compute->reduceAxes) bounds[axis.get()] = fullDomain(axis);

    if (mode == BoundMode::FullDomain || stage.isOutput || consumers.empty()) {
      for (auto& axis : axes) bounds[axis.get()] = fullDomain(axis);
    } else {
      std::unordered_set<const Node*> enclosing;
      Analyzer enclosingRanges;
      bool sharedByBlock = stage.scope == "shared";
      for (auto& loop : enclosingLoops(view, stage)) {
        if (sharedByBlock && threadIndexLoops.count(loop.get())) continue;
        enclosing.insert(loop->var.get());
        auto interval = loopIntervals.find(loop->var.get());
        if (interval != loopIntervals.end())
          enclosingRanges.bind(loop->var, Range::fromMinExtent(interval->second.min,
                                                                simplify(interval->second.max - interval->second.min + 1)));
      }
      IntervalMap relax;
      for (auto& [var, interval] : loopIntervals)
        if (!enclosing.count(var)) relax[var] = interval;

      std::vector<Interval> region(axes.size());
      std::vector<bool> seen(axes.size(), false);
      for (const LoweredStage* consumer : consumers) {
        auto values = iterVarValues(*consumer->stage, bounds);
        VarMap toLoops;
        for (auto& root : consumer->stage->rootIterVars) toLoops[root->var.get()] = values.at(root.get());
        for (const BufferLoadNode* load : loadsOf(consumer->body, stage.buffer())) {
          for (size_t d = 0; d < axes.size(); ++d) {
            Expr index = substitute(load->indices[d], toLoops);
            // evalInterval also relaxes variables that appear in other domains' ends
            // (symbolic extents), so one call covers the whole chain.
            Interval interval = evalInterval(index, relax);
            region[d] = seen[d] ? unionOf(region[d], interval) : interval;
            seen[d] = true;
          }
        }
      }
      for (size_t d = 0; d < axes.size(); ++d) {
        // Data-dependent reads (gathers) have no bound: produce the whole domain.
        if (!seen[d] || !region[d].isBounded()) bounds[axes[d].get()] = fullDomain(axes[d]);
        else bounds[axes[d].get()] = constantExtentRegion(region[d], axes[d], enclosingRanges);
        // See BoundMode::InferredWithinDomain.
        if (mode == BoundMode::InferredWithinDomain && stage.attach == AttachKind::Root)
          bounds[axes[d].get()] = clampToDomain(bounds.at(axes[d].get()), axes[d]);
      }
    }
    passDown(stage, bounds);
    for (auto& leaf : stage.leafIterVars) {
      const Range& range = bounds.at(leaf.get());
      loopIntervals[leaf->var.get()] = Interval{Expr(0), simplify(range.extent - 1)};
    }
  }
  return bounds;
}

}  // namespace tessel
